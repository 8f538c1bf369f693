"""Term vectors: the embedding of each word of the vault, for query expansion.

A question and the note that answers it often share no word ("Who was injured?"
against "my son had a soccer accident"). BM25 cannot see that; one vector per
chunk sees it only blurred by the rest of the chunk. So the embedding run also
embeds every distinct word of the indexed text on its own, and a search adds to
the keyword query the vault's words nearest to the query's words
(memcli.retrieval.expand). Measured on LoCoMo and a pydoc corpus
(docs/evaluation.md).

Stored as `embedding_store/terms_<space>.f32m`: a header (magic, JSON with the
word count and dims), the words (lowercase surface forms, UTF-8, one per line)
and their L2-normalised float32 vectors, memory-mapped by a search: no parsing
and no float16 conversion, which cost 25 ms for 6,000 words in an .npz. Derived
state like the rest: words are embedded once per vector space and kept while the
vault still uses them.
"""

from __future__ import annotations

import json
import mmap
import re
import struct
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from memcli.errors import CorruptStore
from memcli.index.keyword import snapshot
from memcli.index.keyword.segments import expand
from memcli.index.stores import store
from memcli.vault import atomic

# letters only (no digits, no underscore), three or more, outside the CJK blocks,
# which the tokenizer handles as character n-grams
_WORD = re.compile(r"(?:(?![\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff])[^\W\d_]){3,}")
MAX_WORD_CHARS = 40  # longer "words" are hashes and base64, not language
MAGIC = b"MEMTERM1"


def words_of(text: str) -> list[str]:
    """The candidate words of a text, lowercased, without stopwords."""
    from memcli.index.keyword.tokenizer import STOPWORDS

    return [w for w in _WORD.findall(text.lower()) if len(w) <= MAX_WORD_CHARS and w not in STOPWORDS]


def store_path(metadata: Path, space: str) -> Path:
    return metadata / "embedding_store" / f"terms_{space}.f32m"


def _write(path: Path, words: list[str], vecs, source: str) -> None:
    import numpy as np

    blob = "\n".join(words).encode("utf-8")
    rows = np.ascontiguousarray(vecs, dtype="<f4")
    head = json.dumps({"words": len(words), "dims": int(rows.shape[1]), "blob": len(blob), "source": source}).encode()
    head = MAGIC + struct.pack("<I", len(head)) + head
    body = head + blob
    atomic.write_parts(path, [body, b"\0" * ((-len(body)) & 7), rows.reshape(-1).view(np.uint8)])


def load(metadata: Path, space: dict | None):
    """(words, float32 unit vectors as an mmap view, source) of `space`, or None when there
    are none or the file is damaged (expansion is then simply off). `source` names the
    snapshot generation and word limit the words were taken from."""
    return read(store_path(metadata, space["id"]), space) if space else None


def read(path: Path, space: dict):
    """(words, vectors, source) of a file in this format (the word store, or the definitions'
    of memcli.index.vectors.glosses), or None when missing, damaged or of another shape than `space`."""
    import numpy as np

    try:
        with open(path, "rb") as fh:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        if mm[:8] != MAGIC:
            return None
        (hlen,) = struct.unpack_from("<I", mm, 8)
        head = json.loads(mm[12 : 12 + hlen])
        n, dims, blob = int(head["words"]), int(head["dims"]), int(head["blob"])
        source = str(head.get("source", ""))
        start = 12 + hlen
        words = mm[start : start + blob].decode("utf-8").split("\n") if n else []
        off = start + blob + ((-(start + blob)) & 7)
        vecs = np.frombuffer(mm, dtype="<f4", count=n * dims, offset=off).reshape(n, dims)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, struct.error):
        return None
    if dims != int(space["dims"]) or len(words) != n or not n:
        return None
    return words, vecs, source


def vocabulary(snap, limit: int) -> list[str]:
    """The `limit` words found in the most live chunks (ties alphabetical, for stable runs)."""
    df = live_counts(snap)
    ranked = sorted(((w, n) for w, n in df.items() if n > 0), key=lambda kv: (-kv[1], kv[0]))
    return sorted(w for w, _ in ranked[: max(0, limit)])


def live_counts(snap) -> Counter:
    """How many live chunks hold each word. Counted per segment once (segment_words), then
    kept for the whole index (`keyword_index/words_live.json.zst`, with the deletions it
    covers), so an update adds its new segments' counts and takes away the chunks dead since,
    reading only those texts; after a merge (a segment it counted is gone) it sums the
    segments' counts again."""
    path = Path(snap.path).parent / "words_live.json.zst" if snap.path is not None else None
    got = _load_counts(path) if path is not None else None
    usable = got is not None and set(got[0].get("segs", {})) <= {seg.name for seg in snap.segments}
    was, df = (got[0]["segs"], got[1]) if got is not None and usable else ({}, Counter())
    for seg in snap.segments:
        if seg.name in was:  # counted before: only the chunks dead since
            newly = sorted(seg.dead_doc_set - set(expand(was[seg.name])))
            if newly:
                df.subtract(_counts(seg, newly))
        else:
            df.update(segment_words(seg))
            if seg.dead_docs:
                df.subtract(_dead_words(seg))
    df = Counter({w: n for w, n in df.items() if n > 0})
    if path is not None:
        _save_counts(path, {"segs": {seg.name: seg.entry.get("dead_docs") or [] for seg in snap.segments}}, df)
    return df


