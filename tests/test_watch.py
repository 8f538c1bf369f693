"""`mem watch`: a real process that notices edits and new resources, and stops cleanly on signals."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memcli.vault.lock import Lock

DAY = "2026-07-14"
DEADLINE = 20.0  # seconds; generous for a busy 2-core machine, and never waited for when things work


class Watcher:
    """`python -m memcli watch` in a subprocess; its stderr lines arrive on a queue."""

    def __init__(self, ws: Path, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", str(ws), "watch", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stderr:
            self.lines.put(raw.decode("utf-8", errors="replace").rstrip("\n"))

    def wait_for(self, text: str, timeout: float = DEADLINE) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} within {timeout}s; saw: {self.seen}")

    def stop(self, sig: int) -> tuple[int, str]:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=DEADLINE)
        time.sleep(0.05)  # let the reader drain the pipe
        rest = []
        while not self.lines.empty():
            rest.append(self.lines.get())
        return code, "\n".join(self.seen + rest)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=DEADLINE)
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()


@pytest.fixture
def watcher(ws):
    started: list[Watcher] = []

    def start(*args: str) -> Watcher:
        w = Watcher(ws, *args)
        started.append(w)
        return w

    yield start
    for w in started:  # always: a failed assertion must not leave a watcher running
        w.kill()


def until(check, timeout: float = DEADLINE):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"not true within {timeout}s")


def test_watch_indexes_an_edit_and_scans_a_new_resource_then_stops_on_sigterm(ws, note, mem, watcher):
    note(ws, f"memory/{DAY}/old.md", "# Old\n\nNothing special.\n", name="old", description="Old note.")
    w = watcher("--interval", "0.2")
    assert "catch-up -> index 1 added" in w.wait_for("catch-up")
    t0 = time.monotonic()
    note(ws, f"memory/{DAY}/old.md", "# Old\n\nA narwhal appeared.\n", name="old", description="Old note.")
    (ws / "resource" / DAY).mkdir(parents=True)
    (ws / "resource" / DAY / "sighting.txt").write_text("An okapi was seen near the river.\n", encoding="utf-8")
    line = w.wait_for("1 note(s), 1 resource(s) changed")
    elapsed = time.monotonic() - t0
    assert "index 0 added, 1 changed, 0 deleted" in line and "resources 1 added" in line, line
    assert elapsed < 10, elapsed
    for word, path in (("narwhal", f"memory/{DAY}/old.md"), ("okapi", f"memory/{DAY}/sighting.md")):
        code, out, err = mem("-w", ws, "search", word, "--no-sync")
        assert code == 0 and path in out, (word, out, err)
    code, log = w.stop(signal.SIGTERM)
    assert code == 0, log
    assert log.rstrip().endswith("stopped")
    assert "Traceback" not in log


def test_ctrl_c_exits_130(ws, watcher):
    w = watcher("--interval", "0.2")
    w.wait_for("catch-up")
    code, log = w.stop(signal.SIGINT)
    assert code == 130, log
    assert "Traceback" not in log


def test_a_bad_interval_is_a_clean_failure(ws, run_mem, clean_failure):
    assert "--interval" in clean_failure(run_mem("-w", ws, "watch", "--interval", "0"), 2)


@pytest.fixture
def in_process(ws, open_ws):
    """watch.run in a thread with short timings; yields (log lines, stop)."""
    from memcli.jobs import watch

    lines: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watch.run,
        daemon=True,
        kwargs={
            "ws": open_ws(ws),
            "interval": 0.05,
            "stop": stop,
            "log": lines.append,
            "debounce": 0.2,
            "retry_first": 0.3,
        },
    )
    thread.start()
    yield lines, stop
    stop.set()
    thread.join(timeout=DEADLINE)
    assert not thread.is_alive()


def test_the_notes_a_batch_writes_do_not_start_another_batch(ws, in_process):
    lines, _ = in_process
    until(lambda: len(lines) >= 2)
    (ws / "resource").mkdir()
    (ws / "resource" / "a.txt").write_text("Alpha.\n", encoding="utf-8")
    until(lambda: len(lines) >= 3)
    assert "0 note(s), 1 resource(s) changed" in lines[2] and "2 note file(s) written" in lines[2]
    time.sleep(1.0)
    assert len(lines) == 3, lines


def test_a_busy_index_is_retried_later(ws, in_process, note, monkeypatch):
    from memcli.jobs import watch

    lines, _ = in_process
    until(lambda: len(lines) >= 2)
    monkeypatch.setattr(watch, "INDEX_WAIT", 0.1)  # how long a batch waits for the lock
    with Lock(ws / "mem_metadata/locks/index.lock", "test"):
        note(ws, f"memory/{DAY}/n.md", "# N\n\nA quetzal.\n", name="n", description="N.")
        until(lambda: any("busy:" in line for line in lines))
    line = until(lambda: next((x for x in lines if "index 1 added" in x), None))
    assert "1 note(s), 0 resource(s) changed" in line
