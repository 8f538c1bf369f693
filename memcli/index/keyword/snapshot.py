"""One index segment: an immutable, memory-mappable file holding what a search reads of
some of the vault's files (memcli.index.keyword.segments lists the segments in use).

A cold `mem search` must answer in well under 0.15 s, so it cannot decompress and
parse the chunk store. A segment keeps, in fixed-width little-endian arrays, the
BM25 postings (keyed by 64-bit term hashes, sorted for binary search: a search
reads only its terms' postings), per-chunk lengths, line ranges and ids, and the
chunk texts; a table of its files: paths and stats in flat arrays for the staleness
check, one JSON record per file (hash, frontmatter, links), decoded only for the
files a search shows; and the files' links keyed by target hash, so inlinks are
found without reading every record. Reading needs only mmap and memoryview, and
writing takes typed arrays (array.array, or numpy for big segments): no numpy for a
small update. Written once, never changed: deletions are kept in the segment list,
and merges write new segments.

Layout: b"MEMSNAP1" | u32 header length | header JSON | 8-aligned sections.
"""

from __future__ import annotations

import json
import mmap
import struct
from bisect import bisect_left
from pathlib import Path
from typing import Literal

from memcli.errors import CorruptStore

MAGIC = b"MEMSNAP1"
VERSION = 5
# section name -> memoryview format
SECTIONS: dict[str, Literal["Q", "I", "B", "q"]] = {
    "terms": "Q",  # sorted term hashes
    "term_off": "Q",  # n_terms + 1 offsets into the postings
    "post_doc": "I",
    "post_tf": "I",
    "doc_len": "I",
    "doc_meta": "I",  # 4 per chunk: file index, start_line, end_line, breadcrumb lines
    "text_off": "Q",  # n_docs + 1 offsets into text
    "text": "B",
    "ids": "B",  # 32 raw sha256 bytes per chunk
    "paths": "B",  # indexed file paths, NUL-separated, in file-table order
    "fstat": "q",  # 2 per file: mtime_ns, size (what a staleness check compares)
    "frec_off": "Q",  # n_files + 1 offsets into frecs
    "frecs": "B",  # one JSON record per file: sha, fm, links, first, count, ...
    "link_hash": "Q",  # term_hash of each link's target path, sorted
    "link_src": "I",  # the file (of this segment) making that link
    "path_hash": "Q",  # term_hash of each file's path, sorted: a path is found without a dict of all
    "path_file": "I",  # the file holding that path
}


def write(path: Path, header: dict, arrays: dict) -> None:
    """Write a segment; `arrays` maps section name -> bytes-like (array.array, numpy)."""
    from memcli.vault import atomic

    blobs = {name: memoryview(arrays[name]).cast("B") for name in SECTIONS}  # no copies
    sections = {}
    offset = 0
    for name in SECTIONS:
        sections[name] = [offset, len(blobs[name])]
        offset += (len(blobs[name]) + 7) & ~7
    head = dict(header, version=VERSION, sections=sections)
    hjson = json.dumps(head, separators=(",", ":")).encode()
    base = len(MAGIC) + 4 + len(hjson)
    pad0 = (-base) & 7
    parts: list[bytes | memoryview] = [MAGIC, struct.pack("<I", len(hjson) + pad0), hjson, b" " * pad0]
    for name in SECTIONS:
        b = blobs[name]
        parts.append(b)
        parts.append(b"\0" * ((-len(b)) & 7))
    atomic.write_parts(path, parts)


