"""Incremental indexing: bring the stores and the search snapshot up to date.

Change detection: a file whose mtime and size match the snapshot is unchanged,
unless its mtime is so close to the last index time that an edit in the same
clock tick could hide (then its hash decides, as git does for "racy" files). A
file whose stat differs is re-hashed; only a different hash re-chunks it.
Unchanged files keep their chunks, postings, texts and store lines (and any
vectors in them) as they are.

Write order: chunk store, graph and catalog, then the snapshot, which records
their stamps (and the store's hash): the snapshot is the commit point. A crash
before it leaves the old snapshot, whose stamps no longer match; the next sync
sees that and rebuilds from the Markdown. (Writing the graph after the snapshot
left a trusted snapshot beside a stale graph that `mem reindex` never rewrote.)

A store whose stamp differs from the snapshot's is judged by its decoded records,
not its bytes (ReMe, sharing the workspace, rewrites every store when it closes):
  * the same records (ids in order, graph and catalog lines as the snapshot's files
    give them): the store is taken as it is and the snapshot adopts its new stamps;
  * the same chunks but another graph or catalog: those two are rewritten;
  * some files re-chunked by the other tool, in a store whose graph lists exactly its
    ids (so no half-written sync of ours): those files are re-chunked from the
    Markdown, every other file keeps its records, vectors and postings;
  * anything else (undecodable, a graph that disagrees with its store): full rebuild.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from memcli.index import assemble, bm25, carry, store, verify
from memcli.index import snapshot as snapmod
from memcli.index import tokenizer
from memcli.vault import atomic
from memcli.vault.workspace import Workspace

RACY_NS = 2_000_000_000

Progress = Callable[[str, int, int], None]


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0
    chunks: int = 0
    full: bool = False
    wrote: bool = False
    reason: str = ""

    @property
    def changes(self) -> int:
        return len(self.added) + len(self.changed) + len(self.deleted)


def snapshot_path(ws: Workspace) -> Path:
    return ws.metadata / "keyword_index" / f"bm25_default_{tokenizer.NAME}_{tokenizer.FINGERPRINT}_v1.snap"


def chunking_params(ws: Workspace) -> dict:
    c = ws.settings.chunking
    from memcli.index import PARSER_VERSION

    return {"target_tokens": c.target_tokens, "overlap_tokens": c.overlap_tokens,
            "parser": PARSER_VERSION}


def open_snapshot(ws: Workspace) -> snapmod.Snapshot | None:
    p = snapshot_path(ws)
    return snapmod.Snapshot(p) if p.exists() else None


def scan(ws: Workspace) -> dict[str, os.stat_result]:
    return dict(ws.iter_watched())


def stale_paths(snap: snapmod.Snapshot | None, current: dict[str, os.stat_result]) -> list[str]:
    """Paths whose stat differs from the snapshot (added, changed, deleted): no reads."""
    known = snap.stats() if snap else {}
    out = [p for p, st in current.items() if known.get(p) != (st.st_mtime_ns, st.st_size)]
    out += [p for p in known if p not in current]
    return sorted(out)


def store_stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


_SIDES = (store.GRAPH_STORE, f"{store.CATALOG_DIR}/default.jsonl.zst")


def _side_stamps(ws: Workspace) -> list:
    """Stamps of the graph and the catalog ([] for a missing one), recorded in the snapshot."""
    out = []
    for rel in _SIDES:
        try:
            out.append(store_stamp(ws.metadata / rel))
        except OSError:
            out.append([])
    return out


@dataclass
class _Base:
    """The snapshot an update starts from, and what judging the stores by their records found."""
    snap: snapmod.Snapshot
    lines: list[bytes] | None = None  # store lines aligned with the snapshot (None: read on demand)
    redo: frozenset = frozenset()  # files to re-chunk: the store holds another tool's chunks of them
    rewrite: bool = False  # write the stores even if no file changed


def _load_previous(ws: Workspace, params: dict, report: SyncReport) -> _Base | None:
    """The current snapshot if it can be trusted as the base of an update, else None.

    Cheap by design (a no-change reindex runs this): while the stamps match, the chunk
    store is only stat-ed here; its lines are read, and its hash checked, when a write
    needs them. A store rewritten since (by ReMe) is judged by its records.
    """
    store_file = ws.metadata / store.CHUNK_STORE
    try:
        old = open_snapshot(ws)
        if old is None:
            if store_file.exists():
                report.reason = "no search snapshot"
            return None
        if old.header.get("chunking") != params:
            report.reason = "chunking settings changed"
        elif not store_file.exists():
            report.reason = "chunk store does not match the search snapshot"
        elif store_stamp(store_file) == old.header.get("store_stamp") and \
                _side_stamps(ws) == old.header.get("side_stamps", _side_stamps(ws)):
            # (snapshots from before side_stamps are trusted as they were)
            return _Base(old)
        else:
            base = _by_records(ws, old, report)
            if base is not None:
                return base
        old.close()
    except (store.CorruptStore, OSError) as exc:
        report.reason = str(exc)
    return None


def _by_records(ws: Workspace, old: snapmod.Snapshot, report: SyncReport) -> _Base | None:
    """Judge stores rewritten since the snapshot by their decoded records (module docstring)."""
    store_file = ws.metadata / store.CHUNK_STORE
    stamp = store_stamp(store_file)
    raw = store_file.read_bytes()
    try:
        lines = store.read_raw_lines(store_file, raw)
        aligned, differ, extra = verify.align(old, lines)
    except ValueError:
        raise store.CorruptStore("chunk store holds a line that is not a chunk record") from None
    if differ or extra:
        graph = store.read_records(ws.metadata / store.GRAPH_STORE)
        if sorted(c for g in graph for c in g.get("chunk_ids") or []) != sorted(map(store.line_id, lines)):
            report.reason = "chunk store does not match the search snapshot"
            return None
        return _Base(old, aligned, frozenset(differ), rewrite=True)
    if not _sides_match(ws, old):
        return _Base(old, aligned, rewrite=True)
    try:  # the stores are ours as they are: only the stamps are new
        snapmod.rewrite_header(snapshot_path(ws), {"store_stamp": stamp, "side_stamps": _side_stamps(ws),
                                                   "store_sha": hashlib.sha256(raw).hexdigest()})
    except OSError:
        pass  # (read-only workspace) judged again next time
    return _Base(old, aligned)


def _sides_match(ws: Workspace, old: snapmod.Snapshot) -> bool:
    """True when the graph and the catalog hold the lines the snapshot's files give (any order)."""
    try:
        want = store.graph_and_catalog(old.files, bytes(old.raw("ids")).hex())
        have = [store.read_raw_lines(ws.metadata / rel) for rel in _SIDES]
    except (store.CorruptStore, OSError, KeyError, TypeError):
        return False
    return all(sorted(h) == sorted(w) for h, w in zip(have, want))


