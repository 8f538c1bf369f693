"""A recall set (bench/recall_set/README.md): loading it and checking it is consistent.

check() returns the list of problems (empty when the set is sound): every id resolves, every
answer string occurs in an evidence session's text, updates.yaml and the update questions
agree, and a paraphrase question shares no content word with its evidence sessions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("single-fact", "preference", "update", "temporal", "multi-session", "paraphrase", "procedure")

# Words that carry no content of their own, for the paraphrase check.
STOP = set(
    """
a an the and or but if then than so of in on at to for from by with about into onto over under up down out
off as is are was were be been being am do does did done doing have has had having will would can could
shall should may might must what which who whom whose when where why how that this these those there here
it its it's they them their theirs he him his she her hers we us our you your yours i me my mine user user's
person person's their's not no yes any all some each every both either neither other another such own same
too very just now only also again still yet ever never already much many more most less least few lot
get gets got one ones s t
""".split()
)


@dataclass
class Session:
    id: str
    date: str
    filler: bool
    messages: list[dict]
    path: Path

    @property
    def text(self) -> str:
        return "\n".join(m["content"] for m in self.messages)


@dataclass
class RecallSet:
    root: Path
    sessions: dict[str, Session]
    questions: list[dict]
    updates: list[dict]
    dream: dict | None = field(default=None)

    def in_order(self) -> list[Session]:
        return sorted(self.sessions.values(), key=lambda s: (s.date, s.messages[0].get("created_at", ""), s.id))


def load(root: Path) -> RecallSet:
    import yaml

    sessions = {}
    for path in sorted((root / "sessions").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        sessions[doc["session_id"]] = Session(
            doc["session_id"], str(doc["date"]), bool(doc.get("filler")), doc["messages"], path
        )
    questions = yaml.safe_load((root / "questions.yaml").read_text(encoding="utf-8")) or []
    updates_path = root / "updates.yaml"
    updates = yaml.safe_load(updates_path.read_text(encoding="utf-8")) or [] if updates_path.exists() else []
    dream_path = root / "dream.yaml"
    dream = yaml.safe_load(dream_path.read_text(encoding="utf-8")) if dream_path.exists() else None
    return RecallSet(root, sessions, questions, updates, dream)


_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def stem(word: str) -> str:
    """A crude stem, enough to catch "runs"/"run" or "cooked"/"cook" as one word."""
    word = word.replace("’", "'").removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in STOP and len(w) > 1}


def check(rs: RecallSet) -> list[str]:
    problems = []
    ids = [q["id"] for q in rs.questions]
    if len(ids) != len(set(ids)):
        problems.append("duplicate question ids")
    for sid, s in rs.sessions.items():
        if s.path.stem != sid:
            problems.append(f"{s.path.name}: session_id {sid} does not match the file name")
        if not s.messages or any(
            m.get("role") not in ("user", "assistant") or not m.get("content") for m in s.messages
        ):
            problems.append(f"{sid}: empty session or a message without role/content")
        if any(not str(m.get("created_at", "")).startswith(s.date) for m in s.messages):
            problems.append(f"{sid}: a message is not dated {s.date}")
    for q in rs.questions:
        problems += _check_question(rs, q)
    by_id = {q["id"]: q for q in rs.questions}
    for u in rs.updates:
        q = by_id.get(u.get("question"))
        if q is None or q["kind"] != "update":
            problems.append(f"update {u['subject']!r}: no update question {u.get('question')}")
            continue
        current, older = u["values"][-1], u["values"][:-1]
        if current["session"] not in q["evidence"]:
            problems.append(f"{q['id']}: the current value's session {current['session']} is not evidence")
        for v in older:
            if v["session"] not in q.get("superseded", []):
                problems.append(f"{q['id']}: older value {v['value']!r} ({v['session']}) is not superseded")
        for v in u["values"]:
            s = rs.sessions.get(v["session"])
            if s is None or v["value"].lower() not in s.text.lower():
                problems.append(f"update {u['subject']!r}: {v['value']!r} not in {v['session']}")
        dates = [rs.sessions[v["session"]].date for v in u["values"] if v["session"] in rs.sessions]
        if dates != sorted(dates):
            problems.append(f"update {u['subject']!r}: values not in date order")
    updates = {u.get("question") for u in rs.updates}
    problems += [
        f"{q['id']}: an update question without an updates.yaml entry"
        for q in rs.questions
        if q["kind"] == "update" and q["id"] not in updates
    ]
    return problems


def _check_question(rs: RecallSet, q: dict) -> list[str]:
    out = []
    qid = q.get("id", "?")
    if q.get("kind") not in KINDS:
        out.append(f"{qid}: unknown kind {q.get('kind')!r}")
    if not q.get("question") or not str(q.get("answer", "")).strip():
        out.append(f"{qid}: question or answer missing")
        return out
    evidence = q.get("evidence") or []
    missing = [s for s in evidence + (q.get("superseded") or []) if s not in rs.sessions]
    if not evidence or missing:
        return out + [f"{qid}: no evidence, or unknown sessions {missing}"]
    if any(rs.sessions[s].filler for s in evidence):
        out.append(f"{qid}: a filler session is evidence")
    answer = str(q["answer"]).lower()
    if not any(answer in rs.sessions[s].text.lower() for s in evidence):
        out.append(f"{qid}: answer {q['answer']!r} is in no evidence session")
    if q["kind"] == "update":
        sup = q.get("superseded") or []
        if not sup:
            out.append(f"{qid}: an update question without superseded sessions")
        latest = max(rs.sessions[s].date for s in evidence)
        if any(rs.sessions[s].date >= latest for s in sup):
            out.append(f"{qid}: a superseded session is not older than the evidence")
    elif q.get("superseded"):
        out.append(f"{qid}: superseded sessions on a {q['kind']} question")
    if q["kind"] == "paraphrase":
        shared = content_words(q["question"]) & set().union(*(content_words(rs.sessions[s].text) for s in evidence))
        if shared:
            out.append(f"{qid}: paraphrase shares {sorted(shared)} with its evidence")
    return out


def counts(rs: RecallSet) -> dict:
    kinds: dict[str, int] = {}
    for q in rs.questions:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    dates = sorted(s.date for s in rs.sessions.values())
    cjk = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
    return {
        "sessions": len(rs.sessions),
        "filler": sum(s.filler for s in rs.sessions.values()),
        "messages": sum(len(s.messages) for s in rs.sessions.values()),
        "cjk_sessions": sum(
            any(m["role"] == "user" and cjk.search(m["content"]) for m in s.messages) for s in rs.sessions.values()
        ),
        "first": dates[0] if dates else None,
        "last": dates[-1] if dates else None,
        "questions": len(rs.questions),
        "kinds": kinds,
        "changing_facts": len(rs.updates),
        "changed_twice": sum(len(u["values"]) > 2 for u in rs.updates),
    }
