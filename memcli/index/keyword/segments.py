"""The keyword index as a set of immutable segments, read as one.

The list of segments in use is the manifest (`keyword_index/bm25_default_<tokenizer>_
<fingerprint>_v1.segments.json`), written atomically: it is the commit point of an
update. Each entry names a segment file (memcli.index.keyword.snapshot) and what of it is
no longer current: the files an update re-indexed or deleted (`dead_files`) and
their chunks (`dead_docs`, as [first, count] runs). An update writes its fresh files
as a new segment and a new manifest; merges (memcli.index.merge) replace adjacent
segments by one and drop what is dead. So a one-file update costs one small
segment, whatever the size of the vault, and a search reads one consistent list of
segments however many updates or merges run beside it.

The segments read as one index (View): chunks are numbered densely, segment after
segment, skipping dead ones, and files the same way; that numbering is the order
of the chunk store's lines (vectors are kept per segment: memcli.index.vectors.vecseg). BM25 statistics (chunk
count, average length, document frequencies) count live chunks only, so scores are
the ones a full rebuild gives.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from pathlib import Path

from memcli.errors import CorruptStore
from memcli.index.keyword import snapshot as snapmod

FORMAT = 1
FOLDER = "segments"
STORES = ("chunks", "graph", "catalog")  # the framed stores (memcli.index.stores.frames), by what a frame holds


def expand(runs) -> list[int]:
    """[[first, count], ...] -> the sorted numbers they cover."""
    out: list[int] = []
    for first, count in runs:
        out.extend(range(first, first + count))
    out.sort()
    return out


def read_manifest(path: Path) -> dict | None:
    """The manifest at `path`, None when there is none; CorruptStore when it does not parse."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CorruptStore(f"index manifest unreadable: {exc.strerror}") from None
    try:
        man = json.loads(raw)
        if not isinstance(man, dict) or man.get("format") != FORMAT or not isinstance(man.get("segments"), list):
            raise ValueError("not a segment list of this version")
        for seg in man["segments"]:
            if not isinstance(seg.get("name"), str) or "/" in seg["name"] or seg["name"].startswith("."):
                raise ValueError("bad segment name")
    except (ValueError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise CorruptStore(f"index manifest {Path(path).name} is damaged ({exc})") from None
    return man


def write_manifest(path: Path, man: dict) -> None:
    from memcli.vault import atomic

    atomic.write_bytes(path, json.dumps(dict(man, format=FORMAT), separators=(",", ":")).encode())


class Segment:
    """One segment as the view reads it: its file, what is dead in it, where it starts."""

    def __init__(self, folder: Path, entry: dict, doc_base: int, file_base: int):
        self.entry = entry
        self.name = entry["name"]
        try:
            self.snap = snapmod.Snapshot(folder / self.name)
        except CorruptStore:
            if not (folder / self.name).exists():
                raise FileNotFoundError(self.name) from None
            raise
        self.dead_files = sorted(entry.get("dead_files") or [])
        self.dead_docs = expand(entry.get("dead_docs") or [])
        self._dead_doc_set = frozenset(self.dead_docs)
        self._dead_file_set = frozenset(self.dead_files)
        if (
            self.snap.n_files != int(entry.get("files", -1))
            or self.snap.n_docs != int(entry.get("docs", -1))
            or (self.dead_docs and self.dead_docs[-1] >= self.snap.n_docs)
            or (self.dead_files and self.dead_files[-1] >= self.snap.n_files)
        ):
            raise CorruptStore(f"index segment {self.name} does not match the manifest")
        self.doc_base, self.file_base = doc_base, file_base
        self.n_live = self.snap.n_docs - len(self.dead_docs)
        self.n_live_files = self.snap.n_files - len(self.dead_files)

    def doc_dead(self, local: int) -> bool:
        return local in self._dead_doc_set

    def file_dead(self, local: int) -> bool:
        return local in self._dead_file_set

    @property
    def dead_doc_set(self) -> frozenset:
        return self._dead_doc_set

    def global_doc(self, local: int) -> int:
        return self.doc_base + local - (bisect_left(self.dead_docs, local) if self.dead_docs else 0)

    def global_file(self, local: int) -> int:
        return self.file_base + local - (bisect_left(self.dead_files, local) if self.dead_files else 0)

    def local_doc(self, rank: int) -> int:
        return _nth_live(self.dead_docs, rank)

    def local_file(self, rank: int) -> int:
        return _nth_live(self.dead_files, rank)


def _nth_live(dead: list[int], rank: int) -> int:
    """The number of the `rank`-th (0-based) live item when `dead` (sorted) are skipped."""
    if not dead:
        return rank
    lo, hi = rank, rank + len(dead)
    while lo < hi:  # the smallest x with rank + 1 live items in 0..x
        mid = (lo + hi) // 2
        if mid + 1 - bisect_right(dead, mid) > rank:
            hi = mid
        else:
            lo = mid + 1
    return lo


class View:
    """The live chunks and files of a manifest's segments, numbered as one index. Reads like
    a single segment: n_docs, header, paths, file_index, stats, record, files, meta, text,
    chunk_id, chunk_ids; BM25 reads spans() and df()."""

    def __init__(self, folder: Path, man: dict, path: Path | None = None):
        self.path = path
        self.header = man
        self.segments: list[Segment] = []
        doc_base = file_base = 0
        try:
            for entry in man["segments"]:
                seg = Segment(folder, entry, doc_base, file_base)
                self.segments.append(seg)
                doc_base += seg.n_live
                file_base += seg.n_live_files
        except BaseException:
            self.close()
            raise
        self.n_docs, self.n_files = doc_base, file_base
        if int(man.get("n_docs", -1)) != self.n_docs:
            self.close()
            raise CorruptStore("index manifest counts other chunks than its segments hold")
        self.avgdl = float(man.get("avgdl", 0.0))
        self._doc_bases = [s.doc_base for s in self.segments]
        self._file_bases = [s.file_base for s in self.segments]
        self._paths: Paths | None = None
        self._index: dict[str, int | None] | None = None

    # ---- numbering
    def _doc(self, d: int) -> tuple[Segment, int]:
        if not 0 <= d < self.n_docs:
            raise IndexError(d)
        # the last segment starting at or before d: an empty one shares its base with the next
        seg = self.segments[bisect_right(self._doc_bases, d) - 1]
        return seg, seg.local_doc(d - seg.doc_base)

    def _file(self, i: int) -> tuple[Segment, int]:
        if not 0 <= i < self.n_files:
            raise IndexError(i)
        seg = self.segments[bisect_right(self._file_bases, i) - 1]
        return seg, seg.local_file(i - seg.file_base)

    # ---- files
    @property
    def paths(self) -> Paths:
        """The live paths in file order, as a sequence decoded one segment at a time."""
        if self._paths is None:
            self._paths = Paths(self)
        return self._paths

    def file_index(self, path: str) -> int | None:
        """The file number of `path`, found through each segment's path hashes (a dict of every
        path would cost a cold search 30 ms at 100,000 notes)."""
        if self._index is None:
            self._index = {}
        if path not in self._index:
            found = None
            for seg in self.segments:
                j = seg.snap.find(path)
                if j is not None and not seg.file_dead(j):
                    found = seg.global_file(j)
                    break
            self._index[path] = found
        return self._index[path]

    def stats(self) -> dict[str, tuple[int, int]]:
        """path -> (mtime_ns, size) of every live file, as indexed."""
        out: dict[str, tuple[int, int]] = {}
        for seg in self.segments:
            st = seg.snap.raw("fstat")
            pairs = zip(st[0::2].tolist(), st[1::2].tolist())  # (in C: 100,000 files in ~10 ms)
            live = dict(zip(seg.snap.paths, pairs))
            for j in seg.dead_files:  # (few: a one-file update kills one file of an old segment)
                del live[seg.snap.paths[j]]
            out.update(live)
        return out

    def record(self, i: int, inlinks: bool = False) -> dict:
        """File `i`'s record: its segment's, with `first` in the view's numbering, and with
        `inlinks`, `in`: the files whose wikilinks resolve to it (by path), found through
        the segments' link tables."""
        seg, local = self._file(i)
        rec = dict(seg.snap.record(local))
        rec["first"] = seg.global_doc(rec["first"]) if rec.get("count") else self._empty_first(seg, rec["first"])
        if inlinks:
            rec["in"] = self._inlinks(rec["path"])
        return rec

    def _empty_first(self, seg: Segment, first: int) -> int:
        # a file without chunks: where its chunks would start (the next live chunk's number)
        return seg.doc_base + first - bisect_left(seg.dead_docs, first)

    @property
    def files(self) -> list[dict]:
        return [self.record(i) for i in range(self.n_files)]

    def _resolve(self, target: str) -> str | None:
        if self.file_index(target) is not None:
            return target
        return target + ".md" if self.file_index(target + ".md") is not None else None

    def _inlinks(self, path: str) -> list[list]:
        from memcli.index.keyword.tokenizer import term_hash

        targets = [path]
        if path.endswith(".md") and self.file_index(path[:-3]) is None:
            targets.append(path[:-3])
        found: list[tuple[str, int, str]] = []  # (source path, link's place in it, anchor)
        for seg in self.segments:
            sources = sorted({j for t in targets for j in seg.snap.linking(term_hash(t)) if not seg.file_dead(j)})
            for j in sources:
                src = seg.snap.paths[j]
                for n, (t, anchor) in enumerate(seg.snap.record(j).get("links", ())):
                    if t in targets and self._resolve(t) == path:
                        found.append((src, n, anchor))
        found.sort()
        return [[src, anchor] for src, _, anchor in found]

    # ---- chunks
    def meta(self, d: int) -> tuple[int, int, int, int]:
        seg, local = self._doc(d)
        f, start, end, crumb = seg.snap.meta(local)
        return seg.global_file(f), start, end, crumb

    def text(self, d: int) -> str:
        seg, local = self._doc(d)
        return seg.snap.text(local)

    def chunk_id(self, d: int) -> str:
        seg, local = self._doc(d)
        return seg.snap.chunk_id(local)

    def doc_length(self, d: int) -> int:
        seg, local = self._doc(d)
        return int(seg.snap.doc_len[local])

    def chunk_ids(self) -> list[str]:
        """Every live chunk id, in the view's order."""
        out: list[str] = []
        for seg in self.segments:
            ids = seg.snap.chunk_ids()
            out.extend(ids if not seg.dead_docs else (c for j, c in enumerate(ids) if not seg.doc_dead(j)))
        return out

    # ---- postings
    def spans(self, h: int) -> list[tuple[Segment, int, int]]:
        """(segment, start, end) of term hash `h`'s postings in each segment holding it."""
        out = []
        for seg in self.segments:
            span = seg.snap.postings(h)
            if span is not None:
                out.append((seg, span[0], span[1]))
        return out

    def df(self, h: int, spans=None) -> int:
        """How many live chunks hold term hash `h`."""
        total = 0
        for seg, a, z in self.spans(h) if spans is None else spans:
            if seg.dead_docs and len(seg.dead_docs) * 20 < z - a:  # a term's chunks are in order
                docs = seg.snap.post_doc[a:z]
                total += z - a - sum(1 for d in seg.dead_docs if (i := bisect_left(docs, d)) < z - a and docs[i] == d)
            elif seg.dead_docs:
                dead = seg.dead_doc_set
                total += sum(1 for d in seg.snap.post_doc[a:z].tolist() if d not in dead)
            else:
                total += z - a
        return total

    def close(self) -> None:
        for seg in self.segments:
            seg.snap.close()
        self.segments = []


class Paths:
    """View.paths: indexable, iterable, sized; a segment's paths are decoded when first read."""

    def __init__(self, view: View):
        import weakref

        # a plain reference would make a cycle, and the view's maps (file descriptors) would
        # wait for the garbage collector instead of closing when the view is dropped
        self.view = weakref.proxy(view)

    def __len__(self) -> int:
        return self.view.n_files

    def __getitem__(self, i: int) -> str:
        if isinstance(i, slice):
            return list(self)[i]
        seg, local = self.view._file(i if i >= 0 else i + self.view.n_files)
        return seg.snap.paths[local]

    def __iter__(self):
        for seg in self.view.segments:
            names = seg.snap.paths
            yield from (names if not seg.dead_files else (p for j, p in enumerate(names) if not seg.file_dead(j)))

    def __contains__(self, path) -> bool:
        return self.view.file_index(path) is not None


def open_view(manifest: Path) -> View | None:
    """The index the manifest at `manifest` describes, None when there is none. A segment that
    vanished between reading the manifest and opening it was merged away by an update that
    committed meanwhile: the new manifest is read instead."""
    for _ in range(5):
        man = read_manifest(manifest)
        if man is None:
            return None
        try:
            return View(manifest.parent / FOLDER, man, manifest)
        except FileNotFoundError:
            continue
    raise CorruptStore("index segments keep changing under the reader; run `mem reindex`")
