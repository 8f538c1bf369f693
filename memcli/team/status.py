"""What `mem health` says of the shared index, and `mem get @<agent_id>/<path>`.

Health compares this agent's rows with the local index: files and chunks published
against indexed, files whose publish key differs (not yet sent, or sent from another
state), and the lag since the last publish.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field

from memcli.errors import BadInput
from memcli.team import Target, Unavailable, db, local, schema
from memcli.vault.workspace import Workspace


@dataclass
class Status:
    reachable: bool
    message: str = ""
    figures: dict = field(default_factory=dict)
    behind: int = 0  # local files not (or not as they are) in the shared index
    newer_schema: bool = False


def check(ws: Workspace, t: Target) -> Status:
    """The shared index as this agent sees it; never raises for a database problem."""
    t0 = time.perf_counter()
    try:
        status = db.within(max(t.timeout, 5.0), lambda: _check(ws, t))
    except Unavailable as exc:
        return Status(False, exc.line(), {"reachable": False, "namespace": t.namespace, "agent_id": t.agent_id})
    status.figures["elapsed_s"] = round(time.perf_counter() - t0, 3)
    return status


def _check(ws: Workspace, t: Target) -> Status:
    figures = {"reachable": True, "namespace": t.namespace, "agent_id": t.agent_id}
    with db.session(t) as conn:
        version = schema.version(conn)
        figures["schema"] = version
        if version == 0:
            return Status(
                True,
                "no mem tables yet; `mem reindex` creates them and publishes",
                figures,
                behind=len(_local_keys(ws)),
            )
        agent = conn.execute(
            "SELECT files, chunks, published_at, now() FROM mem.agents WHERE namespace = %s AND agent_id = %s",
            (t.namespace, t.agent_id),
        ).fetchone()
        have = dict(
            conn.execute(
                "SELECT path, pubkey FROM mem.files WHERE namespace = %s AND agent_id = %s", (t.namespace, t.agent_id)
            ).fetchall()
        )
        agents = conn.execute("SELECT count(*) FROM mem.agents WHERE namespace = %s", (t.namespace,)).fetchone()[0]
    keys = _local_keys(ws)
    figures.update(
        agents=int(agents),
        files=int(agent[0]) if agent else 0,
        chunks=int(agent[1]) if agent else 0,
        local_files=len(keys),
        local_chunks=keys.chunks,
    )
    behind = sum(1 for p, k in keys.items() if have.get(p) != k) + sum(1 for p in have if p not in keys)
    figures["unpublished_files"] = behind
    if agent is not None and agent[2] is not None:
        figures["last_publish"] = agent[2].astimezone(dt.UTC).isoformat(timespec="seconds")
        figures["lag_s"] = round((agent[3] - agent[2]).total_seconds(), 1)
    return Status(True, "", figures, behind=behind, newer_schema=version > schema.LATEST)


class _Keys(dict):
    chunks = 0


def _local_keys(ws: Workspace) -> _Keys:
    """path -> publish key of the local index's files."""
    out = _Keys()
    state = local.read(ws)
    if state is None:
        return out
    try:
        out.update((p, f.pubkey) for p, f in state.files.items())
        out.chunks = state.chunks
    finally:
        state.close()
    return out


def read_file(t: Target, agent: str, path: str) -> str:
    """The stored text of another agent's file; BadInput when it is not there."""
    if t.isolation and agent != t.agent_id:
        raise BadInput(f"@{agent}/{path} belongs to another agent and shared.memory_isolation is on")

    def work():
        with db.session(t) as conn:
            if schema.version(conn) == 0:
                return None
            return conn.execute(
                "SELECT text FROM mem.files WHERE namespace = %s AND agent_id = %s AND path = %s",
                (t.namespace, agent, path),
            ).fetchone()

    row = db.within(max(t.timeout, 5.0), work)
    if row is None:
        raise BadInput(
            f"@{agent}/{path} is not in the shared index (namespace {t.namespace})", "find paths with `mem search`"
        )
    return row[0]
