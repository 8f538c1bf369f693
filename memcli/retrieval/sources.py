"""Show the note, not its source conversation (memcli.index.notes.source).

A chunk of a note's source conversation is indexed as part of the note, so a query worded
like the chat finds the note. The hit shown is the note: its own chunk that ranked best
among the candidates, moved up to where the conversation matched, else its first chunk. A
note already shown higher keeps its place and the conversation's match adds no second hit.
"""

from __future__ import annotations

from memcli.index.notes.source import is_source
from memcli.retrieval.fusion import doc_hit, file_docs
from memcli.retrieval.hits import Hit


def as_notes(snap, hits: list[Hit]) -> list[Hit]:
    """`hits` with each source-conversation match replaced by a chunk of its note."""
    if not any(is_source(h.start_line) for h in hits):
        return hits
    out: list[Hit] = []
    shown: set[str] = set()
    rest = list(hits)
    while rest:
        h = rest.pop(0)
        if not is_source(h.start_line):
            out.append(h)
            shown.add(h.path)
            continue
        if h.path in shown:
            continue
        own = next((k for k, o in enumerate(rest) if o.path == h.path and not is_source(o.start_line)), None)
        note = rest.pop(own) if own is not None else _first_chunk(snap, h.path)
        if note is None:
            continue
        note.score = max(note.score, h.score)
        note.vector = note.vector if note.vector is not None else h.vector
        note.keyword = note.keyword if note.keyword is not None else h.keyword
        note.via_source = True
        out.append(note)
        shown.add(h.path)
        rest = [o for o in rest if not (o.path == h.path and is_source(o.start_line))]
    return out


def _first_chunk(snap, path: str) -> Hit | None:
    for d in file_docs(snap, path):
        if not is_source(snap.meta(d)[1]):
            return doc_hit(snap, d, 0.0)
    return None
