"""Term vectors: the embedding of each word of the vault, for query expansion.

A question and the note that answers it often share no word ("Who was injured?"
against "my son had a soccer accident"). BM25 cannot see that; one vector per
chunk sees it only blurred by the rest of the chunk. So the embedding run also
embeds every distinct word of the indexed text on its own, and a search adds to
the keyword query the vault's words nearest to the query's words
(memcli.retrieval.expand). Measured on LoCoMo and a pydoc corpus
(docs/evaluation.md).

Stored as `embedding_store/terms_<space>.npz`: `words` (lowercase surface forms)
and `vectors` (float16, L2-normalised). Derived state like the rest: words are
embedded once per vector space and kept while the vault still uses them.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path
from typing import Callable

from memcli.vault import atomic

# letters only (no digits, no underscore), three or more, outside the CJK blocks,
# which the tokenizer handles as character n-grams
_WORD = re.compile(r"(?:(?![\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff])[^\W\d_]){3,}")
MAX_WORD_CHARS = 40  # longer "words" are hashes and base64, not language


def words_of(text: str) -> list[str]:
    """The candidate words of a text, lowercased, without stopwords."""
    from memcli.retrieval.tokenizer import STOPWORDS

    return [w for w in _WORD.findall(text.lower()) if len(w) <= MAX_WORD_CHARS and w not in STOPWORDS]


def store_path(metadata: Path, space: str) -> Path:
    return metadata / "embedding_store" / f"terms_{space}.npz"


def load(metadata: Path, space: dict | None):
    """(words, float32 unit vectors) of `space`, or None when there are none (or they are damaged)."""
    import zipfile

    import numpy as np

    if not space:
        return None
    try:
        with np.load(store_path(metadata, space["id"]), allow_pickle=False) as data:
            words, vecs = data["words"], data["vectors"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if vecs.ndim != 2 or vecs.shape[1] != int(space["dims"]) or len(words) != len(vecs) or not len(words):
        return None
    return [str(w) for w in words], vecs.astype(np.float32)


def vocabulary(snap, limit: int) -> list[str]:
    """The `limit` words found in the most chunks (ties alphabetical, for stable runs)."""
    df: Counter = Counter()
    for d in range(snap.n_docs):
        df.update(set(words_of(snap.text(d))))
    ranked = sorted(df.items(), key=lambda kv: (-kv[1], kv[0]))
    return sorted(w for w, _ in ranked[:max(0, limit)])


def update(metadata: Path, space: dict, snap, embed_batch: Callable[[list[str]], object],
           batch_size: int, limit: int, progress=None) -> tuple[int, int]:
    """Embed the vault's words that have no vector yet, drop words it no longer uses.

    Returns (words embedded now, words stored). Nothing is written when nothing changed.
    """
    import numpy as np

    wanted = vocabulary(snap, limit)
    old = load(metadata, space)
    known = dict(zip(old[0], old[1])) if old else {}
    todo = [w for w in wanted if w not in known]
    if not todo and len(known) == len(wanted):
        return 0, len(wanted)
    batch_size = max(1, batch_size)
    for i in range(0, len(todo), batch_size):
        batch = todo[i:i + batch_size]
        vecs = np.asarray(embed_batch(batch), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        for w, v in zip(batch, vecs / np.where(norms > 0, norms, 1.0)):
            known[w] = v
        if progress:
            progress("terms", min(i + batch_size, len(todo)), len(todo))
    path = store_path(metadata, space["id"])
    if not wanted:
        atomic.remove(path)
        return len(todo), 0
    buf = io.BytesIO()
    np.savez(buf, words=np.array(wanted), vectors=np.stack([known[w] for w in wanted]).astype("<f2"))
    atomic.write_bytes(path, buf.getvalue())
    return len(todo), len(wanted)
