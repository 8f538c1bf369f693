"""The change journal of a running watcher (memcli.watch.journal, memcli.watch.feed): a sync
that reads it finds exactly what a walk of every file would, and anything doubtful walks."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from memcli.index import quick, sync
from memcli.watch import feed, journal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")


def write(path, text="x\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def vault(ws):
    for day in range(4):
        for i in range(5):
            write(ws / "memory" / f"2026-05-{day + 1:02d}" / f"n{i}.md", f"note {day} {i}\n")
    for i in range(6):
        write(ws / "digest" / "wiki" / f"w{i}.md", f"wiki {i}\n")
    write(ws / "MEMORY.md", "# Memory\n")
    return ws


@pytest.fixture
def watching(vault, open_ws):
    """A feed on the vault (what `mem watch` runs), and the index its catch-up batch builds."""
    f, why = feed.Feed.start(open_ws(vault))
    assert f is not None and f.journaling, why
    sync.sync(open_ws(vault))
    yield f
    f.close()


@pytest.fixture
def no_walk(monkeypatch):
    """Fail any walk of the vault: a sync through the journal must not need one."""

    def refuse(*a, **k):
        raise AssertionError("walked every file")

    monkeypatch.setattr(sync, "scan", refuse)


def indexed(ws) -> dict:
    snap = sync.open_snapshot(ws)
    try:
        return snap.stats()
    finally:
        snap.close()


def test_an_edit_in_place_is_found_without_a_walk(vault, watching, open_ws, no_walk):
    ws = open_ws(vault)
    target = vault / "memory" / "2026-05-02" / "n3.md"
    folder_mtime = target.parent.stat().st_mtime_ns
    with target.open("a") as fh:
        fh.write("an okapi\n")
    assert target.parent.stat().st_mtime_ns == folder_mtime  # what no folder check can see
    rep = sync.sync(ws)
    assert rep.changed == ["memory/2026-05-02/n3.md"] and not rep.added and not rep.deleted
    assert sync.sync(ws).changes == 0  # the mark moved on: nothing is read twice
    mark = sync.open_snapshot(ws).header["watch"]
    assert mark["session"] == watching._writer.session


def test_random_changes_end_as_a_full_walk_finds_them(vault, watching, open_ws, monkeypatch):
    """Files created, appended, replaced, deleted and renamed; folders made, filled, moved
    and removed; dot files and non-Markdown beside them. After each round the index built
    from the journal holds exactly the stats a walk gives, and its quick record (what a
    search without a watcher checks) matches the folders as they are."""
    monkeypatch.setattr(quick, "QUICK_MIN_FILES", 3)  # the quick record is kept up to date too
    ws = open_ws(vault)
    sync.sync(ws, full=True)
    rng = random.Random(7)
    walked = sync.scan
    calls = []
    monkeypatch.setattr(sync, "scan", lambda *a, **k: calls.append(1) or walked(*a, **k))
    for round_ in range(25):
        files = sorted(p for p in vault.rglob("*.md") if "mem_metadata" not in p.parts)
        days = sorted(p for p in (vault / "memory").iterdir() if p.is_dir())
        for _ in range(rng.randint(1, 6)):
            op = rng.choice(["new", "append", "replace", "delete", "rename", "mkdir", "mvdir", "rmdir", "noise"])
            pick = rng.choice(files) if files else None
            if op == "new":
                write(rng.choice(days) / f"r{round_}-{rng.randint(0, 999)}.md", "new\n")
            elif op == "append" and pick and pick.exists():
                with pick.open("a") as fh:
                    fh.write("more\n")
            elif op == "replace" and pick and pick.exists():
                tmp = pick.with_name(".tmp-" + pick.name)
                tmp.write_text("replaced\n")
                os.replace(tmp, pick)
            elif op == "delete" and pick and pick.exists():
                pick.unlink()
            elif op == "rename" and pick and pick.exists():
                os.rename(pick, pick.with_name(f"moved-{round_}-{pick.name}"))
            elif op == "mkdir":
                d = vault / "memory" / f"2027-01-{round_ + 1:02d}"
                for i in range(3):
                    write(d / "sub" / f"s{i}.md", f"deep {i}\n")
            elif op == "mvdir" and len(days) > 1:
                src = rng.choice(days)
                if src.exists():
                    os.rename(src, vault / "memory" / f"{src.name}-moved{round_}")
            elif op == "rmdir" and len(days) > 2:
                victim = rng.choice(days)
                if victim.exists():
                    shutil.rmtree(victim)
            elif op == "noise":
                write(vault / "memory" / "2026-05-01" / ".hidden.md")
                write(vault / "memory" / "2026-05-01" / f"pic{round_}.png")
                write(vault / "mem_metadata" / "other" / "x.md")
        calls.clear()
        sync.sync(ws)
        assert not calls, f"round {round_} walked"
        assert indexed(ws) == dict(ws.iter_watched()), f"round {round_}"
        snap = sync.open_snapshot(ws)
        assert snap.header["quick"] and quick.unchanged(snap), f"round {round_}"
        snap.close()


def test_no_watcher_a_stale_session_or_another_one_means_a_walk(vault, open_ws, monkeypatch):
    ws = open_ws(vault)
    sync.sync(ws)
    assert journal.confirm(ws.metadata) is None  # nobody watches
    base = journal.folder(ws.metadata)
    (base / "cookies").mkdir(parents=True)
    (base / "lock").write_text("")
    (base / "session").write_text(json.dumps({"session": "1-dead"}))
    (base / "1-dead.journal").write_text("")
    assert journal.confirm(ws.metadata) is None  # a session file whose watcher is gone
    f, _ = feed.Feed.start(ws)
    try:
        assert not (base / "1-dead.journal").exists()  # the dead watcher's journal is cleared
        sync.sync(ws)  # walks once (the index's mark is of no session), then records this one
        first = sync.open_snapshot(ws).header["watch"]
        f._writer.restart()  # what lost events do
        walks = []
        walked = sync.scan
        monkeypatch.setattr(sync, "scan", lambda *a, **k: walks.append(1) or walked(*a, **k))
        (vault / "MEMORY.md").write_text("# Memory\n\nchanged\n")
        assert sync.sync(ws).changed == ["MEMORY.md"] and walks == [1]
        assert sync.open_snapshot(ws).header["watch"]["session"] != first["session"]
    finally:
        f.close()
    assert journal.confirm(ws.metadata) is None and not (base / "session").exists()


def test_an_unanswered_cookie_is_not_waited_for(vault, watching, open_ws, monkeypatch):
    monkeypatch.setattr(journal, "ANSWER_SECONDS", 0.05)
    watching._stop.set()  # the thread stops reading: nothing answers
    watching._thread.join()
    t0 = time.monotonic()
    assert journal.confirm(open_ws(vault).metadata) is None
    assert time.monotonic() - t0 < 1.0


def test_a_damaged_journal_means_a_walk(vault, watching, open_ws):
    ws = open_ws(vault)
    now = journal.confirm(ws.metadata)
    assert journal.since(ws.metadata, {"session": now.session, "offset": 0}, now) is not None
    assert journal.since(ws.metadata, {"session": now.session, "offset": now.offset + 1}, now) is None
    assert journal.since(ws.metadata, {"session": "other", "offset": 0}, now) is None
    assert journal.since(ws.metadata, None, now) is None
    watching._writer.append(b"f not json\n")
    later = journal.confirm(ws.metadata)
    assert journal.since(ws.metadata, {"session": now.session, "offset": now.offset}, later) is None


def test_a_search_sees_an_edit_in_place_at_once(vault, watching, open_ws, monkeypatch):
    """Without a watcher, a large vault's search trusts its folders and recent files
    (memcli.index.quick) and misses an old file edited in place; the journal does not."""
    from memcli.index import freshness

    monkeypatch.setattr(quick, "QUICK_MIN_FILES", 3)
    monkeypatch.setattr(quick, "HOT_FILES", 1)
    ws = open_ws(vault)
    old = vault / "digest" / "wiki" / "w0.md"
    os.utime(old, ns=(1, 1_000_000_000))  # long ago: not among the hot files
    sync.sync(ws, full=True)  # a walk: the quick record needs every folder's mtime
    write(vault / "memory" / "2026-05-09" / "new.md")  # a new folder, through the journal
    sync.sync(ws)
    snap = sync.open_snapshot(ws)
    assert snap.header.get("quick") and quick.unchanged(snap)  # the record the journal kept is right
    with old.open("a") as fh:
        fh.write("a narwhal\n")
    os.utime(old, ns=(1, 2_000_000_000))
    snap = freshness.fresh_snapshot(ws, [])
    assert snap.stats()["digest/wiki/w0.md"] == (2_000_000_000, old.stat().st_size)


def test_the_real_watcher_journals_for_the_real_cli(vault, run_mem):
    """`mem watch` in a process of its own; `mem reindex` in another finds an edit in
    place through the journal (its mark moves past the cookie it wrote)."""
    env = dict(os.environ, MEM_EMBEDDING_BACKEND="none")
    assert run_mem("-w", vault, "reindex", env={"MEM_EMBEDDING_BACKEND": "none"})[0] == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(vault), "watch"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert "change journal" in proc.stdout.readline()
        assert "catch-up" in proc.stdout.readline()
        with (vault / "memory" / "2026-05-03" / "n1.md").open("a") as fh:
            fh.write("a quokka\n")
        code, out, err = run_mem("-w", vault, "reindex", "--json", env={"MEM_EMBEDDING_BACKEND": "none"})
        assert code == 0 and json.loads(out)["changed"] == ["memory/2026-05-03/n1.md"], err
        header = json.loads(sync.snapshot_path(type("W", (), {"metadata": vault / "mem_metadata"})).read_text())
        journal_text = next((vault / "mem_metadata" / "watch").glob("*.journal")).read_text()
        upto = journal_text.encode()[: header["watch"]["offset"]].decode()
        assert upto.splitlines()[-1].startswith('c "')  # the mark: just past the reindex's cookie
        assert '"memory/2026-05-03/n1.md"' in journal_text
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert not (vault / "mem_metadata" / "watch" / "session").exists()


@pytest.fixture
def loop(vault, open_ws):
    """loop() starts watch.run on the vault in a thread; loop.until(check) waits for a log line."""
    import threading

    from memcli.jobs import watch

    lines: list[str] = []
    stop = threading.Event()
    threads = []
    deadline = time.monotonic() + 30

    def start():
        thread = threading.Thread(
            target=watch.run,
            daemon=True,
            kwargs={"ws": open_ws(vault), "interval": 0.05, "stop": stop, "log": lines.append, "debounce": 0.1},
        )
        thread.start()
        threads.append(thread)
        return lines

    def until(check) -> None:
        while not check(lines) and time.monotonic() < deadline:
            time.sleep(0.05)

    start.until = until
    yield start
    stop.set()
    for thread in threads:
        thread.join(timeout=30)


def test_the_watch_loop_polls_where_inotify_cannot_be_trusted(vault, open_ws, monkeypatch, loop):
    """(An NFS mount, extra paths outside the workspace, not Linux: Feed.start says why.)"""
    monkeypatch.setattr(feed.Feed, "start", classmethod(lambda cls, ws: (None, "on an nfs4 filesystem")))
    lines = loop()
    loop.until(lambda x: len(x) >= 2)
    assert "polling: on an nfs4 filesystem" in lines[0]
    with (vault / "digest" / "wiki" / "w2.md").open("a") as fh:
        fh.write("an axolotl\n")
    loop.until(lambda x: any("1 changed" in line for line in x))
    assert any("1 note(s), 0 resource(s) changed -> index 0 added, 1 changed" in x for x in lines), lines
    assert journal.confirm(open_ws(vault).metadata) is None  # polling publishes no journal


def test_a_feed_refuses_a_folder_on_a_network_filesystem(vault, open_ws, monkeypatch):
    """The same trust rule as `mem mcp`'s watch (memcli.watch.inotify.add_local): a folder whose
    changes can be made on another machine means no feed, and no journal left behind."""
    from memcli.watch import inotify

    monkeypatch.setattr(inotify, "mounts", lambda: [("/", "nfs4")])
    f, why = feed.Feed.start(open_ws(vault))
    assert f is None and "is on a nfs4 filesystem" in why
    assert journal.confirm(open_ws(vault).metadata) is None and journal.watcher(open_ws(vault).metadata) is None


def test_a_feed_that_fails_falls_back_to_polling(vault, open_ws, monkeypatch, loop):
    real = feed.Feed.start
    started = []
    monkeypatch.setattr(feed.Feed, "start", classmethod(lambda cls, ws: started.append(real(ws)) or started[-1]))
    lines = loop()
    loop.until(lambda x: len(x) >= 2)
    f = started[0][0]
    with f._lock:
        f._fail(OSError(28, "No space left on device"))
    loop.until(lambda x: any("polling from now on" in line for line in x))
    write(vault / "memory" / "2026-05-01" / "late.md", "late\n")
    loop.until(lambda x: any("1 added" in line for line in x))
    assert any("file watch stopped: [Errno 28]" in x for x in lines), lines
    assert any("index 1 added" in x for x in lines), lines
    assert journal.confirm(open_ws(vault).metadata) is None


def test_a_backup_leaves_the_journal_out_and_a_restore_keeps_it(vault, watching, run_mem, tmp_path):
    import zipfile

    env = {"MEM_EMBEDDING_BACKEND": "none", "MEM_BACKUP_DIR": str(tmp_path / "backups")}
    code, out, err = run_mem("-w", vault, "backup", "create", "--json", env=env)
    assert code == 0, err
    archive = next((tmp_path / "backups").glob("*.zip"))
    names = zipfile.ZipFile(archive).namelist()
    assert any("mem_metadata/keyword_index" in n for n in names)
    assert not any("mem_metadata/watch" in n for n in names)
    code, _, err = run_mem("-w", vault, "backup", "restore", str(archive), "--yes", env=env)
    assert code == 0, err
    assert journal.confirm(vault / "mem_metadata") is not None  # the watcher still answers


def test_health_says_whether_a_watcher_keeps_the_journal(vault, open_ws, monkeypatch):
    from memcli.jobs import health

    ws = open_ws(vault)
    assert health.watch_check(ws).to_json()["status"] == "ok"
    assert health.watch_check(ws).to_json()["figures"]["running"] is False
    f, _ = feed.Feed.start(ws)
    try:
        check = health.watch_check(ws).to_json()
        assert check["status"] == "ok" and check["figures"]["pid"] == os.getpid(), check
        monkeypatch.setattr(journal, "ANSWER_SECONDS", 0.05)
        f._stop.set()  # alive, holding the journal, but no longer reading events
        f._thread.join()
        check = health.watch_check(ws).to_json()
        assert check["status"] == "warn" and "does not answer" in check["message"], check
    finally:
        f.close()


def test_a_reindex_killed_at_any_point_leaves_a_mark_the_next_one_can_trust(vault, watching, open_ws):
    """SIGKILL a `mem reindex` that reads the journal at random points, edit more, and
    finish with one that completes: the index holds exactly what a walk finds."""
    env = dict(os.environ, MEM_EMBEDDING_BACKEND="none")
    rng = random.Random(11)
    for round_ in range(8):
        for i in range(rng.randint(1, 4)):
            target = vault / "memory" / f"2026-05-0{rng.randint(1, 4)}" / f"k{round_}-{i}.md"
            write(target, f"killed round {round_} {i}\n")
        with (vault / "digest" / "wiki" / f"w{round_ % 6}.md").open("a") as fh:
            fh.write(f"edit {round_}\n")
        proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", str(vault), "reindex"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.0, 0.6))
        proc.kill()
        proc.wait(timeout=30)
    code = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(vault), "reindex"], env=env, capture_output=True, timeout=60
    ).returncode
    assert code == 0
    ws = open_ws(vault)
    assert indexed(ws) == dict(ws.iter_watched())


def test_lost_events_start_one_new_session_and_the_journal_goes_on(vault, watching, open_ws):
    """A queue overflow voids every mark once; later cookies are answered in the new session
    (`mem mcp` never collects the feed's changes, so nothing else would reset it)."""
    from memcli.watch.inotify import IN_Q_OVERFLOW, Event

    ws = open_ws(vault)
    before = watching._writer.session
    with watching._lock:
        watching._handle([Event(-1, IN_Q_OVERFLOW, "")])
    after = watching._writer.session
    assert after != before
    (vault / "MEMORY.md").write_text("# Memory\n\nafter the overflow\n")
    assert sync.sync(ws).changed == ["MEMORY.md"]  # a walk: the mark was of the old session
    with (vault / "MEMORY.md").open("a") as fh:
        fh.write("and again\n")
    assert sync.sync(ws).changed == ["MEMORY.md"]
    assert watching._writer.session == after  # no further restart
    assert sync.open_snapshot(ws).header["watch"]["session"] == after


def test_a_watcher_starting_during_a_probe_still_keeps_the_journal(vault, open_ws):
    """A command's probe holds the lock shared for an instant; a second watcher never gets it."""
    import fcntl
    import threading

    ws = open_ws(vault)
    base = journal.folder(ws.metadata)
    (base / "cookies").mkdir(parents=True)
    fd = os.open(base / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)  # a probe, held longer than any real one
    threading.Timer(0.2, lambda: os.close(fd)).start()
    first = journal.Writer.open(ws.metadata)
    try:
        assert first is not None
        assert journal.Writer.open(ws.metadata) is None  # a second watcher: after its wait, no journal
    finally:
        first.close()
