"""Resource scan (auto_resource): files under `resource/` into dated, source-linked daily notes.

Three phases, so the workspace lock is held only while writing: plan (walk
`resource/`, compare with the catalog by stat, then content hash), interpret
(offline digest, or the LLM, validated; nothing written yet), write (notes, day
index pages and the catalog under the workspace lock). Then the search index is
updated and the inbox told. Scans run one at a time (the `resource` lock). A bad
file is skipped with its reason and never stops the others.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace
from datetime import datetime

from memcli.errors import ProviderError
from memcli.jobs.ingest import finish
from memcli.jobs.resource import catalog, notefiles
from memcli.jobs.resource.report import Action, ResourceReport
from memcli.secrets.scrub import Scrubber
from memcli.vault import atomic, dates, lock, notes
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace
from memcli.watch.stamps import RACY_NS  # a file changed this close to its last hash may hide a same-size edit

__all__ = ["ResourceReport", "run"]


@dataclass
class Plan:
    entries: dict[str, catalog.Entry]  # the catalog after this scan
    actions: list[Action] = field(default_factory=list)
    owners: dict[str, str] | None = None  # read from the notes on first need
    removed: dict[str, catalog.Entry] = field(default_factory=dict)  # records of deleted resources


def run(
    ws: Workspace,
    *,
    dry_run: bool = False,
    interpret: bool = True,
    wait: float = lock.WAIT,
    now: datetime | None = None,
) -> ResourceReport:
    from memcli.providers.llm.registry import get_chat

    # built (config checked) even for a dry run; no request yet
    chat = get_chat(ws.settings.llm) if interpret else None
    rep = ResourceReport(
        dry_run=dry_run,
        interpret=interpret,
        interpreter=(chat.identity if chat else "offline digest") if interpret else "none",
    )
    if dry_run:
        _, plan = _plan(ws, rep, now)
        for a in plan.actions:
            if a.kind == "forget":
                continue
            action = {"write": "added" if a.new else "updated", "remove": "deleted", "adopt": "linked"}[a.kind]
            rep.notes.append({"resource": a.resource, "note": a.note, "action": action})
        return rep
    failure = None
    try:
        with Lock(ws.lock_path(lock.RESOURCE), "resource-scan", wait=wait):
            old, plan = _plan(ws, rep, now)
            failure = _interpret(ws, plan, rep, chat)
            if any(a.kind in ("write", "remove") for a in plan.actions) or _lines(plan.entries) != _lines(old):
                with Lock(ws.lock_path(lock.WORKSPACE), "resource-scan", wait=wait):
                    _write(ws, plan, rep)
            finish(ws, "resource", rep.changes, rep.warnings, rep.summary(), now)
    finally:
        if chat is not None:
            chat.close()
    if failure is not None:
        raise ProviderError(f"{failure}; {len(rep.pending)} resource(s) left for the next scan", failure.hint)
    return rep


def _lines(entries: dict[str, catalog.Entry]) -> list[bytes]:
    return [entries[p].line() for p in sorted(entries)]


def _owners(ws: Workspace, plan: Plan) -> dict[str, str]:
    if plan.owners is None:
        plan.owners = catalog.owners(ws)
    return plan.owners


def _plan(ws: Workspace, rep: ResourceReport, now: datetime | None) -> tuple[dict, Plan]:
    old, problem = catalog.load(ws)
    if problem:
        rep.warnings.append(problem)
    plan = Plan(dict(old))
    today = notes.today(ws, now)
    others: list[tuple[str, str]] = []
    files = catalog.walk(ws, others)
    rep.skipped += sorted(others)
    taken: set[str] = set()
    for rel, st in sorted(files.items()):
        e = old.get(rel)
        fresh = e is not None and e.same_stat(st) and (e.skipped or st.st_mtime_ns < e.checked_ns - RACY_NS)
        text = None
        if fresh and e is not None:  # (fresh says e is not None)
            new = replace(e)  # a copy: the old catalog is compared with the new one before writing
        else:
            text, sha, why = catalog.read(ws, rel, st)
            if why and why.startswith("unreadable"):
                rep.skipped.append((rel, why))  # not recorded: it is retried on the next scan
                continue
            checked = time.time_ns()
            if e is not None and sha and sha == e.sha256 and st.st_mtime_ns >= checked - RACY_NS:
                checked = e.checked_ns  # still racy: keep the old stamp so the record is not rewritten
            new = catalog.Entry(
                rel,
                st.st_mtime,
                st.st_size,
                sha,
                e.date if e else "",
                e.note if e else "",
                e.note_sha256 if e else "",
                e.interpreted if e else "",
                why or "",
                checked,
            )
        status = (
            "unchanged"
            if e is not None and (fresh or (new.sha256 and new.sha256 == e.sha256))
            else "added"
            if e is None
            else "modified"
        )
        new.date = catalog.path_date(ws, rel) or new.date
        undated = catalog.date_problem(ws, rel)
        if undated and status != "unchanged":  # said once, when the file is read, as for a note
            rep.warnings.append(f"{rel}: {undated}")
        plan.entries[rel] = new
        if new.skipped:
            rep.skipped.append((rel, new.skipped))
            continue
        getattr(rep, status).append(rel)
        if new.pending:
            _plan_note(ws, plan, rep, new, text, e is not None and bool(e.sha256), today, taken)
    hidden = catalog.unreachable(others)  # not seen is not deleted: the notes stay until it can be read
    for rel in sorted(p for p in set(old) - set(files) if not p.startswith(hidden)):
        rep.deleted.append(rel)
        if rep.interpret:
            _plan_removal(ws, plan, rep, old[rel])
        else:
            rep.pending.append(rel)  # a catalog-only scan leaves the note for the next interpreting one
    if problem is not None or not old:
        gone = (
            sorted(
                t
                for t in _owners(ws, plan)
                if t.startswith(ws.settings.resource_dir.rstrip("/") + "/")
                and t not in files
                and not t.startswith(hidden)
            )
            if plan.owners is not None
            else []
        )
        if gone:
            rep.warnings.append(
                f"{len(gone)} note(s) name a resource that does not exist (e.g. "
                f"{_owners(ws, plan)[gone[0]]} -> {gone[0]}); restore the file or delete the note"
            )
    return old, plan


def _plan_note(
    ws, plan: Plan, rep: ResourceReport, new: catalog.Entry, text: str | None, known: bool, today: str, taken: set[str]
) -> None:
    """Decide the note of a resource whose content no note reflects yet."""
    rel = new.path
    if new.note and not catalog.owned_by(ws, new.note, rel):
        new.note, new.note_sha256 = "", ""  # the note was deleted or now belongs elsewhere
    if not new.note:
        owner = _owners(ws, plan).get(rel)
        if owner is not None and not known:
            # a note from before the catalog (lost catalog, or ReMe's): adopt it as it is
            new.note, new.interpreted, new.note_sha256 = owner, new.sha256, catalog.note_sha(ws, owner) or ""
            new.date = catalog.path_date(ws, rel) or ws.date_of(owner) or today
            plan.actions.append(Action("adopt", rel, owner))
            return
        new.note = owner or ""
    new.date = new.date or (ws.date_of(new.note) if new.note else None) or today
    if new.note and new.note_sha256 and not new.wrote(catalog.note_sha(ws, new.note)):
        rep.warnings.append(
            f"kept {new.note}: edited since mem wrote it, so it is not regenerated from {rel} "
            "(delete the note to get a fresh one)"
        )
        rep.pending.append(rel)
        return
    if not rep.interpret:
        rep.pending.append(rel)
        return
    note = new.note or notefiles.choose_path(ws, new.date, rel, taken)
    taken.add(note)
    plan.actions.append(Action("write", rel, note, text=text, new=not new.note))


def _plan_removal(ws, plan: Plan, rep: ResourceReport, e: catalog.Entry) -> None:
    plan.removed[e.path] = plan.entries.pop(e.path)
    note = e.note if e.note and catalog.owned_by(ws, e.note, e.path) else _owners(ws, plan).get(e.path)
    if note is None:
        if e.note:  # already removed (by a scan killed before its catalog): its day index may list it
            plan.actions.append(Action("forget", e.path, e.note))
        return
    if e.note == note and e.note_sha256 and not e.wrote(catalog.note_sha(ws, note)):
        rep.warnings.append(f"kept {note}: edited since mem wrote it, although {e.path} was deleted")
        return
    plan.actions.append(Action("remove", e.path, note))


def _interpret(ws: Workspace, plan: Plan, rep: ResourceReport, chat) -> ProviderError | None:
    """Draft every note to write; on a service failure the rest stay pending, nothing half-done."""
    from memcli.extraction.resource import digest as resource_digest
    from memcli.extraction.resource import llm as resource_llm

    failure = None
    scrub = Scrubber(ws.settings.redaction)  # the note, and the model, see the file without its secrets
    for a in plan.actions:
        if a.kind != "write":
            continue
        entry = plan.entries[a.resource]
        if a.text is None:  # unchanged but pending (after a catalog-only scan): read it now
            st = (ws.root / a.resource).stat()
            a.text, _, why = catalog.read(ws, a.resource, st)
            if a.text is None:
                rep.skipped.append((a.resource, why or "unreadable"))
                a.kind = "none"
                continue
        a.text = scrub.text(a.text)
        d = resource_digest.digest(a.resource, a.text)
        if d.problem:  # the note still says what the file holds, read as plain text
            rep.warnings.append(f"{a.resource}: read as text: {d.problem}")
        a.description, a.body = resource_digest.render(a.resource, d, entry.st_size)
        if chat is None or failure is not None:
            if failure is not None:
                a.kind = "none"
                rep.pending.append(a.resource)
            continue
        try:
            a.description, a.body = resource_llm.interpret(a.resource, d.kind, a.text, a.body, chat.chat, chat.identity)
        except resource_llm.Rejected as exc:
            # the service answered but not usably for this file: the offline digest is still faithful
            rep.warnings.append(f"{a.resource}: {exc}; wrote the offline digest instead")
        except ProviderError as exc:
            failure = exc
            a.kind = "none"
            rep.pending.append(a.resource)
    rep.redacted = scrub.counts()
    rep.warnings += [w for w in [scrub.warning()] if w]
    return failure


def _write(ws: Workspace, plan: Plan, rep: ResourceReport) -> None:
    todo: list[Action] = []
    for a in plan.actions:
        entry = plan.entries.get(a.resource)
        if a.kind in ("write", "remove") and _edited_meanwhile(ws, a, entry or plan.removed[a.resource]):
            rep.warnings.append(f"kept {a.note}: edited while the scan ran; it is looked at again next scan")
            if entry is not None:
                rep.pending.append(a.resource)
            continue
        if a.kind == "write":
            assert entry is not None  # a note is written for a resource the catalog holds
            if a.new and (ws.root / a.note).exists():  # someone took the name while the model wrote
                a.note = notefiles.choose_path(ws, entry.date, a.resource)
            text = notefiles.compose(ws, a.note, a.resource, a.description, a.body).render()
            entry.note, entry.note_next = a.note, hashlib.sha256(text.encode("utf-8")).hexdigest()
        todo.append(a)
    if any(a.kind == "write" for a in todo):
        # write-ahead: the catalog names each note's next text before any note is written, so
        # a scan killed in between takes that text for its own, not for a hand edit to keep;
        # deleted resources stay in it until their notes are gone, so that rerun removes them
        catalog.save(ws, {**plan.removed, **plan.entries})
    days: set[str] = set()
    for a in todo:
        entry = plan.entries.get(a.resource)
        if a.kind == "write":
            assert entry is not None  # as above
            changed = notefiles.write(ws, a.note, a.resource, a.description, a.body)
            if changed:
                rep.changes.append(changed)
                rep.notes.append({"resource": a.resource, "note": a.note, "action": changed[1]})
            entry.note, entry.interpreted, entry.note_next = a.note, entry.sha256, ""
            entry.note_sha256 = catalog.note_sha(ws, a.note) or ""
        elif a.kind == "remove":
            atomic.remove(ws.root / a.note)
            rep.changes.append((a.note, "deleted"))
            rep.notes.append({"resource": a.resource, "note": a.note, "action": "deleted"})
        elif a.kind == "adopt":
            rep.notes.append({"resource": a.resource, "note": a.note, "action": "linked"})
        # every action's day, changed note or not: a rerun after a crash repairs a stale day index
        days.add(notefiles.day_of(ws, a.note))
    for day in sorted(d for d in days if dates.calendar_date(d)):  # no day page for a day that is none
        if (ws.daily / f"{day}.md").exists() or notes.day_notes(ws, day):
            rep.changes += notefiles.refresh_day(ws, day, rep.warnings)
    catalog.save(ws, plan.entries)


def _edited_meanwhile(ws: Workspace, a: Action, entry: catalog.Entry) -> bool:
    """The note changed since planning: its hash is no longer the one mem last wrote (when known)."""
    if a.new or entry.note != a.note or not entry.note_sha256:
        return False
    sha = catalog.note_sha(ws, a.note)
    return sha is not None and not entry.wrote(sha)
