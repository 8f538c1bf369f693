"""The arrays of a new index segment: fresh files added, or a merge's files carried over
from the segments it replaces (in their order). Postings are sorted by (term, document).
"""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass, field
from itertools import accumulate, chain

SMALL_POSTINGS = 40_000  # up to this many, a segment is assembled without numpy (its import costs ~70 ms)


@dataclass
class Assembly:
    files: list[dict] = field(default_factory=list)
    metas: list = field(default_factory=list)  # flat, 4 per chunk: file, start, end, breadcrumb lines
    lens: list = field(default_factory=list)  # document lengths in tokens
    text_lens: list = field(default_factory=list)  # (array.array parts, or numpy from a merge)
    post_hash: list = field(default_factory=list)
    post_doc: list = field(default_factory=list)  # (chunk numbers, offset to add)
    post_tf: list = field(default_factory=list)
    texts: list[bytes] = field(default_factory=list)
    ids: list[bytes] = field(default_factory=list)  # 32-byte chunk ids
    lines: list[bytes] = field(default_factory=list)  # chunk store lines
    n: int = 0


def carry_segment(asm: Assembly, seg, recs: list[dict], lines: dict[int, bytes]) -> None:
    """Append the chunks of the files `recs` (records of segment snapshot `seg`, in its order)
    after what is there: documents, postings, texts and store lines (`lines`: by chunk of
    `seg`), copied run by run with whole-array numpy operations (a merge's input)."""
    import numpy as np

    mask = np.zeros(seg.n_docs, dtype=bool)
    for f in recs:
        mask[f["first"] : f["first"] + f["count"]] = True
    newpos = np.cumsum(mask) - 1 + asm.n
    o_meta = np.frombuffer(seg.raw("doc_meta"), dtype=np.uint32).reshape(-1, 4)[mask].copy()
    o_meta[:, 0] = np.repeat(
        np.arange(len(asm.files), len(asm.files) + len(recs), dtype=np.uint32), [f["count"] for f in recs]
    )
    asm.metas.append(o_meta.reshape(-1))
    asm.lens.append(np.frombuffer(seg.raw("doc_len"), dtype=np.uint32)[mask])
    o_off = np.frombuffer(seg.raw("text_off"), dtype=np.uint64).astype(np.int64)
    asm.text_lens.append(np.diff(o_off)[mask])
    edges = np.flatnonzero(np.diff(np.concatenate(([False], mask, [False])).astype(np.int8)))
    o_text, o_ids = seg.raw("text"), seg.raw("ids")
    for a, b in zip(edges[0::2].tolist(), edges[1::2].tolist()):
        asm.texts.append(bytes(o_text[int(o_off[a]) : int(o_off[b])]))
        asm.ids.append(bytes(o_ids[a * 32 : b * 32]))
        asm.lines.extend(lines[d] for d in range(a, b))
    o_terms = np.frombuffer(seg.raw("terms"), dtype=np.uint64)
    o_toff = np.frombuffer(seg.raw("term_off"), dtype=np.uint64).astype(np.int64)
    o_doc = np.frombuffer(seg.raw("post_doc"), dtype=np.uint32)
    ok = mask[o_doc]
    asm.post_hash.append(np.repeat(o_terms, np.diff(o_toff))[ok])
    asm.post_doc.append((newpos[o_doc[ok]].astype(np.uint32), 0))
    asm.post_tf.append(np.frombuffer(seg.raw("post_tf"), dtype=np.uint32)[ok])
    for f in recs:
        asm.files.append(dict(f, first=int(newpos[f["first"]]) if f["count"] else asm.n))
        asm.n += f["count"]


def add_fresh(asm: Assembly, rel: str, parsed, st: tuple[int, int]) -> None:
    """Append one re-parsed file (memcli.index.notes.parse result, its (mtime_ns, size) `st`)
    after what is there. Its arrays
    stay array.array (postings with their chunk offset) until postings() and documents()
    join them: a small update then never imports numpy."""
    cnt = len(parsed.spans)
    if cnt:
        fi = len(asm.files)
        asm.metas.append(array("I", [x for span in parsed.spans for x in (fi, *span)]))
        asm.lens.append(array("I", parsed.doc_len))
        asm.post_hash.append(parsed.post_hash)
        asm.post_doc.append((parsed.post_chunk, asm.n))
        asm.post_tf.append(parsed.post_tf)
        asm.texts.extend(parsed.texts)
        asm.text_lens.append(array("Q", map(len, parsed.texts)))
        asm.ids.extend(parsed.ids)
        asm.lines.extend(parsed.lines)
    asm.files.append(
        {
            "path": rel,
            "sha": parsed.sha,
            "fm": parsed.front_matter,
            "links": parsed.links,
            "problem": parsed.problem,
            "first": asm.n,
            "count": cnt,
            "mtime_ns": st[0],
            "size": st[1],
            "mtime": st[0] // 1_000_000_000 + st[0] % 1_000_000_000 * 1e-9,
        }
    )
    # ("mtime": the float os.stat gives, computed as it computes it)
    asm.n += cnt


def _small(asm: Assembly) -> bool:
    """Assembled in pure Python: few postings, all in arrays, and numpy not loaded already."""
    return (
        sum(len(h) for h in asm.post_hash) <= SMALL_POSTINGS
        and "numpy" not in sys.modules
        and not any(type(h) is not array for h in asm.post_hash)
    )


