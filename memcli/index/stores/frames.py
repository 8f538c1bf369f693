"""The chunk store, graph and catalog as runs of zstd frames, one run per index segment.

ReMe's stores are zstd-compressed JSON lines; concatenated zstd frames are one valid
stream (ReMe's reader and `zstd -d` read them as one), so mem writes each segment's
lines as frames of up to FRAME_ITEMS chunks or files. An update then copies the bytes
of every frame it does not touch, recompresses the few frames holding a file it
re-indexed or deleted, and appends the frames of its new segment: the store stays
complete and correct for ReMe, and the update costs a file copy, not a recompression
of the vault.

A frame is listed in the manifest (memcli.index.keyword.segments) as [lo, hi, bytes, lines]:
it holds the lines of the segment's items (chunks or files) lo..hi-1 that were live
when it was written, in order.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from memcli.errors import CorruptStore
from memcli.index.stores import store


class Span(NamedTuple):
    """Bytes off..off+n of a source (memcli.index.stores.mirror.Source), copied when written."""

    src: Any
    off: int
    n: int


FRAME_ITEMS = {"chunks": 1024, "graph": 512, "catalog": 4096}


def build(lines: list[bytes], items: list[int], per: int) -> tuple[list[bytes], list[list[int]]]:
    """Frames of `lines` (line k is item items[k], increasing): (blobs, frame entries)."""
    blobs, table = [], []
    k = 0
    while k < len(lines):
        lo = items[k] - items[k] % per
        hi = lo + per
        j = k
        while j < len(lines) and items[j] < hi:
            j += 1
        blob = store.compress(b"\n".join(lines[k:j]) + b"\n")
        blobs.append(blob)
        table.append([lo, hi, len(blob), j - k])
        k = j
    return blobs, table


def _frame_lines(buf, off: int, frame: list[int], name: str) -> list[bytes]:
    data = store.decompress(buf[off : off + frame[2]], name)
    lines = data.split(b"\n")[:-1] if data.endswith(b"\n") else None
    if lines is None or len(lines) != frame[3]:
        raise CorruptStore(f"{name} does not match the index manifest")
    return lines


def live_items(frame: list[int], dead: frozenset) -> list[int]:
    return [x for x in range(frame[0], frame[1]) if x not in dead]


def carry(
    buf, off: int, table: list[list[int]], was_dead: frozenset, dead: frozenset, name: str
) -> tuple[list, list[list[int]]]:
    """The frames of one segment's run (at `off` in `buf`) with the items in `dead` dropped:
    untouched frames as Spans of `buf` (copied as they are by the writer), touched ones rebuilt.
    `was_dead`: the items already absent when the frames were written."""
    parts: list[Span | bytes] = []
    out: list[list[int]] = []
    newly = sorted(dead - was_dead)
    for frame in table:
        lo, hi, nbytes, _ = frame
        if not any(lo <= x < hi for x in newly):
            if parts and isinstance(parts[-1], Span) and parts[-1].src is buf and parts[-1].off + parts[-1].n == off:
                parts[-1] = Span(buf, parts[-1].off, parts[-1].n + nbytes)  # one copy for a run of frames
            else:
                parts.append(Span(buf, off, nbytes))
            out.append(list(frame))
        else:
            lines = _frame_lines(buf, off, frame, name)
            kept = [ln for x, ln in zip(live_items(frame, was_dead), lines) if x not in dead]
            if kept:
                blob = store.compress(b"\n".join(kept) + b"\n")
                parts.append(blob)
                out.append([lo, hi, len(blob), len(kept)])
        off += nbytes
    return parts, out


def lines_of(
    buf, off: int, table: list[list[int]], was_dead: frozenset, dead: frozenset, name: str
) -> list[tuple[int, bytes]]:
    """(item, line) of every item of the run not in `dead`, decompressed (a merge's input)."""
    out = []
    for frame in table:
        lines = _frame_lines(buf, off, frame, name)
        out.extend((x, ln) for x, ln in zip(live_items(frame, was_dead), lines) if x not in dead)
        off += frame[2]
    return out


def run_offsets(segments: list[dict], kind: str) -> tuple[list[int], int]:
    """Where each segment's run of `kind` frames starts in its store, and the store's size."""
    starts, pos = [], 0
    for seg in segments:
        starts.append(pos)
        pos += sum(f[2] for f in seg.get("frames", {}).get(kind, ()))
    return starts, pos
