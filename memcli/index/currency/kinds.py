"""Which subject a thing the user adopts belongs to: "got a MacBook Pro" sets the laptop.

A statement that adopts a thing without naming its attribute ("The user got a macbook pro m4
today", "we bought a Thinkpad") sets no subject by the rules of memcli.index.currency.subjects. It
does set one when the thing is of the kind a known subject names: its own word ("got a new
laptop" sets the laptop), or, with word vectors, a word of the thing near the subject's head
word ("macbook" is 0.70 from "laptop" in all-MiniLM-L6-v2; "zed" is 0.22 from "editor", no
nearer than "laptop" is). The vectors are the vault's own word vectors the embedding run
already keeps for query expansion (memcli.index.terms): nothing is embedded here, and with
no embedding backend only the exact word counts.

Precision first: a thing takes a subject only when one subject is clearly nearest (KIND and
MARGIN below), else none: a wrong supersession would hide a true fact.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memcli.index.currency import reading

KIND = 0.6  # cosine of a thing's word and a subject's head word for "is of that kind"
MARGIN = 0.1  # and this much nearer than to any other subject
_ADOPT = re.compile(
    r"(?:^|\b(?:i|we) )(?:am |is |are |'m )?(?:just |finally |now |also )?(?:got|bought|ordered|picked|chose|"
    r"went with|going with|sticking with|switched to|switching to|moved to|'m on|am on|is on|started using|now use|"
    r"upgraded to|replaced it with) "
    r"(?:(?:a|an|the|my|our|new|brand new|shiny) )*(?P<x>(?!(?:a|an|the)\b)[a-z][\w.+-]*(?: [\w.+-]+){0,3}?)"
    r"(?=\s*(?:$|[,;.!?()]|\s(?:for|with|to|in|on|at|after|because|since|so|but|and|when|last|this|today|"
    r"yesterday|now|from|instead)\b))"
)
# the verbs _ADOPT needs, as substrings: most statements hold none and skip the pattern
_ADOPTING = (
    "got",
    "bought",
    "ordered",
    "picked",
    "chose",
    "went with",
    "going with",
    "sticking with",
    "switched to",
    "switching to",
    "moved to",
    "'m on",
    "am on",
    "is on",
    "started using",
    "now use",
    "upgraded to",
    "replaced it with",
)
_LETTERS = re.compile(r"^[a-z]{3,}$")
_NOT_THINGS = frozenset("it its this that these those one them some something ready home back up used rid".split())


def adopted(sentence: str) -> str:
    """The thing `sentence` says the user adopted ("got a macbook pro m4 today" -> "macbook
    pro m4"), else ""."""
    s = reading.clean(sentence)
    m = _ADOPT.search(s) if any(c in s for c in _ADOPTING) else None
    if not m:
        return ""
    x = m.group("x").strip(" .")
    return x if x.split()[0] not in _NOT_THINGS and reading.words(x) else ""


def stamp(metadata: Path) -> str:
    """What the word vectors are now (space, file size and time): relations are worked out
    again when it changes, after an embedding run; "" without vectors."""
    from memcli.index.vectors import terms, vectors

    space = vectors.active_space(metadata)
    try:
        st = terms.store_path(metadata, space["id"]).stat() if space else None
    except OSError:
        st = None
    return f"{space['id']}:{st.st_size}:{st.st_mtime_ns}" if st and space else ""


class Vectors:
    """Word -> unit vector, from the vault's word store (memcli.index.terms); empty without one."""

    def __init__(self, metadata: Path | None = None):
        self.index: dict[str, int] = {}
        self.vecs: Any = None  # numpy float32 rows, None without a word store
        if metadata is None:
            return
        from memcli.index.vectors import terms, vectors

        space = vectors.active_space(metadata)
        got = terms.load(metadata, space) if space else None
        if got:
            words, self.vecs, src = got
            self.index = {w: i for i, w in enumerate(words)}

    def nearest(self, names: list[str], heads: list[str]) -> list[tuple[float, str]]:
        """(best cosine of a name and the head, head) of the heads with a vector, nearest first:
        one matrix product, so a vault of thousands of subjects costs milliseconds per thing."""
        rows = [i for w in names if (i := self._at(w)) is not None]
        known, matrix = self._heads(heads)
        if not rows or not known:
            return []
        sims = (self.vecs[rows] @ matrix.T).max(axis=0)
        return sorted(((float(v), h) for h, v in zip(known, sims)), reverse=True)

    def _heads(self, heads: list[str]):
        """The heads with a vector and their rows; `heads` only grows during one pass of
        relate, so the rows of the earlier heads are kept and only new ones gathered."""
        import numpy as np

        seen = getattr(self, "_seen", None)
        if (
            seen is None
            or len(heads) < len(seen)
            or heads[:1] != seen[:1]
            or (seen and heads[len(seen) - 1] != seen[-1])
        ):
            seen, self._known, self._matrix = [], [], np.zeros((0, self.vecs.shape[1]), dtype=np.float32)
        new = [(h, i) for h in heads[len(seen) :] if (i := self._at(h)) is not None]
        if new:
            self._known = self._known + [h for h, _ in new]
            self._matrix = np.vstack([self._matrix, self.vecs[[i for _, i in new]]])
        self._seen = list(heads)
        return self._known, self._matrix

    def _at(self, word: str) -> int | None:
        for form in (word, word + "s", word + "es"):
            if form in self.index:
                return self.index[form]
        return None


def kind_of(thing: str, heads: list[str], vecs: Vectors | None) -> str:
    """The head word among `heads` whose kind `thing` is: its last word ("a new laptop"; "a
    laptop sleeve" is a sleeve), or with vectors the one clearly nearest a word of the thing
    that is not itself a subject's word ("macbook"); "" when none is."""
    mine = reading.words(thing)
    if mine and mine[-1] in heads:
        return mine[-1]
    if vecs is None or not vecs.index:
        return ""
    known = set(heads)
    names = [w for w in thing.split() if _LETTERS.match(w) and (reading.words(w) or [w])[0] not in known]
    scored = vecs.nearest(names, heads)
    if not scored or scored[0][0] < KIND or (len(scored) > 1 and scored[1][0] > scored[0][0] - MARGIN):
        return ""
    return scored[0][1]
