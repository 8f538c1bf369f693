"""`mem reindex` off a terminal: a plain progress line on stderr at least every
MEM_PROGRESS_SECONDS (10 by default), never a bar, so a long run in a log or a pipe is never
silent. The real CLI in a subprocess, stderr a pipe read line by line as it comes, against the
bag-of-words embedding server of tests/test_vectors.py made slow on purpose.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "providers"))
import fake_provider as fp
from test_vectors import SECRET, BowServer, write_config, write_notes

LINE = re.compile(r"Indexing: [A-Z][a-z]+( \([a-z ]+\)| [a-z]+)* [\d,]+(/[\d,]+ \(\d+%\))?, \d+ s")


def test_a_long_reindex_off_a_terminal_prints_a_line_every_interval(ws, tmp_path):
    server = BowServer()
    try:
        # eight requests of two passages each, 0.4 s apiece: over three seconds of embedding
        write_config(ws, server.base_url, max_batch_size=2)
        write_notes(ws, {f"n{i}": f"Note {i} about the heron and the pond number {i}." for i in range(16)})
        server.state.script(*[fp.Reply(delay=0.4)] * 8)
        env = {k: v for k, v in os.environ.items() if k != "MEM_EMBEDDING_BACKEND"}
        env["MEM_PROGRESS_SECONDS"] = "0.5"
        proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", str(ws), "reindex"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen = []  # (arrival, line)
        for line in proc.stderr:
            seen.append((time.monotonic(), line))
        end = time.monotonic()
        out = proc.stdout.read()
        assert proc.wait(timeout=60) == 0, "".join(line for _, line in seen)
    finally:
        server.stop()
    lines = [line.rstrip("\n") for _, line in seen]
    assert SECRET not in out + "".join(lines)
    assert len(lines) >= 4, lines
    assert all(LINE.fullmatch(line) for line in lines), lines  # plain lines: no bar, no \r, no colour
    assert any(line.startswith("Indexing: Embedding ") and "/16 (" in line for line in lines), lines
    times = [t for t, _ in seen] + [end]
    gaps = [b - a for a, b in pairwise(times)]
    assert max(gaps) < 0.5 + 1.0, gaps  # every interval, give or take a busy machine
    assert out.startswith("Rebuilt 16 files, 16 chunks")


def test_a_short_reindex_off_a_terminal_prints_nothing_on_stderr(run_mem, ws):
    write_notes(ws, {"n": "A short note."})
    assert run_mem("-w", ws, "reindex")[2] == ""  # well under the default ten seconds
