"""One bad file never blocks a workspace's publish: the real CLI against a real PostgreSQL.

A note under a day that is no day (memory/2026-11-31/) used to make PostgreSQL refuse the
whole publish ("date/time field value out of range"), on every reindex, so no other agent
ever saw any of that workspace's notes. Now its date is none, and a row the database still
refuses (here: a CHECK constraint a site added) leaves out that file only, named.
"""

from __future__ import annotations

import json

GOOD = {
    f"memory/2026-05-{d:02d}/note-{d}.md": f"# Note {d}\n\nHarbour survey number {d} is filed.\n" for d in range(1, 25)
}
NO_DAY = "memory/2026-11-31/x.md"
POISON = "memory/2026-05-25/poison.md"


def health(cli, ws) -> dict:
    code, out, err = cli(ws, "health", "--json")
    assert code == 0, err
    return next(c for c in json.loads(out)["checks"] if c["name"] == "shared")


def test_a_day_that_is_no_day_publishes_undated_with_the_rest(agent, cli, sql):
    a = agent(
        "alice",
        {
            **GOOD,
            NO_DAY: "# Bad day\n\nThe lighthouse keeper retires in spring.\n",
            "memory/2026-02-30.md": "# Day page of no day\n\nlighthouse log\n",
        },
    )
    b = agent("bob", {"memory/2026-05-01/b.md": "# Bob\n\nnothing here\n"})
    code, out, err = cli(a, "reindex")
    assert code == 0, err
    assert "unavailable" not in err and "out of range" not in err, err
    assert f"{NO_DAY}: 2026-11-31 is not a calendar date: treated as undated" in err
    assert "memory/2026-02-30.md: 2026-02-30 is not a calendar date" in err
    assert "Published 26 files" in out, out
    rows = dict(sql("SELECT path, note_date FROM mem.files WHERE agent_id = 'alice'"))
    assert len(rows) == 26 and rows[NO_DAY] is None and rows["memory/2026-02-30.md"] is None
    assert str(rows["memory/2026-05-03/note-3.md"]) == "2026-05-03"
    assert sql("SELECT count(*) FROM mem.chunks WHERE agent_id = 'alice' AND note_date IS NULL")[0][0] == 2
    assert cli(b, "reindex")[0] == 0
    code, out, err = cli(b, "search", "lighthouse", "keeper")
    assert code == 0, err
    assert f"@alice/{NO_DAY}" in out
    code, out, _ = cli(b, "search", "harbour", "survey", "--since", "2026-05-01", "--until", "2026-12-31")
    assert "@alice/memory/2026-05-" in out and NO_DAY not in out  # undated: outside any date filter
    shared = health(cli, a)
    assert shared["status"] == "ok", shared
    assert "last_publish_error" not in shared["figures"]


def _forbid_poison(cli, sql, ws):
    """A rule of the site's database that refuses some rows: a real refusal, after mem's checks."""
    assert cli(ws, "reindex")[0] == 0  # the schema exists from here
    sql("ALTER TABLE mem.files ADD CONSTRAINT no_poison CHECK (position('POISON' in text) = 0)")


