"""Passage vectors kept per index segment, so their cost follows the change, not the vault.

Each keyword segment (memcli.index.keyword.segments) that has vectors in a space has a file
beside it, `segments/<segment>.vec-<space>`, covering all of the segment's chunks in
its order, dead ones included (the view skips those, as it does for postings):

  header   MAGIC, JSON {space, identity, dims, passage_tokens, n_docs, n_rows, stored}
  mask     u8 per chunk: 1 = every passage of the chunk has a vector
  offsets  u32, n_docs + 1: chunk j owns passage rows offsets[j]..offsets[j+1]
  rows     float16 passage rows (what the vector branch scores)
  chunks   float16 per chunk: its passages' normalised mean (the shortlist, the chunk
           store's vector)
  codes    the sign bits of each chunk row, dims / 8 bytes (the first shortlist stage:
           Hamming distance over a few MB instead of a dot product over all rows)

Segments never change, so neither does what their vectors describe: an update writes
the file of its own fresh segment, a merge writes the merged segment's from its
members', and an embedding run rewrites only the files of segments it gave vectors to.
A file goes when its segment goes (memcli.index.commit removes every file named after a
segment no manifest lists). `stored` says the chunk store's lines of the segment hold
the vectors of its masked chunks.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from pathlib import Path

from memcli.errors import CorruptStore
from memcli.vault import atomic

MAGIC = b"MEMVSG01"
ROW_DTYPE = "<f2"
OFFSET_DTYPE = "<u4"


def file_path(folder: Path, segment: str, space_id: str) -> Path:
    return folder / f"{segment}.vec-{space_id}"


def spaces_of(folder: Path, segment: str) -> list[str]:
    """The space ids that have a vector file for `segment`."""
    prefix = f"{segment}.vec-"
    try:
        return sorted(p.name[len(prefix) :] for p in folder.iterdir() if p.name.startswith(prefix))
    except OSError:
        return []


def codes_of(chunk_rows):
    """Sign bits of each row, packed (the Hamming stage of memcli.retrieval.vector)."""
    import numpy as np

    return np.packbits(np.asarray(chunk_rows) > 0, axis=1)


def write(path: Path, header: dict, mask, offsets, rows, chunk_rows) -> None:
    """Write one segment's vectors; `rows` float16-able (n_rows x dims), `chunk_rows` (n_docs x dims)."""
    import numpy as np

    mask = np.ascontiguousarray(mask, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=OFFSET_DTYPE)
    dims = int(header["dims"])
    rows = np.ascontiguousarray(rows, dtype=ROW_DTYPE).reshape(-1, dims)
    chunk_rows = np.ascontiguousarray(chunk_rows, dtype=ROW_DTYPE).reshape(-1, dims)
    if len(offsets) != len(mask) + 1 or int(offsets[-1]) != len(rows) or len(chunk_rows) != len(mask):
        raise ValueError("segment vectors: mask, offsets and rows disagree")
    codes = codes_of(chunk_rows)
    # `stored` last, as one digit: mark_stored() flips it in place
    head = {k: v for k, v in header.items() if k != "stored"}
    hjson = json.dumps(dict(head, n_docs=len(mask), n_rows=len(rows)), separators=(",", ":")).encode()
    hjson = hjson[:-1] + b',"stored":' + (b"1" if header.get("stored") else b"0") + b"}"
    parts = [MAGIC + struct.pack("<I", len(hjson)) + hjson]
    for arr in (mask, offsets, rows, chunk_rows, codes):
        parts.append(b"\0" * ((-sum(map(len, parts))) & 7))
        parts.append(arr.reshape(-1).view(np.uint8).tobytes() if arr.size else b"")
    atomic.write_parts(path, parts)


