"""Team memory when the database is down, slow or newer, what `mem health` says, and the
password: never printed by any command, never written under mem_metadata/."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

DAY = "memory/2026-05-18"
NOTES = {f"{DAY}/db.md": "# Database\n\nWe chose PostgreSQL over MySQL for the billing service.\n"}
LOCAL_HIT = f"========== {DAY}/db.md:1-3 [score="


def metadata_files(ws) -> dict[str, bytes]:
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in sorted((ws / "mem_metadata").rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def nowhere(password: str) -> str:
    return f"postgresql://mem:{password}@/mem?host=/nonexistent/socket/dir"


def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("mem: warning:")]


def test_unreachable_database_answers_from_the_local_index(agent, cli, password):
    ws = agent("alice", NOTES, dsn=nowhere(password))
    code, out, err = cli(ws, "reindex")
    assert code == 0 and out.startswith("Rebuilt 1 files")  # the local index is built all the same
    assert "this workspace is published by the next sync" in err
    before = metadata_files(ws)
    code, out, err = cli(ws, "search", "billing")
    assert code == 0
    assert out.startswith(LOCAL_HIT)
    assert len(warnings_of(err)) == 1 and "results are from the local index" in err, err
    assert metadata_files(ws) == before  # nothing local changed
    assert password not in out + err


def test_publishing_resumes_on_the_next_sync(agent, cli, pg, password):
    bob = agent("bob", {f"{DAY}/x.md": "# X\n\nThe zebra migration is done.\n"})
    assert cli(bob, "reindex")[0] == 0
    alice = agent("alice", NOTES, dsn=nowhere(password))
    cli(alice, "reindex")  # the database was down
    code, out, err = cli(alice, "search", "zebra", env={"MEM_SHARED_DSN": pg})  # it is back
    assert code == 0 and err == ""
    assert out.startswith(f"========== @bob/{DAY}/x.md:1-3")
    code, out, _ = cli(bob, "search", "billing")
    assert out.startswith(f"========== @alice/{DAY}/db.md:1-3")  # alice's search published her notes


def test_slow_database_gives_way_to_the_local_index(agent, cli, pg):
    import psycopg

    ws = agent("alice", NOTES, search_timeout=1.0)
    assert cli(ws, "reindex")[0] == 0
    with psycopg.connect(pg) as conn:  # a transaction holding every chunk: searches wait for it
        conn.execute("LOCK TABLE mem.chunks IN ACCESS EXCLUSIVE MODE")
        t0 = time.monotonic()
        code, out, err = cli(ws, "search", "billing")
        elapsed = time.monotonic() - t0
        conn.rollback()
    assert code == 0 and out.startswith(LOCAL_HIT)
    assert len(warnings_of(err)) == 1 and "did not answer within 1s" in err, err
    assert elapsed < 6
    code, out, err = cli(ws, "search", "billing")
    assert code == 0 and err == "" and out.startswith(LOCAL_HIT)


@pytest.fixture
def silent_server():
    """A TCP port that accepts connections and never says a word (a hung database)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join()
    for s in held:
        s.close()
    srv.close()


def test_hung_database_costs_at_most_the_search_timeout(agent, cli, silent_server, password):
    ws = agent(
        "alice",
        NOTES,
        search_timeout=0.5,
        dsn=f"postgresql://mem:{password}@127.0.0.1:{silent_server}/mem?sslmode=disable",
    )
    with_local = cli(ws, "reindex", env={"MEM_SHARED_DSN": nowhere(password)})
    assert with_local[0] == 0
    t0 = time.monotonic()
    code, out, err = cli(ws, "search", "billing")
    elapsed = time.monotonic() - t0
    assert code == 0 and out.startswith(LOCAL_HIT)
    assert "did not answer within 0.5s" in err and len(warnings_of(err)) == 1
    assert elapsed < 1.9  # libpq alone would wait 2 s at least


def health(cli, ws, env=None):
    code, out, err = cli(ws, "health", "--json", env=env)
    return code, next(c for c in json.loads(out)["checks"] if c["name"] == "shared")


