"""What this workspace publishes: the search snapshot's files and chunks, and their vectors.

Read without the index lock: the snapshot and the vector matrix are replaced atomically,
and the matrix is used only when its generation is the snapshot's. Each file gets a
publish key, a hash of everything its rows are made from (content hash, chunking and
tokenizer, vector space, which chunks have vectors): a file whose key the database
already holds is not sent again. The `stamp` orders two states of one workspace: the
later of the snapshot's index time and the matrix file's change time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any

from memcli.index import sync
from memcli.index.keyword import tokenizer
from memcli.index.notes.source import is_source
from memcli.team import lexemes
from memcli.vault.workspace import Workspace

FORMAT = "1"  # bump when the rows made from the same file change: every file is sent again


@dataclass
class LocalFile:
    path: str
    sha: str
    size: int
    mtime_ns: int
    date: str | None
    docs: list[int] = field(default_factory=list)  # its chunks, in line order
    pubkey: str = ""


@dataclass
class LocalState:
    snap: Any  # memcli.index.snapshot.Snapshot
    matrix: Any  # memcli.index.vectors.ViewVectors of `space`
    space: dict | None
    files: dict[str, LocalFile]
    stamp: int
    generation: str

    def close(self) -> None:
        if self.matrix is not None:
            self.matrix.close()
        self.snap.close()

    @property
    def chunks(self) -> int:
        return sum(len(f.docs) for f in self.files.values())


def read(ws: Workspace) -> LocalState | None:
    """The current local state, or None when the workspace was never indexed."""
    snap = sync.open_snapshot(ws)
    if snap is None:
        return None
    generation = str(snap.header.get("generation", ""))
    space, matrix, stamp = _vectors(ws, snap)
    files: dict[str, LocalFile] = {}
    paths = list(snap.paths)
    for i, path in enumerate(paths):
        rec = snap.record(i)
        files[path] = LocalFile(path, rec.get("sha", ""), rec["size"], rec["mtime_ns"], ws.date_of(path))
    for d in range(snap.n_docs):
        files[paths[snap.meta(d)[0]]].docs.append(d)
    params = "|".join(f"{k}={v}" for k, v in sorted(sync.chunking_params(ws).items()))
    for f in files.values():
        f.docs.sort(key=lambda d: snap.meta(d)[1:3])
        mask = "".join("1" if matrix is not None and matrix.mask[d] else "0" for d in f.docs)
        basis = "\x1f".join(
            (
                FORMAT,
                f.sha,
                params,
                tokenizer.FINGERPRINT,
                space["id"] if space else "",
                str(ws.settings.chunking.passage_tokens),
                mask,
            )
        )
        f.pubkey = hashlib.sha256(basis.encode()).hexdigest()[:32]
    return LocalState(snap, matrix, space, files, max(int(snap.header.get("indexed_at_ns", 0)), stamp), generation)


def _vectors(ws: Workspace, snap):
    """(space, vectors, their change time) of the active vector space, or (None, None, 0)."""
    from memcli.index.vectors import vectors

    space = vectors.active_space(ws.metadata)
    if space is None:
        return None, None, 0
    vecs = vectors.open_vectors(snap, space, ws.settings.chunking.passage_tokens)
    if vecs is None or not vecs.with_vectors():
        return None, None, 0
    return space, vecs, vecs.stamp()


def file_row(ws: Workspace, state: LocalState, f: LocalFile, t) -> tuple | None:
    """The mem.files row of `f`, or None when the file changed since it was indexed (the next
    sync publishes it; until then the database keeps what it had)."""
    try:
        data = ws.locate(f.path).read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != f.sha:
        return None
    text = _pg_text(data.decode("utf-8", errors="replace"))
    tokens = sum(state.snap.doc_length(d) for d in f.docs)
    vecs = sum(1 for d in f.docs if state.matrix is not None and state.matrix.mask[d])
    try:
        mtime = dt.datetime.fromtimestamp(f.mtime_ns / 1e9, dt.UTC)
    except (OverflowError, ValueError, OSError):
        mtime = None  # a time Python cannot hold (past year 9999): sent as none, not refused
    return (t.namespace, t.agent_id, f.path, f.sha, f.pubkey, f.date, mtime, f.size, text, len(f.docs), tokens, vecs)


def chunk_rows(state: LocalState, f: LocalFile, t) -> list[tuple]:
    """The mem.chunks rows of `f`: text, lines, tokens as a tsvector, and its vectors."""
    snap, matrix = state.snap, state.matrix
    out = []
    for ord_, d in enumerate(f.docs):
        _, start, end, crumb = snap.meta(d)
        if is_source(start):
            continue  # a source conversation stays on the machine that holds the log
        text = snap.text(d)
        embedding = passages = space = None
        if matrix is not None and matrix.mask[d]:
            row, rows = matrix.chunk_row(d), matrix.doc_rows(d)
            if _finite(row) and _finite(rows):  # pgvector refuses NaN and infinity (a damaged file)
                space = state.space["id"] if state.space else None  # (a matrix comes with its space)
                embedding = lexemes.vector(row)
                passages = lexemes.vectors(rows) if len(rows) > 1 else None
        tsv, terms, tfs = lexemes.full_text(text)
        out.append(
            (
                t.namespace,
                t.agent_id,
                f.path,
                ord_,
                snap.chunk_id(d),
                int(start),
                int(end),
                int(crumb),
                _pg_text(text),
                f.date,
                snap.doc_length(d),
                tsv,
                terms,
                tfs,
                space,
                embedding,
                passages,
            )
        )
    return out


def _finite(values) -> bool:
    import numpy as np  # (loaded already: the vectors are numpy arrays)

    return bool(np.isfinite(np.asarray(values, dtype=np.float32)).all())


def _pg_text(text: str) -> str:
    return text.replace("\x00", "\ufffd")  # PostgreSQL text cannot hold NUL
