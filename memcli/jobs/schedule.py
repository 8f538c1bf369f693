"""When dream is due (`dream_cron`), and the crontab lines or systemd units that run the jobs.

`mem dream --if-due` is meant to be started often (every 5 minutes by cron or a
systemd timer): it runs only when a time `dream_cron` names has passed since the
last successful run, and at most `GRACE` seconds ago. A check that comes later
than that (the machine was asleep) skips that time, as a scheduler with a misfire
grace does, and waits for the next one. The cron expression is read in the
workspace's time zone, so moving mem.yaml's `dream_cron` needs no reinstall.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import datetime, timedelta

from memcli.errors import ConfigError
from memcli.vault import notes
from memcli.vault.workspace import Workspace

GRACE = 600  # seconds a scheduled time may be missed by and still run
JITTER = 60  # seconds: a due run starts after a random delay up to this
CHECK_EVERY = 5  # minutes between `--if-due` checks in the printed schedules
JOBS = [  # (unit name, what it does ({resource}: the workspace's folder), arguments after `mem -w WS`,
    #        crontab schedule, systemd OnCalendar)
    (
        "mem-dream",
        "consolidate daily notes into the digest when dream_cron is due",
        ["dream", "--if-due"],
        f"*/{CHECK_EVERY} * * * *",
        f"*:0/{CHECK_EVERY}",
    ),
    (
        "mem-resource-scan",
        "turn new or changed files under {resource}/ into daily notes",
        ["resource", "scan"],
        "*/15 * * * *",
        "*:0/15",
    ),
    ("mem-reindex", "bring the search index and embeddings up to date", ["reindex"], "30 4 * * *", "*-*-* 04:30:00"),
]


def cron_expr(ws: Workspace) -> str:
    """The validated `dream_cron`, or ConfigError with croniter's reason."""
    from croniter import croniter

    expr = " ".join(ws.settings.dream_cron.split())
    hint = "use 5 fields: minute hour day-of-month month day-of-week, e.g. '0 23 * * *'"
    if len(expr.split()) != 5:
        raise ConfigError(f"dream_cron {expr!r} is not a 5-field cron expression", hint)
    try:
        croniter.expand(expr)
    except (ValueError, KeyError) as exc:  # CroniterBadCronError is a ValueError
        raise ConfigError(f"dream_cron {expr!r} is not a valid cron expression: {exc}", hint) from None
    return expr


@dataclass
class Due:
    due: bool
    reason: str
    slot: datetime | None = None  # the scheduled time this run answers
    next: datetime | None = None

    def to_json(self) -> dict:
        return {
            "due": self.due,
            "reason": self.reason,
            "slot": self.slot.isoformat() if self.slot else None,
            "next": self.next.isoformat() if self.next else None,
        }


def parse_time(value) -> datetime | None:
    try:
        t = datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None
    return t if t.tzinfo else None


def due(ws: Workspace, now: datetime, last_success: datetime | None) -> Due:
    """Whether a scheduled dream should run at `now` (an aware datetime)."""
    from croniter import croniter

    if not ws.settings.dream_cron_enabled:
        return Due(False, "dream_cron_enabled is false")
    expr = cron_expr(ws)
    local = now.astimezone(notes.zone(ws))
    # croniter's get_prev is strict; one second on makes a check at exactly 23:00:00 see 23:00
    slot = croniter(expr, local + timedelta(seconds=1)).get_prev(datetime)
    upcoming = croniter(expr, local).get_next(datetime)
    if last_success is not None and last_success >= slot:
        return Due(
            False,
            f"not due: last run {last_success.isoformat(timespec='seconds')}, next run "
            f"{upcoming.isoformat(timespec='seconds')} ({expr})",
            slot,
            upcoming,
        )
    late = (local - slot).total_seconds()
    if late > GRACE:
        return Due(
            False,
            f"missed the run of {slot.isoformat(timespec='seconds')} by more than {GRACE} s; next run "
            f"{upcoming.isoformat(timespec='seconds')} ({expr})",
            slot,
            upcoming,
        )
    return Due(True, f"due: scheduled for {slot.isoformat(timespec='seconds')} ({expr})", slot, upcoming)


def _argv(mem: list[str], root: str, args: list[str]) -> list[str]:
    return [*mem, "-w", root, *args]


def crontab(ws: Workspace, mem: list[str]) -> str:
    expr = cron_expr(ws)
    root = str(ws.root)
    lines = [
        f"# mem jobs for {root} (install with `crontab -e`; cron runs with a bare PATH and no",
        "# MEM_* variables: keep API keys in mem.yaml or set them at the top of the crontab).",
        f"# mem dream checks every {CHECK_EVERY} minutes and runs when dream_cron ({expr}, timezone "
        f"{ws.settings.timezone or 'of this machine'}) is due.",
    ]
    if not ws.settings.dream_cron_enabled:
        lines.append("# dream_cron_enabled is false: `mem dream --if-due` will not run until it is true.")
    for _name, what, args, cron, _cal in JOBS:
        lines += [f"# {_what(ws, what)}", f"{cron} {shlex.join(_argv(mem, root, args))}"]
    return "\n".join(lines) + "\n"


def _what(ws: Workspace, what: str) -> str:
    return what.format(resource=ws.settings.resource_dir.strip("/"))


def _systemd_quote(arg: str) -> str:
    if arg and all(c.isalnum() or c in "-_./:=@+," for c in arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$") + '"'


def systemd_units(ws: Workspace, mem: list[str]) -> dict[str, str]:
    """File name -> text of user units (~/.config/systemd/user/): a oneshot service and a timer per job."""
    expr = cron_expr(ws)
    root = str(ws.root)
    files: dict[str, str] = {}
    for name, what, args, _cron, calendar in JOBS:
        what = _what(ws, what)
        command = " ".join(_systemd_quote(a) for a in _argv(mem, root, args))
        extra = f"# dream_cron is {expr}; the timer only checks whether it is due.\n" if args[0] == "dream" else ""
        files[f"{name}.service"] = (
            f"[Unit]\nDescription=mem: {what} ({root.replace('%', '%%')})\n\n[Service]\nType=oneshot\n{extra}"
            f"ExecStart={command}\n# API keys (MEM_LLM_API_KEY=...), one per line, if not in mem.yaml\n"
            "EnvironmentFile=-%h/.config/mem/env\nNice=10\n"
        )
        files[f"{name}.timer"] = (
            f"[Unit]\nDescription=mem: {what} (timer)\n\n[Timer]\nOnCalendar={calendar}\n"
            f"AccuracySec=1s\n\n[Install]\nWantedBy=timers.target\n"
        )
    return files


def systemd_text(ws: Workspace, mem: list[str]) -> str:
    files = systemd_units(ws, mem)
    parts = [f"# ==> ~/.config/systemd/user/{name} <==\n{text}" for name, text in files.items()]
    timers = " ".join(n for n in files if n.endswith(".timer"))
    parts.append(
        f"# Install: save each file above under ~/.config/systemd/user/, then run\n"
        f"#   systemctl --user daemon-reload && systemctl --user enable --now {timers}\n"
        "#   loginctl enable-linger $USER   # keep the timers running while you are logged out\n"
    )
    return "\n".join(parts)
