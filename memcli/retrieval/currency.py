"""Rank the current statement above the ones it superseded (docs/currency.md).

The relations are memcli.index.currency's. A hit holding a superseded statement the query
asks about (the query holds the words of its subject, `needs`; a question asking what holds now
also one sharing a word with a statement of a thing given up, which has none) gets the
statement's current holder placed right above it: moved up when it is a hit further down,
else its chunk is added there, at the superseded hit's score. A question asking what holds now
also lets the newer of two of its first hits go first when it holds every query word the older
one holds, or all but one of three or more, or one of them as near the question in meaning
(by vectors); any other question not about the past, only when
the newer one tells a change in a line holding every query word ("Japanese update: the sunday
class folded" for "when is the Japanese class"), or one of them and a value of the kind asked
("down to 12" for "how many hens", "my new supervisor is" for "who is my supervisor"), or another
value of that kind and unit in a line sharing two query words with one of the older note's ("$39
a bin" after "$36 a bin" for "how much per bin"). Nothing else moves: recency orders
statements of one subject only, never the results as a whole (a global decay with a 30-day
half-life put current values first but cost a fifth of session recall@5).

Every hit holding a superseded statement carries `superseded_by`: what holds that subject's
value now (path, date, line, text), and the statement it replaces.
"""

from __future__ import annotations

import re
from itertools import pairwise

from memcli.index.currency import compare, gloss, load, reading, shift
from memcli.retrieval.framing import VALIDITY
from memcli.retrieval.fusion import doc_hit, file_docs
from memcli.retrieval.hits import Hit
from memcli.vault import dates

# a word of the query's expansion this near a query word (cosine) names the query's subject
# too: "fly" asks about a "flight", "laptop" about a "macbook" (memcli.retrieval.expand)
NEAR = 0.6


def annotate_and_rank(
    snap, metadata, hits: list[Hit], query: str, near=(), daily_dir: str = "memory", question: str = ""
) -> list[Hit]:
    """`hits` with superseded_by set and each current statement above the one it superseded;
    `query`: the words asked about, whose tense says whether it asks what was; `question`: as
    asked, with the words asking what holds now ("these days", memcli.retrieval.framing),
    `query` when not given; `near`: the query expansion's words at least NEAR similar to a query
    word; `daily_dir`: where dated notes live (a note's date is the one currency gives it,
    memcli.vault.dates)."""
    question = question or query
    past = bool(_ASKS_PAST.search(query))
    now = bool(_ASKS_NOW.search(question)) and not past
    texts: dict[str, str] = {}

    def note_text(path: str) -> str:  # read once per note: both passes below ask again
        if path not in texts:
            texts[path] = _note_text(snap, path)
        return texts[path]

    own = set(reading.words(query)) - compare.GENERIC  # the query's own words, its expansion's apart
    kind = _asked_kind(question) if not now else ""

    cited, date = _cited(daily_dir, note_text), lambda h: dates.of(daily_dir, h.path) or ""  # built once a search

    def newest_first(hits: list[Hit]) -> list[Hit]:
        return hits if not hits or past else _newest_of_subject(note_text, hits, own, date, not now, kind, cited)

    hits = newest_first(hits)
    relations = load(metadata)
    if not relations or not hits:
        return hits
    asked = own | (set(reading.words(" ".join(near))) - compare.GENERIC)
    out = list(hits)

    def spoken(entry: dict) -> bool:  # in the note's own statements, not its conversation's turns
        own = (x for x in note_text(entry["current"]["path"]).split("\n") if x.startswith("- "))
        return bool(asked & set(reading.words("\n".join(own))))

    if past:  # "when did she move", "what was the goal before": the old value is the answer
        for h in out:
            entry = _relevant(relations.get(h.path, ()), h, asked)
            if entry is not None:
                h.superseded_by = _shown(entry)
        return out
    i = 0
    while i < len(out):
        h = out[i]
        entry = _relevant(relations.get(h.path, ()), h, asked, now, own)
        if entry is None:
            i += 1
            continue
        h.superseded_by = _shown(entry)
        # by a thing given up alone, the note now holding the value must speak of what is asked
        # too ("the old hilux" in a note on Mina's car seat, for "what ute does the user drive")
        if entry["about"] and entry["current"]["path"] != h.path and (not entry["loose"] or spoken(entry)):
            i += _raise_current(snap, out, i, entry["current"])
        i += 1
    # a raised note holds the value a recorded change set, which a newer note may have changed
    # again unrecorded ("Helen moved lab meeting to thursdays" raised above a digest node's
    # history, over "Wednesdays at 2 from now on"): the newer-first pass once more, which only
    # ever moves a newer note up
    return newest_first(out)


