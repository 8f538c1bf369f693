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

import functools
import json
import re
from pathlib import Path

from memcli.index import gloss, kinds, subjects
from memcli.vault import atomic, dates, frontmatter
from memcli.vault.workspace import Workspace

VERSION = 6  # 4: glosses read apart, CJK claims' English words, things adopted; 5: speakers; 6: vocab
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
        if n <= skip or not s or s.startswith(("#", "<!--", ">", "|", "```")) or s.startswith("[["):
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


def _read_file(path, rel: str, date_of, stat) -> tuple[dict, list[tuple]]:
    """A note's entry in claims.json, and its statements (read again only when asked, _Holders)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        text = ""
    found = statements(text, date_of(rel), date_of)
    return record(found, stat, date_of(rel)), found


def _records(args: tuple) -> list[tuple[str, dict]]:
    """In a worker: the claims.json entries of a share of the notes (a vault's hundred thousand
    statements take seconds on one core)."""
    locate, daily_dir, todo = args
    date_of = functools.partial(dates.of, daily_dir)
    return [(rel, _read_file(locate(rel), rel, date_of, st)[0]) for rel, st in todo]


def _read_all(ws: Workspace, todo: list[tuple[str, tuple]]) -> tuple[dict, dict]:
    """(path -> its claims.json entry, path -> its statements when read here) for `todo`."""
    from memcli.index import parse  # (its worker processes: a full rebuild's many notes)

    with parse.Workers(len(todo)) as workers:
        if workers.pool is None:
            fresh = {rel: _read_file(ws.locate(rel), rel, ws.date_of, st) for rel, st in todo}
            return {rel: got[0] for rel, got in fresh.items()}, {rel: got[1] for rel, got in fresh.items()}
        locate = parse._locator(ws.resolver())
        shares = [workers.pool.submit(_records, (locate, ws.settings.daily_dir, part))
                  for part in parse._split(todo, workers.workers * 4)]
        return {rel: rec for f in shares for rel, rec in f.result()}, {}


def record(found: list[tuple], stat, date: str) -> dict:
    """What claims.json keeps of a note: the statements that set, give up or adopt something,
    and the words of all of them (`vocab`). The others matter only as older holders of a thing
    given up or of a value named as the previous one, and are read again from the note when
    its vocabulary says it may hold one: keeping each statement's words made claims.json 44 MB
    for a 2,000-note vault, loaded and written again by every sync."""
    return {"stat": list(stat), "date": date, "statements": [i for i in items(found) if _sets(i)],
            "vocab": subjects.vocabulary([f[1] for f in found])}


def _sets(item: dict) -> bool:
    return bool(item.keys() & {"claims", "retired", "adopts"})


def items(found: list[tuple[int, str]]) -> list[dict]:
    """A note's statements: each with its claims, or what it gives up or adopts, and then its
    words and speaker; a statement doing none of these is only its line, text and date."""
    out = []
    for line, sentence, *when in found:
        item: dict = {"line": line, "text": sentence}
        if when and when[0]:
            item["date"] = when[0]
        if not subjects.may_set(sentence):
            out.append(item)
            continue
        gone = subjects.retired(sentence)  # a thing given up sets no value ("retired after 750 km")
        made = [] if gone else subjects.claims(sentence)
        if made:
            item["claims"] = [{"key": list(c.key), "label": c.label, "value": c.value, "old": c.old,
                               **({"also": list(c.also)} if c.also else {})} for c in made]
        elif gone:
            item["retired"] = gone
        if not gone and (thing := kinds.adopted(sentence)):  # "got a macbook pro": a subject once its kind is known
            item["adopts"] = thing
        if _sets(item):
            _describe(item)
        out.append(item)
    return out


def _describe(item: dict) -> dict:
    """A statement's words (a CJK statement's gloss among them) and speaker, for relate."""
    sentence = item["text"]
    english = [w for k in gloss.keywords(sentence) for w in subjects.words(k)]
    item["words"] = sorted(set(subjects.words(subjects.clean(sentence))) | set(english))
    if speaker := _speaker(sentence):
        item["speaker"] = speaker
    return item


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
    read, fresh = _read_all(ws, [(rel, dated[rel]) for rel in changed])
    files.update(read)
    base.mkdir(parents=True, exist_ok=True)
    atomic.write_text(base / "claims.json", json.dumps({"version": VERSION, "files": files}, ensure_ascii=False))
    _write_relations(ws, files, vectors, fresh)
    return True


def revisit(ws: Workspace) -> bool:
    """Work the relations out again when the word vectors changed since (after an embedding
    run wrote them: a thing adopted may now be of a known kind). True when written."""
    base = folder(ws.metadata)
    cache, rel = _load(base / "claims.json"), _load(base / "relations.json")
    vectors = kinds.stamp(ws.metadata)
    if cache is None or (rel is not None and rel.get("vectors", "") == vectors):
        return False
    _write_relations(ws, cache.get("files", {}), vectors, {})
    return True


def _write_relations(ws: Workspace, files: dict, vectors: str, fresh: dict[str, list[tuple]]) -> None:
    def read(rel: str) -> list[tuple]:  # a note's statements: just read, or read again now
        if rel not in fresh:
            fresh[rel] = _read_file(ws.locate(rel), rel, ws.date_of, ())[1]
        return fresh[rel]

    found = relate(files, kinds.Vectors(ws.metadata) if vectors else None, read)
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
    """One entry per claim (a statement giving up or adopting a thing: one entry), in the
    order of the notes. Statements setting nothing are left to _Holders."""
    out = []
    for rel, rec in files.items():
        for item in rec.get("statements", ()):
            if not _sets(item):
                continue
            base = _entry(rel, rec, item)
            out += [{**base, **c} for c in item.get("claims", ())] or [base]
            if item.get("claims") and item.get("adopts"):  # a thing adopted beside the claims made
                out.append({**base, "order": (*base["order"], 1)})
    out.sort(key=lambda s: s["order"])
    return out


def _entry(rel: str, rec: dict, item: dict) -> dict:
    base = {k: v for k, v in item.items() if k != "claims"}
    if "words" not in base:
        _describe(base)
    when = item.get("date") or rec.get("date") or ""
    base.update(path=rel, date=when, order=(when, rec.get("stat", [0])[0], rel, item.get("line", 0)))
    return base


class _Holders:
    """The statements that set nothing, as older holders of a thing given up or of a value
    named as the previous one: the notes that may hold its words are found through their
    vocabulary, and their statements read (`read`: path -> statements) when first asked for."""

    def __init__(self, files: dict, ordered: list[dict], read=None):
        self.files, self.ordered, self.read = files, ordered, read
        self.of_note: dict[str, list[int]] = {}  # note -> its holders' indexes in `ordered`
        self.with_word: dict[str, set[str]] = {}  # word -> notes whose vocabulary holds it

    def notes(self, word: str) -> set[str]:
        if word not in self.with_word:
            key = f" {word} "
            self.with_word[word] = {rel for rel, rec in self.files.items() if key in rec.get("vocab", key)}
        return self.with_word[word]

    def statements(self, rel: str) -> list[int]:
        if rel not in self.of_note:
            rec = self.files[rel]
            if self.read is None or "vocab" not in rec:  # every statement kept in the record
                found = [i for i in rec.get("statements", ()) if not _sets(i)]
            else:
                setting = {(i["line"], i["text"]) for i in rec.get("statements", ())}
                found = [{"line": n, "text": t, **({"date": w[0]} if w and w[0] else {})}
                         for n, t, *w in self.read(rel) if (n, t) not in setting]
            start = len(self.ordered)
            self.ordered.extend(_entry(rel, rec, i) for i in found)
            self.of_note[rel] = list(range(start, len(self.ordered)))
        return self.of_note[rel]

    def find(self, thing: str, before: tuple, seen_words: dict[str, dict[int, None]], by: dict) -> list[int]:
        """The statements before `before` holding every content word of `thing`, not superseded
        yet, newest first: a thing given up is what was held last."""
        want = set(subjects.words(subjects.clean(thing)))
        if not want:
            return []
        lists = sorted((seen_words.get(w, {}) for w in want), key=len)
        found = [j for j in lists[0] if j not in by and all(j in more for more in lists[1:])]
        for rel in sorted(set.intersection(*(self.notes(w) for w in want))):
            found += [j for j in self.statements(rel) if j not in by and self.ordered[j]["order"] < before
                      and want <= set(self.ordered[j]["words"])]
        found.sort(key=lambda j: self.ordered[j]["order"], reverse=True)
        return found[:MAX_HOLDING]


def relate(files: dict, vecs: "kinds.Vectors | None" = None, read=None) -> dict[str, list[dict]]:
    """Every superseded statement, by path, with the statement that superseded it (`by`) and
    the one that holds the subject's value now (`current`, the end of the chain).

    One pass in order; the earlier statements are found through word indexes (a claim's
    subject words among the live claims, a thing's or a value's words among all statements),
    so a vault of many notes costs a lookup per claim, not a scan. `read` (path -> statements)
    reads a note again for its statements setting nothing (_Holders)."""
    ordered = _ordered(files)
    holders = _Holders(files, ordered, read)
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
    for i in range(len(ordered)):  # (holders are appended as found: they set nothing)
        s = ordered[i]
        if s.get("adopts") and "key" not in s and (head := kinds.kind_of(s["adopts"], list(heads), vecs)):
            s.update(key=[head], label=head, value=s["adopts"])  # "got a macbook pro" sets the laptop
        if s.get("retired"):  # "the pegasus are retired": older statements holding the pegasus
            for j in holders.find(s["retired"], s["order"], seen_words, by):
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
                for j in holders.find(s["old"], s["order"], seen_words, by):
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
            "needs": _needs(old, ordered[i], by.cause.get(j, "subject")), "_order": old["order"]})
    for found in out.values():  # in the notes' order (holders were read after the claims)
        found.sort(key=lambda e: e.pop("_order"))
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
