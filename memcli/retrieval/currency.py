"""Rank the current statement above the ones it superseded (docs/currency.md).

The relations are memcli.index.currency's. A hit holding a superseded statement the query
asks about (its line shares query words, no fewer than any other line of the hit) gets the
statement's current holder placed right above it: moved up when it is a hit further down,
else its chunk is added there, at the superseded hit's score. Nothing else moves: recency
orders statements of one subject only, never the results as a whole (a global decay with a
30-day half-life put current values first but cost a fifth of session recall@5).

Every hit holding a superseded statement carries `superseded_by`: what holds that subject's
value now (path, date, line, text), and the statement it replaces.
"""

from __future__ import annotations

from memcli.index import subjects
from memcli.index.currency import load
from memcli.retrieval.hits import Hit

# words of a question that name no subject ("what is the user's current editor now")
GENERIC = frozenset("user assistant now current currently today new latest still".split())


def annotate_and_rank(snap, metadata, hits: list[Hit], query: str) -> list[Hit]:
    """`hits` with superseded_by set and each current statement above the one it superseded."""
    relations = load(metadata)
    if not relations or not hits:
        return hits
    asked = set(subjects.words(query)) - GENERIC
    out = list(hits)
    i = 0
    while i < len(out):
        h = out[i]
        entry = _relevant(relations.get(h.path, ()), h, asked)
        if entry is None:
            i += 1
            continue
        h.superseded_by = _shown(entry)
        if entry["about"] and entry["current"]["path"] != h.path:
            i += _raise_current(snap, out, i, entry["current"])
        i += 1
    return out


def _relevant(entries, h: Hit, asked: set[str]) -> dict | None:
    """The superseded statement in the hit's lines the query is most about (None: none there);
    `about`: the query names its subject, and its line shares no fewer query words than any other
    line of the hit, so a query about another statement of the same note moves nothing."""
    inside = [e for e in entries if h.start_line <= e.get("line", 0) <= h.end_line]
    if not inside:
        return None
    lines = h.text.split("\n")

    def overlap(n: int) -> int:
        at = n - h.start_line
        return len(asked & set(subjects.words(lines[at]))) if 0 <= at < len(lines) else 0

    best_line = max((overlap(h.start_line + k) for k in range(len(lines))), default=0)
    best = max(inside, key=lambda e: (overlap(e["line"]), bool(asked & _subject(e))))
    return {**best, "about": 0 < overlap(best["line"]) >= best_line and bool(asked & _subject(best))}


def _subject(e: dict) -> set[str]:
    """The words naming what the statement and its successor are about: a claim's subject, else
    the words the two statements share ("helix" in "switched to helix" and "i left helix")."""
    label = e.get("subject") or e["current"].get("subject") or e["by"].get("subject") or ""
    shared = set(subjects.words(subjects.clean(e["text"]))) & set(subjects.words(subjects.clean(e["by"]["text"])))
    return set(subjects.words(label)) | shared - GENERIC


def _shown(entry: dict) -> dict:
    cur = entry["current"]
    return {"path": cur["path"], "date": cur["date"], "line": cur["line"], "text": cur["text"],
            "statement": entry["text"], "statement_line": entry["line"]}


def _raise_current(snap, out: list[Hit], i: int, cur: dict) -> int:
    """Put the hit holding `cur` at position i (above out[i]); 1 when it moved down a place."""
    if any(o.path == cur["path"] for o in out[:i]):
        return 0  # already above
    below = next((k for k in range(i + 1, len(out)) if out[k].path == cur["path"]
                  and out[k].start_line <= cur["line"] <= out[k].end_line), None)
    if below is None:
        below = next((k for k in range(i + 1, len(out)) if out[k].path == cur["path"]), None)
    if below is not None:
        moved = out.pop(below)
    else:
        moved = _chunk_hit(snap, cur)
        if moved is None:
            return 0
    moved.score = max(moved.score, out[i].score)
    out.insert(i, moved)
    return 1


def _chunk_hit(snap, cur: dict) -> Hit | None:
    """A hit of the chunk of `cur`'s file that holds its line (None: not indexed)."""
    from memcli.retrieval.fusion import doc_hit

    f = snap.file_index(cur["path"])
    if f is None:
        return None
    rec = snap.record(f)
    docs = range(rec["first"], rec["first"] + rec.get("count", 0))
    for d in docs:
        _, start, end, _ = snap.meta(d)
        if start <= cur["line"] <= end:
            return doc_hit(snap, d, 0.0)
    return doc_hit(snap, docs[0], 0.0) if docs else None
