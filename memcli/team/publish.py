"""Publishing: this workspace's files and chunks into the shared index, in one transaction.

The transaction first takes an advisory lock on (namespace, agent_id), so publishes of
one agent (two processes, or two machines sharing an agent_id) run one after the other,
each comparing against what the previous one committed: files whose publish key the
database lacks are replaced whole (their chunks deleted, then inserted), files gone from
the workspace are deleted, and the agent's totals are recomputed from its file rows. A
publish of an older state of the same workspace than the one already committed (a slow
search racing a reindex) changes nothing, so no update is lost to a stale writer.

One file never blocks the others: its rows are made of values checked here first (a date
that names no day goes as none, a vector that is not finite as none), each batch of files
is sent in a savepoint, and a batch the database rejects is sent again a file at a time,
so only the file it rejects is left out, keeping what the database held of it before.
Such a file and the reason are in the report and in `mem_metadata/shared/failures.json`,
where `mem health` finds the last publish's errors; a publish without any removes it.

Incremental and idempotent: publishing the same state again compares keys and writes
nothing but the time. The marker `mem_metadata/shared/published.json` remembers which
local state went to which (namespace, agent, database) - a hash of the DSN without its
password, never the DSN - so a search publishes only when the local index changed.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field

from memcli import __version__
from memcli.secrets import dsn as dsnmod
from memcli.team import Target, Unavailable, db, failures, local, schema
from memcli.vault import atomic
from memcli.vault.workspace import Workspace

BATCH = 200  # files per round of statements
FILE_COLUMNS = "namespace, agent_id, path, sha, pubkey, note_date, mtime, size, text, chunks, tokens, vectors"
CHUNK_COLUMNS = (
    "namespace, agent_id, path, ord, chunk_id, start_line, end_line, crumb, text, note_date, "
    "n_tokens, tsv, terms, tfs, space_id, embedding, passages"
)


@dataclass
class Published:
    namespace: str
    agent_id: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # changed on disk since indexed: sent by the next sync
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why the database refused its rows)
    files: int = 0
    chunks: int = 0
    skipped: str = ""  # why nothing was written (a newer state of this workspace is there)

    def to_json(self) -> dict:
        return {
            "namespace": self.namespace,
            "agent_id": self.agent_id,
            "files": self.files,
            "chunks": self.chunks,
            "added": len(self.added),
            "changed": len(self.changed),
            "deleted": len(self.deleted),
            "stale": self.stale,
            "skipped": self.skipped or None,
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
        }


def marker_path(ws: Workspace):
    return ws.metadata / "shared" / "published.json"


def target_key(t: Target) -> str:
    return hashlib.sha256("\x1f".join((dsnmod.public(t.dsn), t.namespace, t.agent_id)).encode()).hexdigest()[:16]


def origin(ws: Workspace) -> str:
    """This workspace's random id (told apart from another machine publishing as the same agent)."""
    path = ws.metadata / "shared" / "origin"
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        value = secrets.token_hex(8)
        atomic.write_text(path, value + "\n")
        return value


def up_to_date(ws: Workspace, t: Target, state: local.LocalState) -> bool:
    """True when the marker says this very state was published to this target."""
    try:
        mark = json.loads(marker_path(ws).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(mark, dict)
        and mark.get("target") == target_key(t)
        and mark.get("stamp") == state.stamp
        and mark.get("generation") == state.generation
    )


def run(ws: Workspace, t: Target, conn=None, *, if_changed: bool = False) -> Published | None:
    """Publish the current local state; None when the workspace was never indexed or, with
    `if_changed`, when the marker says this state is published already (a search's case)."""
    state = local.read(ws)
    if state is None:
        return None
    try:
        if if_changed and up_to_date(ws, t, state):
            return None
        try:
            if conn is None:
                with db.session(t) as conn:
                    rep = _publish(ws, t, conn, state)
            else:
                rep = _publish(ws, t, conn, state)
        except Unavailable as exc:
            failures.record(ws, target_key(t), [], exc.line())
            raise
        if not rep.skipped:
            failures.record(ws, target_key(t), rep.failed)
        return rep
    finally:
        state.close()


def _publish(ws: Workspace, t: Target, conn, state: local.LocalState) -> Published:
    if schema.migrate(conn) > schema.LATEST:
        raise Unavailable(
            f"the shared index's schema is newer than this mem knows ({schema.LATEST})",
            "upgrade mem on this machine; searching still works",
        )
    if state.space is not None:
        schema.ensure_space(conn, t.namespace, state.space)
    rep = Published(t.namespace, t.agent_id)
    me = origin(ws)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"mem:{t.namespace}/{t.agent_id}",))
        conn.execute(
            "INSERT INTO mem.agents (namespace, agent_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (t.namespace, t.agent_id),
        )
        row = conn.execute(
            "SELECT origin, stamp FROM mem.agents WHERE namespace = %s AND agent_id = %s", (t.namespace, t.agent_id)
        ).fetchone()
        if row[0] == me and row[1] > state.stamp:
            rep.skipped = "a newer state of this workspace is already published"
        else:
            _write(ws, t, conn, state, rep)
            _totals(conn, t, state, me, rep)
    if not rep.skipped:
        _mark(ws, t, state)
    return rep


