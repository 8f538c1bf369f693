"""Remember: one fact written straight into today's note of a manual session.

OpenClaw's rule "when someone says remember this, write it down", without a
model: the text is kept verbatim as a bullet under "## Facts" of the session's
note of the day (tags as #tag, and in the frontmatter `tags`). The fact also goes
into the session log, so the note's source_conversation link holds it, and is
marked extracted there, so a later ingest of that session does not add it twice.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcli.errors import BadInput
from memcli.extraction.conversation import Draft, rules
from memcli.jobs import ingest
from memcli.secrets.scrub import Scrubber
from memcli.vault import lock, notes, session
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace

DEFAULT_SESSION = "manual"
NOTE_NAME = "remembered-facts"
MAX_FACT = 2000
_TAG = re.compile(r"^[^\W_][\w-]{0,49}$")


@dataclass
class RememberReport:
    path: str
    day: str
    session_id: str
    text: str
    tags: list[str]
    new: bool = True
    changes: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)  # secret kind -> values replaced

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "date": self.day,
            "session_id": self.session_id,
            "text": self.text,
            "tags": self.tags,
            "new": self.new,
            "changes": [{"path": p, "action": a} for p, a in self.changes],
            "redacted": self.redacted,
            "warnings": self.warnings,
        }


def check(text: str, tags: list[str]) -> tuple[str, list[str]]:
    fact = " ".join((text or "").split())
    if not fact:
        raise BadInput("nothing to remember: TEXT is empty")
    if len(fact) > MAX_FACT:
        raise BadInput(f"TEXT is longer than {MAX_FACT} characters", "remember one fact at a time")
    try:
        fact.encode("utf-8")
    except UnicodeEncodeError:  # undecodable argv bytes arrive as lone surrogates
        raise BadInput("TEXT is not valid UTF-8", "pass the fact as UTF-8 text") from None
    clean = []
    for tag in tags:
        tag = tag.strip().lstrip("#")
        if not _TAG.match(tag):
            raise BadInput(f"tag {tag!r} is not a word", "use letters, digits, '-' or '_'")
        if tag not in clean:
            clean.append(tag)
    return fact, clean


def run(
    ws: Workspace,
    text: str,
    tags: list[str] | None = None,
    *,
    session_id: str = DEFAULT_SESSION,
    wait: float = lock.WAIT,
    now: datetime | None = None,
) -> RememberReport:
    scrub = Scrubber(ws.settings.redaction)  # the fact goes into the note and the session log
    fact, tags = check(scrub.text(text or ""), list(tags or []))
    sid = session.validate_session_id(session_id)
    now = (now or datetime.now()).astimezone(notes.zone(ws))
    day = now.date().isoformat()
    item = f"- {fact}" + "".join(f" #{t}" for t in tags)
    record: dict[str, Any] = {
        "id": "msg-" + hashlib.sha256(f"user\x1f{now.isoformat()}\x1f{fact}".encode()).hexdigest()[:20],
        "name": "user",
        "role": "user",
        "content": [{"type": "text", "text": fact}],
        "timestamp": now.isoformat(),
    }
    with Lock(ws.lock_path(lock.WORKSPACE), "remember", wait=wait):
        note = notes.find_session_note(ws, day, sid)
        body = rules.merge_body(note.body if note else "# Remembered facts\n", {"Facts": [item]})
        rep = RememberReport(ws.rel(note.path) if note else "", day, sid, fact, tags, redacted=scrub.counts())
        rep.warnings += [w for w in [scrub.warning()] if w]
        if note is not None and body == note.body:
            rep.new = False
            return rep  # already in today's note: nothing is written twice
        facts = sum(1 for line in body.split("\n") if line.startswith("- "))
        had = (note.meta.get("tags") if note else None) or []
        all_tags = sorted({*map(str, had if isinstance(had, list) else [had]), *tags})
        log_path = ws.sessions / f"{sid}.jsonl"
        old = session.read_log(log_path)
        session.write_log(log_path, old, session.merge(old, [record])[0])
        draft = Draft(NOTE_NAME, f"Facts the user asked to remember ({facts}).", body)
        rep.changes = ingest.save_note(
            ws, day, sid, draft, note, {"tags": all_tags} if all_tags else None, rep.warnings
        )
        rep.path = rep.changes[0][0]
        ingest.save_state(ws, sid, ingest.load_state(ws, sid) | {record["id"]})
        ingest.finish(ws, "remember", rep.changes, rep.warnings, f"remembered: {fact[:100]}", now)
    return rep
