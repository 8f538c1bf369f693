"""`mem remember`: one fact into today's note of the manual session."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memcli.jobs import remember


def today() -> str:
    return datetime.now(UTC).date().isoformat()  # the tests run with TZ=UTC


def test_remember_writes_a_fact_with_tags(ws, mem):
    code, out, err = mem(
        "-w", ws, "remember", "The", "staging DB password rotates every 90 days", "--tag", "ops", "-t", "#security"
    )
    day = today()
    assert code == 0, err
    assert out == f"Remembered in memory/{day}/remembered-facts.md\n"
    text = (ws / f"memory/{day}/remembered-facts.md").read_text(encoding="utf-8")
    assert text == (
        "---\ndescription: Facts the user asked to remember (1).\nname: remembered-facts\n"
        "session_id: manual\nsource_conversation: '[[mem_session/dialog/manual.jsonl]]'\n"
        "tags:\n- ops\n- security\n---\n# Remembered facts\n\n## Facts\n"
        "- The staging DB password rotates every 90 days #ops #security\n"
    )
    page = (ws / f"memory/{day}.md").read_text(encoding="utf-8")
    assert "name: remembered-facts description: Facts the user asked to remember (1). tags: ops, security" in page
    [rec] = [json.loads(x) for x in (ws / "mem_session/dialog/manual.jsonl").read_text().splitlines()]
    assert rec["role"] == "user" and rec["content"][0]["text"].startswith("The staging DB password")
    code, out, _ = mem("-w", ws, "search", "password rotates", "--no-sync", "--json")
    assert json.loads(out)["results"][0]["path"] == f"memory/{day}/remembered-facts.md"


def test_same_fact_twice_writes_nothing_and_a_second_fact_is_added(ws, mem):
    mem("-w", ws, "remember", "I prefer tabs over spaces.")
    path = ws / f"memory/{today()}/remembered-facts.md"
    before = path.read_bytes()
    code, out, _ = mem("-w", ws, "remember", "I prefer  tabs over spaces.")
    assert code == 0 and out.startswith("Already remembered in") and path.read_bytes() == before
    code, out, _ = mem("-w", ws, "remember", "Deploys happen on Tuesdays.", "--json")
    rep = json.loads(out)
    assert rep["new"] and [c["action"] for c in rep["changes"]] == ["updated", "updated"]
    text = path.read_text(encoding="utf-8")
    assert "- I prefer tabs over spaces.\n- Deploys happen on Tuesdays.\n" in text and "(2)" in text
    assert len((ws / "mem_session/dialog/manual.jsonl").read_text().splitlines()) == 2


def test_a_remembered_fact_is_not_pending_for_ingest(ws, mem, tmp_path):
    mem("-w", ws, "remember", "We decided to use Redis for caching.")
    state = json.loads((ws / "mem_metadata/ingest/manual.json").read_text())
    assert len(state["extracted"]) == 1
    conv = tmp_path / "c.json"
    conv.write_text('[{"role": "user", "content": "The cache TTL is 300 seconds."}]')
    code, out, _ = mem("-w", ws, "ingest", conv, "-s", "manual", "--force", "--json")
    rep = json.loads(out)
    assert rep["extracted"] and rep["changes"][0]["action"] == "updated"
    text = (ws / f"memory/{today()}/remembered-facts.md").read_text(encoding="utf-8")
    assert text.count("Redis") == 1 and "- The cache TTL is 300 seconds." in text


def test_remember_into_another_session_and_an_existing_note(ws, note, open_ws):
    day = today()
    note(ws, f"memory/{day}/standup.md", "# Standup\n", name="standup", description="Daily standup.", session_id="team")
    rep = remember.run(open_ws(ws), "Alice owns the release.", session_id="team")
    assert rep.path == f"memory/{day}/standup.md"
    assert (ws / rep.path).read_text(encoding="utf-8").endswith("# Standup\n\n## Facts\n- Alice owns the release.\n")


def test_bad_input_exits_2(ws, run_mem, clean_failure):
    assert "TEXT is empty" in clean_failure(run_mem("-w", ws, "remember", "   "), 2)
    assert "tag 'two words' is not a word" in clean_failure(run_mem("-w", ws, "remember", "x", "--tag", "two words"), 2)
    assert "session id" in clean_failure(run_mem("-w", ws, "remember", "x", "-s", "../up"), 2)
    assert not (ws / "mem_session").exists() and list((ws / "memory").iterdir()) == []
