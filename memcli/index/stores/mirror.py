"""The ReMe-format stores (chunk store, graph, catalog) as a mirror of the index, rewritten
in batches once the vault is large.

ReMe reads these files; mem's searches never do. Each is a run of zstd
frames per segment (memcli.index.stores.frames). Rewriting one copies every frame it does
not touch from the previous file and recompresses only frames with a deleted line,
but that copy still grows with the vault (about 60 MB at 20,000 notes), so a vault
whose chunk store is over EAGER_BYTES has it rewritten only when BATCH_SHARE of its
files, or at least BATCH_MIN_FILES, changed since, when the oldest pending change is
BATCH_SECONDS old, or when something needs it current (an embedding run, a full
reindex, a store another tool rewrote). Until then the three stores stay, together,
exactly the mirror of an earlier committed index: ReMe sees those files' old
versions and, as with any file edited since it last looked, re-chunks them itself.

The manifest's `store` records what the files hold: the segments in store order with
the dead items and frame tables they had when written, and the files' stamps. A
segment written since has its own frames in sidecar files (`<segment>.<kind>.zst`)
until the next rewrite takes them in.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from memcli.errors import CorruptStore
from memcli.index.keyword import segments
from memcli.index.stores import frames, store
from memcli.vault import atomic

STORE_FILES = {
    "chunks": store.CHUNK_STORE,
    "graph": store.GRAPH_STORE,
    "catalog": f"{store.CATALOG_DIR}/default.jsonl.zst",
}
EAGER_BYTES = 16 << 20
BATCH_SHARE, BATCH_MIN_FILES, BATCH_SECONDS = 0.01, 50, 600
STREAM_PIECE = 4 << 20


def sidecar(folder: Path, name: str, kind: str) -> Path:
    return folder / f"{name}.{kind}.zst"


def stamps(metadata: Path) -> dict:
    out = {}
    for kind, rel in STORE_FILES.items():
        try:
            st = (metadata / rel).stat()
            out[kind] = [st.st_size, st.st_mtime_ns]
        except OSError:
            out[kind] = []
    return out


def due(man: dict) -> bool:
    """Whether the stores should be rewritten now (module docstring)."""
    rec = man.get("store")
    if not rec or rec.get("layout") is None:
        return True
    size = (rec.get("stamps", {}).get("chunks") or [0])[0]
    if size <= EAGER_BYTES:
        return True
    pending = pending_files(man)
    if not pending:
        return False
    if pending >= max(BATCH_MIN_FILES, BATCH_SHARE * int(man.get("n_files", 0))):
        return True
    return time.time_ns() - int(rec.get("behind_since_ns") or time.time_ns()) >= BATCH_SECONDS * 1e9


def pending_files(man: dict) -> int:
    """About how many files the stores do not hold as indexed: the live files of segments they
    lack, or the files dead since, whichever is more (an edit is one of each)."""
    rec = man.get("store") or {}
    layout = {e["name"]: e for e in rec.get("layout") or []}
    fresh = dead = 0
    for seg in man["segments"]:
        was = layout.get(seg["name"])
        if was is None or was.get("stale"):
            fresh += int(seg["files"]) - len(seg.get("dead_files") or [])
        else:
            dead += len(set(seg.get("dead_files") or []) - set(was.get("dead_files") or []))
    return max(fresh, dead)


def current(man: dict) -> bool:
    """The stores hold exactly the manifest's segments, with the same deletions."""
    layout = (man.get("store") or {}).get("layout")
    if layout is None:
        return False
    return [e["name"] for e in layout] == [s["name"] for s in man["segments"]] and all(
        sorted(e.get("dead_files") or []) == sorted(s.get("dead_files") or []) and not e.get("stale")
        for e, s in zip(layout, man["segments"])
    )


class Source:
    """A store file or sidecar, read with pread: slices are bytes (a frame to recompress),
    and untouched frames are copied from it by the writer piece by piece (stream()), so a
    rewrite's memory does not follow the store's size."""

    def __init__(self, fd: int):
        self.fd = fd
        self.size = os.fstat(fd).st_size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, cut: slice) -> bytes:
        start, stop = cut.start or 0, min(cut.stop if cut.stop is not None else self.size, self.size)
        return os.pread(self.fd, max(0, stop - start), start)