def test_a_row_the_database_refuses_leaves_out_that_file_only(agent, cli, sql):
    a = agent("alice", dict(list(GOOD.items())[:6]))
    _forbid_poison(cli, sql, a)
    (a / POISON).parent.mkdir(parents=True, exist_ok=True)
    (a / POISON).write_text("# Poison\n\nPOISON pill in the harbour\n", encoding="utf-8")
    (a / "memory/2026-05-26").mkdir()
    (a / "memory/2026-05-26/fresh.md").write_text("# Fresh\n\nA fresh harbour note.\n", encoding="utf-8")
    code, out, err = cli(a, "reindex", "--json")
    assert code == 0, err
    rep = json.loads(out)["shared"]
    assert rep["failed"] and rep["failed"][0]["path"] == POISON, rep
    assert "no_poison" in rep["failed"][0]["reason"], rep
    assert rep["added"] == 1 and rep["files"] == 7, rep  # the fresh note went; the poisoned one did not
    assert f"shared index: {POISON} not published (" in err and "no_poison" in err, err
    assert "error ignored" not in err and "Traceback" not in err, err
    paths = {r[0] for r in sql("SELECT path FROM mem.files WHERE agent_id = 'alice'")}
    assert "memory/2026-05-26/fresh.md" in paths and POISON not in paths and len(paths) == 7

    shared = health(cli, a)
    assert shared["status"] == "warn"
    last = shared["figures"]["last_publish_error"]
    assert last["path"] == POISON and "no_poison" in last["reason"] and last["failed"] == 1
    assert shared["figures"]["publish_errors"] == [{"path": POISON, "reason": last["reason"]}]
    assert POISON in shared["message"] and "no_poison" in shared["message"]
    code, out, _ = cli(a, "health")
    line = next(x for x in out.splitlines() if x.startswith("[SHARED]"))
    assert "-> WARN: the last publish left out 1 file(s)" in line and POISON in line
    assert f"    {POISON}: {last['reason']}" in out.splitlines()

    code, out, err = cli(a, "reindex")  # tried again, refused again: still named, still the rest
    assert code == 0 and f"shared index: {POISON} not published" in err and "1 refused" in out, (out, err)

    (a / POISON).write_text("# Poison\n\nharmless now\n", encoding="utf-8")  # fixed: published, error gone
    code, out, err = cli(a, "reindex")
    assert code == 0 and "not published" not in err, err
    assert POISON in {r[0] for r in sql("SELECT path FROM mem.files WHERE agent_id = 'alice'")}
    shared = health(cli, a)
    assert shared["status"] == "ok" and "last_publish_error" not in shared["figures"], shared


def test_a_refused_edit_keeps_the_published_version(agent, cli, sql):
    a = agent("alice", {POISON: "# Ship\n\nThe first version of the note.\n", **dict(list(GOOD.items())[:2])})
    _forbid_poison(cli, sql, a)
    (a / POISON).write_text("# Ship\n\nPOISON in the second version.\n", encoding="utf-8")
    first = GOOD["memory/2026-05-01/note-1.md"].replace("filed", "filed again")
    (a / "memory/2026-05-01/note-1.md").write_text(first, encoding="utf-8")
    code, out, err = cli(a, "reindex", "--json")
    assert code == 0, err
    assert [f["path"] for f in json.loads(out)["shared"]["failed"]] == [POISON]
    text = dict(sql("SELECT path, text FROM mem.files WHERE agent_id = 'alice'"))
    assert text[POISON] == "# Ship\n\nThe first version of the note.\n"  # what it held before, whole
    assert text["memory/2026-05-01/note-1.md"] == first  # the edit beside it went through
    chunks = sql("SELECT text FROM mem.chunks WHERE agent_id = 'alice' AND path = %s", POISON)
    assert chunks and all("first version" in c[0] for c in chunks)


def test_a_publish_that_fails_whole_is_in_health(agent, cli, sql, pg):
    a = agent("alice", dict(list(GOOD.items())[:2]))
    assert cli(a, "reindex")[0] == 0
    # a role that may read but not write the agent's rows: the publish fails as a whole
    sql("CREATE ROLE reader LOGIN")
    sql("GRANT USAGE ON SCHEMA mem TO reader")
    sql("GRANT SELECT ON ALL TABLES IN SCHEMA mem TO reader")
    dsn = pg.replace("postgres:", "reader:", 1)
    cfg = json.loads((a / "mem.yaml").read_text(encoding="utf-8"))
    cfg["shared"]["dsn"] = dsn
    (a / "mem.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    (a / "memory/2026-05-01/note-1.md").write_text("# changed\n\nchanged text\n", encoding="utf-8")
    code, out, err = cli(a, "reindex")
    assert code == 0 and "permission denied" in err, err
    shared = health(cli, a)
    last = shared["figures"]["last_publish_error"]
    assert last["path"] is None and "permission denied" in last["reason"] and shared["status"] == "warn"
    assert "the last publish failed (" in shared["message"]
