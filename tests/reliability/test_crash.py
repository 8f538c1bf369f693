"""Crash campaign: SIGKILL mem at random points of every writing job, then check what survived.

Each scenario (a command run on a copy of the sample vault) is first run to completion twice
(once in a subprocess, counting its file operations, once in-process): both must leave the same
Markdown, the "new" version of every file. Then each trial kills a fresh copy of the job with
SIGKILL, either just before its N-th file operation (killpoint.py; N drawn from the count) or at
a random time within the span of its file operations, and checks:

1. every Markdown file is byte-identical to its old or its new version (absent is a version);
2. no temp file is listed as a note, and every session log reads back with no message lost;
3. `mem health` fails only on the derived index, and never when the job was killed before it
   wrote any index store (no false alarm);
4. `mem search` answers as a clean rebuild of the same Markdown does, before any repair;
5. after `mem reindex`, health is clean and search still answers the same;
6. running the job again completes it: the Markdown is exactly the new version.

Seeded (RELIABILITY_SEED replays a run). The short run kills each scenario 3 times (21 kills);
the long run (`make test-long`) 30 times (210 kills).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import sample_vault
from reliability_kit import (
    TEMP_MARK,
    cli,
    copy_workspace,
    env_with,
    expected_hits,
    hits,
    markdown,
    mem_cmd,
    ok,
    old_or_new,
    pinned_env,
    rerun_differences,
    rng,
    seed,
    session_records,
    watched,
)
from sample_vault import scenarios

SEED = seed(20260629)
STORES = ("file_store/", "keyword_index/", "file_graph/", "file_catalog/default", "embedding_store/")


NAMES = list(scenarios({"conv_new": "", "conv_more": "", "backup": ""}, Path("."), Path(".")))
if os.environ.get("RELIABILITY_ONLY"):  # replay some scenarios: RELIABILITY_ONLY=dream,resource-scan
    NAMES = [n for n in NAMES if n in os.environ["RELIABILITY_ONLY"].split(",")]


@dataclass
class Reference:
    new: dict[str, bytes]
    sessions: dict[str, set[str]]
    events: list[tuple[float, str, str]]  # (seconds since start, event, path relative to the trial folder)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tmp_path_factory.mktemp("crash")
    with pinned_env(base / "home"):
        v = sample_vault.build(base / "vault")
        yield {"base": base, "vault": v, "refs": {}}


def _env(trial: Path, extra: dict, **killpoint) -> dict:
    env = {"KILLPOINT_ROOT": trial, "KILLPOINT_LOG": trial / "events.log", **extra}
    env.update({f"KILLPOINT_{k.upper()}": v for k, v in killpoint.items()})
    return env


def _events(trial: Path) -> list[tuple[float, str, str]]:
    try:
        lines = (trial / "events.log").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    return [(float(t), ev, path) for t, ev, path in (x.split(" ", 2) for x in lines)]


def _ids(sessions: dict[str, list[dict]]) -> dict[str, set[str]]:
    return {name: {r["id"] for r in recs} for name, recs in sessions.items()}


def _trial_dir(world, label: str) -> tuple[Path, Path]:
    trial = world["base"] / label
    ws = copy_workspace(world["vault"]["root"], trial / "ws")
    return trial, ws


def reference(world, name: str) -> Reference:
    """Run the scenario to completion twice; both runs must agree (else the oracle is void)."""
    if name in world["refs"]:
        return world["refs"][name]
    trial, ws = _trial_dir(world, f"ref-{name}")
    args, extra = scenarios(world["vault"], ws, trial)[name]
    proc = subprocess.run(
        mem_cmd(args, killpoint=True), env=env_with(_env(trial, extra)), capture_output=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr.decode()
    ref = Reference(markdown(ws), _ids(session_records(ws)), _events(trial))
    trial2, ws2 = _trial_dir(world, f"ref2-{name}")
    args2, extra2 = scenarios(world["vault"], ws2, trial2)[name]
    ok(cli(*args2, env=extra2), f"{name} in-process")
    assert markdown(ws2) == ref.new, f"{name} does not write the same Markdown twice: the campaign needs that"
    assert ref.events, f"{name} did no file operation"
    world["refs"][name] = ref
    return ref


def kill_once(world, name: str, label: str, r) -> dict:
    """One trial: start the job, SIGKILL it, run every check. Returns what happened."""
    ref = reference(world, name)
    trial, ws = _trial_dir(world, label)
    args, extra = scenarios(world["vault"], ws, trial)[name]
    old, old_sessions = markdown(ws), _ids(session_records(ws))
    if r.random() < 2 / 3:  # just before a file operation
        at = r.randint(1, len(ref.events))
        how = f"before op {at}/{len(ref.events)} ({ref.events[at - 1][1]} {ref.events[at - 1][2]})"
        proc = subprocess.run(
            mem_cmd(args, killpoint=True),
            env=env_with(_env(trial, extra, at=at, action="kill")),
            capture_output=True,
            timeout=120,
        )
        code = proc.returncode
    else:  # anywhere in the span of the file operations, mid-write included
        first, last = ref.events[0][0], ref.events[-1][0]
        delay = r.uniform(first, last)
        how = f"at {delay:.3f}s (file operations from {first:.3f}s to {last:.3f}s)"
        p = subprocess.Popen(
            mem_cmd(args, killpoint=True),
            env=env_with(_env(trial, extra)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        code = p.wait(timeout=120)
    where = f"[{name} seed={SEED} {label} killed {how}]"
    assert code in (-signal.SIGKILL, 0), f"{where} exit {code}"
    done = _events(trial)
    check(world, name, ref, trial, ws, old, old_sessions, done, how.startswith("before op"), where)
    return {"killed": code == -signal.SIGKILL}


def check(
    world, name, ref: Reference, trial: Path, ws: Path, old, old_sessions, done, stopped_before_last: bool, where: str
) -> None:
    after = markdown(ws)
    bad = old_or_new(after, old, ref.new)
    assert not bad, f"{where} torn or lost Markdown:\n" + "\n".join(bad)
    listed = watched(ws)
    assert not [p for p in listed if TEMP_MARK in p], f"{where} temp files listed as notes: {listed}"
    assert set(listed) <= set(after), f"{where} notes listed that are not Markdown files"
    sessions = _ids(session_records(ws))  # a damaged log raises here
    for log, ids in sessions.items():
        assert old_sessions.get(log, set()) <= ids, f"{where} {log} lost messages"
        assert ids <= old_sessions.get(log, set()) | ref.sessions.get(log, set()), f"{where} {log} invented messages"
    _check_health(ws, done, ref.events, stopped_before_last, where)
    expected = expected_hits(ws, trial / "clean", sample_vault.QUERIES)
    for q, want in expected.items():
        assert hits(ws, q) == want, f"{where} search {q!r} before repair differs from a clean index"
    ok(cli("-w", ws, "reindex"), f"{where} reindex")
    code, out, err = cli("-w", ws, "health", "--json")
    still = [c["name"] for c in json.loads(out)["checks"] if c["status"] == "fail"]
    assert still in ([], ["restore"]), f"{where} still unhealthy after `mem reindex`: {out} {err}"
    for q, want in expected.items():
        assert hits(ws, q) == want, f"{where} search {q!r} after reindex differs from a clean index"
    args, extra = scenarios(world["vault"], ws, trial)[name]
    ok(cli(*args, env=extra), f"{where} rerun")
    diff = rerun_differences(name, markdown(ws), ref.new)
    assert not diff, f"{where} the rerun after the crash does not give the new Markdown: {diff}"
    code, out, err = cli("-w", ws, "health", "--json")
    assert code == 0, f"{where} unhealthy after the rerun: {out} {err}"
    if name == "backup-create":
        for z in (trial / "out").glob("*.zip"):
            ok(cli("backup", "verify", z), f"{where} verify {z.name}")
    shutil.rmtree(trial, ignore_errors=True)


def _check_health(ws: Path, done, ref_events, stopped_before_last: bool, where: str) -> None:
    code, out, err = cli("-w", ws, "health", "--json")
    assert code in (0, 5), f"{where} health exit {code}: {err}"
    report = json.loads(out)
    failing = [c for c in report["checks"] if c["status"] == "fail"]
    # a rename counts by its target too: a restore's swap moves a staged store into mem_metadata/
    wrote_stores = any(
        ev != "os.mkdir"
        and side.startswith("ws/mem_metadata/")
        and any(side[len("ws/mem_metadata/") :].startswith(s.rstrip("/")) for s in STORES)
        for _, ev, path in done
        for side in path.split(" -> ")
    )
    # folders a restore swapped in or out; the op a killpoint stopped at never ran (a timed kill may
    # have stopped the last logged one before or after it ran: either count is right)
    swaps = [path for _, ev, path in done if ev == "os.rename" and ".mem-restore-" in path]
    total = sum(1 for _, ev, path in ref_events if ev == "os.rename" and ".mem-restore-" in path)
    last_ran = {len(swaps) - 1} if stopped_before_last else {len(swaps), len(swaps) - 1}
    partial = any(0 < n < total for n in last_ran)
    for c in failing:
        if c["name"] == "restore":  # a restore killed while it moved folders: rollback or rerun, then tidy
            assert partial, f"{where} false alarm: no swap was under way ({len(swaps)} of {total} renames): {c}"
            assert "mem backup rollback" in c["message"], f"{where} no advice: {c}"
        else:
            assert c["name"] == "index", f"{where} health blames more than the index: {c}"
            assert "mem reindex" in c["message"], f"{where} no advice: {c}"
            assert wrote_stores, f"{where} false alarm: unhealthy though no index store was touched: {c}"


def campaign(world, kills: int, salt: str) -> None:
    """`kills` SIGKILLs per scenario; a timed kill that comes after the job ended is a trial, not a kill."""
    trials = killed = 0
    for name in NAMES:
        done = 0
        for i in range(3 * kills):
            if done == kills:
                break
            trials += 1
            done += kill_once(world, name, f"{salt}-{name}-{i}", rng(SEED, salt, name, i))["killed"]
        assert done == kills, f"{name}: only {done} of {kills} trials killed the job"
        killed += done
    print(f"\ncrash campaign {salt}: {killed} kills survived in {trials} trials, seed {SEED}")


def test_crash_campaign_short(world):
    campaign(world, 3, "short")


@pytest.mark.long
def test_crash_campaign_long(world):
    campaign(world, 30, "long")