def test_health_reports_the_shared_index(agent, cli, pg, password):
    ws = agent("alice", NOTES)
    code, check = health(cli, ws)
    assert check["status"] == "warn" and "no mem tables yet" in check["message"]
    cli(ws, "reindex")
    code, check = health(cli, ws)
    assert code == 0 and check["status"] == "ok", check
    f = check["figures"]
    assert (
        f["reachable"],
        f["schema"],
        f["files"],
        f["chunks"],
        f["local_files"],
        f["local_chunks"],
        f["unpublished_files"],
    ) == (True, 2, 1, 1, 1, 1, 0)
    assert f["lag_s"] >= 0 and f["last_publish"].endswith("+00:00")
    (ws / DAY / "db.md").write_text("# Database\n\nNow it is SQLite.\n", encoding="utf-8")
    cli(ws, "reindex", env={"MEM_SHARED_DSN": nowhere(password)})  # indexed locally, not published
    code, check = health(cli, ws)
    assert check["status"] == "warn" and check["figures"]["unpublished_files"] == 1
    assert "`mem reindex` publishes them" in check["message"]
    code, check = health(cli, ws, env={"MEM_SHARED_DSN": nowhere(password)})
    assert code == 0 and check["status"] == "warn" and check["figures"]["reachable"] is False
    code, out, _ = cli(ws, "health")
    assert "\n[SHARED] reachable=True namespace=team agent_id=alice schema=2 agents=1 files=1 chunks=1 " in out


def test_a_newer_schema_is_searched_but_never_written(agent, cli, sql):
    ws = agent("alice", NOTES)
    cli(ws, "reindex")
    sql("INSERT INTO mem.schema_migrations (version, name) VALUES (99, 'from the future')")
    (ws / DAY / "db.md").write_text("# Database\n\nWe chose PostgreSQL, and SQLite for tests.\n", encoding="utf-8")
    code, out, err = cli(ws, "reindex")
    assert code == 0 and "newer than this mem knows" in err
    assert sql("SELECT text FROM mem.files")[0][0].count("SQLite") == 0
    code, out, err = cli(ws, "search", "billing")
    assert code == 0 and out.startswith(LOCAL_HIT)  # the shared index's (older) text
    assert "newer than this mem knows" in err
    code, check = health(cli, ws)
    assert code == 5 and check["status"] == "fail"


def test_config_errors(agent, cli):
    ws = agent("alice", NOTES, dsn="", backend="postgres")
    code, _, err = cli(ws, "search", "x")
    assert code == 3 and "shared.dsn is empty" in err and "MEM_SHARED_DSN" in err
    ws = agent("bob", NOTES, namespace="team one")
    code, _, err = cli(ws, "search", "x")
    assert code == 3 and "shared.namespace" in err


@pytest.mark.parametrize("form", ["uri", "keyvalue", "env"])
def test_the_password_is_never_shown_or_stored(agent, cli, pg, password, form):
    host = pg.split("host=")[1]
    dsn = {
        "uri": pg,
        "keyvalue": f"host={host} dbname={pg.split('/')[3].split('?')[0]} user=postgres password={password}",
        "env": "",
    }[form]
    ws = agent("alice", NOTES, dsn=dsn)
    env = {"MEM_SHARED_DSN": pg} if form == "env" else None
    outputs = [
        cli(ws, *args, env=env)
        for args in (
            ("reindex",),
            ("config",),
            ("config", "--json"),
            ("health",),
            ("health", "--json"),
            ("search", "billing"),
        )
    ]
    down = {"MEM_SHARED_DSN": nowhere(password) + "&bad", "MEM_SHARED_AGENT_ID": "alice"}
    outputs += [
        cli(ws, *args, env=down)
        for args in (("reindex",), ("search", "billing"), ("health",), ("get", f"@bob/{DAY}/x.md"), ("config",))
    ]
    outputs.append(cli(ws, "search", "x", env={"MEM_SHARED_DSN": f"host=/x password={password} oops"}))
    for _code, out, err in outputs:
        assert password not in out and password not in err, (out, err)
    assert "***" in outputs[1][1]  # config shows the DSN, masked
    for name, data in metadata_files(ws).items():
        assert password.encode() not in data, name
