"""Check the derived stores against each other: what `mem health` reports about the index.

Reads, never writes. Each finding is a sentence; the figures describe the index as
it is (chunks, vectors, passages, graph), so a healthy report still tells its size.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from memcli.index import store, terms, vectors


@dataclass
class StoreReport:
    problems: list[str] = field(default_factory=list)
    figures: dict = field(default_factory=dict)


def store_sizes(meta) -> dict[str, int]:
    return {str(p.relative_to(meta)): p.stat().st_size for p in sorted(meta.rglob("*"))
            if p.is_file() and "locks" not in p.parts}


def verify(meta, snap, passage_tokens: int) -> StoreReport:
    """Chunk store, graph, catalog and vector matrix against the snapshot.

    Raises store.CorruptStore (or ValueError/KeyError/TypeError for a record of the
    wrong shape) when a store does not decode; the caller reports it."""
    rep = StoreReport()
    recs = [json.loads(x) for x in store.read_raw_lines(meta / store.CHUNK_STORE)]
    store_ids = [r.get("id") for r in recs]
    graph = store.read_records(meta / store.GRAPH_STORE)
    store.read_records(meta / store.CATALOG_DIR / "default.jsonl.zst")
    if store_ids != [snap.chunk_id(d) for d in range(snap.n_docs)]:
        rep.problems.append("keyword index chunks differ from the chunk store")
    if sorted(c for g in graph for c in g.get("chunk_ids", [])) != sorted(store_ids):
        rep.problems.append("graph chunk ids differ from the chunk store")
    space = vectors.active_space(meta)
    if len({len(r["_embedding_f16_b64"]) for r in recs if "_embedding_f16_b64" in r}) > 1:
        rep.problems.append("chunk vectors have different dimensions")
    with_vec, n_passages = sum(1 for r in recs if "_embedding_f16_b64" in r), 0
    if space is not None:
        m = vectors.open_matrix(meta, space, snap.header.get("generation", ""), passage_tokens)
        if m is not None:
            with_vec, n_passages = int(m.mask.sum()), m.n_rows
        elif other_passages(meta, snap, passage_tokens) is None:  # other passages: paused, not broken
            rep.problems.append("vector matrix missing or out of date")
    indexed = {g["path"] for g in graph}
    pending = sum(1 for g in graph for ln in g.get("links", [])
                  if ln["target_path"] not in indexed and ln["target_path"] + ".md" not in indexed)
    rep.figures = {"chunks": snap.n_docs, "chunks_with_embedding": with_vec, "passages": n_passages,
                   "words_with_vectors": words_with_vectors(meta, space),  # query expansion
                   "vocabulary": snap.header["n_terms"], "graph_nodes": len(graph),
                   "graph_edges": sum(len(g.get("links", [])) for g in graph), "pending_links": pending,
                   "vector_space": space.get("identity") if space else None}
    if not rep.problems and file_sha(meta / store.CHUNK_STORE) != snap.header.get("store_sha"):
        rep.problems.append("chunk store does not match the search snapshot")
    return rep


def file_sha(path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def words_with_vectors(meta, space) -> int:
    vocab = terms.load(meta, space) if space else None
    return len(vocab[0]) if vocab else 0


def other_passages(meta, snap, passage_tokens: int):
    """The matrix of the snapshot's generation if it was cut into passages of another size
    than `passage_tokens`, else None."""
    m = vectors.load_matrix(meta, vectors.active_space(meta))
    if m is None or m.generation != snap.header.get("generation") or m.passage_tokens == passage_tokens:
        return None
    return m


