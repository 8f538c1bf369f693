"""Shared fixtures: a temporary workspace per test, a pinned environment, the real CLI.

Every test runs with MEM_* variables and provider keys removed, HOME pointing at an
empty temporary folder (so `~/.mem/workspace` never leaks in), NO_COLOR=1,
COLUMNS=100 and TZ=UTC. The search tests are keyword-only (BM25), so the embedding
backend is pinned to `none`; a test that needs another value overrides it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from memtest import PINNED, assert_clean_failure

REPO = Path(__file__).resolve().parent.parent
PROVIDER_KEYS = ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "GEMINI_API_KEY", "VOYAGE_API_KEY")


@pytest.fixture(autouse=True)
def pinned_env(tmp_path, monkeypatch):
    """The environment every test sees, in-process and in subprocesses."""
    for var in list(os.environ):
        # OPENCLAW_*/CLAWDBOT_*: a developer's OpenClaw install must not leak into the workspace config
        if var.startswith(("MEM_", "OPENCLAW_", "CLAWDBOT_")) or var in PROVIDER_KEYS:
            monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, value in PINNED.items():
        monkeypatch.setenv(var, value)
    return home


@pytest.fixture
def ws(tmp_path) -> Path:
    """An empty workspace folder (no mem.yaml: used with -w, as a QwenPaw workspace would be)."""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "digest").mkdir()
    return root


def write_note(root: Path, rel: str, body: str = "", *, dedent: bool = True, **front_matter) -> Path:
    """Write a Markdown note at `root/rel`; keyword arguments become its frontmatter."""
    path = Path(root) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = textwrap.dedent(body) if dedent else body
    if front_matter:
        import yaml

        head = yaml.safe_dump(front_matter, allow_unicode=True, sort_keys=True, width=100000)
        text = f"---\n{head}---\n{text}"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def note():
    return write_note


def _run(args, input=None, env=None, cwd=None, timeout=60):
    full_env = dict(os.environ)
    for var, value in (env or {}).items():
        if value is None:
            full_env.pop(var, None)
        else:
            full_env[var] = value
    if isinstance(input, str):
        input = input.encode("utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "memcli", *map(str, args)],
        input=input,
        env=full_env,
        cwd=str(cwd) if cwd else None,
        capture_output=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


@pytest.fixture
def run_mem(tmp_path):
    """run_mem(*args, input=None, env=None, cwd=None) -> (returncode, stdout, stderr).

    Runs the real CLI (`python -m memcli`) in a subprocess. `env` adds variables to the
    pinned environment (a value of None removes one); cwd defaults to the test's
    temporary folder, which holds no workspace marker.
    """

    def run(*args, input=None, env=None, cwd=None, timeout=60):
        return _run(args, input=input, env=env, cwd=cwd or tmp_path, timeout=timeout)

    return run


@pytest.fixture
def clean_failure():
    return assert_clean_failure


def open_workspace(root: Path):
    """The workspace as the CLI would open it with `-w root` (in-process, same environment)."""
    from memcli.vault.workspace import open_workspace as _open

    return _open(Path(root).resolve(), dict(os.environ))


def index_workspace(root: Path, *, full: bool = False):
    """Bring the index of `root` up to date in-process; returns the sync report."""
    from memcli.index import sync

    return sync.sync(open_workspace(root), full=full)


@pytest.fixture
def index():
    return index_workspace


@pytest.fixture
def open_ws():
    return open_workspace


@pytest.fixture
def mem(capsys, monkeypatch, tmp_path):
    """mem(*args, env=None, cwd=None) -> (returncode, stdout, stderr), in-process.

    The same entry path as the console script (fast path, else the typer app), for
    tests about behaviour rather than process-level streams; run_mem covers those.
    """
    from memcli.cli import fast
    from memcli.cli.app import run as app_run

    def run(*args, env=None, cwd=None):
        argv = [str(a) for a in args]
        with monkeypatch.context() as m:
            for var, value in (env or {}).items():
                if value is None:
                    m.delenv(var, raising=False)
                else:
                    m.setenv(var, value)
            m.chdir(cwd or tmp_path)
            capsys.readouterr()
            try:
                code = fast.run(argv)
                if code is None:
                    code = app_run(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            out, err = capsys.readouterr()
        return code, out, err

    return run
