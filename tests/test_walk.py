"""The walk of the watched files on two cores (memcli.watch.walk): the same answer as one
process gives, whatever the child does."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memcli.watch import walk

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the split walk needs fork")


@pytest.fixture(autouse=True)
def forking(monkeypatch):
    """Fork here even with threads other tests left running (the child only walks and exits);
    the CLI run below forks under the real rule."""
    monkeypatch.setattr(walk, "_can_fork", lambda: True)


@pytest.fixture
def spawned(monkeypatch) -> list[int]:
    """The pids of the walk's children, as they are forked."""
    pids = []

    class Spy(walk._Child):
        def __init__(self, fn):
            super().__init__(fn)
            pids.append(self.pid)

    monkeypatch.setattr(walk, "_Child", Spy)
    return pids


def write(path, text="x\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def vault(ws, tmp_path):
    """Day folders, a flat folder of day files, digest nodes, dot entries, a symlink, a
    non-Markdown file, an extra path inside daily_dir (its files counted once) and one outside."""
    for day in range(12):
        for i in range(9):
            write(ws / "memory" / f"2026-05-{day + 1:02d}" / f"n{i}.md", f"note {day} {i}\n")
    for i in range(40):
        write(ws / "memory" / f"2026-06-{i % 28 + 1:02d}-{i}.md", f"flat {i}\n")
    for kind in ("personal", "procedure", "wiki"):
        for i in range(15):
            write(ws / "digest" / kind / f"{kind}-{i}.md", f"{kind} {i}\n")
    write(ws / "memory" / ".obsidian" / "hidden.md")
    write(ws / "memory" / "2026-05-01" / ".tmp.md")
    write(ws / "memory" / "2026-05-01" / "photo.png")
    os.symlink(ws / "digest" / "wiki" / "wiki-0.md", ws / "memory" / "2026-05-02" / "link.md")
    write(ws / "MEMORY.md", "# Memory\n")
    write(tmp_path / "team" / "a" / "t.md")
    write(tmp_path / "team" / "b.md")
    (ws / "mem.yaml").write_text(json.dumps({"extra_paths": ["memory/2026-05-03", "../team"]}), encoding="utf-8")
    return ws


def test_split_walk_gives_what_one_process_gives(vault, open_ws, spawned):
    ws = open_ws(vault)
    dirs_one, dirs_two = {}, {}
    one = list(ws.iter_watched(dirs_one))
    two = list(ws.iter_watched(dirs_two, split=True))
    assert spawned and spawned[0] > 0, "the walk did not fork"
    assert len(two) == len({p for p, _ in two}), "a file given twice"
    assert dict(two) == dict(one) and len(one) == 12 * 9 + 40 + 45 + 1 + 2
    assert dirs_two == dirs_one
    assert "memory/2026-05-02/link.md" not in dict(one) and "memory/.obsidian/hidden.md" not in dict(one)
    st = os.stat(vault / "memory" / "2026-05-01" / "n0.md")
    assert dict(two)["memory/2026-05-01/n0.md"] == (st.st_mtime_ns, st.st_size)


def test_a_child_that_fails_leaves_its_half_to_the_parent(vault, open_ws, monkeypatch):
    ws = open_ws(vault)
    one = dict(ws.iter_watched())

    def broken(*args):  # runs in the forked child, which then exits 1
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(walk.marshal, "dumps", broken)
    assert dict(ws.iter_watched(split=True)) == one


def test_a_child_that_listed_otherwise_leaves_the_whole_walk_to_the_parent(vault, open_ws, monkeypatch):
    """Folders are shared out by their position in a listing: a folder made or removed
    between the two processes' listings would shift them, so the parent walks it all again
    (here the child is made to report another listing)."""
    ws = open_ws(vault)
    dirs_one = {}
    one = list(ws.iter_watched(dirs_one))
    real = walk.walk

    def listing_otherwise(*args, **kwargs):  # the child lists another tree, and finds nothing in it
        half = args[5] if len(args) > 5 else kwargs.get("half")
        if half is not None and half.part == 1:
            half.listed.append(["a folder made in between"])
            return
        yield from real(*args, **kwargs)

    monkeypatch.setattr(walk, "walk", listing_otherwise)
    dirs_two = {}
    two = list(ws.iter_watched(dirs_two, split=True))
    assert len(two) == len({p for p, _ in two}), "a file given twice"
    assert dict(two) == dict(one) and dirs_two == dirs_one


def test_day_folders_are_walked_apart(vault, open_ws):
    """Each day folder below a watched root is walked whole by one of the two processes
    (stat-ing in the same folder side by side contends in the kernel); the files directly
    in the root are shared out by name."""
    ws = open_ws(vault)
    halves = [walk.Half(0), walk.Half(1)]
    got = [dict(ws._watched({}, h)) for h in halves]
    assert not got[0].keys() & got[1].keys() - {f"memory/2026-05-03/n{i}.md" for i in range(9)}
    days = [{p.rsplit("/", 1)[0] for p in g if p.startswith("memory/2026-05-")} for g in got]
    assert days[0] and days[1] and not days[0] & days[1] - {"memory/2026-05-03"}
    flat = [{p for p in g if p.startswith("memory/2026-06-")} for g in got]
    assert flat[0] and flat[1] and len(flat[0]) + len(flat[1]) == 40
    assert halves[0].listed == halves[1].listed


def test_an_abandoned_walk_leaves_no_child_behind(vault, open_ws, spawned):
    it = open_ws(vault).iter_watched(split=True)
    next(it)
    it.close()
    assert spawned and spawned[0] > 0
    with pytest.raises(ChildProcessError):  # reaped already
        os.waitpid(spawned[0], os.WNOHANG)


def test_reindex_of_a_split_walk_finds_an_edit_and_a_deletion(vault):
    """The CLI with the split threshold lowered so that this vault is split (the lowered
    value reaches the child too: it is forked from this process)."""
    code = (
        "import sys; from memcli.watch import walk; walk.SPLIT_MIN_FILES = 1; from memcli.cli.main import main; main()"
    )

    def reindex(*args):
        proc = subprocess.run(
            [sys.executable, "-c", code, "-w", str(vault), "reindex", "--json", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    assert reindex("--full")["files"] == 12 * 9 + 40 + 45 + 1 + 2
    edited = [f"memory/2026-05-{d:02d}/n{i}.md" for d in (4, 5) for i in range(9)]
    for rel in edited:
        with open(vault / rel, "a", encoding="utf-8") as f:
            f.write("one more line\n")
    os.unlink(vault / "digest" / "wiki" / "wiki-3.md")
    rep = reindex()
    assert sorted(rep["changed"]) == sorted(edited) and rep["deleted"] == ["digest/wiki/wiki-3.md"]
    assert not reindex()["changed"]


def test_the_file_record_mtime_is_the_float_os_stat_gives(vault, index, open_ws):
    from memcli.index import sync

    index(vault, full=True)
    snap = sync.open_snapshot(open_ws(vault))
    for i in range(snap.n_files):
        rec = snap.record(i)
        if not rec["path"].startswith("extra/"):
            assert rec["mtime"] == os.stat(vault / rec["path"]).st_mtime
    snap.close()


def test_both_halves_name_what_they_went_round_once(vault, open_ws, spawned):
    """Names that are not UTF-8 in day folders (each walked by one half), directly in the
    root (shared out by name) and a folder of such a name: the split walk names each once,
    as one process does, and gives the same files."""
    memory = os.fsencode(vault / "memory")
    bad = [memory + b"/2026-05-%02d/bad\xff%d.md" % (d, d) for d in range(1, 13)]
    bad += [memory + b"/flat\xfe%d.md" % i for i in range(6)]
    for path in bad:
        with open(path, "wb") as fh:
            fh.write(b"x\n")
    os.mkdir(memory + b"/folder\xfe")
    ws = open_ws(vault)
    one_problems, two_problems = [], []
    one = dict(ws.iter_watched(problems=one_problems))
    two = dict(ws.iter_watched(split=True, problems=two_problems))
    assert spawned and spawned[0] > 0, "the walk did not fork"
    assert two == one and len(one) == 12 * 9 + 40 + 45 + 1 + 2  # the rest, whole
    assert sorted(two_problems) == sorted(one_problems) and len(two_problems) == len(bad) + 1
    assert ("memory/2026-05-07/bad\\xff7.md", "file name is not valid UTF-8; rename it") in two_problems
    assert ("memory/folder\\xfe/", "folder name is not valid UTF-8; rename it") in two_problems
