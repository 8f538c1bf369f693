"""bench/gen_vault_fast.py writes exactly the vault ../shared/tools/gen_vault.py writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FAST = REPO / "bench" / "gen_vault_fast.py"
GENERATOR = REPO.parent / "shared" / "tools" / "gen_vault.py"


@pytest.mark.skipif(not GENERATOR.is_file(), reason="the shared vault generator is not on this machine")
def test_the_fast_generator_writes_the_same_vault(tmp_path):
    for tool, out in ((GENERATOR, tmp_path / "slow"), (FAST, tmp_path / "fast")):
        subprocess.run(
            [sys.executable, str(tool), str(out), "--notes", "120", "--digest", "9", "--seed", "11"],
            check=True,
            capture_output=True,
        )
    slow = {p.relative_to(tmp_path / "slow"): p.read_bytes() for p in (tmp_path / "slow").rglob("*") if p.is_file()}
    fast = {p.relative_to(tmp_path / "fast"): p.read_bytes() for p in (tmp_path / "fast").rglob("*") if p.is_file()}
    assert len(slow) == 130 and slow == fast


def test_dream_eval_counts_an_update_replaced_in_turn_as_recorded():
    """A -> B -> C: A and B under History, C true now. B's update of A was recorded; a node that
    keeps B in the history with A's value still current was not."""
    sys.path.insert(0, str(REPO))
    from bench.dream_eval import recorded

    node = (
        "# Pool\n\n- The pool is 35 connections.\n\n## History\n"
        "- Previously: The pool was raised from 20 to 50 connections, until 2026-03-09\n"
        "- Previously: The pool is 20 connections, until 2026-03-06\n"
    )
    a, b, c = {"the pool is 20 connections"}, {"the pool was raised from 20 to 50 connections"}, {"the pool is 35"}
    assert recorded(node, a, b, later=c)  # B in history, under C that is true now
    assert not recorded(node, a, b)  # with no later value, B had to be true now
    assert recorded(node, b, c)
    stale = node.replace("- The pool is 35 connections.", "- The pool is 20 connections.")
    assert not recorded(stale, a, b, later=c)  # no value of the chain is true now
