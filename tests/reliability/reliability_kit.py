"""Shared pieces of the reliability campaigns: running mem, reading a workspace, the oracles.

Campaign code lives in the test files; this module holds what they share. It is
imported by name (tests/reliability is on sys.path while its tests run), never
through `conftest`, which another folder's conftest.py can shadow in a full run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from memtest import PINNED

HERE = Path(__file__).resolve().parent
KILLPOINT = HERE / "killpoint.py"
TEMP_MARK = ".mem-tmp-"
DOCUMENTED_CODES = {0, 1, 2, 3, 4, 5, 75, 130}


def seed(default: int) -> int:
    """The campaign seed: RELIABILITY_SEED when set (to replay a failure), else `default`."""
    return int(os.environ.get("RELIABILITY_SEED") or default)


def scale(short: int, long: int, request) -> int:
    """`long` when the test runs as part of the long campaign (-m long), else `short`."""
    return long if request.node.get_closest_marker("long") else short


# Running mem -----------------------------------------------------------------------------------


def mem_cmd(args, *, killpoint: bool = False) -> list[str]:
    head = [sys.executable, str(KILLPOINT)] if killpoint else [sys.executable, "-m", "memcli"]
    return head + [str(a) for a in args]


def env_with(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    for k, v in (extra or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def run(
    args,
    *,
    input: bytes | str | None = None,
    env: dict | None = None,
    cwd=None,
    timeout: float = 120,
    killpoint: bool = False,
):
    """The real CLI in a subprocess -> (code, stdout, stderr) (streams decoded leniently)."""
    if isinstance(input, str):
        input = input.encode("utf-8")
    proc = subprocess.run(
        mem_cmd(args, killpoint=killpoint),
        input=input,
        env=env_with(env),
        cwd=str(cwd) if cwd else None,
        capture_output=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def cli(*args, env: dict | None = None):
    """mem in-process (the console script's path: fast path, else typer) -> (code, stdout, stderr).

    Used for the checks after a kill, where a subprocess per check would cost most of the
    campaign's time; anything whose streams or exit status are under test runs in `run`."""
    from memcli.cli import fast
    from memcli.cli.app import run as app_run

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update({k: str(v) for k, v in (env or {}).items()})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = fast.run(argv)
                if code is None:
                    code = app_run(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return code, out.getvalue(), err.getvalue()


def ok(result, what: str = "") -> str:
    code, out, err = result
    assert code == 0, f"{what}: exit {code}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    return out


# Reading a workspace ---------------------------------------------------------------------------


def markdown(root: Path) -> dict[str, bytes]:
    """Every Markdown file of the workspace (not derived state, not dot-folders) -> its bytes."""
    root = Path(root)
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not (rel_dir == "." and d == "mem_metadata")]
        for name in filenames:
            if name.endswith(".md") and not name.startswith("."):
                p = Path(dirpath) / name
                if not p.is_symlink():
                    out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def temp_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in Path(root).rglob(f"{TEMP_MARK}*"))


def watched(root: Path) -> list[str]:
    """The notes mem indexes, as the workspace itself lists them."""
    from memcli.vault.workspace import open_workspace

    ws = open_workspace(Path(root).resolve(), dict(os.environ))
    return sorted(rel for rel, _ in ws.iter_watched())


def session_records(root: Path) -> dict[str, list[dict]]:
    """Every session log, read as mem reads it (a torn last line is dropped, anything else fails)."""
    from memcli.vault import session

    folder = Path(root) / "mem_session" / "dialog"
    return {p.name: session.read_log(p) for p in sorted(folder.glob("*.jsonl"))} if folder.is_dir() else {}


def copy_workspace(src: Path, dst: Path, *, with_metadata: bool = True) -> Path:
    ignore = None if with_metadata else shutil.ignore_patterns("mem_metadata")
    shutil.copytree(src, dst, symlinks=True, ignore=ignore)
    return dst


# Oracles ---------------------------------------------------------------------------------------


def old_or_new(after: dict[str, bytes], old: dict[str, bytes], new: dict[str, bytes]) -> list[str]:
    """Files that are neither their old nor their new version (absence counts as a version)."""
    bad = []
    for rel in sorted(set(after) | set(old) | set(new)):
        got = after.get(rel)
        if got != old.get(rel) and got != new.get(rel):
            state = "missing" if got is None else f"{len(got)} bytes"
            bad.append(f"{rel}: {state}, neither old ({_size(old.get(rel))}) nor new ({_size(new.get(rel))})")
    return bad


