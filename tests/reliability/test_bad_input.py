"""Bad-input campaign: seeded hostile inputs (bad_inputs.py) against the real CLI in subprocesses.

For every case, whatever mem decides to answer:
- the exit code is 0 or a documented one (1, 2, 3, 4, 5, 75, 130) and the process ends
  (a hang past the timeout fails the case);
- stderr has no traceback and no "internal error"; a failure says so in one `mem: error:` line;
- a failed command leaves every Markdown file byte-identical (and adds none);
- nothing outside the workspace is shown (a planted secret never reaches stdout) or written;
- `--json` output on success is one JSON document.

50 cases in the short run, 1,000 in the long one (`make test-long`). RELIABILITY_SEED replays
a run; a failing case is printed with its seed and index.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import bad_inputs
import pytest
import sample_vault
from reliability_kit import (
    copy_workspace,
    env_with,
    markdown,
    mem_cmd,
    one_clear_line,
    pinned_env,
    rng,
    seed,
)

SEED = seed(20260629)
TIMEOUT = 90  # seconds: the largest inputs take a few; a hang is a failure
WORKERS = 3


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    with pinned_env(folder / "home"):
        yield {"folder": folder, "vault": sample_vault.build(folder / "vault", notes_per_day=4)}


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def run_case(base, case: bad_inputs.Case, index: int) -> str | None:
    """Run one case; returns why it failed, or None."""
    folder = base["folder"] / f"case-{index:04d}"
    ws = copy_workspace(base["vault"]["root"], folder / "ws")
    where = {
        "ws": ws,
        "in": folder / "in",
        "out": folder / "out",
        "bk": folder / "bk",
        "outside": folder / "outside",
        "backup": base["vault"]["backup"],
    }
    for name in ("in", "out", "bk", "outside"):
        where[name].mkdir(parents=True, exist_ok=True)
    bad_inputs.place(case, where)
    if case.setup:
        case.setup(ws, where)
    before = markdown(ws)
    outside = _tree(where["outside"])
    args = [bad_inputs.fill(a, where) for a in case.args]
    env = env_with({"HOME": str(folder / "home"), **bad_inputs.env_fill(case.env, where)})
    try:
        proc = subprocess.run(
            mem_cmd(args),
            input=case.stdin,
            env=env,
            cwd=str(folder),
            capture_output=True,
            timeout=TIMEOUT,
            stdin=None if case.stdin is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"no answer within {TIMEOUT}s"
    code, out = proc.returncode, proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    problem = one_clear_line(code, err)
    if problem:
        return f"{problem} (exit {code}): {err.strip()[-300:]!r}"
    if code != 0:
        after = markdown(ws)
        changed = sorted(p for p in set(after) | set(before) if after.get(p) != before.get(p))
        if changed:
            return f"exit {code} but Markdown changed: {changed[:5]}"
        if out.strip() and "--json" not in args:
            pass  # a partial report before a failure is allowed on stdout; errors are on stderr
    shown = out + err
    for a in args:  # the query itself may be echoed (`"query": ...`): only file text counts
        shown = shown.replace(a, "")
    if bad_inputs.SECRET in shown:
        return "a file outside the workspace was shown"
    if _tree(where["outside"]) != outside:
        return "a file outside the workspace was written"
    if any(p.name == "evil.md" for p in folder.rglob("evil.md")):
        return "a backup entry escaped its target"
    if code == 0 and "--json" in args:
        try:
            json.loads(out)
        except ValueError:
            return f"--json printed no single JSON document: {out[:200]!r}"
    shutil.rmtree(folder, ignore_errors=True)
    return None


def campaign(base, n: int, salt: str) -> None:
    r = rng(SEED, "fuzz", salt)
    cases = bad_inputs.cases(r, n)
    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda ic: run_case(base, ic[1], ic[0]), enumerate(cases)))
    failures = [f"#{i} {c.label()}\n    -> {why}" for i, (c, why) in enumerate(zip(cases, results)) if why]
    kinds: dict[str, int] = {}
    for c in cases:
        kinds[c.kind.split(":")[0]] = kinds.get(c.kind.split(":")[0], 0) + 1
    print(f"\nbad-input campaign {salt}: {len(cases)} cases, {len(failures)} failed, seed {SEED}, by kind {kinds}")
    assert not failures, f"{len(failures)} of {len(cases)} cases failed (seed {SEED}):\n" + "\n".join(failures[:30])


def test_bad_input_campaign_short(base):
    campaign(base, 50, "short")


@pytest.mark.long
def test_bad_input_campaign_long(base):
    campaign(base, 1000, "long")
