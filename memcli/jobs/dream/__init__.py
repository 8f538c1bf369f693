"""Dream (auto_dream): consolidate the changed daily notes of the last days into the digest.

1. Scan the window's day pages and notes against the dream catalog (dream_scan).
2. Extract at most `max_units` units (dream_offline: facts placed into nodes by meaning and
   words; the facts of units over the budget wait for the next run). With an LLM
   (dream_assisted) the same facts, the model deciding one statement at a time, each reply
   validated and, when it cannot be used, the rules deciding instead (said in the report).
3. Plan each unit's one action (CREATE / CORROBORATE / REFINE / CORRECT) against its node;
   model calls run without the workspace lock, before anything is written.
4. Under the workspace lock: write the nodes (a node another writer changed
   meanwhile is left alone and its unit retried next run), interests.yaml, the
   catalog checkpoint (scan-time stat, failed units' sources left out), the state;
   then index the changes and tell the inbox, which is dream's log of what
   changed and why (see README "mem dream").
Only one dream runs at a time (a second exits 75 at once).
"""

from __future__ import annotations

import random
import time
from contextlib import nullcontext
from datetime import datetime

from memcli.errors import BadInput, ProviderError
from memcli.jobs import schedule
from memcli.jobs.dream import integrate as dream_integrate
from memcli.jobs.dream import offline as dream_offline
from memcli.jobs.dream import scan as dream_scan
from memcli.jobs.dream import topics as dream_topics
from memcli.jobs.dream.report import DreamReport
from memcli.secrets.scrub import Scrubber
from memcli.vault import atomic, frontmatter, lock, notes
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace

MAX_SCAN_DAYS = 366
MAX_UNITS = 50
MAX_INPUT = 10 * 1024 * 1024


def run(
    ws: Workspace,
    *,
    day: str | None = None,
    scan_days: int = 2,
    max_units: int = 5,
    dry_run: bool = False,
    if_due: bool = False,
    jitter: bool = True,
    wait: float = lock.WAIT,
    now: datetime | None = None,
    sleep=time.sleep,
    rng=random.random,
) -> DreamReport:
    """`now` (aware) fixes the clock for the schedule and the default date; `sleep`/`rng` drive the jitter."""
    if day is not None:
        notes.check_date(day)
    if not 1 <= scan_days <= MAX_SCAN_DAYS:
        raise BadInput(f"--scan-days must be between 1 and {MAX_SCAN_DAYS}, got {scan_days}")
    if not 1 <= max_units <= MAX_UNITS:
        raise BadInput(f"--max-units must be between 1 and {MAX_UNITS}, got {max_units}")
    now = now or datetime.now().astimezone()
    day = day or notes.today(ws, now)
    rep = DreamReport(day, dream_scan.window(day, scan_days), dry_run=dry_run, max_units=max_units)
    state = dream_scan.load_state(ws)
    if if_due:
        rep.schedule = schedule.due(ws, now, schedule.parse_time(state.get("last_success")))
        if not rep.schedule.due:
            rep.status = "not_due"
            return rep
        if jitter:
            sleep(rng() * schedule.JITTER)  # many agents on one schedule should not hit the model at once
    busy = "mem dream is already running"
    held = nullcontext() if dry_run else Lock(ws.lock_path(lock.DREAM), "dream", busy_message=busy)
    with held:
        if if_due and not dry_run:  # a dream that held the lock meanwhile may have answered this slot
            state = dream_scan.load_state(ws)
            rep.schedule = schedule.due(ws, now, schedule.parse_time(state.get("last_success")))
            if not rep.schedule.due:
                rep.status = "not_due"
                return rep
        _dream(ws, rep, state, max_units, wait, now)
    return rep