def _words_file(seg, suffix: str) -> Path:
    return Path(seg.snap.path).parent / f"{seg.name}.{suffix}"


def _counts(seg, docs) -> Counter:
    """Word counts over chunks `docs` of the segment, read through a map of its own, closed
    after: the texts' pages then leave this process (a 20,000-note vault has 170 MB of them)."""
    df: Counter = Counter()
    own = snapshot.Snapshot(seg.snap.path)
    try:
        for j in docs:
            df.update(set(words_of(own.text(j))))
    finally:
        own.close()
    return df


def _load_counts(path: Path) -> tuple[dict, Counter] | None:
    try:
        data = json.loads(store.decompress(path.read_bytes(), path.name))
        return data["meta"], Counter(data["df"])
    except (OSError, ValueError, KeyError, TypeError, CorruptStore):
        return None


def _save_counts(path: Path, meta: dict, df: Counter) -> None:
    try:
        atomic.write_bytes(path, store.compress(json.dumps({"meta": meta, "df": df}, separators=(",", ":")).encode()))
    except OSError:
        pass  # (a read-only workspace counts again next time)


def segment_words(seg) -> Counter:
    """Chunk counts of each word over all of a segment's chunks, kept beside it (`.words`)."""
    path = _words_file(seg, "words")
    got = _load_counts(path)
    if got is not None and got[0].get("docs") == seg.snap.n_docs:
        return got[1]
    df = _counts(seg, range(seg.snap.n_docs))
    _save_counts(path, {"docs": seg.snap.n_docs}, df)
    return df


def _dead_words(seg) -> Counter:
    """Chunk counts of each word over the segment's dead chunks (`.words-dead`): deaths only
    add up, so what died since the last count is counted alone."""
    path = _words_file(seg, "words-dead")
    got = _load_counts(path)
    counted = set(expand(got[0].get("dead", []))) if got is not None else set()
    if got is not None and not counted <= seg.dead_doc_set:
        counted, got = set(), None  # (cannot happen: a segment's dead chunks never come back)
    df = got[1] if got is not None else Counter()
    todo = sorted(seg.dead_doc_set - counted)
    if todo:
        df.update(_counts(seg, todo))
        _save_counts(path, {"dead": seg.entry.get("dead_docs") or []}, df)
    return df


def update(
    metadata: Path,
    space: dict,
    snap,
    embed_batch: Callable[[list[str]], object],
    batch_size: int,
    limit: int,
    progress=None,
) -> tuple[int, int]:
    """Embed the vault's words that have no vector yet, drop words it no longer uses.

    Returns (words embedded now, words stored). Nothing is read or written when the index
    is the one the words were last taken from.
    """
    old = load(metadata, space)
    source = source_of(snap, limit)
    if old and old[2] == source:
        return 0, len(old[0])  # same index, same words: no need to read every chunk again
    wanted = vocabulary(snap, limit)
    return refresh(
        store_path(metadata, space["id"]), wanted, lambda w: w, old, source, embed_batch, batch_size, progress, "terms"
    )


def source_of(snap, limit: int) -> str:
    """What the words of an index are named by: its generation and the word limit."""
    return f"{snap.header.get('generation', '')}/{limit}"


def refresh(
    path: Path,
    wanted: list[str],
    text_of: Callable[[str], str],
    old,
    source: str,
    embed_batch: Callable[[list[str]], object],
    batch_size: int,
    progress,
    stage: str,
) -> tuple[int, int]:
    """Write `wanted` words (sorted) with the vector of `text_of(word)`, embedding only those
    `old` (a read() answer) has no vector for. (words embedded now, words stored)."""
    import numpy as np

    known = dict(zip(old[0], np.array(old[1]))) if old else {}
    todo = [w for w in wanted if w not in known]
    batch_size = max(1, batch_size)
    if progress and todo:  # (before the first batch, which may load the model)
        progress(stage, 0, len(todo))
    for i in range(0, len(todo), batch_size):
        batch = todo[i : i + batch_size]
        vecs = np.asarray(embed_batch([text_of(w) for w in batch]), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        for w, v in zip(batch, vecs / np.where(norms > 0, norms, 1.0)):
            known[w] = v
        if progress:
            progress(stage, min(i + batch_size, len(todo)), len(todo))
    if not wanted:
        atomic.remove(path)
        return len(todo), 0
    _write(path, wanted, np.stack([known[w] for w in wanted]), source)
    return len(todo), len(wanted)