class Opened:
    """The Sources a rewrite or a commit opened (closed together)."""

    def __init__(self):
        self.fds: list[int] = []

    def open(self, path: Path) -> Source | None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        self.fds.append(fd)
        return Source(fd)

    def close(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def stream(parts):
    """The bytes of `parts` (bytes, or frames.Span copied from a Source 4 MB at a time)."""
    for part in parts:
        if isinstance(part, frames.Span):
            pos, end = part.off, part.off + part.n
            while pos < end:
                piece = part.src[pos : min(end, pos + STREAM_PIECE)]
                if not piece:
                    raise CorruptStore("a store ended before the frames the manifest lists")
                yield piece
                pos += len(piece)
        else:
            yield part


def sources(view, maps: Opened, use_stores: bool = True) -> dict:
    """name -> kind -> (buffer, offset, frame table, dead files, dead docs) where each live
    segment's frames are now: the stores (when their layout is known and `use_stores`: their
    stamps are the manifest's) or its sidecars."""
    man = view.header
    layout = ((man.get("store") or {}).get("layout") or []) if use_stores else []
    out: dict = {s.name: {} for s in view.segments}
    folder = view.path.parent / segments.FOLDER
    for kind, rel in STORE_FILES.items():
        buf = maps.open(view.path.parent.parent / rel) if layout else None
        pos = 0
        for e in layout:
            table = e.get("frames", {}).get(kind) or []
            # (a `stale` kind: the segment's lines changed since, its sidecar holds them: revector())
            if buf is not None and e["name"] in out and kind not in (e.get("stale") or ()):
                out[e["name"]][kind] = (
                    buf,
                    pos,
                    table,
                    frozenset(e.get("dead_files") or []),
                    frozenset(segments.expand(e.get("dead_docs") or [])),
                )
            pos += sum(f[2] for f in table)
        if buf is not None and pos not in (len(buf), 0):
            raise CorruptStore(f"{Path(rel).name} does not match the index manifest")
        for seg in view.segments:
            own = (seg.entry.get("own") or {}).get(kind)
            if kind not in out[seg.name] and own is not None:
                side = maps.open(sidecar(folder, seg.name, kind))
                if side is not None:  # (chunks revector() wrote lack the chunks dead by then)
                    was = (
                        frozenset(segments.expand(seg.entry.get("own_dead") or [])) if kind == "chunks" else frozenset()
                    )
                    out[seg.name][kind] = (side, 0, own, frozenset(), was)
    return out


def write(metadata: Path, view, chunk_lines: dict | None = None) -> dict:
    """Rewrite the three stores as the mirror of `view`'s manifest, record them in it and drop
    the sidecars; returns the new manifest. `chunk_lines`: segment name -> chunk -> store
    line, for segments whose frames are nowhere (a store another tool rewrote). The caller
    holds the index lock."""
    maps = Opened()
    try:
        src = sources(view, maps)
        man = dict(view.header)
        entries = [
            {
                "name": s.name,
                "dead_files": list(s.dead_files),
                "dead_docs": s.entry.get("dead_docs") or [],
                "frames": {},
            }
            for s in view.segments
        ]
        for kind, rel in STORE_FILES.items():
            blobs = []
            for seg, entry in zip(view.segments, entries):
                dead = seg.dead_doc_set if kind == "chunks" else frozenset(seg.dead_files)
                if kind in src[seg.name]:
                    buf, off, table, was_files, was_docs = src[seg.name][kind]
                    parts, table = frames.carry(
                        buf, off, table, was_docs if kind == "chunks" else was_files, dead, Path(rel).name
                    )
                else:
                    pairs = rebuilt_lines(
                        seg.snap,
                        seg.dead_doc_set if kind == "chunks" else seg.dead_files,
                        kind,
                        (chunk_lines or {}).get(seg.name),
                    )
                    parts, table = frames.build(
                        [ln for _, ln in pairs], [x for x, _ in pairs], frames.FRAME_ITEMS[kind]
                    )
                blobs.extend(parts)
                entry["frames"][kind] = table
            atomic.write_parts(metadata / rel, stream(blobs or [store.compress(b"")]))  # never an empty file
        man["store"] = {"layout": entries, "stamps": stamps(metadata), "written_at_ns": time.time_ns()}
        man["segments"] = [{k: v for k, v in e.items() if k not in ("own", "own_dead")} for e in man["segments"]]
        segments.write_manifest(view.path, man)
    finally:
        maps.close()
    folder = view.path.parent / segments.FOLDER
    for seg in view.segments:
        for kind in STORE_FILES:
            atomic.remove(sidecar(folder, seg.name, kind))
    return man


def revector(metadata: Path, view, vectors_by_seg: dict) -> dict:
    """Put chunk vectors into the chunk store lines of some segments: segment name -> local
    chunk -> vector (base64, None = no vector). Their lines are written as the segments'
    sidecar frames and the stores' frames of them marked stale, so the cost follows those
    segments; the stores are rewritten when due (a small vault's at once). Returns the new
    manifest. The caller holds the index lock."""
    man = dict(view.header)
    folder = view.path.parent / segments.FOLDER
    entries = {e["name"]: e for e in man["segments"]}
    maps = Opened()
    try:
        src = sources(view, maps)
        for seg in view.segments:
            vecs = vectors_by_seg.get(seg.name)
            if vecs is None:
                continue
            if "chunks" not in src[seg.name]:
                raise CorruptStore(f"the chunk store lines of index segment {seg.name} are missing")
            buf, off, table, _, was_docs = src[seg.name]["chunks"]
            pairs = frames.lines_of(buf, off, table, was_docs, seg.dead_doc_set, Path(STORE_FILES["chunks"]).name)
            lines = [store.with_vector(ln, vecs.get(j)) for j, ln in pairs]
            blobs, table = frames.build(lines, [j for j, _ in pairs], frames.FRAME_ITEMS["chunks"])
            atomic.write_parts(sidecar(folder, seg.name, "chunks"), blobs or [store.compress(b"")])
            # the other kinds keep being read where they are (stores, or their own sidecars)
            entry = entries[seg.name] = dict(entries[seg.name])
            entry["own"] = dict(entry.get("own") or {}, chunks=table)
            entry["own_dead"] = seg.entry.get("dead_docs") or []
    finally:
        maps.close()
    rec = dict(man.get("store") or {})
    if rec.get("layout") is not None:
        rec["layout"] = [
            dict(e, stale=sorted(set(e.get("stale") or ()) | {"chunks"})) if e["name"] in vectors_by_seg else e
            for e in rec["layout"]
        ]
        rec.setdefault("behind_since_ns", time.time_ns())
        man["store"] = rec
    man["segments"] = [entries[e["name"]] for e in man["segments"]]
    segments.write_manifest(view.path, man)
    again = segments.open_view(view.path) if due(man) else None
    if again is not None:
        try:
            man = write(metadata, again)
        finally:
            again.close()
    return man


def source_lines(part, kind: str) -> list[tuple[int, bytes]]:
    """(local item, line) of `kind` for the live items of `part` (memcli.index.commit.Part: a
    merge's input), from its frames, else made anew (rebuilt_lines)."""
    dead = frozenset(part.dead_docs if kind == "chunks" else part.dead_files)
    if kind in part.src:
        buf, off, table, was_files, was_docs = part.src[kind]
        return frames.lines_of(
            buf, off, table, was_docs if kind == "chunks" else was_files, dead, Path(STORE_FILES[kind]).name
        )
    return rebuilt_lines(part.snap, dead, kind, part.chunk_lines)


def rebuilt_lines(snap, dead, kind: str, chunk_lines: dict | None) -> list[tuple[int, bytes]]:
    """(local item, line) of `kind` for the live items of segment `snap`, made without its
    frames: chunk lines from `chunk_lines` (local chunk -> line, read from a store another
    tool rewrote), graph and catalog lines from the file records."""
    if kind == "chunks":
        lines = chunk_lines or {}
        out = [(j, lines.get(j, b"")) for j in range(snap.n_docs) if j not in dead]
        if any(not ln for _, ln in out):
            raise CorruptStore("chunk store lines missing for an index segment")
        return out
    out = []
    for j in range(len(snap.paths)):
        if j in dead:
            continue
        rec = snap.record(j)
        if kind == "graph":
            ids = [snap.chunk_id(d) for d in range(rec["first"], rec["first"] + rec["count"])]
            out.append((j, store.graph_line(rec["path"], rec["mtime"], rec["links"], ids, rec["fm"])))
        else:
            out.append((j, store.catalog_line(rec["path"], rec["mtime"])))
    return out