def _write(ws: Workspace, t: Target, conn, state: local.LocalState, rep: Published) -> None:
    key = (t.namespace, t.agent_id)
    have = dict(
        conn.execute("SELECT path, pubkey FROM mem.files WHERE namespace = %s AND agent_id = %s", key).fetchall()
    )
    rep.deleted = sorted(p for p in have if p not in state.files)
    if rep.deleted:
        conn.execute(
            "DELETE FROM mem.files WHERE namespace = %s AND agent_id = %s AND path = ANY(%s)", (*key, rep.deleted)
        )
    todo = [f for p, f in sorted(state.files.items()) if have.get(p) != f.pubkey]
    for i in range(0, len(todo), BATCH):
        rows = []
        for f in todo[i : i + BATCH]:
            row = local.file_row(ws, state, f, t)
            if row is None:
                rep.stale.append(f.path)
                continue
            rows.append((f.path, row, local.chunk_rows(state, f, t)))
        for path in _send(t, conn, key, rows, rep):
            (rep.changed if path in have else rep.added).append(path)


def _send(t: Target, conn, key: tuple, rows: list[tuple[str, tuple, list]], rep: Published) -> list[str]:
    """Send a batch of files in a savepoint; when the database refuses it, each file in its
    own, leaving out (in rep.failed) only those it refuses. Returns the paths sent."""
    if not rows:
        return []
    psycopg = db.driver()
    try:
        with conn.transaction():
            _insert(conn, key, rows)
        return [path for path, _, _ in rows]
    except (psycopg.Error, ValueError) as exc:  # ValueError: a value the driver could not adapt
        if _fatal(conn, psycopg, exc):
            raise
        if len(rows) == 1:
            rep.failed.append((rows[0][0], db.reason(t, exc)))
            return []
    return [path for one in rows for path in _send(t, conn, key, [one], rep)]


def _fatal(conn, psycopg, exc) -> bool:
    """An error of the connection or the server, not of a row: the whole publish stops."""
    return conn.closed or conn.broken or isinstance(exc, psycopg.OperationalError)


def _insert(conn, key: tuple, rows: list[tuple[str, tuple, list]]) -> None:
    files = [row for _, row, _ in rows]
    chunks = [c for _, _, cs in rows for c in cs]
    conn.execute(
        "DELETE FROM mem.chunks WHERE namespace = %s AND agent_id = %s AND path = ANY(%s)",
        (*key, [path for path, _, _ in rows]),
    )
    with conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO mem.files ({FILE_COLUMNS}) VALUES ({', '.join(['%s'] * 12)}) "
            "ON CONFLICT (namespace, agent_id, path) DO UPDATE SET sha = EXCLUDED.sha, "
            "pubkey = EXCLUDED.pubkey, note_date = EXCLUDED.note_date, mtime = EXCLUDED.mtime, "
            "size = EXCLUDED.size, text = EXCLUDED.text, chunks = EXCLUDED.chunks, "
            "tokens = EXCLUDED.tokens, vectors = EXCLUDED.vectors, published_at = now()",
            files,
        )
        if chunks:
            cur.executemany(
                f"INSERT INTO mem.chunks ({CHUNK_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
                "%s, %s, %s, %s::tsvector, %s, %s, %s, %s::vector, %s::vector[])",
                chunks,
            )


def _totals(conn, t: Target, state: local.LocalState, me: str, rep: Published) -> None:
    """The agent row: totals recomputed from its files, and which local state it holds."""
    row = conn.execute(
        "UPDATE mem.agents a SET files = s.files, chunks = s.chunks, tokens = s.tokens, vectors = s.vectors, "
        "origin = %s, stamp = %s, generation = %s, space_id = %s, published_at = now(), mem_version = %s "
        "FROM (SELECT count(*) AS files, coalesce(sum(chunks), 0) AS chunks, coalesce(sum(tokens), 0) AS tokens, "
        "coalesce(sum(vectors), 0) AS vectors FROM mem.files WHERE namespace = %s AND agent_id = %s) s "
        "WHERE a.namespace = %s AND a.agent_id = %s RETURNING a.files, a.chunks",
        (
            me,
            state.stamp,
            state.generation,
            state.space["id"] if state.space else None,
            __version__,
            t.namespace,
            t.agent_id,
            t.namespace,
            t.agent_id,
        ),
    ).fetchone()
    rep.files, rep.chunks = int(row[0]), int(row[1])


def _mark(ws: Workspace, t: Target, state: local.LocalState) -> None:
    try:
        atomic.write_text(
            marker_path(ws),
            json.dumps({"target": target_key(t), "stamp": state.stamp, "generation": state.generation}) + "\n",
        )
    except OSError:
        pass  # (read-only workspace) the next search publishes again, finding nothing to send
