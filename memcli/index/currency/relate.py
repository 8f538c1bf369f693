"""Which statement supersedes which: one pass over a vault's claims in the order of its notes.

The input is claims.json's `files` (memcli.index.currency.statements.record); the output
is relations.json's `superseded`: per note, its superseded statements with the one that
superseded it (`by`) and the one holding the subject's value now (`current`).
"""

from __future__ import annotations

from memcli.index.currency import compare, kinds, reading, shift, subjects
from memcli.index.currency.statements import bare, describe, sets

MAX_HOLDING = 200  # a thing given up or a value replaced supersedes at most its newest holders


def _ordered(files: dict) -> list[dict]:
    """One entry per claim (a statement giving up or adopting a thing: one entry), in the
    order of the notes. Statements setting nothing are left to _Holders."""
    out = []
    for rel, rec in files.items():
        for item in rec.get("statements", ()):
            if not sets(item):
                continue
            base = _entry(rel, rec, item)
            out += [{**base, **c} for c in item.get("claims", ())] or [base]
            if item.get("claims") and item.get("adopts"):  # a thing adopted beside the claims made
                out.append({**base, "order": (*base["order"], 1)})
            if item.get("claims") and item.get("shift"):  # a value changed beside the claims made
                out.append({**base, "order": (*base["order"], 2)})
    out.sort(key=lambda s: s["order"])
    return out


def _entry(rel: str, rec: dict, item: dict) -> dict:
    base = {k: v for k, v in item.items() if k != "claims"}
    if "words" not in base:
        describe(base)
    when = item.get("date") or rec.get("date") or ""
    base.update(path=rel, date=when, order=(when, rec.get("stat", [0])[0], rel, item.get("line", 0)))
    return base


class _Holders:
    """The statements that set nothing, as older holders of a thing given up or of a value
    named as the previous one: the notes that may hold its words are found through their
    vocabulary, and their statements read (`read`: path -> statements) when first asked for."""

    def __init__(self, files: dict, ordered: list[dict], read=None, vocab=None):
        self.files, self.ordered, self.read = files, ordered, read
        self.vocab = vocab or (lambda rel: files[rel].get("vocab"))  # path -> its vocabulary, None: unknown
        self.of_note: dict[str, list[int]] = {}  # note -> its holders' indexes in `ordered`
        self.with_word: dict[str, set[str]] = {}  # word -> notes whose vocabulary holds it

    def notes(self, word: str) -> set[str]:
        if word not in self.with_word:
            key = f" {word} "
            self.with_word[word] = {rel for rel in self.files if key in (self.vocab(rel) or key)}
        return self.with_word[word]

    def statements(self, rel: str) -> list[int]:
        if rel not in self.of_note:
            rec = self.files[rel]
            if self.read is None:  # every statement kept in the record
                found = [i for i in rec.get("statements", ()) if not sets(i)]
            else:
                setting = {(i["line"], i["text"]) for i in rec.get("statements", ())}
                found = [i for i in bare(self.read(rel)) if (i["line"], i["text"]) not in setting]
            start = len(self.ordered)
            self.ordered.extend(_entry(rel, rec, i) for i in found)
            self.of_note[rel] = list(range(start, len(self.ordered)))
        return self.of_note[rel]

    def find(self, thing: str, before: tuple, seen_words: dict[str, dict[int, None]], by: dict) -> list[int]:
        """The statements before `before` holding every content word of `thing`, not superseded
        yet, newest first: a thing given up is what was held last."""
        want = set(reading.words(reading.clean(thing)))
        if not want:
            return []
        lists = sorted((seen_words.get(w, {}) for w in want), key=len)
        found = [j for j in lists[0] if j not in by and all(j in more for more in lists[1:])]
        for rel in sorted(set.intersection(*(self.notes(w) for w in want))):
            found += [
                j
                for j in self.statements(rel)
                if j not in by and self.ordered[j]["order"] < before and want <= set(self.ordered[j]["words"])
            ]
        found.sort(key=lambda j: self.ordered[j]["order"], reverse=True)
        return found[:MAX_HOLDING]


