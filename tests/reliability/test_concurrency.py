"""Concurrency: many writers at once lose nothing; locks wait, time out cleanly, and die with their holder.

The parallel campaign starts N >= 16 `mem ingest` processes at once (half for different
sessions, half for one shared session) with `mem resource scan`, `mem dream` and `mem remember`
beside them, while search loops run throughout; then checks the session logs, the notes, the
day index, the inbox, the index and every search answer. The short run does one round of 16
ingests; the long run (`make test-long`) four rounds of 24 on the same workspace.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sample_vault
from reliability_kit import (
    cli,
    copy_workspace,
    env_with,
    hits,
    markdown,
    mem_cmd,
    ok,
    one_clear_line,
    run,
    session_records,
    wait_all,
)

DAY = sample_vault.DAYS[1]
STABLE = "kestrel0628n00"  # a note no job of the campaign touches
BUSY_LINE = re.compile(
    r"^mem: error: Workspace is busy: another mem job holds workspace\.lock "
    r"\(pid=\d+ job=holder\) \(wait for it to finish or raise --wait\)$"
)


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    from reliability_kit import pinned_env

    base = tmp_path_factory.mktemp("conc")
    with pinned_env(base / "home"):
        yield sample_vault.build(base / "vault")


def _notes_by_session(ws: Path) -> dict[tuple[str, str], list[str]]:
    """(day, session id) -> the notes that claim it, from their frontmatter."""
    from memcli.vault import notes

    out: dict[tuple[str, str], list[str]] = {}
    for p in sorted((ws / "memory").glob("*/*.md")):
        sid = notes.read(p).meta.get("session_id")
        if sid:
            out.setdefault((p.parent.name, str(sid)), []).append(p.relative_to(ws).as_posix())
    return out


def _day_index_current(ws: Path, day: str) -> bool:
    """Re-rendering the day index now would change nothing (checked on a copy)."""
    from memcli.vault import notes
    from memcli.vault.workspace import open_workspace

    probe = copy_workspace(ws, ws.parent / f"probe-{day}-{time.monotonic_ns()}", with_metadata=False)
    _, action = notes.update_day_index(open_workspace(probe, dict(os.environ)), day)
    return action == "unchanged"


def _search_loop(ws: Path, stop: threading.Event, want: list[tuple], results: list) -> None:
    """Search until told to stop (at least twice); record every answer."""
    n = 0
    while not stop.is_set() or n < 2:
        code, out, err = run(["-w", ws, "search", STABLE, "falcon", "--json", "--limit", "20", "--mode", "keyword"])
        n += 1
        if code != 0:
            results.append(("failed", code, err))
            continue
        try:
            data = json.loads(out)
        except ValueError:
            results.append(("torn json", out[-300:], err))
            continue
        got = (
            sorted(
                (h["path"], h["start_line"], h["end_line"], h["text"])
                for h in data["results"]
                if h["path"] == want[0][0]
            )
            if want
            else []
        )
        results.append(("ok",) if got == want else ("torn", got, want))


def round_of_writers(ws: Path, base: Path, n_ingest: int, tag: str) -> dict:
    """Start every writer at once, search beside them, wait; returns what each did."""
    assert n_ingest >= 16
    half = n_ingest // 2
    convs = []
    for i in range(half):  # different sessions
        sid = f"{tag}-c{i:02d}"
        convs.append(
            (
                sid,
                sample_vault.write(
                    base,
                    f"{sid}.json",
                    json.dumps(sample_vault.conversation(sid, DAY, 300 + i, 6, f"wren{tag}{i:02d}")),
                ),
            )
        )
    for i in range(n_ingest - half):  # one shared session, disjoint batches
        sid = f"{tag}-shared"
        convs.append(
            (
                sid,
                sample_vault.write(
                    base,
                    f"{sid}-{i}.json",
                    json.dumps(sample_vault.conversation(sid, DAY, 600 + 10 * i, 6, f"plover{tag}{i:02d}")),
                ),
            )
        )
    for i in range(3):
        sample_vault.write(ws, f"resource/{DAY}/{tag}-doc{i}.txt", f"Resource {tag} {i}: the quail{tag}{i} report.\n")
    want = sorted(h[:4] for h in hits(ws, STABLE, 20) if h[0].startswith("memory/2026-06-28/database"))
    assert want, "the stable note must be found before the run"
    cmds = [["-w", ws, "ingest", conv, "-s", sid, "--force", "--wait", "120"] for sid, conv in convs]
    cmds += [["-w", ws, "resource", "scan", "--wait", "120"]] * 2
    cmds += [["-w", ws, "dream", "--date", DAY, "--wait", "120"]]
    cmds += [["-w", ws, "remember", f"grebe{tag}{i} is a fact to keep", "--wait", "120"] for i in range(2)]
    stop = threading.Event()
    searches: list = []
    loops = [threading.Thread(target=_search_loop, args=(ws, stop, want, searches)) for _ in range(2)]
    t0 = time.monotonic()
    procs = [subprocess.Popen(mem_cmd(c), env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in cmds]
    for t in loops:
        t.start()
    results = wait_all(procs, timeout=300)
    stop.set()
    for t in loops:
        t.join(timeout=120)
    seconds = time.monotonic() - t0
    for c, (code, _out, err) in zip(cmds, results):
        assert code == 0, f"{c[2:4]} exit {code}: {err}"
        assert one_clear_line(code, err) is None, err
    bad = [s for s in searches if s[0] != "ok"]
    assert not bad, f"{len(bad)} of {len(searches)} searches failed or were torn: {bad[:3]}"
    return {"convs": convs, "searches": len(searches), "seconds": seconds, "processes": len(cmds)}


def check_round(ws: Path, convs: list, tag: str, remembered: list[str]) -> None:
    logs = session_records(ws)
    for sid, conv in convs:  # every message of every batch is in its session's log, once
        sent = {m["id"] for m in json.loads(conv.read_text())}
        ids = [r["id"] for r in logs[f"{sid}.jsonl"]]
        assert sent <= set(ids), f"{sid}: lost {sorted(sent - set(ids))[:3]}"
        assert len(ids) == len(set(ids)), f"{sid}: duplicated messages"
    claimed = _notes_by_session(ws)
    for sid in {sid for sid, _ in convs}:
        assert len(claimed.get((DAY, sid), [])) == 1, f"{sid}: notes {claimed.get((DAY, sid))}"
    shared = (ws / claimed[(DAY, f"{tag}-shared")][0]).read_text()
    for sid, conv in convs:
        word = json.loads(conv.read_text())[0]["content"].split()[5]  # the batch's own word
        assert word in (shared if sid.endswith("shared") else (ws / claimed[(DAY, sid)][0]).read_text()), (
            f"{sid}: the batch with {word!r} was lost from the note"
        )
    resource_notes = [p for p in (ws / "memory").glob("*/*.md") if "source_resource" in p.read_text()]
    sources = [re.search(r"source_resource: '\[\[(.+?)\]\]'", p.read_text()).group(1) for p in resource_notes]
    assert len(sources) == len(set(sources)), f"a resource has two notes: {sorted(sources)}"
    assert {f"resource/{DAY}/{tag}-doc{i}.txt" for i in range(3)} <= set(sources)
    for day in sorted({p.name for p in (ws / "memory").iterdir() if p.is_dir()}):
        assert _day_index_current(ws, day), f"day index memory/{day}.md is not consistent with its notes"
    facts = "".join(p.read_text() for p in (ws / "memory").glob("*/remembered-facts*.md"))
    for fact in remembered:
        assert fact in facts, f"remembered fact lost: {fact}"
    from memcli.jobs import inbox
    from memcli.vault.workspace import open_workspace

    records = inbox.read(open_workspace(ws, dict(os.environ)))
    summaries = [r.get("summary", "") for r in records if r.get("job") == "ingest"]
    for sid, _ in convs:
        assert any(f"session {sid}:" in s for s in summaries), f"no inbox record for {sid}"
    code, out, err = cli("-w", ws, "health", "--json")
    assert code == 0, out
    for sid, conv in convs[:3]:
        word = json.loads(conv.read_text())[0]["content"].split()[5]
        assert any(sid in h[3] or word in h[3] for h in hits(ws, word)), f"{word} not found by search"


def campaign(vault, tmp_path, rounds: int, n_ingest: int) -> None:
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    totals = {"processes": 0, "searches": 0, "seconds": 0.0}
    for r in range(rounds):
        tag = f"r{r}"
        done = round_of_writers(ws, tmp_path, n_ingest, tag)
        check_round(ws, done["convs"], tag, [f"grebe{tag}{i} is a fact to keep" for i in range(2)])
        for k in totals:
            totals[k] += done[k]
    print(
        f"\nconcurrency: {rounds} round(s), {totals['processes']} writer processes "
        f"({n_ingest} ingests per round), {totals['searches']} searches beside them, {totals['seconds']:.1f}s"
    )


def test_parallel_writers_lose_nothing(vault, tmp_path):
    campaign(vault, tmp_path, 1, 16)


@pytest.mark.long
def test_parallel_writers_lose_nothing_long(vault, tmp_path):
    campaign(vault, tmp_path, 4, 24)


# Bounded waits -----------------------------------------------------------------------------------

HOLDER = """
import sys
from pathlib import Path
from memcli.vault.lock import Lock
lock = Lock(Path(sys.argv[1]), "holder").acquire()
print("held", flush=True)
sys.stdin.read()
"""


def _hold(lock: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"held"
    return p


# Every command, and whether it writes Markdown (takes the workspace lock, so needs --wait).
WRITERS = {"ingest", "remember", "resource scan", "dream", "backup restore", "backup rollback"}
READERS_OR_OWN_LOCK = {
    "init": "creates missing folders and mem.yaml only, never over an existing file",
    "config": "reads",
    "search": "reads (syncs the index without waiting)",
    "get": "reads",
    "health": "reads",
    "reindex": "derived state only; --wait for a running rebuild (default 0: design says exit at once)",
    "inbox": "--clear takes the short inbox lock (10 s)",
    "watch": "a loop; locks per batch",
    "backup create": "reads the workspace into a zip outside it",
    "backup list": "reads",
    "backup verify": "reads",
    "backup prune": "deletes old zips in backup_dir, not the workspace",
    "schedule": "prints or installs a crontab/systemd unit; no workspace files",
    "agent-prompt": "prints a prompt",
    "mcp": "a stdio server; its remember/ingest tools run those jobs with their default 30 s wait",
}


def _commands() -> dict[str, list[str]]:
    import typer

    from memcli.cli.app import build

    root = typer.main.get_command(build())
    out = {}
    for name, cmd in root.commands.items():
        subs = cmd.commands.items() if hasattr(cmd, "commands") else [(None, cmd)]  # a group
        for sub, c in subs:
            out[f"{name} {sub}" if sub else name] = [o for p in c.params for o in p.opts]
    return out


def test_every_writer_command_has_a_wait_option():
    commands = _commands()
    unknown = set(commands) - WRITERS - set(READERS_OR_OWN_LOCK)
    assert not unknown, f"classify these commands as writers or not: {sorted(unknown)}"
    for name in WRITERS | {"reindex"}:
        assert "--wait" in commands[name], f"mem {name} has no --wait"


def test_writers_wait_then_exit_75_with_one_line(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    env = {"MEM_BACKUP_DIR": tmp_path / "bk"}
    ok(cli("-w", ws, "backup", "restore", vault["backup"], "--yes", env=env))  # a snapshot for rollback
    before = markdown(ws)
    (tmp_path / "res").mkdir()
    sample_vault.write(ws, f"resource/{DAY}/new.txt", "Waiting resource.\n")
    holder = _hold(ws / "mem_metadata" / "locks" / "workspace.lock")
    try:
        cmds = {
            "ingest": ["ingest", vault["conv_new"], "-s", "s-wait"],
            "remember": ["remember", "a fact that must wait"],
            "resource scan": ["resource", "scan"],
            "dream": ["dream", "--date", DAY],
            "backup restore": ["backup", "restore", vault["backup"], "--yes"],
            "backup rollback": ["backup", "rollback", "--yes"],
        }
        assert set(cmds) == WRITERS
        t0 = time.monotonic()
        procs = {
            name: subprocess.Popen(
                mem_cmd(["-w", ws, *args, "--wait", "0.8"]),
                env=env_with(env),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for name, args in cmds.items()
        }
        for name, (code, out, err) in zip(procs, wait_all(list(procs.values()), 120)):
            assert code == 75, f"{name}: exit {code} {err}"
            assert out == "", name
            assert BUSY_LINE.match(err.strip()), f"{name}: {err!r}"
        assert time.monotonic() - t0 >= 0.8
        assert markdown(ws) == before, "a writer that timed out changed Markdown"
        # a writer that waits long enough gets the lock once the holder lets go
        t0 = time.monotonic()
        p = subprocess.Popen(
            mem_cmd(["-w", ws, "ingest", vault["conv_new"], "-s", "s-wait", "--force", "--wait", "30"]),
            env=env_with(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(1.0)
        assert p.poll() is None, "the writer did not wait for the lock"
        holder.stdin.close()
        holder.wait(timeout=10)
        assert p.wait(timeout=60) == 0, p.stderr.read()
        assert time.monotonic() - t0 >= 1.0
    finally:
        holder.kill()
        holder.wait()


def test_reindex_waits_for_a_running_rebuild_only_when_asked(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    holder = _hold(ws / "mem_metadata" / "locks" / "rebuild.lock")
    try:
        t0 = time.monotonic()
        code, out, err = run(["-w", ws, "reindex"])
        assert code == 75 and time.monotonic() - t0 < 10, err  # at once: only start-up time
        assert err.startswith("mem: error: Memory index rebuild is already running (pid=")
        t0 = time.monotonic()
        code, out, err = run(["-w", ws, "reindex", "--wait", "0.7"])
        assert code == 75 and time.monotonic() - t0 >= 0.7, err
    finally:
        holder.kill()
        holder.wait()
    ok(run(["-w", ws, "reindex", "--wait", "5"]))


# Locks of killed processes -------------------------------------------------------------------------


def is_held(path: Path) -> bool:
    """True when some process holds the lock at `path` (probed without waiting)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_lock_of_a_killed_writer_is_free_at_once(vault, tmp_path):
    """SIGKILL an ingest while it holds the workspace lock (paused at its session log write):
    the next writer gets the lock with --wait 0; the dead holder's line in the file is harmless."""
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    log = tmp_path / "events.log"
    env = {
        "KILLPOINT_ROOT": ws,
        "KILLPOINT_LOG": log,
        "KILLPOINT_MATCH": "mem_session/dialog",
        "KILLPOINT_ACTION": "pause:60",
    }
    p = subprocess.Popen(
        mem_cmd(["-w", ws, "ingest", vault["conv_new"], "-s", "s-killed", "--force"], killpoint=True),
        env=env_with(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    lock = ws / "mem_metadata" / "locks" / "workspace.lock"
    deadline = time.monotonic() + 30
    while not (log.exists() and "mem_session/dialog" in log.read_text()):
        assert time.monotonic() < deadline and p.poll() is None, "the ingest never reached its log write"
        time.sleep(0.02)
    assert is_held(lock)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    assert f"pid={p.pid} job=ingest" in lock.read_text()  # stale text, no stale lock
    assert not is_held(lock)
    code, out, err = run(["-w", ws, "ingest", vault["conv_new"], "-s", "s-next", "--force", "--wait", "0"])
    assert code == 0, err


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie is reaped by init in its own time)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or not Path("/proc/self/task").exists(),
    reason="needs the parallel indexer (2+ CPUs) and /proc",
)
def test_killed_parallel_reindex_leaves_no_lock_and_no_workers(tmp_path):
    """A full rebuild of 300+ files forks workers. SIGKILL the parent while they run: the index and
    rebuild locks are free at once (workers do not keep them) and the workers exit by themselves."""
    ws = tmp_path / "ws"
    for i in range(330):
        sample_vault.write(
            ws,
            f"memory/2026-01-01/n{i:03d}.md",
            "\n".join(f"Line {k} of note {i}: falcon kestrel{i} migration." for k in range(400)),
        )
    p = subprocess.Popen(
        mem_cmd(["-w", ws, "reindex", "--full"]), env=env_with(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while not (workers := _children(p.pid)):
        assert p.poll() is None and time.monotonic() < deadline, "no worker was ever seen"
        time.sleep(0.005)
    # while they run: a child caught between fork() and its after-fork hook (which closes its
    # copies of the lock files) still shares them for those microseconds; on a busy machine the
    # kill landed there once
    time.sleep(0.2)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    locks = ws / "mem_metadata" / "locks"
    assert not is_held(locks / "rebuild.lock") and not is_held(locks / "index.lock"), "a worker kept the lock"
    deadline = time.monotonic() + 10
    while any(map(_running, workers)):
        assert time.monotonic() < deadline, f"orphaned workers still running: {workers}"
        time.sleep(0.1)
    code, out, err = run(["-w", ws, "reindex", "--wait", "0"])
    assert code == 0, err