def _size(data: bytes | None) -> str:
    return "absent" if data is None else f"{len(data)} bytes"


def hits(root: Path, query: str, limit: int = 20) -> list[tuple]:
    """Search results as comparable tuples (order-free: equal scores may tie either way)."""
    code, out, err = cli("-w", root, "search", query, "--json", "--limit", limit, "--mode", "keyword")
    assert code == 0, f"search {query!r} failed: {code} {err}"
    data = json.loads(out)
    return sorted((h["path"], h["start_line"], h["end_line"], h["text"], round(h["score"], 3)) for h in data["results"])


def expected_hits(root: Path, scratch: Path, queries: list[str]) -> dict[str, list[tuple]]:
    """What a clean index of the same Markdown answers: copy without mem_metadata, rebuild, search."""
    if scratch.exists():
        shutil.rmtree(scratch)
    copy_workspace(root, scratch, with_metadata=False)
    ok(cli("-w", scratch, "reindex", "--full"), "clean rebuild")
    return {q: hits(scratch, q) for q in queries}


def one_clear_line(code: int, err: str) -> str | None:
    """Why stderr is not what a user should see, or None. Failures: exactly one `mem: error:` line
    (a typer usage error, exit 2, prints its usage block and one `Error:` line). Never a traceback
    or an internal error, whatever the exit code."""
    if "Traceback" in err:
        return "traceback on stderr"
    if "internal error" in err:
        return "internal error on stderr"
    if code not in DOCUMENTED_CODES:
        return f"undocumented exit code {code}"
    if code == 0:
        return None
    lines = [x for x in err.splitlines() if x.strip()]
    if code == 5 and not any(x.startswith("mem: error:") for x in lines):
        return None  # `mem health` found the workspace unhealthy: its report is on stdout
    errors = [x for x in lines if x.startswith("mem: error:")]
    if len(errors) == 1 and all(x.startswith("mem: ") for x in lines):
        return None
    if (
        code == 2
        and any(x.lstrip("│ ").startswith("Error:") or "Error" in x for x in lines)
        and lines[0].startswith("Usage:")
    ):
        return None
    return f"stderr is not one clear error line: {err[-500:]!r}"


def wait_all(procs, timeout: float):
    """Wait for every Popen; returns [(code, stdout, stderr)] in order; kills stragglers."""
    deadline = time.monotonic() + timeout
    out = []
    for p in procs:
        try:
            o, e = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            o, e = p.communicate()
            out.append((None, o.decode("utf-8", "replace"), e.decode("utf-8", "replace") + "\n(timed out)"))
            continue
        out.append((p.returncode, o.decode("utf-8", "replace"), e.decode("utf-8", "replace")))
    return out


def rng(seed_value: int, *salt) -> random.Random:
    return random.Random(f"{seed_value}:{':'.join(map(str, salt))}")


@contextlib.contextmanager
def pinned_env(home: Path):
    """The environment tests/conftest.py pins per test, for module-scoped fixtures built before it."""
    import pytest

    with pytest.MonkeyPatch.context() as m:
        for var in list(os.environ):
            if var.startswith("MEM_") or var.endswith("_API_KEY"):
                m.delenv(var, raising=False)
        Path(home).mkdir(parents=True, exist_ok=True)
        m.setenv("HOME", str(home))
        for var, value in PINNED.items():
            m.setenv(var, value)
        yield


def rerun_differences(name: str, again: dict[str, bytes], new: dict[str, bytes]) -> list[str]:
    """Files where a rerun after an interrupted job differs from an uninterrupted run.

    Exact, except for dream: a dream rerun plans against the nodes the killed run had
    already written, so a node may gain a `Related:` link to them. Additive is right
    there (docs/architecture.md, Jobs: updates are additive): every line of the uninterrupted run's file
    must still be in it, and no file may be missing or extra."""
    out = []
    for rel in sorted(set(again) | set(new)):
        a, n = again.get(rel), new.get(rel)
        if a == n:
            continue
        if (
            name == "dream"
            and a is not None
            and n is not None
            and set(n.decode().splitlines()) <= set(a.decode().splitlines())
        ):
            continue
        out.append(rel)
    return out
