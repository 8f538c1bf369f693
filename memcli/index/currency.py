"""Currency: which dated statement a newer one supersedes (derived state, docs/currency.md).

Built by every sync (`mem reindex`, the sync before a search, ingest, watch): the notes whose
stat changed are read again (a dated note's statements, an undated note's lines citing a dated
note), their claims (memcli.index.subjects) kept per file in
`mem_metadata/currency/claims.json`, and the relations worked out again over all of them into
`mem_metadata/currency/relations.json`, the small file a search reads. The Markdown is never
touched; deleting the folder only makes the next sync read the dated notes again.

Order is the note's date (its path), then its modification time, then the line. A claim
supersedes the live claims of the same subject with another value; one with the same value
is a restatement and supersedes nothing. A claim naming its previous value ("instead of
9:30", "from Helix to Zed") also supersedes any older statement that names the subject and
that value; one giving a thing up ("the pegasus are retired") the older statements holding it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from memcli.index import gloss, kinds, subjects
from memcli.vault import atomic, frontmatter
from memcli.vault.workspace import Workspace

VERSION = 5  # 4: glosses read apart, CJK claims' English words, things adopted; 5: speakers
MAX_HOLDING = 200  # a thing given up or a value replaced supersedes at most its newest holders
MAX_STATEMENT = 240  # characters of a statement kept (longer lines are prose, rarely one value)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_LINK = re.compile(r"\[\[([^\]|#]+)")
_LINKED = re.compile(r"\s*\(?\[\[[^\]]*\]\]\)?")  # a wikilink, with the parentheses around a source link
_AUTO = re.compile(r"<!--\s*notes:auto\s*-->.*?<!--\s*/notes:auto\s*-->", re.S)


def folder(metadata: Path) -> Path:
    return metadata / "currency"


def statements(text: str, date: str | None = None, date_of=None) -> list[tuple]:
    """(line number, sentence[, date]) of a note's body: list items and paragraphs, not
    headings, front matter, comments or the day page's generated list of links. In a note
    without a date of its own (a digest node), only the lines citing a dated note count, dated
    by the newest they cite (`date_of`: path -> date or None); the links are left out of the text."""
    _, skip = frontmatter.split(text)
    text = _AUTO.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out: list[tuple] = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if n <= skip or not s or s.startswith(("#", "<!--", ">", "|", "```", "[[")):
            continue
        when = date
        if date_of is not None:
            cited = [d for t in _LINK.findall(s) if (d := date_of(t) or date_of(t + ".md"))]
            when = date or (max(cited) if cited else None)
            if when is None:
                continue
        s = _LINKED.sub("", re.sub(r"^[-*+]\s+(?:\[[ xX]\]\s+)?", "", s)).strip()
        for part in _SENTENCE.split(s):
            if 3 <= len(part) <= MAX_STATEMENT:
                out.append((n, part, when) if date_of is not None else (n, part))
    return out


def _read_file(ws: Workspace, rel: str, date: str, stat) -> dict:
    try:
        text = ws.locate(rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    return {"stat": list(stat), "date": date, "statements": items(statements(text, date, ws.date_of))}


def items(found: list[tuple[int, str]]) -> list[dict]:
    """What claims.json keeps of a note's statements: each with its claims, or what it gives up."""
    out = []
    for line, sentence, *when in found:
        english = [w for k in gloss.keywords(sentence) for w in subjects.words(k)]  # a CJK statement's gloss
        item: dict = {"line": line, "text": sentence,
                      "words": sorted(set(subjects.words(subjects.clean(sentence))) | set(english))}
        if when and when[0]:
            item["date"] = when[0]
        if speaker := _speaker(sentence):
            item["speaker"] = speaker
        gone = subjects.retired(sentence)  # a thing given up sets no value ("retired after 750 km")
        made = [] if gone else subjects.claims(sentence)
        if made:
            item["claims"] = [{"key": list(c.key), "label": c.label, "value": c.value, "old": c.old,
                               **({"also": list(c.also)} if c.also else {})} for c in made]
        elif gone:
            item["retired"] = gone
        if not gone and (thing := kinds.adopted(sentence)):  # "got a macbook pro": a subject once its kind is known
            item["adopts"] = thing
        out.append(item)
    return out


