"""Check the derived stores against each other: what `mem health` reports about the index.

Reads, never writes. Each finding is a sentence; the figures describe the index as
it is (chunks, vectors, passages, graph), so a healthy report still tells its size.

The chunk store is judged by its decoded records, never by its bytes: ReMe (which
shares the workspace) rewrites the stores whenever it closes, in other zstd framing,
and re-chunks files of its own accord (MEMORY.md on every start). A record is
identified by its id, sha256 of path, lines and text, so a file whose records in
the store carry the snapshot's ids in the snapshot's order is as mem indexed it.
A file whose records differ, in a store whose graph lists exactly the store's ids
(as ReMe keeps them), was re-chunked by the other tool: mem's snapshot still
answers for it and the next sync re-chunks it; that is no damage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from memcli.index.stores import store
from memcli.index.vectors import terms, vectors


@dataclass
class StoreReport:
    problems: list[str] = field(default_factory=list)
    figures: dict = field(default_factory=dict)


def store_sizes(meta) -> dict[str, int]:
    return {
        str(p.relative_to(meta)): p.stat().st_size
        for p in sorted(meta.rglob("*"))
        if p.is_file() and "locks" not in p.parts
    }


def verify(meta, snap, passage_tokens: int) -> StoreReport:
    """Chunk store, graph, catalog and vector matrix against the snapshot.

    Raises CorruptStore (or ValueError/KeyError/TypeError for a record of the
    wrong shape) when a store does not decode; the caller reports it."""
    rep = StoreReport()
    lines = store.read_raw_lines(meta / store.CHUNK_STORE)
    recs = [json.loads(x) for x in lines]
    store_ids = [r.get("id") for r in recs]
    graph = store.read_records(meta / store.GRAPH_STORE)
    store.read_records(meta / store.CATALOG_DIR / "default.jsonl.zst")
    consistent = sorted(c for g in graph for c in g.get("chunk_ids", [])) == sorted(store_ids)
    elsewhere = 0
    from memcli.index.stores import mirror

    # stores rewritten in batches mirror an earlier index: compared once they are current
    trailing = bool((snap.header.get("store") or {}).get("layout")) and not mirror.current(snap.header)
    if not trailing and store_ids != snap.chunk_ids():
        _, differ, extra = align(snap, lines, recs)
        if consistent and all(valid_record(r) for r in recs):
            elsewhere = len(differ) + extra  # re-chunked by another tool (ReMe): see the docstring
        else:
            rep.problems.append("keyword index chunks differ from the chunk store")
    if not consistent:
        rep.problems.append("graph chunk ids differ from the chunk store")
    space = vectors.active_space(meta)
    if len({len(r["_embedding_f16_b64"]) for r in recs if "_embedding_f16_b64" in r}) > 1:
        rep.problems.append("chunk vectors have different dimensions")
    with_vec, n_passages = sum(1 for r in recs if "_embedding_f16_b64" in r), 0
    if space is not None:
        m = vectors.ViewVectors(snap, space, passage_tokens)
        if m.usable:  # missing, damaged or other files: `mem health`'s vectors check says so
            with_vec, n_passages = m.with_vectors(), m.n_rows_embedded()
        m.close()
    indexed = {g["path"] for g in graph}
    pending = sum(
        1
        for g in graph
        for ln in g.get("links", [])
        if ln["target_path"] not in indexed and ln["target_path"] + ".md" not in indexed
    )
    rep.figures = {
        "chunks": snap.n_docs,
        "chunks_with_embedding": with_vec,
        "passages": n_passages,
        "words_with_vectors": words_with_vectors(meta, space),  # query expansion
        "vocabulary": snap.header["n_terms"],
        "graph_nodes": len(graph),
        "graph_edges": sum(len(g.get("links", [])) for g in graph),
        "pending_links": pending,
        "vector_space": space.get("identity") if space else None,
        "store_files_rechunked": elsewhere,
        "store_files_pending": mirror.pending_files(snap.header) if trailing else 0,
    }
    return rep


def valid_record(rec: dict) -> bool:
    """A chunk record of the shared format whose id is its content's (as both tools compute it)."""
    try:
        return rec["id"] == store.chunk_id(rec["path"], rec["start_line"], rec["end_line"], rec["text"])
    except (KeyError, TypeError):
        return False


def align(snap, lines: list[bytes], recs: list[dict] | None = None) -> tuple[list[bytes], list[str], int]:
    """The chunk store judged file by file against the snapshot, by record ids.

    Returns (aligned, differ, extra): aligned[d] is the store line of snapshot document d
    (b"" for the documents of a file in `differ`), `differ` the snapshot's files whose
    records in the store are not the snapshot's (other ids, or another order), `extra` how
    many store records belong to files the snapshot does not index. Raises
    CorruptStore or ValueError for a line that does not decode."""
    want = snap.chunk_ids()
    ids = [store.line_id(x) for x in lines]
    if ids == want:
        return lines, [], 0
    if recs is None:
        recs = [json.loads(x) for x in lines]
    by_path: dict = {}
    for i, rec in enumerate(recs):
        by_path.setdefault(rec.get("path") if isinstance(rec, dict) else None, []).append(i)
    aligned, differ = [b""] * snap.n_docs, []
    for f, path in enumerate(snap.paths):
        rec = snap.record(f)
        a, n = rec["first"], rec["count"]
        mine = by_path.pop(path, [])
        if [ids[i] for i in mine] == want[a : a + n]:
            aligned[a : a + n] = [lines[i] for i in mine]
        else:
            differ.append(path)
    return aligned, differ, sum(map(len, by_path.values()))


def words_with_vectors(meta, space) -> int:
    vocab = terms.load(meta, space) if space else None
    return len(vocab[0]) if vocab else 0