def relate(files: dict, vecs: kinds.Vectors | None = None, read=None, vocab=None) -> dict[str, list[dict]]:
    """Every superseded statement, by path, with the statement that superseded it (`by`) and
    the one that holds the subject's value now (`current`, the end of the chain).

    One pass in order; the earlier statements are found through word indexes (a claim's
    subject words among the live claims, a thing's or a value's words among all statements),
    so a vault of many notes costs a lookup per claim, not a scan. `read` (path -> statements)
    reads a note again for its statements setting nothing, `vocab` (path -> its vocabulary, None
    when unknown) says which notes may hold a word (_Holders)."""
    ordered = _ordered(files)
    holders = _Holders(files, ordered, read, vocab)
    live: dict[str, set[int]] = {}  # subject word -> claims not superseded yet
    seen_words: dict[str, dict[int, None]] = {}  # content word -> earlier statements holding it, in order
    by = _Superseded(live, seen_words, ordered)  # statement index -> index of the one that superseded it
    heads: dict[str, None] = {}  # the head words of the subjects claimed so far ("laptop")
    # A claim repeating a live claim's subject and value ("Line 3 of note 5: ..." four hundred
    # times) follows it instead of joining `live`: the next new value supersedes the first and
    # its followers at once, so a vault repeating one value costs a lookup per claim, not a
    # comparison with every earlier repetition (a 132,000-line vault: 540 s -> seconds).
    of_key: dict[tuple, list[int]] = {}  # exact subject key -> its live claims, one per value
    followers: dict[int, list[int]] = {}
    held: dict[str, set[int]] = {}  # a value's key -> the live claims holding it (shift)
    valued: dict[str, list[int]] = {}  # a word of a value -> the claims, superseded or not, holding it (_sibling)
    for i in range(len(ordered)):  # (holders are appended as found: they set nothing)
        s = ordered[i]
        if s.get("shift") and "key" not in s and (j_old := _shifted(s, held, ordered, by)):
            j, old, new = j_old  # "going with the 7:45" after "on the 7:37 metro": the metro is 7:45
            _take_subject(s, ordered[j], new, old)
        if s.get("adopts") and "key" not in s and (sib := _sibling(s, valued, ordered)) is not None:
            _take_subject(s, ordered[sib], s["adopts"])  # "going with plainsman m390" after "clay is plainsman m340"
        if s.get("adopts") and "key" not in s and (head := kinds.kind_of(s["adopts"], list(heads), vecs)):
            s.update(key=[head], label=head, value=s["adopts"])  # "got a macbook pro" sets the laptop
        if s.get("retired"):  # "the pegasus are retired": older statements holding the pegasus
            _give_up(i, ordered, holders, seen_words, by)
        if "key" in s:
            key = tuple(s["key"])
            for j in _same_subject(live, key, ordered, by, s):
                if _new_value(ordered[j], s):
                    by[j], by.cause[j] = i, "subject"
                    for f in followers.pop(j, ()):
                        if f not in by:
                            by[f], by.cause[f] = i, "subject"
            if s.get("old"):  # the previous value named: older statements holding it are superseded
                for j in holders.find(s["old"], s["order"], seen_words, by):
                    if (
                        ordered[j]["path"] != s["path"]
                        and _comparable(ordered[j], s)
                        and compare.mentions(ordered[j]["text"], key + tuple(s.get("also", ())), s["old"])
                    ):
                        by[j], by.cause[j] = i, "named"
            reps = of_key[key] = [j for j in of_key.get(key, ()) if j not in by]
            same = next(
                (
                    j
                    for j in reps
                    if ordered[j]["order"] != s["order"]
                    and _comparable(ordered[j], s)
                    and compare.same_value(ordered[j]["value"], s["value"])
                ),
                None,
            )
            if same is not None:
                followers.setdefault(same, []).append(i)
            else:
                reps.append(i)
                for w in compare.key_words(key):
                    live.setdefault(w, set()).add(i)
                for v in shift.held(s["value"]):
                    held.setdefault(v, set()).add(i)
            if not compare.is_frame(key):
                for w in reading.words(s["value"]):
                    valued.setdefault(w, []).append(i)
                heads.update(dict.fromkeys(n[-1] for n in compare.needs(s["key"], s.get("label", ""))))
        for w in s["words"]:
            seen_words.setdefault(w, {})[i] = None
    return _published(ordered, by)


def _take_subject(s: dict, of: dict, value: str, old: str = "") -> None:
    """`s` names no subject of its own: it sets the subject of the claim `of` to `value`."""
    s.update(key=list(of["key"]), label=of.get("label", ""), value=value, **({"old": old} if old else {}))


def _sibling(s: dict, valued: dict[str, list[int]], ordered: list[dict]) -> int | None:
    """The newest older claim (superseded or not: its subject is what counts) whose value is
    another model of the thing `s` adopts: the same name, another number ("clay is plainsman
    m340", later "going with plainsman m390"; "shoes are nike pegasus 40", later "got the
    pegasus 41"). None when the thing has no number or no name beside it."""
    thing = s["adopts"]
    mine = set(shift.held(thing))
    names = [w for w in reading.words(thing) if not any(c.isdigit() for c in w)]
    if not mine or not names:
        return None
    found = [
        j
        for j in valued.get(names[0], ())
        if ordered[j]["path"] != s["path"]
        and _comparable(ordered[j], s)
        and set(names) <= set(reading.words(ordered[j]["value"]))
        and (theirs := set(shift.held(ordered[j]["value"])))
        and not theirs & mine
    ]
    return max(found, key=lambda j: ordered[j]["order"]) if found else None


