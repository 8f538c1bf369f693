"""`mem dream --if-due` against dream_cron with a fixed clock, and `mem schedule`'s cron/systemd output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta

import pytest
from test_dream import coffee_day

UTC = UTC


def at(day: int, hh: int, mm: int, ss: int = 0) -> datetime:
    return datetime(2026, 6, day, hh, mm, ss, tzinfo=UTC)


def workspace(ws, **config):
    # one statement founds a node (dream_min_statements: 1): these tests are about when dream runs
    defaults = {"timezone": "UTC", "dream_min_statements": 1}
    lines = "".join(f"{k}: {json.dumps(v)}\n" for k, v in {**defaults, **config}.items())
    (ws / "mem.yaml").write_text(lines, encoding="utf-8")
    from memcli.vault.workspace import open_workspace  # as `mem -w ws` opens it, same environment

    return open_workspace(ws.resolve(), dict(os.environ))


class Sleeper:
    def __init__(self):
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def dream_at(ws, now, **kw):
    from memcli.jobs import dream

    sleeper = Sleeper()
    rep = dream.run(workspace(ws), if_due=True, now=now, sleep=sleeper, rng=lambda: 0.5, **kw)
    return rep, sleeper.calls


def test_due_across_a_cron_boundary_with_a_fixed_clock(ws):
    from memcli.jobs import schedule

    w = workspace(ws, dream_cron="0 23 * * *")
    last = at(1, 23, 0, 40)  # yesterday's run
    assert not schedule.due(w, at(2, 22, 59, 59), last).due
    d = schedule.due(w, at(2, 23, 0, 0), last)
    assert d.due and d.slot == at(2, 23, 0) and d.next == at(3, 23, 0)
    assert schedule.due(w, at(2, 23, 10, 0), last).due  # 600 s late: still within the grace
    missed = schedule.due(w, at(2, 23, 10, 1), last)
    assert not missed.due and missed.reason.startswith("missed the run of 2026-06-02T23:00:00+00:00 by more than 600 s")
    after = schedule.due(w, at(2, 23, 5), at(2, 23, 0, 30))
    assert not after.due and after.reason.startswith(
        "not due: last run 2026-06-02T23:00:30+00:00, next run 2026-06-03T23:00:00+00:00"
    )
    assert schedule.due(w, at(2, 23, 5), None).due  # never ran: the first slot within grace runs


def test_cron_is_read_in_the_workspace_timezone(ws):
    from memcli.jobs import schedule

    w = workspace(ws, dream_cron="0 23 * * *", timezone="Asia/Tokyo")
    assert schedule.due(w, at(2, 14, 3), None).due  # 23:03 in Tokyo
    assert not schedule.due(w, at(2, 23, 3), None).due  # 08:03 in Tokyo


def test_if_due_runs_once_per_slot_after_the_jitter(ws):
    coffee_day(ws, "2026-06-02")
    rep, sleeps = dream_at(ws, at(2, 22, 58))
    assert rep.status == "not_due" and sleeps == [] and not (ws / "digest/personal").exists()
    rep, sleeps = dream_at(ws, at(2, 23, 0, 5))
    assert rep.status == "completed" and sleeps == [30.0]  # rng 0.5 of the 60 s jitter
    assert any("coffee in the morning" in node.read_text() for node in (ws / "digest").rglob("*.md"))
    state = json.loads((ws / "mem_metadata/dream/state.json").read_text())
    assert state["last_success"] == "2026-06-02T23:00:05+00:00"
    rep, sleeps = dream_at(ws, at(2, 23, 5))
    assert rep.status == "not_due" and sleeps == []
    rep, sleeps = dream_at(ws, at(3, 23, 2), jitter=False)
    assert rep.status == "no_change" and sleeps == []  # due again the next night; nothing new to dream
    assert json.loads((ws / "mem_metadata/dream/state.json").read_text())["last_success"] == "2026-06-03T23:02:00+00:00"


def test_a_plain_dream_never_waits_but_counts_as_the_run(ws):
    from memcli.jobs import dream

    coffee_day(ws, "2026-06-02")
    sleeper = Sleeper()
    rep = dream.run(workspace(ws), now=at(2, 23, 0, 20), sleep=sleeper, rng=lambda: 0.9)
    assert rep.status == "completed" and sleeper.calls == []
    assert dream_at(ws, at(2, 23, 3))[0].status == "not_due"


def test_disabled_schedule_is_not_due_and_quiet(ws, run_mem):
    coffee_day(ws)
    workspace(ws, dream_cron_enabled=False)
    assert run_mem("-w", ws, "dream", "--if-due", "--no-jitter") == (0, "", "")
    code, out, err = run_mem("-w", ws, "dream", "--if-due", "--no-jitter", "--json")
    assert code == 0 and json.loads(out)["schedule"] == {
        "due": False,
        "reason": "dream_cron_enabled is false",
        "slot": None,
        "next": None,
    }


@pytest.mark.parametrize(
    "expr,reason",
    [
        ("61 23 * * *", "out of range"),
        ("0 23 * *", "not a 5-field cron expression"),
        ("0 23 * * * 2026", "not a 5-field cron expression"),
        ("every night", "not a 5-field cron expression"),
    ],
)
def test_a_bad_cron_expression_is_a_config_error(ws, run_mem, clean_failure, expr, reason):
    workspace(ws, dream_cron=expr)
    line = clean_failure(run_mem("-w", ws, "dream", "--if-due", "--no-jitter"), 3)
    assert f"dream_cron {expr!r}" in line and reason in line
    assert clean_failure(run_mem("-w", ws, "schedule"), 3) == line


def test_crontab_lines(ws, run_mem):
    from croniter import croniter

    workspace(ws, dream_cron="30 22 * * 1-5")
    code, out, err = run_mem("-w", ws, "schedule")
    assert code == 0, err
    jobs = [line for line in out.splitlines() if line and not line.startswith("#")]
    assert len(jobs) == 3
    root = str(ws.resolve())
    for line, args in zip(jobs, ["dream --if-due", "resource scan", "reindex"]):
        fields = line.split(" ", 5)
        assert croniter.is_valid(" ".join(fields[:5])), line
        assert fields[5].endswith(f"-w {root} {args}") and fields[5].split()[0].startswith("/"), line
    assert jobs[0].startswith("*/5 * * * * ")
    assert "dream_cron (30 22 * * 1-5, timezone UTC)" in out
    assert run_mem("-w", ws, "schedule", "--cron") == (code, out, err)


def test_systemd_units(ws, run_mem, tmp_path):
    workspace(ws)
    code, out, err = run_mem("-w", ws, "schedule", "--systemd", "--json")
    assert code == 0, err
    files = json.loads(out)["files"]
    assert sorted(files) == [
        "mem-dream.service",
        "mem-dream.timer",
        "mem-reindex.service",
        "mem-reindex.timer",
        "mem-resource-scan.service",
        "mem-resource-scan.timer",
    ]
    service = files["mem-dream.service"]
    assert "[Service]\nType=oneshot\n" in service and "EnvironmentFile=-%h/.config/mem/env" in service
    exec_line = next(x for x in service.splitlines() if x.startswith("ExecStart="))
    assert exec_line.endswith(f"-w {ws.resolve()} dream --if-due") and exec_line[10:].startswith("/")
    assert "OnCalendar=*:0/5\n" in files["mem-dream.timer"] and "WantedBy=timers.target" in files["mem-dream.timer"]
    text = run_mem("-w", ws, "schedule", "--systemd")[1]
    assert "# ==> ~/.config/systemd/user/mem-dream.timer <==" in text and "systemctl --user daemon-reload" in text
    analyze = shutil.which("systemd-analyze")
    if analyze:  # the unit files are valid for systemd itself
        for name, body in files.items():
            (tmp_path / name).write_text(body, encoding="utf-8")
        for calendar in ("*:0/5", "*:0/15", "*-*-* 04:30:00"):
            subprocess.run([analyze, "calendar", calendar], check=True, capture_output=True, timeout=30)


def test_systemd_and_cron_exclude_each_other(ws, run_mem, clean_failure):
    assert "--systemd and --cron exclude each other" in clean_failure(
        run_mem("-w", ws, "schedule", "--systemd", "--cron"), 2
    )


def test_if_due_check_prints_nothing_when_not_due(ws, run_mem):
    """cron mails whatever a job prints: the 5-minute check is silent unless it runs."""
    now = datetime.now(UTC)
    workspace(ws, dream_cron=f"{(now + timedelta(minutes=30)).minute} {(now + timedelta(minutes=30)).hour} * * *")
    assert run_mem("-w", ws, "dream", "--if-due") == (0, "", "")
