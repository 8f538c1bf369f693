"""Health job: embedding provider, stores, graph, staleness and config, each with figures.

Unhealthy means something is wrong that mem cannot silently work around: a store
that does not decode or disagrees with another, a failing embedding provider,
an invalid config or cron expression. Stale or skipped files and missing
folders are warnings: search syncs stale files itself, and `mem reindex` fixes
everything derived.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from memcli import __version__
from memcli.errors import CorruptStore, ProviderError
from memcli.index import sync
from memcli.jobs import backup, stored_secrets, team, vector_health
from memcli.jobs.check import FAIL, OK, SKIP, WARN, Check
from memcli.vault.workspace import Workspace
from memcli.watch import journal


@dataclass
class HealthReport:
    workspace: str
    embedding_line: str
    checks: list[Check]

    @property
    def healthy(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    @property
    def warnings(self) -> int:
        return sum(1 for c in self.checks if c.status == WARN)

    @property
    def verdict(self) -> str:
        """One line; warnings are counted, so "healthy" alone means nothing needs a look."""
        warned = f", {self.warnings} warning{'s' if self.warnings != 1 else ''}" if self.warnings else ""
        return (
            f"✅ mem {__version__} - healthy{warned}" if self.healthy else f"❌ mem {__version__} - unhealthy{warned}"
        )

    def to_json(self) -> dict:
        return {
            "healthy": self.healthy,
            "warnings": self.warnings,
            "version": __version__,
            "workspace": self.workspace,
            "embedding": self.embedding_line,
            "checks": [c.to_json() for c in self.checks],
        }


def embedding_check(ws: Workspace, timeout: float) -> tuple[str, Check]:
    """One ["ping"] request with a timeout, checking the dimension (ReMe's exact line)."""
    from memcli.providers.embedding import space as embedding
    from memcli.providers.http import ProviderTimeout

    head = f"[EMBEDDING HEALTH CHECK] name=default workspace_dir={ws.root} ->"
    try:
        backend = embedding.configured(ws, timeout=timeout)
    except ProviderError as exc:
        return f"{head} FAIL timeout={timeout}s elapsed=0.000s error={type(exc).__name__}: {exc}", Check(
            "embedding", FAIL, str(exc)
        )
    if backend is None:
        why = embedding.why_off(ws) or "no embedding backend configured"
        return f"{head} SKIP ({why})", Check("embedding", SKIP, why)
    t0 = time.perf_counter()
    try:
        vecs = backend.embedder.embed_batch(["ping"])
        dims = len(vecs[0])
        if dims != backend.space["dims"]:
            raise ProviderError(f"embedding dimension mismatch: {dims} != {backend.space['dims']}")
    except ProviderTimeout:
        el = time.perf_counter() - t0
        return f"{head} FAIL timeout={timeout}s elapsed={el:.3f}s error=timeout({timeout}s)", Check(
            "embedding", FAIL, f"timeout after {timeout}s", {"elapsed_s": round(el, 3)}
        )
    except Exception as exc:  # noqa: BLE001 - any provider failure is reported, not raised
        el = time.perf_counter() - t0
        msg = str(exc).replace("\n", " ")
        return f"{head} FAIL timeout={timeout}s elapsed={el:.3f}s error={type(exc).__name__}: {msg}", Check(
            "embedding", FAIL, msg, {"elapsed_s": round(el, 3)}
        )
    finally:
        backend.embedder.close()
    el = time.perf_counter() - t0
    return f"{head} OK timeout={timeout}s elapsed={el:.3f}s", Check(
        "embedding", OK, backend.space["identity"], {"elapsed_s": round(el, 3), "dims": dims}
    )


def store_checks(ws: Workspace) -> list[Check]:
    from memcli.index import verify

    meta = ws.metadata
    sizes = verify.store_sizes(meta)
    try:
        snap = sync.open_snapshot(ws)
    except CorruptStore as exc:
        return [Check("index", FAIL, f"{exc}; run `mem reindex`", {"store_bytes": sizes})]
    walked: list[tuple[str, str]] = []
    current = sync.scan(ws, snap=snap, problems=walked)
    if snap is None:  # notes no search can find yet: not healthy (a search would build it, but none ran)
        status = FAIL if current else OK
        msg = f"never indexed ({len(current)} file(s)); run `mem reindex`" if current else "empty workspace"
        return [Check("index", status, msg, {"files": len(current)})]
    checks = []
    try:
        rep = verify.verify(meta, snap, passage_tokens(ws))
        checks.append(
            Check(
                "index",
                FAIL if rep.problems else OK,
                "; ".join(rep.problems) + ("; run `mem reindex`" if rep.problems else ""),
                {**rep.figures, "store_bytes": sizes},
            )
        )
    except (CorruptStore, ValueError, KeyError, TypeError) as exc:
        checks.append(Check("index", FAIL, f"{exc}; run `mem reindex`", {"store_bytes": sizes}))
    checks.append(files_check(ws, snap, current, walked))
    checks.append(frontmatter_check(ws, snap.files, sync.stale_paths(snap, current)))
    snap.close()
    return checks


def files_check(ws: Workspace, snap, current: dict, walked: list[tuple[str, str]]) -> Check:
    """Files changed since indexing, not indexable, or out of this user's reach (a folder the
    walk could not list, a name that is not UTF-8, a file that cannot be opened)."""
    stale = sync.stale_paths(snap, current)
    locate = ws.resolver()
    unread = {p for p in stale if p in current and not os.access(locate(p), os.R_OK)}
    stale = [p for p in stale if p not in unread]
    unreadable = walked + [(p, "file cannot be read") for p in sorted(unread)]
    skipped = [
        f["path"]
        for f in snap.files
        if f.get("count", 0) == 0 and f.get("problem") and not _frontmatter_problem(f["problem"])
    ]
    msg = []
    if unreadable:
        p, why = unreadable[0]
        msg.append(
            f"{len(unreadable)} out of reach (e.g. {p}: {why}); their notes are not searched "
            "as they are now: fix the permission or the name"
        )
    if stale:
        msg.append(f"{len(stale)} changed since indexing (e.g. {stale[0]}); `mem reindex` or any search syncs them")
    if skipped:
        msg.append(f"{len(skipped)} not indexable (e.g. {skipped[0]})")
    figures: dict[str, Any] = {"indexed": len(snap.files), "stale": len(stale), "skipped": len(skipped)}
    if unreadable:
        figures["unreadable"] = [{"path": p, "reason": why} for p, why in unreadable[:20]]
    return Check("files", WARN if msg else OK, "; ".join(msg), figures)


MAX_LISTED = 50  # notes a check names one by one; the count says how many there are


def _frontmatter_problem(problem) -> bool:
    """A problem of the note's frontmatter (memcli.vault.frontmatter.parse names each so), not
    of the whole file (binary, too large, not UTF-8)."""
    return isinstance(problem, str) and "frontmatter" in problem


def frontmatter_check(ws: Workspace, files: list[dict], stale: list[str]) -> Check:
    """Notes whose frontmatter does not parse: indexed, but without their name, description
    and tags, which a search warns about each time it syncs one. From the index's records,
    and for a file changed since indexing from the file itself."""
    from memcli.vault import frontmatter

    changed = set(stale)
    broken = {
        f["path"]: f["problem"] for f in files if f["path"] not in changed and _frontmatter_problem(f.get("problem"))
    }
    for rel in stale:
        if not rel.endswith(".md"):
            continue
        try:
            text = ws.locate(rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # gone, or not a note the index reads: the files check says so
        problem = frontmatter.parse(frontmatter.split(text)[0])[1]
        if problem:
            broken[rel] = problem
    if not broken:
        return Check("frontmatter", OK, "", {"broken": 0})
    listed = [{"path": p, "reason": broken[p]} for p in sorted(broken)[:MAX_LISTED]]
    return Check(
        "frontmatter",
        WARN,
        f"{len(broken)} note(s) whose frontmatter does not parse: their name, "
        "description and tags are not read; fix the YAML by hand",
        {"broken": len(broken), "notes": listed},
    )


def config_check(ws: Workspace) -> Check:
    problems, warnings = [], []
    cfg = ws.settings
    if cfg.dream_cron_enabled:
        from croniter import croniter

        if not croniter.is_valid(cfg.dream_cron) or len(cfg.dream_cron.split()) != 5:
            problems.append(f"dream_cron {cfg.dream_cron!r} is not a valid 5-field cron expression")
    if cfg.timezone:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(cfg.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            problems.append(f"timezone {cfg.timezone!r} is unknown")
    for folder in (cfg.daily_dir, cfg.digest_dir):
        if not (ws.root / folder).is_dir():
            warnings.append(f"{folder}/ does not exist")
    if ws.ignored_keys:
        warnings.append(f"agent.json keys not used by mem: {', '.join(ws.ignored_keys)}")
    warnings += [f"{entry}: {why}" for entry, why in ws.config_warnings()]  # extra paths, OpenClaw's config
    if ws.openclaw is not None and ws.openclaw.ignored:
        warnings.append(f"OpenClaw keys not used by mem: {', '.join(ws.openclaw.ignored)}")
    status = FAIL if problems else WARN if warnings else OK
    return Check("config", status, "; ".join(problems + warnings))


def restore_check(ws: Workspace) -> Check | None:
    """A `mem backup restore` that was killed: its staging folder is still in the workspace."""
    states = backup.interrupted_restores(ws)
    left = sorted(states)
    kept = [n for n, st in states.items() if st == "kept"]
    if kept:  # files no snapshot holds, out of the index: only the user can say where they belong
        return Check(
            "restore",
            FAIL,
            f"{kept[0]}/old holds files a restore could not save in its snapshot "
            f"(listed in {kept[0]}/kept); move them where you want them, then delete "
            f"{kept[0]}",
        )
    half = [n for n, st in states.items() if st == "partial"]
    if half:
        return Check(
            "restore",
            FAIL,
            f"a restore was interrupted while it replaced files, so the workspace mixes "
            f"old and restored ones ({half[0]}/old holds what it had replaced); run "
            f"`mem backup rollback` or the restore again, then delete {half[0]}",
        )
    if left:
        done = [n for n, st in states.items() if st in ("complete", "superseded")]
        why = (
            f"{done[0]} was left by an interrupted restore that it or a later one completed "
            f"(its old/ holds replaced files, also in the snapshot)"
            if done
            else f"{left[0]} was left by a restore interrupted before it changed anything"
        )
        return Check("restore", WARN, f"{why}; delete it")
    return None


def passage_tokens(ws: Workspace) -> int:

    return ws.settings.chunking.passage_tokens


def watch_check(ws: Workspace) -> Check:
    """Whether a `mem watch` keeps a change journal here, and answers (memcli.watch.journal)."""
    pid = journal.watcher(ws.metadata)
    if pid is None:
        return Check("watch", OK, "no `mem watch` running: each reindex checks every file", {"running": False})
    mark = journal.confirm(ws.metadata)
    if mark is None:
        return Check(
            "watch",
            WARN,
            f"`mem watch` (pid {pid}) does not answer within {journal.ANSWER_SECONDS}s: "
            "commands check every file; restart it",
            {"running": True, "pid": pid},
        )
    return Check(
        "watch",
        OK,
        f"`mem watch` (pid {pid}) keeps a change journal",
        {"running": True, "pid": pid, "journal_bytes": mark.offset},
    )


def run(ws: Workspace, *, timeout: float = 15.0) -> HealthReport:
    line, emb = embedding_check(ws, timeout)
    checks = [emb, *store_checks(ws), config_check(ws), stored_secrets.check(ws), watch_check(ws)]
    interrupted = restore_check(ws)
    if interrupted is not None:
        checks.append(interrupted)
    checks[1:1] = vector_health.checks(ws)  # which space is searched, vectors missing, a damaged matrix
    if ws.settings.shared.enabled:  # team memory (memcli.team.status)
        checks.append(team.health_check(ws))
    return HealthReport(str(ws.root), line, checks)