# A question in the past tense asks what was true then, so it reorders nothing (the relation is
# still shown). Raising current values for every query cost LoCoMo, whose questions are mostly
# about past events ("When did Caroline go to the support group?"), 0.010 of session nDCG@10;
# also raising them above every older note that merely mentions the subject cost 0.016 more
# (bench/locomo.py --compare), so only the hit holding the superseded statement is passed.
_ASKS_PAST = re.compile(
    r"\b(?:did|was|were|had|used to|originally|previously|formerly|before|earlier|"
    r"at first|back then|last (?:year|month|week|time))\b",
    re.I,
)


# A question asking what holds now ("which editor does she use now", "who teaches the class
# these days") lets recency order the first hits that hold its subject, whether or not a
# relation was recorded between them: the newer of two notes holding every query word the
# older holds (all but one of them) goes first. On the recall sets' questions it moved only update
# questions (dev latest-first 11 → 12 of 14, dev2 11 → 12 of 15 and R@1 +0.014, dev3 unchanged);
# "all but one of three or more" instead of "every" added one current value first on the
# held-back halves of dev2 and dev4 each, and moved nothing else on the five sets.
_ASKS_NOW = re.compile(rf"\b(?:now|currently|current|{VALIDITY}|any ?more|still|latest|most recent)\b", re.I)
# ...and a newer hit of its first three sharing only one of the words asked goes first when it
# scores at least NOW_SCORE of the one above and its cosine to the question is at least NOW_COSINE
# of that one's: dev–dev6's 46 such questions, R@1 35 → 38 and current value first 40 → 41 of 43,
# none lost; without the cosine, at a score share of 0.4, a first hit was lost to a weaker newer
# note ("the user's current goal time for the half marathon" to a note on oatmeal and minutes)
NOW_SCORE = 0.5
NOW_COSINE = 0.75
# the dated notes ordered, and how many undated hits (digest nodes) among them are passed over:
# after dream a node citing the old and the new note ranks between them. On dev-dev7's kept
# after-dream workspaces: current value first 79 -> 83 of 102, R@1 400 -> 404; after ingest unchanged
NOTES, UNDATED = 3, 2


# The kind of value a question asks for, when it does not ask what holds now: a newer line
# telling a change that holds a word asked and a value of that kind answers it (a time, a day or
# a date for "when"; a number for "how many"; someone new in the role for "who"). On dev-dev7's
# 534 questions after ingest: current value first 80 -> 84 of 102, R@1 397 -> 401, none lost;
# LoCoMo unchanged (bench/locomo.py --compare, keyword and hybrid).
_ASKS_WHEN = re.compile(
    r"^\W*(?:when|what time|(?:what|which) (?:days?|dates?|evenings?|nights?|mornings?|afternoons?|hours?|weeks?|months?)|"
    r"what(?: is|'s) the (?:days?|dates?|time)|how often)\b",
    re.I,
)
_ASKS_COUNT = re.compile(
    r"^\W*(?:how (?:many|much|long|far|old|big)|what(?: is|'s) the (?:number|price|size|cost|rate))\b", re.I
)
_ASKS_WHO = re.compile(r"^\W*who\b", re.I)
_NEW = re.compile(r"\bnew ((?:\w+ )?\w+)", re.I)  # "new supervisor", "new head coach"


def _asked_kind(question: str) -> str:
    """What kind of value a question asks for: "when", "count", "who" or "" (another)."""
    if _ASKS_WHEN.search(question):
        return "when"
    if _ASKS_COUNT.search(question):
        return "count"
    return "who" if _ASKS_WHO.search(question) else ""


def _answers(line: str, kind: str, asked: set[str]) -> bool:
    """A line telling a change holds a value of the kind asked: a time, a day or a date for
    "when", a number for "how many", someone new in a role asked about for "who" ("the user's
    new supervisor is faith mutua")."""
    if kind == "when":  # a CJK line's weekday is read in its English keywords ("Sunday" for 星期天)
        return shift.timed(line) or shift.timed(" ".join(gloss.keywords(line)))
    if kind == "count":
        return shift.counted(line)
    return kind == "who" and any(asked & set(reading.words(m.group(1))) for m in _NEW.finditer(line))


