"""What a new digest node is called and where it goes: its title, its file name, its bucket.

A unit of facts founding a node is named for its subject: the numbered list's heading when the
unit is one list, else the noun phrase most of its facts share (extraction/dream/subject.py),
else the words that weigh most across them. The same facts get the same name run after run.
"""

from __future__ import annotations

from collections import Counter

from memcli.extraction.dream.evidence import Evidence, is_pair
from memcli.extraction.dream.node import slugify
from memcli.extraction.dream.rules import BUCKET_RANK, bucket_of
from memcli.extraction.dream.schema import Fact
from memcli.extraction.dream.subject import subject_title

NAME_WORDS = 3
GENERIC_HEADINGS = frozenset(
    {"steps", "procedure", "procedures", "how to", "runbook", "instructions", "checklist", "todo", "to do", "list"}
)


def bucket(facts: list[Fact]) -> str:
    counts = Counter(bucket_of(f) for f in facts)
    return min(counts, key=lambda b: (-counts[b], BUCKET_RANK[b]))


def title(facts: list[Fact], titles: dict[str, str] | None = None) -> str:
    """The subject the facts are about, as a title: the numbered list's heading when the unit is
    one list, else the noun phrase the titles of two or more of their notes share ("Hockey" of
    "Hockey" and "Hockey mondays": a note's title names what it is about, a statement's words
    may not: "Still Mondays at 9:15") unless the facts' own phrase holds it and says more, else
    the noun phrase most of the facts share (extraction/dream/subject.py). `titles`: note path
    -> its title."""
    if (
        len(facts) > 1
        and all(f.numbered and (f.path, f.section) == (facts[0].path, facts[0].section) for f in facts)
        and facts[0].section
    ):
        heading = facts[0].section
        if heading.strip().lower() in GENERIC_HEADINGS:  # "## Steps" of deployment-process.md
            heading = facts[0].path.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ")
        return heading[:1].upper() + heading[1:]
    headings = [h for p in dict.fromkeys(f.path for f in facts) if (h := (titles or {}).get(p, ""))]
    said = subject_title([f.line() for f in facts])
    heading = subject_title(headings, least=2)
    if heading and said and set(heading.lower().split()) < set(said.lower().split()):
        return said  # the statements name it more closely ("Wheel class" of the notes' "Class")
    return heading or said


def name(facts: list[Fact], ev: Evidence) -> str:
    """A kebab-case name for the subject's title; the words that weigh most across the facts when
    no noun phrase names it. The same facts get the same name run after run."""
    found = title(facts, ev.titles)
    if found and slugify(found) != "node":
        return slugify(found)
    score: dict[str, float] = {}
    first: dict[str, int] = {}
    for f in facts:
        for w, weight in ev.bag(f.line()).items():
            if is_pair(w):
                continue  # a pair of characters is evidence of a subject, not a name for it
            score[w] = score.get(w, 0.0) + weight
            first.setdefault(w, len(first))
    picked = sorted(score, key=lambda w: (-score[w], first[w]))[:NAME_WORDS]
    picked.sort(key=lambda w: first[w])
    return slugify(" ".join(picked)) if picked else slugify(facts[0].text)