# a named speaker's line ("[D1:3] Caroline: I moved ...", "- Wei: ..."): whose statement it is
_SPEAKER = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[[^\]]{1,20}\]\s*)?(?:\*\*)?([A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?)(?:\*\*)?:\s")
_NOT_SPEAKER = frozenset({"user", "assistant", "me", "i", "note", "source", "superseded", "previously", "todo"})


def _speaker(sentence: str) -> str:
    """The named speaker of a statement, "" for the user's own: one person's new value never
    supersedes another's (in a conversation between Caroline and Melanie, each has her own)."""
    m = _SPEAKER.match(sentence)
    name = m.group(1).lower() if m else ""
    return "" if name in _NOT_SPEAKER else name


def refresh(ws: Workspace, current: dict[str, tuple[int, int]], *, full: bool = False) -> bool:
    """Bring the claims and relations up to date with `current` (path -> (mtime_ns, size), the
    sync's view of the vault). True when something was written."""
    base = folder(ws.metadata)
    cache = None if full else _load(base / "claims.json")
    files: dict = (cache or {}).get("files", {})
    dated = {rel: st for rel, st in current.items() if rel.endswith(".md")}  # (undated: lines citing a dated note)
    changed = [rel for rel, st in dated.items() if (files.get(rel) or {}).get("stat") != list(st)]
    gone = [rel for rel in files if rel not in dated]
    vectors = kinds.stamp(ws.metadata)  # the word vectors that say which kind a thing is
    rel = _load(base / "relations.json") if cache is not None and not changed and not gone else None
    if rel is not None and rel.get("vectors", "") == vectors:
        return False
    for rel in gone:
        del files[rel]
    for rel in changed:
        files[rel] = _read_file(ws, rel, ws.date_of(rel), dated[rel])
    base.mkdir(parents=True, exist_ok=True)
    atomic.write_text(base / "claims.json", json.dumps({"version": VERSION, "files": files}, ensure_ascii=False))
    _write_relations(ws, files, vectors)
    return True


def revisit(ws: Workspace) -> bool:
    """Work the relations out again when the word vectors changed since (after an embedding
    run wrote them: a thing adopted may now be of a known kind). True when written."""
    base = folder(ws.metadata)
    cache, rel = _load(base / "claims.json"), _load(base / "relations.json")
    vectors = kinds.stamp(ws.metadata)
    if cache is None or (rel is not None and rel.get("vectors", "") == vectors):
        return False
    _write_relations(ws, cache.get("files", {}), vectors)
    return True


def _write_relations(ws: Workspace, files: dict, vectors: str) -> None:
    found = relate(files, kinds.Vectors(ws.metadata) if vectors else None)
    atomic.write_text(folder(ws.metadata) / "relations.json", json.dumps(
        {"version": VERSION, "vectors": vectors, "superseded": found}, ensure_ascii=False))


def _load(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == VERSION else None


def load(metadata: Path) -> dict[str, list[dict]]:
    """path -> its superseded statements ({line, text, subject, value, by, current}); {} when
    nothing was built yet."""
    data = _load(folder(metadata) / "relations.json")
    got = (data or {}).get("superseded")
    return got if isinstance(got, dict) else {}


def _ordered(files: dict) -> list[dict]:
    """One entry per claim (a statement without one: one entry), in the order of the notes."""
    out = []
    for rel, rec in files.items():
        for item in rec.get("statements", ()):
            base = {k: v for k, v in item.items() if k != "claims"}
            if "words" not in base:
                base["words"] = sorted(set(subjects.words(subjects.clean(item.get("text", "")))))
            when = item.get("date") or rec.get("date") or ""
            base.update(path=rel, date=when, order=(when, rec.get("stat", [0])[0], rel, item.get("line", 0)))
            out += [{**base, **c} for c in item.get("claims", ())] or [base]
            if item.get("claims") and item.get("adopts"):  # a thing adopted beside the claims made
                out.append({**base, "order": (*base["order"], 1)})
    out.sort(key=lambda s: s["order"])
    return out


def relate(files: dict, vecs: "kinds.Vectors | None" = None) -> dict[str, list[dict]]:
    """Every superseded statement, by path, with the statement that superseded it (`by`) and
    the one that holds the subject's value now (`current`, the end of the chain).

    One pass in order; the earlier statements are found through word indexes (a claim's
    subject words among the live claims, a thing's or a value's words among all statements),
    so a vault of many notes costs a lookup per claim, not a scan."""
    ordered = _ordered(files)
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
    for i, s in enumerate(ordered):
        if s.get("adopts") and "key" not in s and (head := kinds.kind_of(s["adopts"], list(heads), vecs)):
            s.update(key=[head], label=head, value=s["adopts"])  # "got a macbook pro" sets the laptop
        if s.get("retired"):  # "the pegasus are retired": older statements holding the pegasus
            for j in _holding(seen_words, s["retired"], by):
                old = ordered[j]
                if old["path"] != s["path"] and old.get("speaker", "") == s.get("speaker", "") and (
                        subjects.holds(old["text"], s["retired"]) or
                        ("key" in old and subjects.same_value(old["value"], s["retired"]))):
                    by[j], by.cause[j] = i, "given up"
        if "key" in s:
            key = tuple(s["key"])
            for j in _same_subject(live, key, ordered, by):
                if ordered[j].get("speaker", "") != s.get("speaker", ""):
                    continue
                if ordered[j]["order"] != s["order"] and not subjects.same_value(ordered[j]["value"], s["value"]):
                    by[j], by.cause[j] = i, "subject"
                    for f in followers.pop(j, ()):
                        if f not in by:
                            by[f], by.cause[f] = i, "subject"
            if s.get("old"):  # the previous value named: older statements holding it are superseded
                for j in _holding(seen_words, s["old"], by):
                    if ordered[j]["path"] != s["path"] and ordered[j].get("speaker", "") == s.get("speaker", "") and \
                            subjects.mentions(ordered[j]["text"], key + tuple(s.get("also", ())), s["old"]):
                        by[j], by.cause[j] = i, "named"
            reps = of_key[key] = [j for j in of_key.get(key, ()) if j not in by]
            same = next((j for j in reps if ordered[j]["order"] != s["order"]
                         and ordered[j].get("speaker", "") == s.get("speaker", "")
                         and subjects.same_value(ordered[j]["value"], s["value"])), None)
            if same is not None:
                followers.setdefault(same, []).append(i)
            else:
                reps.append(i)
                for w in subjects.key_words(key):
                    live.setdefault(w, set()).add(i)
            if not str(key[0]).startswith("~"):
                heads.update(dict.fromkeys(n[-1] for n in subjects.needs(s["key"], s.get("label", ""))))
        for w in s["words"]:
            seen_words.setdefault(w, {})[i] = None
    return _published(ordered, by)


class _Superseded(dict):
    """statement index -> the one that superseded it; a superseded statement leaves the indexes."""

    def __init__(self, live: dict[str, set[int]], seen_words: dict[str, dict[int, None]], ordered: list[dict]):
        super().__init__()
        self.live, self.seen_words, self.ordered = live, seen_words, ordered
        self.cause: dict[int, str] = {}  # why: "subject" (a new value), "named" (old value named), "given up"

    def __setitem__(self, j: int, i: int) -> None:
        super().__setitem__(j, i)
        for w in subjects.key_words(self.ordered[j].get("key", ())):
            self.live.get(w, set()).discard(j)
        for w in self.ordered[j]["words"]:
            self.seen_words.get(w, {}).pop(j, None)


def _holding(seen_words: dict[str, dict[int, None]], thing: str, by: dict) -> list[int]:
    """The earlier statements holding every content word of `thing`, not superseded yet."""
    lists = sorted((seen_words.get(w, ()) for w in set(subjects.words(subjects.clean(thing)))), key=len)
    if not lists:
        return []
    found = []
    rest = lists[1:]
    for j in reversed(lists[0]):  # newest first: a thing given up is what was held last
        if j not in by and all(j in more for more in rest):
            found.append(j)
            if len(found) >= MAX_HOLDING:
                break
    return found


def _published(ordered: list[dict], by: "_Superseded") -> dict[str, list[dict]]:
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
        out.setdefault(old["path"], []).append({
            "line": old["line"], "text": old["text"], "subject": old.get("label", ""),
            "value": old.get("value", ""), "by": _public(ordered[i]), "current": _public(ordered[end]),
            "needs": _needs(old, ordered[i], by.cause.get(j, "subject"))})
    return out


def _needs(old: dict, new: dict, cause: str) -> list[list[str]]:
    """Word sets of which a query must hold one to be about this supersession: the subject
    (memcli.index.subjects.needs) of the claim that decided it (both, for a new value of one
    subject; the newer, when it named the old value) and, for a thing given up, the older
    claim's and the other words the two statements share ("why could helix not find ruff" asks
    about helix, not about what replaced it)."""
    sides = {"subject": (old, new), "named": (new,), "given up": (old,)}[cause]
    sets = [n for s in sides if "key" in s for n in subjects.needs(s["key"], s.get("label", ""))]
    sets += [[w] for w in new.get("also", ()) if w in old["words"]]  # a CJK claim's subject in English
    if cause == "given up":  # the words the two share but the thing: a query naming the thing asks about it
        thing = set(subjects.words(subjects.clean(new.get("retired", ""))))
        sets += [[w] for w in sorted(set(old["words"]) & set(new["words"]) - subjects.GENERIC - thing)]
    return [list(n) for n in dict.fromkeys(tuple(n) for n in sets)]


def _same_subject(live: dict[str, set[int]], key: tuple, ordered: list[dict], by: dict) -> list[int]:
    """The live claims of `key`'s subject. When they name different subjects that merely share
    a word with it ("pool" against "pool size" and "swimming pool"), only those sharing the
    most words count, and none if those still disagree: a guess would supersede a decoy."""
    near = sorted({j for w in subjects.key_words(key) for j in live.get(w, ())})
    found = [j for j in near if subjects.same_subject(tuple(ordered[j]["key"]), key)]
    if len({tuple(ordered[j]["key"]) for j in found}) <= 1:
        return found
    mine = set(subjects.key_words(key))
    shared = {j: len(set(subjects.key_words(ordered[j]["key"])) & mine) for j in found}
    found = [j for j in found if shared[j] == max(shared.values())]
    keys = [tuple(ordered[j]["key"]) for j in found]
    if all(subjects.same_subject(a, b) for a in keys for b in keys):
        return found
    return []


def _public(s: dict) -> dict:
    return {"path": s["path"], "date": s["date"], "line": s["line"], "text": s["text"],
            "subject": s.get("label", ""), "value": s.get("value", "")}
