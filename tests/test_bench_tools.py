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