class VecSeg:
    """Read side of one segment's vector file: numpy views over an mmap."""

    def __init__(self, path: Path):
        import numpy as np

        self.path = path
        try:
            with open(path, "rb") as fh:
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            if self._mm[:8] != MAGIC:
                raise ValueError("bad magic")
            (hlen,) = struct.unpack_from("<I", self._mm, 8)
            self.header = json.loads(self._mm[12 : 12 + hlen])
            n, dims, n_rows = int(self.header["n_docs"]), int(self.header["dims"]), int(self.header["n_rows"])
            off = 12 + hlen

            def take(dtype, count, width):
                nonlocal off
                off += (-off) & 7
                arr = np.frombuffer(self._mm, dtype=dtype, count=count, offset=off)
                off += count * width
                return arr

            self.mask = take(np.uint8, n, 1)
            self.offsets = take(OFFSET_DTYPE, n + 1, 4)
            self.rows = take(ROW_DTYPE, n_rows * dims, 2).reshape(n_rows, dims)
            self.chunk_rows = take(ROW_DTYPE, n * dims, 2).reshape(n, dims)
            width = (dims + 7) // 8
            self.codes = take(np.uint8, n * width, 1).reshape(n, width)
            if (
                self.offsets[0] != 0
                or self.offsets[-1] != n_rows
                or (n and np.diff(self.offsets.astype(np.int64)).min() < 0)
            ):
                raise ValueError("passage offsets are inconsistent")
        except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
            raise CorruptStore(f"segment vectors {Path(path).name} are damaged ({exc})") from None
        self.n_docs, self.n_rows, self.dims = n, n_rows, dims

    @property
    def passage_tokens(self):
        return self.header.get("passage_tokens")

    @property
    def stored(self) -> bool:
        return bool(self.header.get("stored"))

    def doc_rows(self, j: int):
        return self.rows[int(self.offsets[j]) : int(self.offsets[j + 1])]

    def release(self) -> None:
        """Drop the pages read so far from this process (they stay in the page cache): a pass
        over every row of a vault would otherwise count all its files in the resident size."""
        try:
            self._mm.madvise(mmap.MADV_DONTNEED)
        except (AttributeError, OSError, ValueError):
            pass  # (no madvise here: the pages go when the map is closed)

    def close(self) -> None:
        try:
            self._mm.close()
        except (BufferError, ValueError):
            pass  # a numpy view still holds it: the map goes with the last view


def mark_stored(path: Path) -> None:
    """Set a file's `stored` flag without rewriting its rows: the one digit write() put last
    in the header (either value is a valid state, so a crash around it loses nothing)."""
    fd = os.open(path, os.O_RDWR)
    try:
        head = os.pread(fd, 12, 0)
        if head[:8] != MAGIC:
            raise CorruptStore(f"segment vectors {Path(path).name} are damaged (bad magic)")
        (hlen,) = struct.unpack_from("<I", head, 8)
        if os.pread(fd, 12, 12 + hlen - 12) != b',"stored":0}':
            return  # already stored (or not this writer's layout: left for a rewrite)
        os.pwrite(fd, b"1", 12 + hlen - 2)
        os.fsync(fd)
    finally:
        os.close(fd)


def passage_index(offsets, chunks):
    """(row numbers, where each chunk's rows start among them, their counts) of the passages
    of `chunks` (numpy ints) given passage `offsets`: to gather their rows in one take."""
    import numpy as np

    off = np.asarray(offsets, dtype=np.int64)
    chunks = np.asarray(chunks, dtype=np.int64)
    counts = off[chunks + 1] - off[chunks]
    firsts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    return np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(off[chunks] - firsts, counts), firsts, counts


def merged(members: list, dims: int):
    """(mask, offsets, rows, chunk_rows) of the live chunks of `members`, in order: each a
    (VecSeg or None, live local chunks, passage counts when there is no file). A member
    without a file gives zero rows and mask 0 (its chunks are embedded later)."""
    import numpy as np

    masks, counts, rows, chunks = [], [], [], []
    for vs, live, fallback in members:
        live = np.asarray(live, dtype=np.intp)
        if vs is None:
            n = np.asarray(fallback, dtype=np.int64)
            masks.append(np.zeros(len(live), dtype=np.uint8))
            counts.append(n)
            rows.append(np.zeros((int(n.sum()), dims), dtype=ROW_DTYPE))
            chunks.append(np.zeros((len(live), dims), dtype=ROW_DTYPE))
            continue
        picked, _, c = passage_index(vs.offsets, live)
        masks.append(vs.mask[live])
        counts.append(c)
        rows.append(vs.rows[picked])
        chunks.append(vs.chunk_rows[live])
    if not masks:
        return (
            np.zeros(0, np.uint8),
            np.zeros(1, np.int64),
            np.zeros((0, dims), ROW_DTYPE),
            np.zeros((0, dims), ROW_DTYPE),
        )
    c = np.concatenate(counts)
    return (np.concatenate(masks), np.concatenate(([0], np.cumsum(c))), np.concatenate(rows), np.concatenate(chunks))