def _previous_lines(ws: Workspace, old) -> list[bytes] | None:
    """Store lines aligned with the old snapshot, or None when the store disagrees with it."""
    store_file = ws.metadata / store.CHUNK_STORE
    try:
        raw = store_file.read_bytes()
        lines = store.read_raw_lines(store_file, raw)
        if hashlib.sha256(raw).hexdigest() != old.header.get("store_sha"):
            aligned, differ, extra = verify.align(old, lines)  # same stamp, other bytes: the records decide
            return None if differ or extra else aligned
    except (store.CorruptStore, OSError, ValueError):
        return None
    return lines if len(lines) == old.n_docs else None


def sync(ws: Workspace, *, full: bool = False, progress: Progress | None = None) -> SyncReport:
    """Update derived state from the Markdown. The caller holds the index lock."""
    report = SyncReport()
    params = chunking_params(ws)
    base = None if full else _load_previous(ws, params, report)
    old = base.snap if base else None
    redo = base.redo if base else frozenset()
    if full and not report.reason:
        report.reason = "full rebuild requested"
    report.full = old is None
    if progress:
        progress("scan", 0, 0)
    current = scan(ws)
    known = old.stats() if old else {}  # path -> (mtime_ns, size); records are decoded on demand
    racy_limit = (old.header.get("indexed_at_ns", 0) - RACY_NS) if old else 0
    keep: dict[str, dict] = {}
    todo: list[tuple[str, str | None]] = []
    for rel, st in sorted(current.items()):
        f = known.get(rel)
        if f == (st.st_mtime_ns, st.st_size) and st.st_mtime_ns < racy_limit and rel not in redo:
            keep[rel] = None  # unchanged: its record is fetched only if a write happens
        else:
            todo.append((rel, old.record(old.file_index(rel))["sha"] if f and rel not in redo else None))
    report.deleted = sorted(p for p in known if p not in current)

    from memcli.index import parse  # deferred: searches import this module only to check staleness

    fresh: dict = {}
    for res in parse.process(ws.resolver(), todo, params["target_tokens"], params["overlap_tokens"], progress):
        if res.error:
            report.skipped.append((res.rel, res.error))
        elif res.unchanged:
            keep[res.rel] = None
        else:
            fresh[res.rel] = res
            (report.changed if res.rel in known else report.added).append(res.rel)
            if res.skipped:
                report.skipped.append((res.rel, res.problem or "skipped"))
            elif res.problem:
                report.warnings.append((res.rel, res.problem))
    report.files = len(keep) + len(fresh)
    touched = any(known[p] != (current[p].st_mtime_ns, current[p].st_size) for p in keep)
    if old is not None and not fresh and not report.deleted and not touched and not base.rewrite:
        report.chunks = old.n_docs
        old.close()
        return report
    for rel in keep:
        keep[rel] = old.record(old.file_index(rel))
    old_lines: list[bytes] = []
    if old is not None:
        old_lines = base.lines if base.lines is not None else _previous_lines(ws, old)
        if old_lines is None:  # the store changed under the snapshot: start over from the Markdown
            old.close()
            report.reason, report.full = "chunk store does not match the search snapshot", True
            return sync(ws, full=True, progress=progress)
    _write(ws, old, old_lines, keep, fresh, current, params, report, progress)
    if old is not None:
        old.close()
    for p in snapshot_path(ws).parent.glob("bm25_default_*.snap"):
        if p != snapshot_path(ws):
            atomic.remove(p)  # snapshot of an older tokenizer: never read again
    return report