def _newest_of_subject(
    note_text, hits: list[Hit], asked: set[str], date, told: bool, kind: str, cited=lambda h: ""
) -> list[Hit]:
    """For a query asking what holds now: among the first three dated notes of the hits (up to two
    digest nodes between them passed over), a newer note whose
    whole text (its conversation included) holds every query word the one above it holds, or all
    but one of three or more, or one of them as near the query in meaning (NOW_SCORE, NOW_COSINE),
    goes above it; `date`: a hit's note's date, "" when undated.
    `told`: any other question not about the past: only a newer note telling a change
    (shift.tells_change) in a line holding every query word goes above, or a line holding one of
    them (its own words, not ingest's glosses) and a value of the `kind` the question asks for
    (_asked_kind): a time, a day or a date for "when" ("the user is doing fridays now" for
    "which day does the user drive the carpool"), a number for "how many" ("down to 12"),
    someone new in the role for "who" ("the user's new supervisor is"): the older note is its old value.
    `note_text`: a note's whole indexed text by path. `cited`: the newest date of the daily notes a
    digest node cites: a node above a newer note of its subject that it does not cite does not
    know that note's value, and the note goes above it as above an older note ("the user's
    supervisor mr ochieng" in a node citing September only, over October's "the user's new
    supervisor is faith mutua")."""
    seen: dict[str, set[str]] = {}
    valued: dict[str, list] = {}

    def covered(h: Hit) -> set[str]:
        if h.path not in seen:
            seen[h.path] = asked & set(reading.words(note_text(h.path)))
        return seen[h.path]

    def values(h: Hit) -> list:  # read once: the pairs are compared again each round
        if h.path not in valued:
            valued[h.path] = _valued(note_text(h.path), asked, kind)
        return valued[h.path]

    def tells_change(h: Hit) -> bool:  # "who teaches the japanese class" is not about its day
        for line in note_text(h.path).split("\n"):
            if line.startswith("- ") and shift.tells_change(line):
                have = asked & set(reading.words(line))
                if have == asked or (reading.statement_words(line) & asked and _answers(line, kind, asked)):
                    return True
        return False

    def goes_above(a: Hit, b: Hit, since: str = "") -> bool:
        since = since or date(a)
        if not since or date(b) <= since or a.path == b.path:
            return False  # dates first: most pairs end here, before any note is read
        held, both = covered(a), covered(b) & covered(a)
        # all of its words, or all but one of three or more ("Does the gym have a cafe now?"
        # asks about the old note's cafe, not the new gym)
        ok = bool(held) and (both == held or (len(held) >= 3 and len(both) >= len(held) - 1))
        if told:
            return ok and (tells_change(b) or _restated(values(a), values(b)))
        if ok:
            return True
        # asking what holds now, a newer hit sharing a word asked and near the question in meaning
        # as the older one is of the subject too: a new value is often told in other words ("Frank
        # got his first librela shot today!" for "What is Frank the greyhound on now for his
        # arthritis?"). Keyword scores of one shared word say nothing of meaning: vectors only.
        near = a.vector is not None and b.vector is not None and b.vector >= NOW_COSINE * a.vector
        return bool(both) and near and b.score >= NOW_SCORE * a.score

    # the first three dated notes, a digest node among them passed over: a node citing the old and
    # the new note sits between them and is no date to order by
    at = [i for i, h in enumerate(hits[: NOTES + UNDATED]) if date(h)][:NOTES]
    top = list(hits)
    for _ in range(len(at)):
        moved = False
        for i, j in pairwise(at):
            if goes_above(top[i], top[j]):
                top[i], top[j] = top[j], top[i]
                moved = True
        if not moved:
            break
    window = min(len(top), NOTES + UNDATED)
    for i in range(window):
        if date(top[i]) or not (known := cited(top[i])):
            continue  # a dated note was ordered above; a hit citing no daily note has no date at all
        later = next((j for j in range(i + 1, window) if goes_above(top[i], top[j], known)), None)
        if later is not None:
            top.insert(i, top.pop(later))
    return top


def _valued(text: str, asked: set[str], kind: str) -> list[tuple[set[str], set[tuple[str, str, str]]]]:
    """(words asked, (kind, unit, value) of its values) of each statement of a note's text holding
    a word asked and a value of the `kind` asked (any kind for ""): "$36 a bin" is a number."""
    out = []
    for line in text.split("\n"):
        if line.startswith("- ") and (have := asked & set(reading.words(line))):
            vals = {(k, shift.unit(v), shift.key(v)) for _, k, v in shift.values(reading.clean(line))}
            if kind == "when":
                vals = {x for x in vals if x[0] != "number"}
            elif kind == "count":
                vals = {x for x in vals if x[0] == "number"}
            if vals:
                out.append((have, vals))
    return out


def _restated(older: list, newer: list) -> bool:
    """The newer note gives another value of one kind and unit in a statement sharing two words
    asked with one of the older note's ("They charge $36 a bin", later "Bay Harvest sent the season
    rate sheet, $39 a bin" for "How much does Bay Harvest charge per bin?"): the subject's value
    told again, changed, with no word of change. `older`, `newer`: the notes' _valued statements."""
    for wa, va in older:
        for wb, vb in newer:
            if len(wa & wb) >= 2:
                units = {x[:2] for x in va} & {x[:2] for x in vb}
                if units and not {x for x in va if x[:2] in units} & {x for x in vb if x[:2] in units}:
                    return True
    return False


