"""Ingest (auto_memory): a conversation into the session log and the session's daily note.

Order matters: the input, the session id, the date and the config are checked,
the log merged and the extraction (LLM reply included) validated in memory
first; only then is anything written: session log, note, day index, cadence
state, search index, inbox. A failure before that leaves the workspace as it was.
Writers hold the workspace lock, then the index lock while indexing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from memcli.errors import Busy
from memcli.extraction.conversation import Draft, Existing, Request, llm, rules
from memcli.extraction.conversation.messages import is_user_turn
from memcli.extraction.conversation.messages import parse as parse_messages
from memcli.index import sync
from memcli.index.freshness import index_lock
from memcli.jobs import inbox, owner
from memcli.secrets.scrub import Scrubber
from memcli.vault import atomic, lock, notes, session
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace


@dataclass
class IngestReport:
    session_id: str
    day: str
    session_log: str
    log_write: str = "unchanged"
    received: int = 0
    new: int = 0
    updated: int = 0
    dropped_blocks: int = 0
    dropped_messages: int = 0
    pending_user_turns: int = 0
    interval: int = 0
    extracted: bool = False
    extractor: str = "rules"
    reason: str = ""
    changes: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)  # secret kind -> values replaced

    def to_json(self) -> dict:
        return {
            "session_id": self.session_id,
            "date": self.day,
            "session_log": self.session_log,
            "log_write": self.log_write,
            "messages": {
                "received": self.received,
                "new": self.new,
                "updated": self.updated,
                "dropped_messages": self.dropped_messages,
                "dropped_blocks": self.dropped_blocks,
            },
            "extracted": self.extracted,
            "extractor": self.extractor,
            "reason": self.reason,
            "pending_user_turns": self.pending_user_turns,
            "auto_memory_interval": self.interval,
            "changes": [{"path": p, "action": a} for p, a in self.changes],
            "redacted": self.redacted,
            "warnings": self.warnings,
        }

    def lines(self) -> list[str]:
        out = [f"{a.capitalize()} {p}" for p, a in self.changes]
        dropped = [
            f"{n} {what} dropped"
            for n, what in (
                (self.dropped_blocks, "tool result/media block(s)"),
                (self.dropped_messages, "tool/empty message(s)"),
            )
            if n
        ]
        out.append(
            f"Saved {self.received} message(s) to {self.session_log} ("
            + ", ".join([f"{self.new} new", f"{self.updated} updated", *dropped])
            + ")"
        )
        out.append(self.reason)
        return out


def run(
    ws: Workspace,
    text: str,
    session_id: str,
    *,
    day: str | None = None,
    fmt: str = "auto",
    force: bool = False,
    flush: bool = False,
    wait: float = lock.WAIT,
    now: datetime | None = None,
) -> IngestReport:
    sid = session.validate_session_id(session_id)
    if day is not None:
        notes.check_date(day)
    tz = notes.zone(ws)
    parsed = parse_messages(text, fmt, tz)
    scrub = Scrubber(ws.settings.redaction)  # before the session log, the model and the note see them
    parsed.messages = scrub.value(parsed.messages)
    from memcli.providers.llm.registry import get_chat

    chat = get_chat(ws.settings.llm)
    if day is None:
        day = parsed.latest.astimezone(tz).date().isoformat() if parsed.latest else notes.today(ws, now)
    log_path = ws.sessions / f"{sid}.jsonl"
    rep = IngestReport(
        sid,
        day,
        ws.rel(log_path),
        received=len(parsed.messages),
        dropped_blocks=parsed.dropped_blocks,
        dropped_messages=parsed.dropped_messages,
        interval=ws.settings.auto_memory_interval,
        extractor=chat.identity if chat else "rules",
        redacted=scrub.counts(),
    )
    rep.warnings += [w for w in [scrub.warning()] if w]
    try:
        with Lock(ws.lock_path(lock.WORKSPACE), "ingest", wait=wait):
            old = session.read_log(log_path)
            merged, rep.new, rep.updated = session.merge(old, parsed.messages)
            done = load_state(ws, sid)
            pending = [r for r in merged if r["id"] not in done]
            rep.pending_user_turns = sum(map(is_user_turn, pending))
            trigger = _trigger(ws, rep, force, flush)
            draft, existing = None, None
            if trigger and pending:
                existing = notes.find_session_note(ws, day, sid)
                req = Request(
                    pending,
                    day,
                    sid,
                    Existing(
                        str(existing.meta.get("name", existing.path.stem)),
                        str(existing.meta.get("description", "")),
                        existing.body,
                    )
                    if existing
                    else None,
                )
                draft = llm.extract(req, chat.chat, chat.identity) if chat else rules.extract(req)
            # everything is validated: from here on, write
            rep.log_write = session.write_log(log_path, old, merged)
            owner.learn(ws, sid, merged)  # the names a letter signed for the user shows
            if trigger and pending:
                rep.extracted = True
                rep.pending_user_turns = 0
                if draft is not None:
                    rep.changes += save_note(ws, day, sid, draft, existing, warnings=rep.warnings)
                save_state(ws, sid, done | {r["id"] for r in pending})
            rep.reason = _reason(rep, trigger, draft, bool(pending))
            finish(ws, "ingest", rep.changes, rep.warnings, f"session {sid}: {rep.reason}", now)
    finally:
        if chat is not None:
            chat.close()
    return rep


def _trigger(ws: Workspace, rep: IngestReport, force: bool, flush: bool) -> str | None:
    if force:
        return "force"
    if flush:
        if ws.settings.summarize_when_compact:
            return "flush"
        rep.warnings.append("--flush ignored: summarize_when_compact is false")
    if rep.interval > 0 and rep.pending_user_turns >= rep.interval:
        return "interval"
    return None


def _reason(rep: IngestReport, trigger: str | None, draft: Draft | None, pending: bool) -> str:
    if trigger is None:
        left = (
            f"{rep.pending_user_turns} of {rep.interval} user turns"
            if rep.interval > 0
            else f"{rep.pending_user_turns} user turn(s) pending; auto_memory_interval is off"
        )
        return f"Not extracted yet: {left} since the last extraction (--force extracts now)"
    if not pending:
        return "Nothing new to extract"
    if draft is None or not rep.changes:
        return f"Extracted with {rep.extractor} ({trigger}): nothing new worth remembering"
    return f"Extracted with {rep.extractor} ({trigger})"


def save_note(
    ws: Workspace,
    day: str,
    sid: str,
    draft: Draft,
    existing: notes.Note | None,
    extra: dict | None = None,
    warnings: list[str] | None = None,
) -> list[tuple[str, str]]:
    """Write the session's note of `day` (new or updated), then the day index; returns the
    [(path, action)] that changed. `extra` adds frontmatter keys (e.g. tags); `warnings`
    receives why a day page was left as it is."""
    link = {"session_id": sid, "source_conversation": notes.conversation_link(ws, sid), **(extra or {})}
    if existing is not None:
        note = existing
        note.meta = {**note.meta, "description": draft.description or note.meta.get("description", ""), **link}
        note.body = draft.body
        action = "updated"
    else:
        name = draft.name if notes.name_problem(draft.name) is None else rules.FALLBACK_NAME
        path, name = notes.free_path(ws, day, name)
        note = notes.Note(path, {"description": draft.description, "name": name, **link}, draft.body)
        action = "added"
    note.meta.pop("errand", None)
    if draft.errand:  # read by dream: what an errand's chat says joins a subject, founds none
        note.meta["errand"] = True
    out = [(ws.rel(note.path), action)] if notes.write(note) else []
    # the day index is refreshed even when the note is unchanged: a run killed between the
    # note and its day index left the index stale, and the rerun must repair it
    index_path, index_action = notes.update_day_index(ws, day, warnings)
    if index_action not in ("unchanged", "kept"):
        out.append((ws.rel(index_path), index_action))
    return out


def finish(
    ws: Workspace, job: str, changes: list[tuple], warnings: list[str], summary: str, now: datetime | None
) -> None:
    """After notes changed: index them and embed their new chunks (so search finds them at
    once, by keyword and by meaning), then tell the inbox."""
    if not changes:
        return

    try:
        with index_lock(ws, job, wait=lock.WAIT):
            rep = sync.sync(ws)
        warnings.extend(
            w for w in dict.fromkeys(f"skipped {p}: {why}" for p, why in rep.skipped) if w not in warnings
        )  # (dream names a note it could not read itself)
        from memcli.jobs import embedding

        embedding.after_write(ws, warnings)  # by meaning too, within embed_budget_seconds
        if ws.settings.shared.enabled:
            from memcli.jobs import team

            team.publish(ws, warnings)
    except Busy:
        warnings.append("the search index is being rebuilt; the new note is indexed by it or by the next search")
    warnings.extend(inbox.push(ws, job, changes, summary, now))


def state_path(ws: Workspace, sid: str):
    return ws.metadata / "ingest" / f"{sid}.json"


def load_state(ws: Workspace, sid: str) -> set[str]:
    """Ids of the session's messages already extracted (the cadence state)."""
    try:
        data = json.loads(state_path(ws, sid).read_text(encoding="utf-8"))
        return set(data.get("extracted", []))
    except (OSError, ValueError, AttributeError, TypeError, RecursionError):
        return set()  # no (readable) state: everything counts as pending, which re-extraction dedupes


def save_state(ws: Workspace, sid: str, extracted: set[str]) -> None:
    data = {"session_id": sid, "extracted": sorted(extracted)}
    atomic.write_text(state_path(ws, sid), json.dumps(data, ensure_ascii=False) + "\n")