class Snapshot:
    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            with open(self.path, "rb") as fh:
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            if hasattr(mmap, "MADV_RANDOM"):
                # a search reads a few scattered postings: from a cold disk, reading ahead
                # around each page would read what it never looks at
                self._mm.madvise(mmap.MADV_RANDOM)
        except (OSError, ValueError) as exc:
            raise CorruptStore(f"search snapshot unreadable: {exc}") from None
        mv = memoryview(self._mm)
        try:
            if mv[:8] != MAGIC:
                raise ValueError("bad magic")
            (hlen,) = struct.unpack_from("<I", mv, 8)
            self.header = json.loads(bytes(mv[12 : 12 + hlen]))
            if self.header.get("version") != VERSION:
                raise ValueError(f"format version {self.header.get('version')}, expected {VERSION}")
            base = 12 + hlen
            self._sec = {}
            for name, fmt in SECTIONS.items():
                off, length = self.header["sections"][name]
                start = base + off
                if start + length > len(mv):
                    raise ValueError("truncated")
                self._sec[name] = mv[start : start + length].cast(fmt)
        except (ValueError, KeyError, TypeError, struct.error) as exc:
            raise CorruptStore(f"search snapshot {self.path.name} is damaged ({exc})") from None
        self.n_docs = int(self.header["n_docs"])
        self.avgdl = float(self.header["avgdl"])
        self.terms = self._sec["terms"]
        self.term_off = self._sec["term_off"]
        self.post_doc = self._sec["post_doc"]
        self.post_tf = self._sec["post_tf"]
        self.doc_len = self._sec["doc_len"]
        self.doc_meta = self._sec["doc_meta"]
        self.text_off = self._sec["text_off"]
        if (
            len(self.doc_len) != self.n_docs
            or len(self.text_off) != self.n_docs + 1
            or len(self.doc_meta) != 4 * self.n_docs
            or len(self._sec["ids"]) != 32 * self.n_docs
            or len(self._sec["link_hash"]) != len(self._sec["link_src"])
            or len(self._sec["path_hash"]) != len(self._sec["path_file"])
        ):
            raise CorruptStore(f"search snapshot {self.path.name} is inconsistent")
        # the file count without decoding the paths (a search opens every segment, reads few paths)
        self.n_files = max(len(self._sec["frec_off"]) - 1, 0)
        if len(self._sec["fstat"]) != 2 * self.n_files or len(self._sec["path_hash"]) != self.n_files:
            raise CorruptStore(f"search snapshot {self.path.name} is inconsistent")
        self._paths: list[str] | None = None
        self._index: dict[str, int] | None = None
        self._records: dict[int, dict] = {}

    @property
    def paths(self) -> list[str]:
        if self._paths is None:
            raw = bytes(self._sec["paths"]).decode("utf-8")
            paths = raw.split("\0") if raw else []
            if len(paths) != self.n_files:
                raise CorruptStore(f"search snapshot {self.path.name} is inconsistent")
            self._paths = paths
        return self._paths

    def file_index(self, path: str) -> int | None:
        if self._index is None:
            self._index = {p: i for i, p in enumerate(self.paths)}
        return self._index.get(path)

    def stats(self) -> dict[str, tuple[int, int]]:
        """path -> (mtime_ns, size) as indexed."""
        st = self._sec["fstat"]
        return dict(zip(self.paths, zip(st[0::2].tolist(), st[1::2].tolist())))

    def record(self, i: int) -> dict:
        rec = self._records.get(i)
        if rec is None:
            off = self._sec["frec_off"]
            try:
                rec = json.loads(bytes(self._sec["frecs"][off[i] : off[i + 1]]))
            except (ValueError, IndexError):
                raise CorruptStore(f"search snapshot {self.path.name}: file record {i} damaged") from None
            st = self._sec["fstat"]
            rec.update(path=self.paths[i], mtime_ns=st[2 * i], size=st[2 * i + 1])
            self._records[i] = rec
        return rec

    @property
    def files(self) -> list[dict]:
        """Every file record (for index updates and health; searches use record())."""
        return [self.record(i) for i in range(len(self.paths))]

    def postings(self, h: int) -> tuple[int, int] | None:
        """(start, end) into post_doc/post_tf for term hash `h`, or None."""
        i = bisect_left(self.terms, h)
        if i < len(self.terms) and self.terms[i] == h:
            return self.term_off[i], self.term_off[i + 1]
        return None

    def find(self, path: str) -> int | None:
        """The file number of `path` in this segment, or None."""
        from memcli.index.keyword.tokenizer import term_hash

        keys, idx = self._sec["path_hash"], self._sec["path_file"]
        h = term_hash(path)
        i = bisect_left(keys, h)
        while i < len(keys) and keys[i] == h:
            if self.paths[idx[i]] == path:
                return idx[i]
            i += 1
        return None

    def linking(self, h: int) -> list[int]:
        """Files of this segment with a link whose target path hashes to `h`."""
        keys, src = self._sec["link_hash"], self._sec["link_src"]
        i = bisect_left(keys, h)
        out = []
        while i < len(keys) and keys[i] == h:
            out.append(src[i])
            i += 1
        return out

    def meta(self, doc: int) -> tuple[int, int, int, int]:
        m = self.doc_meta
        j = doc * 4
        return m[j], m[j + 1], m[j + 2], m[j + 3]

    def text(self, doc: int) -> str:
        a, b = self.text_off[doc], self.text_off[doc + 1]
        return bytes(self._sec["text"][a:b]).decode("utf-8")

    def chunk_id(self, doc: int) -> str:
        return bytes(self._sec["ids"][doc * 32 : doc * 32 + 32]).hex()

    def chunk_ids(self) -> list[str]:
        """Every chunk id, in document order."""
        h = bytes(self._sec["ids"]).hex()
        return [h[i : i + 64] for i in range(0, len(h), 64)]

    def raw(self, name: str) -> memoryview:
        return self._sec[name]

    def release_pages(self) -> None:
        """Unmap the pages read so far (they stay in the page cache; a later read maps them
        again). Where the page cache holds the file in large folios, reading one posting
        maps its whole folio (up to 2 MB): a search over 20 segments counted 190 MiB."""
        if hasattr(mmap, "MADV_DONTNEED"):
            try:
                self._mm.madvise(mmap.MADV_DONTNEED)
            except (OSError, ValueError):
                pass

    def close(self) -> None:
        for v in getattr(self, "_sec", {}).values():
            v.release()
        self._sec = {}
        try:
            self._mm.close()
        except (BufferError, AttributeError):
            pass


def file_sections(files: list[dict]) -> dict:
    """A segment's file table: NUL-joined paths, (mtime_ns, size) pairs, one JSON record each,
    and its links by target hash (memcli.index.keyword.segments resolves them to inlinks)."""
    from array import array
    from itertools import accumulate

    from memcli.index.keyword.tokenizer import term_hash

    skip = ("path", "mtime_ns", "size", "in")
    recs = [
        json.dumps({k: v for k, v in f.items() if k not in skip}, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8"
        )
        for f in files
    ]
    pairs = sorted({(term_hash(t), i) for i, f in enumerate(files) for t, _ in f["links"]})
    by_path = sorted((term_hash(f["path"]), i) for i, f in enumerate(files))
    return {
        "paths": "\0".join(f["path"] for f in files).encode("utf-8"),
        "fstat": array("q", [x for f in files for x in (f["mtime_ns"], f["size"])]),
        "frec_off": array("Q", accumulate(map(len, recs), initial=0)),
        "frecs": b"".join(recs),
        "link_hash": array("Q", [h for h, _ in pairs]),
        "link_src": array("I", [i for _, i in pairs]),
        "path_hash": array("Q", [h for h, _ in by_path]),
        "path_file": array("I", [i for _, i in by_path]),
    }