def _write(ws, old, old_lines, keep, fresh, current, params, report, progress) -> None:
    """Assemble and write the new stores: kept documents first (old order), then fresh ones."""
    if progress:
        progress("write", 0, 0)
    asm = assemble.Assembly()
    carried = old is not None and bool(keep)
    if carried:
        assemble.carry_kept(asm, old, old_lines, keep, current)
    for rel in sorted(fresh):
        assemble.add_fresh(asm, rel, fresh[rel], current[rel])
    generation = secrets.token_hex(8)
    fresh_docs = [(rel, text.decode("utf-8"), span[2])
                  for rel in sorted(fresh) for span, text in zip(fresh[rel].spans, fresh[rel].texts)]
    carry.vectors_for(ws.metadata, old, asm.keep_mask, fresh_docs, asm.lines, generation,
                      ws.settings.chunking.passage_tokens)
    raw_store = store.write_lines(ws.metadata / store.CHUNK_STORE, asm.lines)
    id_blob = b"".join(asm.ids)
    _write_graph_and_catalog(ws, asm.files, id_blob.hex())  # before the snapshot, the commit point
    terms, term_off, p_d, p_t = assemble.postings(asm, carried)
    dl, meta, text_off = assemble.documents(asm)
    header = {
        "generation": generation,
        "tokenizer": tokenizer.NAME, "fingerprint": tokenizer.FINGERPRINT, "chunking": params,
        **bm25.header(dl), "n_terms": int(len(terms)), "n_postings": int(len(p_d)),
        "store_sha": hashlib.sha256(raw_store).hexdigest(), "indexed_at_ns": time.time_ns(),
        "store_stamp": store_stamp(ws.metadata / store.CHUNK_STORE), "side_stamps": _side_stamps(ws),
    }
    snapmod.write(snapshot_path(ws), header, {
        "terms": terms, "term_off": term_off, "post_doc": p_d, "post_tf": p_t,
        "doc_len": dl, "doc_norm": bm25.doc_norms(dl),
        "doc_meta": meta, "text_off": text_off,
        "text": b"".join(asm.texts), "ids": id_blob, **snapmod.file_sections(asm.files),
    })
    report.chunks = asm.n
    report.wrote = True


def _write_graph_and_catalog(ws: Workspace, files: list[dict], hexids: str) -> None:
    graph, catalog = store.graph_and_catalog(files, hexids)
    store.write_lines(ws.metadata / store.GRAPH_STORE, graph)
    store.write_lines(ws.metadata / store.CATALOG_DIR / "default.jsonl.zst", catalog)