def _dream(ws: Workspace, rep: DreamReport, state: dict, max_units: int, wait: float, now: datetime) -> None:
    sc = dream_scan.scan(ws, rep.day, len(rep.dates), state)
    rep.scan, rep.warnings = sc, rep.warnings + sc.warnings
    if not sc.changed:
        rep.status = "no_change"
        if not rep.dry_run:
            with Lock(ws.lock_path(lock.WORKSPACE), "dream", wait=wait):
                if sc.deleted:
                    dream_scan.checkpoint(ws, sc, [], state)
                _save_state(ws, state, now, success=True)
        return
    texts = _read(ws, sc.changed, rep)
    from memcli.providers.llm.registry import get_chat

    chat = get_chat(ws.settings.llm)
    try:
        rep.extractor = chat.identity if chat else "rules"
        if chat is None:
            rep.units, rep.topics, rep.plan, rep.progress = dream_offline.plan(
                ws, texts, max_units, state, rep.warnings, rep.dry_run, rep.day
            )
        else:  # the same facts and writer, a small model deciding one statement at a time
            from memcli.jobs.dream import assisted

            rep.units, rep.topics, rep.plan, rep.progress = assisted.plan(
                ws, texts, max_units, state, rep.warnings, chat.chat, rep.extractor, rep.dry_run
            )
    except ProviderError as exc:  # unreachable model, or its extraction rejected twice: nothing was written
        raise type(exc)(f"AutoDream failed: {exc}", exc.hint) from None
    finally:
        if chat is not None:
            chat.close()
    rep.warnings += [
        f"left {rel} as it is: {why}; dream neither reads nor rewrites it until it is fixed"
        for rel, why in rep.plan.unusable.items()
    ]
    if rep.plan.failed and not rep.plan.results and not rep.plan.skipped:
        # every unit was rejected by the model: nothing to write, and nothing checkpointed
        raise ProviderError(
            "AutoDream failed: " + "; ".join(f"{u.name}: {why}" for u, why in rep.plan.failed[:3]),
            "nothing was written; the notes stay changed for the next run",
        )
    if rep.dry_run:
        _topics(ws, rep, dry_run=True)
        rep.status = rep.outcome()
        return
    with Lock(ws.lock_path(lock.WORKSPACE), "dream", wait=wait):
        _write(ws, rep)
        _topics(ws, rep, dry_run=False)
        failed = {p for u in rep.failed_units() for p in u.paths}
        waiting, pending = failed, None
        if rep.progress is not None:  # per fact: a note is done when all of its facts are
            complete, pending = rep.progress.finish(rep.failed_units())
            waiting = {p for p in sc.changed if p not in complete}
        rep.checkpointed = [p for p in sc.changed if p not in waiting and p not in rep.unreadable]
        dream_scan.checkpoint(ws, sc, rep.checkpointed, state, pending)
        # a failed unit makes the run unsuccessful, so `--if-due` retries it within the grace period;
        # facts left over --max-units are no failure: the next scheduled run takes them
        _save_state(ws, state, now, success=not failed)
        from memcli.jobs.ingest import finish

        finish(ws, "dream", rep.inbox_changes(), rep.warnings, rep.inbox_summary(), now)
    rep.status = rep.outcome()  # after indexing and the inbox, whose problems are warnings too


def _read(ws: Workspace, paths: list[str], rep: DreamReport) -> dict[str, str]:
    """The changed notes' texts, scrubbed of secrets: what the model and the rules see, so no
    digest node can quote one (a hand-edited note may hold one; `mem health` names it)."""
    texts = {}
    scrub = Scrubber(ws.settings.redaction)
    for rel in paths:
        text, why = _text(ws, rel)
        if why is not None:  # left unchecked in the catalog: dreamed once it can be read
            rep.unreadable.append(rel)
            rep.warnings.append(f"skipped {rel}: {why}")
            continue
        texts[rel] = scrub.text(text)
    rep.redacted = scrub.counts()
    rep.warnings += [w for w in [scrub.warning()] if w]
    return texts


def _text(ws: Workspace, rel: str) -> tuple[str, str | None]:
    """(text, None), or ("", why the note cannot be dreamed): unreadable, binary, not UTF-8,
    or a frontmatter that does not parse (it may say the note is a resource's, whose lines
    about the file are no facts; and a guess would cite it wrongly)."""
    try:
        data = (ws.root / rel).read_bytes()
    except OSError as exc:
        return "", f"unreadable: {exc.strerror}"  # (worded as the index words it)
    if len(data) > MAX_INPUT or b"\0" in data[:8192]:
        return "", "binary or larger than 10 MiB"
    try:
        text = data.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return "", f"not valid UTF-8 (line {line}, byte {exc.start})"
    _, problem = frontmatter.parse(frontmatter.split(text)[0])
    return (text, None) if problem is None else ("", f"{problem}; fix it and the next dream reads the note")


def _write(ws: Workspace, rep: DreamReport) -> None:
    p = rep.plan
    moved = set(dream_integrate.moved(ws, p))
    for res in list(p.results):
        if res.target_path in moved:
            # written by someone else since we read it: our text would overwrite theirs
            p.results.remove(res)
            p.failed.append((res.unit, f"{res.target_path} changed while dream ran; retried next run"))
    for res in p.results:
        node = p.nodes[res.target_path]
        atomic.write_text(ws.root / node.path, node.text())
        rep.written.append(node.path)


def _topics(ws: Workspace, rep: DreamReport, *, dry_run: bool) -> None:
    if not rep.topics and not (ws.daily / rep.day / dream_topics.FILE).exists():
        return
    rel, action, count = dream_topics.write(ws, rep.day, rep.topics, dry_run=dry_run)
    rep.interests = (rel, action, count)


def _save_state(ws: Workspace, state: dict, now: datetime, *, success: bool) -> None:
    if success:
        state["last_success"] = now.isoformat(timespec="seconds")
    dream_scan.save_state(ws, state)
