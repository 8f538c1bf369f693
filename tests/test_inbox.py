"""The inbox: records of job runs that changed memory, `mem inbox`, and the optional webhook."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "providers"))
from fake_provider import Reply, serve

from memcli.jobs import inbox

WHEN = datetime(2026, 6, 29, 10, 0, tzinfo=UTC)


def test_empty_inbox(ws, mem):
    assert mem("-w", ws, "inbox") == (0, "(inbox is empty)\n", "")
    code, out, _ = mem("-w", ws, "inbox", "--json")
    assert json.loads(out) == {"records": []}


def test_list_then_clear(ws, mem, open_ws):
    w = open_ws(ws)
    inbox.push(w, "dream", [("digest/wiki/rrf.md", "added")], "1 unit", WHEN)
    inbox.push(w, "ingest", [("memory/2026-06-29/a.md", "updated"), ("memory/2026-06-29.md", "updated")], "", WHEN)
    inbox.push(w, "ingest", [], "no changes: no record", WHEN)
    code, out, err = mem("-w", ws, "inbox", "--clear")
    assert code == 0 and err == "Cleared 2 record(s)\n"
    assert out == (
        "2026-06-29T10:00:00+00:00 dream: 1 unit\n  - [digest/wiki/rrf.md][ADDED]\n"
        "2026-06-29T10:00:00+00:00 ingest\n  - [memory/2026-06-29/a.md][UPDATED]\n"
        "  - [memory/2026-06-29.md][UPDATED]\n"
    )
    assert mem("-w", ws, "inbox")[1] == "(inbox is empty)\n"


def test_clear_keeps_records_pushed_after_listing(ws, open_ws):
    w = open_ws(ws)
    inbox.push(w, "a", [("x.md", "added")], now=WHEN)
    shown = inbox.read(w)
    inbox.push(w, "b", [("y.md", "added")], now=WHEN)
    assert inbox.clear(w, shown) == 1 and [r["job"] for r in inbox.read(w)] == ["b"]


def test_disabled_and_capped(ws, open_ws):
    w = open_ws(ws)
    w.settings = replace(w.settings, inbox_push_enabled=False)
    inbox.push(w, "a", [("x.md", "added")], now=WHEN)
    assert inbox.read(w) == []
    w.settings = replace(w.settings, inbox_push_enabled=True)
    records = [{"job": str(i), "time": "t", "changes": [], "summary": ""} for i in range(inbox.MAX_RECORDS)]
    inbox._write(w, records)
    inbox.push(w, "last", [("x.md", "added")], now=WHEN)
    got = inbox.read(w)
    assert len(got) == inbox.MAX_RECORDS and got[0]["job"] == "1" and got[-1]["job"] == "last"


def test_webhook_receives_the_record_and_failures_only_warn(ws, open_ws):
    state, stop = serve()
    try:
        w = open_ws(ws)
        w.settings = replace(w.settings, inbox_webhook_url=state.url + "/hook?token=s3cret")
        state.script(Reply(204, b""), Reply(500, "down"))
        assert inbox.push(w, "ingest", [("m.md", "added")], "s", WHEN) == []
        assert state.seen[0].path == "/hook?token=s3cret"
        assert state.seen[0].body == {
            "job": "ingest",
            "time": "2026-06-29T10:00:00+00:00",
            "changes": [{"path": "m.md", "action": "added"}],
            "summary": "s",
        }
        warnings = inbox.push(w, "ingest", [("m.md", "added")], "s", WHEN)
        assert warnings == [f"inbox webhook {state.url}/hook failed: HTTP 500"]
        assert len(inbox.read(w)) == 2
    finally:
        stop()
    w.settings = replace(w.settings, inbox_webhook_url="http://127.0.0.1:9/x")  # nothing listens on the discard port
    assert inbox.push(w, "ingest", [("m.md", "added")], "s", WHEN) == [
        "inbox webhook http://127.0.0.1:9/x failed: ConnectError"
    ]


def test_every_command_records_in_the_workspaces_zone(ws, run_mem, tmp_path):
    """remember, ingest, resource scan and dream append to one inbox in the workspace's zone
    (`timezone`: Asia/Tokyo here, while the machine is on UTC), as the session logs and the
    daily notes' days are; a record kept from before in another zone is converted."""
    (ws / "mem.yaml").write_text("timezone: Asia/Tokyo\n", encoding="utf-8")
    old = {
        "job": "remember",
        "time": "2026-06-29T10:00:00+00:00",
        "changes": [{"path": "x.md", "action": "added"}],
        "summary": "from before",
    }
    (ws / "mem_metadata" / "inbox").mkdir(parents=True)
    (ws / "mem_metadata" / "inbox" / "inbox.jsonl").write_text(json.dumps(old) + "\n", encoding="utf-8")
    conversation = tmp_path / "conv.json"
    conversation.write_text(
        json.dumps(
            [
                {
                    "role": "user",
                    "content": "We decided to replace MySQL with PostgreSQL 16 for the API.",
                    "timestamp": "2026-06-29T10:02:00+00:00",
                },
                {
                    "role": "user",
                    "content": "I prefer dark mode in every editor.",
                    "timestamp": "2026-06-29T10:04:00+00:00",
                },
            ]
        ),
        encoding="utf-8",
    )
    (ws / "resource" / "2026-06-29").mkdir(parents=True)
    (ws / "resource" / "2026-06-29" / "report.md").write_text(
        "# Report\n\nQuarterly numbers are up.\n", encoding="utf-8"
    )
    for args in (
        ("remember", "The spare key is under the blue pot"),
        ("ingest", conversation, "-s", "s1", "--force"),
        ("resource", "scan"),
        ("dream",),
    ):
        code, out, err = run_mem("-w", ws, *args, env={"TZ": "UTC"})
        assert code == 0, (args, err)
    code, out, err = run_mem("-w", ws, "inbox", "--json")
    records = json.loads(out)["records"]
    assert [r["job"] for r in records][:4] == ["remember", "remember", "ingest", "resource"], records
    assert all(r["time"].endswith("+09:00") for r in records), [r["time"] for r in records]
    assert records[0]["time"] == "2026-06-29T19:00:00+09:00"  # the same instant