def _comparable(a: dict, b: dict) -> bool:
    """One person's statements (not another speaker's value), neither a digest's copy of the other."""
    return a.get("speaker", "") == b.get("speaker", "") and not compare.restates(a, b)


def _give_up(i: int, ordered: list[dict], holders: _Holders, seen_words: dict, by: _Superseded) -> None:
    """Statement i gives a thing up: the older statements holding it are superseded (a copy of
    the statement giving it up, in a digest node, is not a holder)."""
    s = ordered[i]
    for j in holders.find(s["retired"], s["order"], seen_words, by):
        old = ordered[j]
        if (
            old["path"] != s["path"]
            and old.get("retired") != s["retired"]
            and _comparable(old, s)
            and (
                subjects.holds(old["text"], s["retired"])
                or ("key" in old and compare.value_holds(old["value"], s["retired"]))
            )
        ):
            by[j], by.cause[j] = i, "given up"
            if s.get("to") and "key" not in s and "key" in old and not compare.is_frame(old["key"]):
                # "switched from m340 to laguna b-mix" after "clay is plainsman m340": the clay is b-mix
                _take_subject(s, old, s["to"], s["retired"])


def _new_value(old: dict, new: dict) -> bool:
    """`new` gives the subject of `old` another value: same speaker, another value of a kind
    the subject can take (a clock time does not replace a count)."""
    return (
        _comparable(old, new)
        and old["order"] != new["order"]
        and not compare.same_value(old["value"], new["value"])
        and shift.same_kind(old["value"], new["value"])
    )


def _shifted(s: dict, held: dict[str, set[int]], ordered: list[dict], by: dict) -> tuple[int, str, str] | None:
    """(the newest older live claim holding one of `s`'s shift values, that old value, the new
    one) for a statement changing a value without naming its subject (memcli.index.currency.shift)."""
    for old, new in s["shift"]:
        found = [
            j
            for j in held.get(shift.key(old), ())
            if j not in by
            and ordered[j]["path"] != s["path"]
            and ordered[j]["order"] < s["order"]
            and _comparable(ordered[j], s)
            and shift.tied(old, new, ordered[j]["words"], s["words"])
        ]
        if found:
            return max(found, key=lambda j: ordered[j]["order"]), old, new
    return None


class _Superseded(dict):
    """statement index -> the one that superseded it; a superseded statement leaves the indexes."""

    def __init__(self, live: dict[str, set[int]], seen_words: dict[str, dict[int, None]], ordered: list[dict]):
        super().__init__()
        self.live, self.seen_words, self.ordered = live, seen_words, ordered
        self.cause: dict[int, str] = {}  # why: "subject" (a new value), "named" (old value named), "given up"

    def __setitem__(self, j: int, i: int) -> None:
        super().__setitem__(j, i)
        for w in compare.key_words(self.ordered[j].get("key", ())):
            self.live.get(w, set()).discard(j)
        for w in self.ordered[j]["words"]:
            self.seen_words.get(w, {}).pop(j, None)


def _published(ordered: list[dict], by: _Superseded) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    seen: set[tuple[str, int]] = set()
    current: dict[int, int] = {}  # the end of each chain, found once

    def end_of(i: int) -> int:
        path = []
        while i in by and i not in current:
            path.append(i)
            i = by[i]
        end = current.get(i, i)
        for k in path:
            current[k] = end
        return end

    for j, i in sorted(by.items()):
        end = end_of(j)
        old = ordered[j]
        if (old["path"], old["line"]) in seen:  # a second claim of one statement
            continue
        seen.add((old["path"], old["line"]))
        cause = by.cause.get(j, "subject")
        out.setdefault(old["path"], []).append(
            {
                "line": old["line"],
                "text": old["text"],
                "subject": old.get("label", ""),
                "value": old.get("value", ""),
                "by": _public(ordered[i]),
                "current": _public(ordered[end]),
                "needs": _needs(old, ordered[i], cause),
                "_order": old["order"],
                # a question asking what holds now may name neither side's subject
                **({"given_up": True} if cause == "given up" else {}),
            }
        )
    for found in out.values():  # in the notes' order (holders were read after the claims)
        found.sort(key=lambda e: e.pop("_order"))
    return out


