"""Writing an index update: new segments for fresh files, deletions, merges, the framed
stores, then the manifest, the commit point (memcli.index.keyword.segments).

Fresh files are gathered into segments of up to SEGMENT_DOCS chunks, each written as
soon as it is full, so a full build holds one segment's material at a time. The
files an update re-indexed or deleted become deletions of the segment holding them.
Then the merge policy (memcli.index.merge) may replace adjacent segments by one;
merging keeps the chunks' order, so the chunk store's lines keep their numbers.
Write order: segment files, their sidecar frames and vector files (memcli.index.vectors.carry),
manifest, then (when due) the ReMe-format stores (memcli.index.stores.mirror);
a crash before the manifest leaves the last committed segment list, a crash while
the stores are rewritten leaves stores whose stamps differ, judged by their records
at the next sync. Files no manifest lists any more are removed after it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.errors import CorruptStore
from memcli.index import merge
from memcli.index.keyword import assemble, bm25, segments, tokenizer
from memcli.index.keyword import snapshot as snapmod
from memcli.index.stores import frames, mirror, store
from memcli.vault import atomic

SEGMENT_DOCS = merge.SEGMENT_DOCS


@dataclass
class Part:
    """A segment of the index being written, and where its store lines are read from."""

    name: str
    snap: snapmod.Snapshot
    dead_files: set = field(default_factory=set)  # its files that are no longer current
    dead_docs: set = field(default_factory=set)
    src: dict = field(default_factory=dict)  # kind -> (buffer, offset, frame table, was files, was docs)
    chunk_lines: dict | None = None  # local chunk -> store line, when the frames cannot be trusted
    own: dict | None = None  # kind -> frame table of its sidecars (until the stores take it in)
    own_dead: list | None = None  # chunks dead when its chunks sidecar was written (mirror.revector)
    new: bool = False

    @property
    def live_docs(self) -> int:
        return self.snap.n_docs - len(self.dead_docs)

    @property
    def live_files(self) -> int:
        return len(self.snap.paths) - len(self.dead_files)


class Commit:
    def __init__(self, metadata: Path, manifest: Path, old, passage_tokens: int, aligned: list[bytes] | None):
        self.metadata, self.manifest, self.old = metadata, manifest, old
        self.folder = manifest.parent / segments.FOLDER
        self.folder.mkdir(parents=True, exist_ok=True)
        self.carrier = None  # vectors of fresh and merged segments (none in a keyword-only vault)
        if (metadata / "embedding_store" / "space.json").exists() or any(
            ".vec-" in p.name for p in self.folder.iterdir()
        ):
            from memcli.index.vectors import carry

            self.carrier = carry.Carrier(metadata, manifest, old, passage_tokens)
        self.parts: list[Part] = []
        self.pending: list = []
        self.pending_docs = 0
        self.written: list[Path] = []  # segment files this commit wrote (removed if it fails)
        self._maps = mirror.Opened()
        self.aligned = aligned  # the old chunk store's lines by chunk, when its frames are unknown
        self.hashes: dict[str, str] = {}  # sha256 of the files read (memcli.index.quick)
        if old is not None:
            self._keep_old(aligned)

    # ---- the old segments, as the update starts from them
    def _keep_old(self, aligned) -> None:
        # lines read from the stores (`aligned`) mean their stamps are not the manifest's
        src = mirror.sources(self.old, self._maps, use_stores=aligned is None)
        for seg in self.old.segments:
            part = Part(
                seg.name,
                seg.snap,
                set(seg.dead_files),
                set(seg.dead_docs),
                src=src[seg.name],
                own=seg.entry.get("own"),
                own_dead=seg.entry.get("own_dead"),
            )
            if "chunks" not in part.src:
                if aligned is None:
                    raise CorruptStore(f"the chunk store lines of index segment {seg.name} are missing")
                live = [j for j in range(seg.snap.n_docs) if not seg.doc_dead(j)]
                part.chunk_lines = {j: aligned[seg.doc_base + r] for r, j in enumerate(live)}
            self.parts.append(part)

    def delete(self, paths) -> list[tuple[int, int]]:
        """Mark the old versions of `paths` dead; returns the old chunks dropped, as (first,
        count) runs in the old numbering."""
        dropped = []
        for path in paths:
            i = self.old.file_index(path) if self.old is not None else None
            if i is None:
                continue
            seg, local = self.old._file(i)
            part = next(p for p in self.parts if p.name == seg.name)
            rec = seg.snap.record(local)
            part.dead_files.add(local)
            part.dead_docs.update(range(rec["first"], rec["first"] + rec["count"]))
            if rec["count"]:
                dropped.append((seg.global_doc(rec["first"]), rec["count"]))
        return dropped

    # ---- fresh files
    def add(self, rel: str, parsed, st) -> None:
        self.pending.append((rel, parsed, st))
        self.pending_docs += len(parsed.spans)
        if self.pending_docs >= SEGMENT_DOCS:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        asm = assemble.Assembly()
        pending = sorted(self.pending, key=lambda x: x[0])
        self.pending, self.pending_docs = [], 0
        for rel, parsed, st in pending:
            assemble.add_fresh(asm, rel, parsed, st)
        if self.carrier is not None:  # (a keyword-only vault never decodes the texts again)
            self.carrier.fresh(
                [
                    (rel, text.decode("utf-8"), span[2])
                    for rel, parsed, _ in pending
                    for span, text in zip(parsed.spans, parsed.texts)
                ],
                asm.lines,
            )
        del pending, parsed  # the assembly holds what is still needed, and lets go of it as it writes
        self.parts.append(self.write_segment(asm))
        if self.carrier is not None and self.carrier.space is not None:
            self.written.append(self.folder / f"{self.parts[-1].name}.vec-{self.carrier.space['id']}")
            self.carrier.write(self.parts[-1].name)
        del asm
        give_back_memory()

    def write_segment(self, asm: assemble.Assembly) -> Part:
        """Write `asm` as a new segment file and its store lines as sidecar frames (write_segment)."""
        name, own = write_segment(self.folder, asm, self.written)
        return self.adopt(name, own)

    def adopt(self, name: str, own: dict) -> Part:
        """The segment `name` written by write_segment() (here or in a build's worker), as a Part
        whose store lines are read back through maps when a merge needs them."""
        src = {
            kind: (
                self._maps.open(mirror.sidecar(self.folder, name, kind)) if table else b"",
                0,
                table,
                frozenset(),
                frozenset(),
            )
            for kind, table in own.items()
        }
        return Part(name, snapmod.Snapshot(self.folder / name), new=True, own=own, src=src)

    # ---- the end
    def finish(self, dropped: list, header: dict, force_store: bool = False) -> dict:
        """Merge, write the manifest, then the stores when due; returns the manifest.
        `dropped`: the old chunks no longer current (delete())."""
        self.flush()
        generation = os.urandom(8).hex()
        self.parts = merge.apply(self, self.parts)
        entries = []
        for p in self.parts:
            entry = {
                "name": p.name,
                "docs": p.snap.n_docs,
                "files": len(p.snap.paths),
                "dead_files": sorted(p.dead_files),
                "dead_docs": _runs(p.dead_docs),
            }
            if p.own is not None:
                entry["own"] = p.own
            if p.own_dead:
                entry["own_dead"] = p.own_dead
            entries.append(entry)
        n_docs = sum(p.live_docs for p in self.parts)
        total = sum(_live_length(p) for p in self.parts)
        prev = dict((self.old.header.get("store") or {}) if self.old is not None and self.aligned is None else {})
        if prev and mirror.current(self.old.header):
            prev["behind_since_ns"] = time.time_ns()  # the stores start trailing the index now
        man = dict(
            header,
            generation=generation,
            tokenizer=tokenizer.NAME,
            fingerprint=tokenizer.FINGERPRINT,
            **bm25.header(n_docs, total),
            n_terms=sum(int(p.snap.header.get("n_terms", 0)) for p in self.parts),
            n_files=sum(p.live_files for p in self.parts),
            indexed_at_ns=time.time_ns(),
            store=prev or None,
            segments=entries,
        )
        chunk_lines = {p.name: p.chunk_lines for p in self.parts if p.chunk_lines is not None}
        segments.write_manifest(self.manifest, man)
        self.written = []
        self.close()
        if force_store or chunk_lines or mirror.due(man):
            view = segments.open_view(self.manifest)
            assert view is not None  # the manifest written just above
            try:
                man = mirror.write(self.metadata, view, chunk_lines)
            finally:
                view.close()
        self._collect({p.name for p in self.parts})
        give_back_memory()  # (what follows in the same process, e.g. an embedding run, starts lean)
        return man

    def _collect(self, live: set[str]) -> None:
        """Remove segment files and sidecars no manifest lists (merged away, or left by a
        crashed update)."""
        for p in self.folder.iterdir():
            if p.name.split(".seg", 1)[0] + ".seg" not in live:
                atomic.remove(p)

    def abort(self) -> None:
        self.close()
        for p in self.written:
            atomic.remove(p)

    def close(self) -> None:
        for p in self.parts:
            p.src = {}  # (views of the maps closed below)
            if p.new:
                p.snap.close()
        self._maps.close()


def write_segment(folder: Path, asm: assemble.Assembly, written: list[Path]) -> tuple[str, dict]:
    """Write `asm` as a new segment file in `folder`, and its store lines as sidecar frames;
    returns (its name, kind -> frame table of its sidecars). Each path is put in `written`
    before it is written (removed if the commit fails). The largest parts go first, each let
    go once written: the store lines, then the texts joined, before the postings are sorted
    (a build's peak is that sort)."""
    name = f"{os.urandom(8).hex()}.seg"
    own = {}
    graph, catalog = store.graph_and_catalog(asm.files, b"".join(asm.ids).hex(), ordered=True)
    for kind, lines in (("chunks", asm.lines), ("graph", graph), ("catalog", catalog)):
        blobs, table = frames.build(lines, list(range(len(lines))), frames.FRAME_ITEMS[kind])
        side = mirror.sidecar(folder, name, kind)
        written.append(side)
        atomic.write_parts(side, blobs)
        own[kind] = table
        del blobs
    asm.lines = []  # let the chunk store lines go: their sidecars are written
    del graph, catalog, lines
    text, asm.texts = b"".join(asm.texts), []
    give_back_memory()  # (the sort's arrays are fresh maps: freed heap left unreturned would add to them)
    dl, meta, text_off = assemble.documents(asm)
    terms, term_off, p_d, p_t = assemble.postings(asm)
    path = folder / name
    written.append(path)
    total = int(dl.sum()) if hasattr(dl, "sum") else sum(dl)  # (numpy, or array.array)
    snapmod.write(
        path,
        {
            "n_docs": asm.n,
            "avgdl": total / asm.n if asm.n else 0.0,
            "total_len": total,
            "n_terms": len(terms),
            "n_postings": len(p_d),
        },
        {
            "terms": terms,
            "term_off": term_off,
            "post_doc": p_d,
            "post_tf": p_t,
            "doc_len": dl,
            "doc_meta": meta,
            "text_off": text_off,
            "text": text,
            "ids": b"".join(asm.ids),
            **snapmod.file_sections(asm.files),
        },
    )
    return name, own


def give_back_memory() -> None:
    """Return freed heap to the system between segments (glibc keeps it otherwise): a build's
    many short-lived chunk texts leave the heap fragmented, and without this its resident
    size grew with the vault (715 MiB at 100,000 notes) although each segment's working set
    is the same (~150 MiB)."""
    global _TRIM
    if _TRIM is None:
        import resource

        if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < TRIM_FROM_KIB:
            return  # a small job, nothing worth returning (and ctypes' import costs 2 ms)
        _TRIM = False
        try:
            import ctypes

            # the process's own symbols hold libc's: ctypes.util.find_library("c") cost 15 ms
            _TRIM = getattr(ctypes.CDLL(None), "malloc_trim", False)
        except (OSError, AttributeError, ImportError):
            pass
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None  # libc's malloc_trim, False without one; None: not looked up yet
TRIM_FROM_KIB = 100 * 1024  # peak resident size from which trimming the heap is worth it


def _live_length(part: Part) -> int:
    dl = part.snap.doc_len
    return int(part.snap.header.get("total_len", 0)) - sum(dl[d] for d in part.dead_docs)


def _runs(numbers) -> list[list[int]]:
    """Sorted numbers as [first, count] runs."""
    out: list[list[int]] = []
    for x in sorted(numbers):
        if out and out[-1][0] + out[-1][1] == x:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return out
