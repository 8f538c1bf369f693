"""The index an update starts from: the current one when it can be trusted (memcli.index.sync
asks this first), judged against the stores it mirrors.

Cheap by design (a no-change reindex runs this): while the stores' stamps match the manifest's,
they are only stat-ed. A store whose stamp differs from the snapshot's is judged by its decoded
records, not its bytes (ReMe, sharing the workspace, rewrites every store when it closes):
  * the same records (ids in order, graph and catalog lines as the snapshot's files
    give them): the store is taken as it is and the snapshot adopts its new stamps;
  * the same chunks but another graph or catalog: those two are rewritten;
  * some files re-chunked by the other tool, in a store whose graph lists exactly its
    ids (so no half-written sync of ours): those files are re-chunked from the
    Markdown, every other file keeps its records, vectors and postings;
  * anything else (undecodable, a graph that disagrees with its store): full rebuild.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memcli.errors import CorruptStore
from memcli.index.keyword import segments
from memcli.index.stores import store
from memcli.vault.workspace import Workspace

_SIDES = (store.GRAPH_STORE, f"{store.CATALOG_DIR}/default.jsonl.zst")
_DIFFERENT_STORE = "chunk store does not match the search snapshot"


@dataclass
class Base:
    """The index an update starts from, and what judging the stores by their records found."""

    snap: segments.View
    lines: list[bytes] | None = None  # store lines aligned with the index (None: read if needed)
    redo: frozenset = frozenset()  # files to re-chunk: the store holds another tool's chunks of them
    rewrite: bool = False  # write the stores even if no file changed


def load(ws: Workspace, manifest: Path, params: dict) -> tuple[Base | None, str]:
    """(the index at `manifest` if it can be trusted as the base of an update, else None; why
    not, in words, or "" when there is simply no index). `params`: the chunking settings the
    update uses, which the index must have been built with."""
    from memcli.index.stores import frames, mirror

    store_file = ws.metadata / store.CHUNK_STORE
    try:
        old = segments.open_view(manifest)
        if old is None:
            if store_file.exists() or any(manifest.parent.glob("bm25_default_*")):
                return None, "no search index of this version"
            return None, ""
        why = ""
        if old.header.get("chunking") != params:
            why = "chunking settings changed"
        elif not store_file.exists():
            why = _DIFFERENT_STORE
        elif mirror.stamps(ws.metadata) == (old.header.get("store") or {}).get("stamps"):
            layout = old.header["store"].get("layout")
            for kind, rel in mirror.STORE_FILES.items():
                size = old.header["store"]["stamps"][kind][0]
                if layout is not None and frames.run_offsets(layout, kind)[1] not in (0, size):
                    raise CorruptStore(f"{Path(rel).name} does not match the index manifest")
            return Base(old), ""
        else:
            base, why = _by_records(ws, manifest, old)
            if base is not None:
                return base, ""
        old.close()
        return None, why
    except (CorruptStore, OSError) as exc:
        return None, str(exc)


def _by_records(ws: Workspace, manifest: Path, old: segments.View) -> tuple[Base | None, str]:
    """Judge stores rewritten since the index was written by their decoded records (module docstring)."""
    from memcli.index import verify
    from memcli.index.stores import mirror

    store_file = ws.metadata / store.CHUNK_STORE
    try:
        lines = store.read_raw_lines(store_file)
        aligned, differ, extra = verify.align(old, lines)
    except ValueError:
        raise CorruptStore("chunk store holds a line that is not a chunk record") from None
    if differ or extra:
        graph = store.read_records(ws.metadata / store.GRAPH_STORE)
        # (a line without an id is "None", which no chunk id equals)
        if sorted(c for g in graph for c in g.get("chunk_ids") or []) != sorted(map(str, map(store.line_id, lines))):
            return None, _DIFFERENT_STORE
        return Base(old, aligned, frozenset(differ), rewrite=True), ""
    if not _sides_match(ws, old):
        return Base(old, aligned, rewrite=True), ""
    try:  # the stores are ours as they are, in another tool's framing: adopt their stamps
        stamps = {"layout": None, "stamps": mirror.stamps(ws.metadata)}
        segments.write_manifest(manifest, dict(old.header, store=stamps))
    except OSError:
        pass  # (read-only workspace) judged again next time
    return Base(old, aligned), ""


def _sides_match(ws: Workspace, old: segments.View) -> bool:
    """True when the graph and the catalog hold the lines the index's files give (any order)."""
    try:
        want = store.graph_and_catalog(old.files, "".join(old.chunk_ids()))
        have = [store.read_raw_lines(ws.metadata / rel) for rel in _SIDES]
    except (CorruptStore, OSError, KeyError, TypeError):
        return False
    return all(sorted(h) == sorted(w) for h, w in zip(have, want))


def aligned_lines(ws: Workspace, old) -> list[bytes] | None:
    """Store lines aligned with the index, or None when the store disagrees with it."""
    from memcli.index import verify

    store_file = ws.metadata / store.CHUNK_STORE
    try:
        aligned, differ, extra = verify.align(old, store.read_raw_lines(store_file))
    except (CorruptStore, OSError, ValueError):
        return None
    return None if differ or extra else aligned