def _needs(old: dict, new: dict, cause: str) -> list[list[str]]:
    """Word sets of which a query must hold one to be about this supersession: the subject
    (memcli.index.currency.compare.needs) of the claim that decided it (both, for a new value of one
    subject; the newer, when it named the old value) and, for a thing given up, the older
    claim's and the other words the two statements share ("why could helix not find ruff" asks
    about helix, not about what replaced it)."""
    sides = {"subject": (old, new), "named": (new,), "given up": (old,)}[cause]
    sets = [n for s in sides if "key" in s for n in compare.needs(s["key"], s.get("label", ""))]
    sets += [[w] for w in new.get("also", ()) if w in old["words"]]  # a CJK claim's subject in English
    if cause == "given up":  # the words the two share but the thing: a query naming the thing asks about it
        thing = set(reading.words(reading.clean(new.get("retired", ""))))
        sets += [[w] for w in sorted(set(old["words"]) & set(new["words"]) - compare.GENERIC - thing)]
    return [list(n) for n in dict.fromkeys(tuple(n) for n in sets)]


def _same_subject(
    live: dict[str, set[int]], key: tuple, ordered: list[dict], by: dict, me: dict | None = None
) -> list[int]:
    """The live claims of `key`'s subject. When they name different subjects that merely share
    a word with it ("pool" against "pool size" and "swimming pool"), only those sharing the
    most words count, and none if those still disagree: a guess would supersede a decoy."""
    near = sorted({j for w in compare.key_words(key) for j in live.get(w, ())})
    found = [j for j in near if compare.same_subject(tuple(ordered[j]["key"]), key)]
    if me is not None:
        found = [j for j in found if not _event_apart(ordered[j], me)]
    if not found and me is not None:  # "metronome at 60 is right", later "metronome at 72 on the development"
        # (in another note: one note's frames of one word are its list, "add 2 tbsp", "add 250 ml")
        return [j for j in near if ordered[j]["path"] != me["path"] and _same_head(ordered[j], me)]
    if len({tuple(ordered[j]["key"]) for j in found}) <= 1:
        return found
    mine = set(compare.key_words(key))
    shared = {j: len(set(compare.key_words(ordered[j]["key"])) & mine) for j in found}
    found = [j for j in found if shared[j] == max(shared.values())]
    keys = [tuple(ordered[j]["key"]) for j in found]
    if all(compare.same_subject(a, b) for a in keys for b in keys):
        return found
    return []


def _head(s: dict) -> str:
    """The word a short claim is about: a frame's first word ("metronome" of "metronome at 60 is
    right"), a one-word subject itself; "" for a longer subject (its words say more)."""
    key = list(s.get("key") or [])
    if compare.is_frame(key):
        return (s.get("label") or "").split(" ", 1)[0]
    return str(key[0]) if len(key) == 1 else ""


# a frame of one of these verbs says when or what was done, not what ("R$220, starting april 10",
# "priscila starts on april 3", "added reserve pool 5" and a recipe's "add 2 tbsp doubanjiang"): two
# of them are one subject only when their statements share another word
_EVENTS = frozenset("start begin end finish keep stay go come leave arriv open close happen add put take make".split())


def _event_apart(old: dict, new: dict) -> bool:
    """Two frames of one event verb whose statements share no other word: two things, not one."""
    head = _head(old)
    if head not in _EVENTS or _head(new) != head:
        return False
    values = set(reading.words(old.get("value", ""))) | set(reading.words(new.get("value", "")))
    return not (set(old["words"]) & set(new["words"])) - {head} - values - compare.GENERIC


def _same_head(old: dict, new: dict) -> bool:
    """A frame and another frame or a one-word subject about the same word, with values of one
    kind and unit ("60", "72", "88"; not a digit: "tobi drops the user at terminal 1" is no value of
    "tobi found one for 70"): one subject said in different clauses. "a 25m pool" and
    "raised the pool to 50" stay two (metres are no connections). A change of a one-word subject
    also meets an older frame of two words ending in it: "the user's training is thursdays 7pm
    now" after "the user's team trains wednesdays 7pm" (team train)."""
    frames = [compare.is_frame(x.get("key")) for x in (old, new)]
    if not any(frames) or not shift.same_unit(old["value"], new["value"]) or shift.digit(old["value"], new["value"]):
        return False
    if _head(old) != "" and _head(old) == _head(new):
        return not _event_apart(old, new)
    said = (old.get("label") or "").split()
    return (
        frames == [True, False]
        and len(said) == 2
        and list(new.get("key") or []) == said[-1:]
        and shift.tells_change(new["text"])
    )


def _public(s: dict) -> dict:
    return {
        "path": s["path"],
        "date": s["date"],
        "line": s["line"],
        "text": s["text"],
        "subject": s.get("label", ""),
        "value": s.get("value", ""),
    }