def _small_postings(asm: Assembly):
    """postings() in pure Python, into the standard library's arrays."""
    hs = list(chain.from_iterable(asm.post_hash))
    ds = list(chain.from_iterable((d + off for d in part) for part, off in asm.post_doc))
    ts = list(chain.from_iterable(asm.post_tf))
    # documents are numbered in the order their postings were added: a stable sort by term
    # alone leaves each term's documents in order (sorting indices by an int key is far
    # quicker than sorting tuples)
    key = hs.__getitem__ if _docs_ascending(asm) else (lambda i: (hs[i], ds[i]))
    terms, term_off, p_d, p_t = array("Q"), array("Q"), array("I"), array("I")
    last = None
    for i in sorted(range(len(hs)), key=key):
        h = hs[i]
        if h != last:
            terms.append(h)
            term_off.append(len(p_d))
            last = h
        p_d.append(ds[i])
        p_t.append(ts[i])
    term_off.append(len(p_d))
    return terms, term_off, p_d, p_t


def postings(asm: Assembly):
    """(term hashes, term offsets, posting docs, posting tfs), sorted by (term, doc): arrays of
    the standard library for a small segment, numpy's otherwise."""
    if _small(asm):
        return _small_postings(asm)
    import numpy as np

    ascending = _docs_ascending(asm)
    # each part list is let go as soon as its array is built: the assembly is not read again
    # for postings, and a segment's postings are its largest arrays (16 bytes each)
    p_h = (
        np.concatenate([np.asarray(h, dtype=np.uint64) for h in asm.post_hash])
        if asm.post_hash
        else np.zeros(0, np.uint64)
    )
    asm.post_hash = []
    p_d = (
        np.concatenate([np.asarray(d, dtype=np.uint32) + np.uint32(off) for d, off in asm.post_doc])
        if asm.post_doc
        else np.zeros(0, np.uint32)
    )
    asm.post_doc = []
    p_t = (
        np.concatenate([np.asarray(t, dtype=np.uint32) for t in asm.post_tf]) if asm.post_tf else np.zeros(0, np.uint32)
    )
    asm.post_tf = []
    # documents are numbered in the order their postings were added, so a stable sort by
    # term alone leaves each term's documents in order
    if ascending:
        order, p_h = _stable_order(p_h)
    else:
        order = np.lexsort((p_d, p_h))
        p_h = p_h[order]
    p_d = p_d[order]
    p_t = p_t[order]
    del order
    # p_h is sorted: a term starts where it differs from the posting before (np.unique would
    # sort it again, with an index array as large as the postings)
    first = np.empty(len(p_h), dtype=bool)
    if len(p_h):
        first[0] = True
        np.not_equal(p_h[1:], p_h[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    del first
    terms = p_h[starts]
    del p_h
    return terms, np.append(starts, len(p_d)).astype(np.uint64), p_d, p_t


def _stable_order(h):
    """(np.argsort(h, kind="stable"), h sorted) for the uint64 array `h`, by a sort of values,
    which numpy vectorises (a segment's argsort took 50 ms, this 15): each hash's top 32 bits
    with its position below them, then the runs of hashes whose top bits tie (two or so in a
    segment of 100,000 terms) sorted again by the whole hash."""
    import numpy as np

    n = len(h)
    if n >= 1 << 32:
        order = np.argsort(h, kind="stable")
        return order, h[order]
    key = h & np.uint64(0xFFFF_FFFF_0000_0000)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    key &= np.uint64(0xFFFF_FFFF)
    order = key.view(np.int64)  # (positions, < 2**32)
    sorted_h = h[order]
    for at in np.flatnonzero(sorted_h[1:] < sorted_h[:-1]).tolist():  # within a tie of top bits only
        top = sorted_h[at] >> np.uint64(32)
        lo, hi = np.searchsorted(sorted_h >> np.uint64(32), [top, top + np.uint64(1)])
        again = np.argsort(sorted_h[lo:hi], kind="stable")  # (the run's positions are ascending)
        order[lo:hi] = order[lo:hi][again]
        sorted_h[lo:hi] = sorted_h[lo:hi][again]
    return order, sorted_h


def _docs_ascending(asm: Assembly) -> bool:
    """Every posting part's documents come after the previous part's."""
    last = -1
    for part, off in asm.post_doc:
        if len(part):
            # a parsed file's postings go chunk by chunk (ascending); a carried part is by term
            lo, hi = (part[0], part[-1]) if type(part) is array else (int(part.min()), int(part.max()))
            if lo + off < last:
                return False
            last = hi + off
    return True


def documents(asm: Assembly):
    """(document lengths, flat doc_meta, text offsets) of the assembled documents."""
    if _small(asm):
        return (
            array("I", chain.from_iterable(asm.lens)),
            array("I", chain.from_iterable(asm.metas)),
            array("Q", accumulate(chain.from_iterable(asm.text_lens), initial=0)),
        )
    import numpy as np

    dl = np.concatenate([np.asarray(x, dtype=np.uint32) for x in asm.lens]) if asm.lens else np.zeros(0, np.uint32)
    meta = (
        np.concatenate([np.asarray(x, dtype=np.uint32).reshape(-1) for x in asm.metas])
        if asm.metas
        else np.zeros(0, np.uint32)
    )
    text_off = np.zeros(asm.n + 1, dtype=np.uint64)
    if asm.n:
        np.cumsum(
            np.concatenate([np.asarray(x, dtype=np.int64) for x in asm.text_lens]).astype(np.uint64), out=text_off[1:]
        )
    return dl, meta, text_off
