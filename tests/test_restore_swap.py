"""memcli.jobs.backup.restoring.swap and swap_state, with the atomic exchange and without it."""

from __future__ import annotations

import os

import pytest

from memcli.jobs.backup import restoring
from memcli.vault import atomic
from memcli.vault.workspace import open_workspace


def _layout(root):
    (root / "digest").mkdir(parents=True)
    (root / "digest/a.md").write_text("old")
    (root / "gone").mkdir()
    (root / "gone/x.md").write_text("x")  # only the workspace has it: moved out
    staging = root / ".mem-restore-t"
    (staging / "new/digest").mkdir(parents=True)
    (staging / "new/digest/a.md").write_text("new")
    (staging / "new/fresh").mkdir()
    (staging / "new/fresh/y.md").write_text("y")  # only the backup has it: moved in
    return staging


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_swap_puts_every_slot_in_place_and_health_reads_it_complete(tmp_path, monkeypatch, exchange):
    root = tmp_path / "ws"
    staging = _layout(root)
    if not exchange:
        monkeypatch.setattr(atomic, "exchange", lambda a, b: False)  # a filesystem without it
    ws = open_workspace(root, {"HOME": str(tmp_path), "MEM_EMBEDDING_BACKEND": "none"})
    assert restoring.swap_state(staging) == "none"
    restoring.swap(ws, staging, ["digest", "fresh", "gone"])
    assert (root / "digest/a.md").read_text() == "new" and (root / "fresh/y.md").read_text() == "y"
    assert not (root / "gone").exists()
    assert (staging / "old/digest/a.md").read_text() == "old" and (staging / "old/gone/x.md").exists()
    assert restoring.swap_state(staging) == "complete"


def test_a_kill_between_the_exchange_and_its_bookkeeping_reads_as_done(tmp_path):
    """After the exchange the staged folder is in place but its replaced one is still in new/:
    the workspace holds the restored folder, which the staged inode in the mark tells."""
    root = tmp_path / "ws"
    staging = _layout(root)
    ws = open_workspace(root, {"HOME": str(tmp_path), "MEM_EMBEDDING_BACKEND": "none"})
    restoring.swap(ws, staging, ["digest"])
    os.rename(staging / "old/digest", staging / "new/digest")  # as if killed right after the exchange
    assert (root / "digest/a.md").read_text() == "new"
    assert restoring.swap_state(staging) == "complete"
    atomic.exchange(staging / "new/digest", root / "digest")  # as if killed before it
    assert (root / "digest/a.md").read_text() == "old"
    assert restoring.swap_state(staging) == "none"


def test_a_mark_of_the_earlier_format_is_still_read(tmp_path):
    """Earlier versions wrote `slot<TAB>flags` (no inode) and moved with two renames."""
    staging = tmp_path / ".mem-restore-old"
    (staging / "old/digest").mkdir(parents=True)  # moved out, not yet in: half done
    (staging / "new/digest").mkdir(parents=True)
    (staging / restoring.SWAP_MARK).write_text("digest\t11\n")
    assert restoring.swap_state(staging) == "partial"
    (staging / "new/digest").rmdir()
    assert restoring.swap_state(staging) == "complete"
