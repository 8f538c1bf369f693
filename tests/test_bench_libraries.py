"""bench/libraries.py: mem's hand-written parts measured beside the libraries that could replace
them; it runs with none of those libraries installed and says what it skipped."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_runs_without_the_candidates_and_measures_mem_s_own_parts():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "libraries.py"), "--runs", "1", "--only", "json5", "--only", "config"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    json5 = out["json5"]
    assert json5["inputs"] >= 30  # the JSON5 texts of tests/test_json5.py and tests/test_openclaw.py
    assert json5["mem"]["deep_100k"] == "JSON5Error" and json5["mem"]["1mb_ms"] > 0
    assert out["config"]["mem"]["import_ms"] > 0 and out["config"]["mem"]["build_ms"] > 0
    for name in ("json5", "pyjson5"):  # present with its figures, or left out
        if importlib.util.find_spec(name) is None:
            assert name not in json5
        else:
            assert json5[name]["agree"] + json5[name]["differ"] == json5["inputs"]