def _cited(daily_dir: str, note_text):
    """The newest date of the daily notes an undated hit (a digest node) cites ("" for a daily note)."""
    folder = daily_dir.strip("/")
    link = re.compile(rf"\[\[{re.escape(folder)}/(\d{{4}}-\d{{2}}-\d{{2}})/")

    def cited(h: Hit) -> str:
        if h.path.startswith(folder + "/"):
            return ""
        return max(link.findall(note_text(h.path)), default="")

    return cited


def _note_text(snap, path: str) -> str:
    """The whole indexed text of a note, its source conversation's passages included."""
    return "\n".join(snap.text(d) for d in file_docs(snap, path))


def _relevant(entries, h: Hit, asked: set[str], now: bool = False, own: set[str] | None = None) -> dict | None:
    """The superseded statement in the hit's lines the query is most about (None: none there);
    `about`: the query holds the words of its subject (the entry's `needs`: "goal" for a goal,
    "long run" for the long run), so a query about another statement of the note moves nothing.
    A thing given up names no subject (no `needs`: "i left helix", or only the older claim's:
    "driving him saturdays, still taking the train to work" given up by "done with the train"):
    a question is about it when it shares a word with the statement ("which code editor now" and
    "vs code was too slow, switched to helix", "how does the user get to work these days", "what
    ute does the user drive" and "drive the hilux" given up by "the old hilux"); one asking what
    holds `now`, also about any other statement without `needs` it shares a word with. `own`: the
    query's own words (`asked` less its expansion's), None when not told apart."""
    # a note found through its source conversation (sources) was matched whole: any statement may be asked about
    inside = list(entries) if h.via_source else [e for e in entries if h.start_line <= e.get("line", 0) <= h.end_line]
    if not inside:
        return None
    lines = [set(reading.words(line)) for line in h.text.split("\n")]
    shared = [len(asked & ws) for ws in lines]  # per line of the hit
    mine = [len((own or set()) & ws) for ws in lines]  # the same, the query's own words only

    def at(e: dict) -> int:  # the entry's line in the hit's text
        return e["line"] - h.start_line

    def overlap(e: dict, per_line: list[int] = shared, of: set[str] = asked) -> int:
        return per_line[at(e)] if 0 <= at(e) < len(lines) else len(of & set(reading.words(e.get("text", ""))))

    def about(e: dict) -> bool:
        if now and (e.get("given_up") or not e.get("needs")) and overlap(e):
            return True
        # what was given up is no longer held, "now" said or not (a question about the past
        # reorders nothing: annotate_and_rank), when no other line of the hit is nearer the
        # question ("which company does the user work for" is about the line naming the company,
        # not the one that says the user worked in helix)
        return loose(e) or any(need and set(need) <= asked and named(e, need) for need in e.get("needs") or ())

    def named(e: dict, need) -> bool:
        # a subject named only by the query's expansion ("meal" near "restaurant") is asked about only
        # when no other line of the hit holds more of the query's own words than its statement ("Kumo's
        # owner is Aiko Mori" for "who is the owner of the restaurant", not the staff meal's time)
        if own is None or set(need) <= own:
            return True
        return all(k <= overlap(e, mine, own) for j, k in enumerate(mine) if j != at(e))

    def loose(e: dict) -> bool:  # about it by the rule above alone, "now" not said
        n = overlap(e) if e.get("given_up") else 0
        return bool(n) and all(k < n for j, k in enumerate(shared) if j != at(e))

    best = max(inside, key=lambda e: (about(e), overlap(e)))
    is_about = about(best)
    return {**best, "about": is_about, "loose": not now and is_about and loose(best)}


def _shown(entry: dict) -> dict:
    cur = entry["current"]
    return {
        "path": cur["path"],
        "date": cur["date"],
        "line": cur["line"],
        "text": cur["text"],
        "statement": entry["text"],
        "statement_line": entry["line"],
    }


def _raise_current(snap, out: list[Hit], i: int, cur: dict) -> int:
    """Put the hit holding `cur` at position i (above out[i]); 1 when it moved down a place."""
    if any(o.path == cur["path"] for o in out[:i]):
        return 0  # already above
    below = next(
        (
            k
            for k in range(i + 1, len(out))
            if out[k].path == cur["path"] and out[k].start_line <= cur["line"] <= out[k].end_line
        ),
        None,
    )
    if below is None:
        below = next((k for k in range(i + 1, len(out)) if out[k].path == cur["path"]), None)
    moved: Hit | None
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
    docs = file_docs(snap, cur["path"])
    for d in docs:
        _, start, end, _ = snap.meta(d)
        if start <= cur["line"] <= end:
            return doc_hit(snap, d, 0.0)
    return doc_hit(snap, docs[0], 0.0) if docs else None
