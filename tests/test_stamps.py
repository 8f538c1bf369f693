"""memcli.watch.stamps: folder and file stamps, and the clock-tick ("racy") cases they guard."""

from __future__ import annotations

import os
import time

from memcli.watch import stamps

OLD = 1_600_000_000_000_000_000  # long before any racy window


def _stat(path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_mtime_ns, st.st_size


def test_an_old_stamp_holds_until_a_file_or_folder_moves(tmp_path):
    note = tmp_path / "a.md"
    note.write_text("alpha\n", encoding="utf-8")
    os.utime(note, ns=(OLD, OLD))
    os.utime(tmp_path, ns=(OLD, OLD))
    rec = stamps.take(
        {str(note): (_stat(note), ""), str(tmp_path / "gone.md"): (None, "")},
        {str(tmp_path): OLD},
        time.time_ns() - stamps.RACY_NS,
    )
    assert rec is not None and stamps.unchanged(rec)
    assert len(rec["files"][str(note)]) == 2  # not racy: no hash kept
    (tmp_path / "gone.md").write_text("back\n", encoding="utf-8")  # an absent file that appears
    assert not stamps.unchanged(rec)


def test_a_racy_file_is_compared_by_its_hash(tmp_path):
    """A file stamped within the clock tick can change again without its (mtime, size) moving:
    its content hash is kept and compared."""
    note = tmp_path / "a.md"
    note.write_text("alpha\n", encoding="utf-8")
    st = _stat(note)
    import hashlib

    sha = hashlib.sha256(note.read_bytes()).hexdigest()
    assert stamps.take({str(note): (st, "")}, {}, time.time_ns() - stamps.RACY_NS) is None  # not read: no stamp
    rec = stamps.take({str(note): (st, sha)}, {}, time.time_ns() - stamps.RACY_NS)
    assert rec is not None and stamps.unchanged(rec)
    note.write_text("omega\n", encoding="utf-8")  # same size
    os.utime(note, ns=(st[0], st[0]))  # and the same mtime, as within one clock tick
    assert _stat(note) == st and not stamps.unchanged(rec)


def test_a_racy_folder_is_compared_by_its_names(tmp_path):
    (tmp_path / "a.md").write_text("a\n", encoding="utf-8")
    mtime = os.lstat(tmp_path).st_mtime_ns
    rec = stamps.take({}, {str(tmp_path): mtime}, time.time_ns() - stamps.RACY_NS)
    assert len(rec["dirs"][str(tmp_path)]) == 2 and stamps.unchanged(rec)
    os.rename(tmp_path / "a.md", tmp_path / "b.md")
    os.utime(tmp_path, ns=(mtime, mtime))  # the rename within the same tick
    assert not stamps.unchanged(rec)
