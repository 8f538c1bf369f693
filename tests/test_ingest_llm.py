"""`mem ingest` with an LLM: a real HTTP server on 127.0.0.1 answering scripted chat completions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "providers"))
from fake_provider import KEY, Reply, serve
from test_ingest import DAY, KICKOFF, put, session_notes, tree

GOOD = {
    "name": "database-migration",
    "description": "Lumen moves from MySQL to PostgreSQL 16.",
    "body": "# Database migration\n\n## Decisions\n- Replace MySQL with PostgreSQL 16 (JSONB).\n",
}


def chat(content, finish="stop", status=200, delay=0.0) -> Reply:
    if not isinstance(content, str):
        content = json.dumps(content)
    body = {
        "id": "c1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
    }
    return Reply(status, body, delay=delay)


@pytest.fixture
def llm(ws):
    """A fake OpenAI-compatible server, configured as the workspace's LLM (no retries on 5xx)."""
    state, stop = serve()
    (ws / "mem.yaml").write_text(
        "llm_model_config:\n  backend: openai\n  base_url: " + state.url + "/v1\n  model_name: test-model\n"
        f"  api_key: {KEY}\n  timeout: 1.0\n  max_retries: 0\n",
        encoding="utf-8",
    )
    yield state
    stop()


def test_llm_writes_the_note_it_returns(ws, tmp_path, mem, llm):
    llm.script(chat(GOOD))
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    assert out.splitlines()[0] == f"Added memory/{DAY}/database-migration.md"
    assert "Extracted with openai:test-model (force)" in out
    text = (ws / f"memory/{DAY}/database-migration.md").read_text(encoding="utf-8")
    assert text == (
        "---\ndescription: Lumen moves from MySQL to PostgreSQL 16.\nname: database-migration\n"
        "session_id: s1\nsource_conversation: '[[mem_session/dialog/s1.jsonl]]'\n---\n" + GOOD["body"]
    )
    [seen] = llm.seen
    assert seen.path == "/v1/chat/completions" and seen.headers["authorization"] == f"Bearer {KEY}"
    body = seen.body
    assert body["model"] == "test-model" and body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["name", "description", "items"]
    assert "max_tokens" not in body  # a hosted backend: no reply cap unless configured
    assert body["messages"][0]["role"] == "system" and "JSON" in body["messages"][0]["content"]
    prompt = body["messages"][1]["content"]
    assert "user: We decided to replace MySQL with PostgreSQL 16" in prompt and "Session: s1" in prompt


def test_garbage_then_valid_reply_is_retried_with_the_error(ws, tmp_path, mem, llm):
    llm.script(chat("Sure! Here are the facts: the user likes PostgreSQL."), chat(GOOD))
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    assert len(llm.seen) == 2
    retry = llm.seen[1].body["messages"]
    assert retry[2] == {"role": "assistant", "content": "Sure! Here are the facts: the user likes PostgreSQL."}
    assert retry[3]["content"].startswith("Your answer was rejected: not valid JSON")


@pytest.mark.parametrize(
    "first,second,expected",
    [
        (chat("garbage"), chat("still garbage"), "reply rejected twice: not valid JSON"),
        (
            chat('{"name": "db", "description": "x", "body": "# D'),
            chat('{"name": "db"', finish="length"),
            "reply was cut off (finish_reason=length)",
        ),
        (
            chat(dict(GOOD, body="---\nname: evil\n---\n# X\n")),
            chat(dict(GOOD, body="x" * 33_000)),
            "longer than 32000 characters",
        ),
        (chat(dict(GOOD, body="# X\n<!-- notes:auto -->")), chat(["not", "an", "object"]), "expected a JSON object"),
        (Reply(500, {"error": {"message": "model crashed"}}), None, "HTTP 500 Internal Server Error: model crashed"),
        (chat(GOOD, delay=3.0), None, "timed out after 1s"),
        (Reply(200, "<html>not json</html>"), None, "returned malformed JSON"),
    ],
)
def test_llm_failures_exit_4_and_write_nothing(ws, tmp_path, mem, clean_failure, llm, first, second, expected):
    llm.script(*[r for r in (first, second) if r is not None])
    conv = put(tmp_path, KICKOFF)
    before = tree(ws)
    line = clean_failure(mem("-w", ws, "ingest", conv, "-s", "s1", "--force"), 4)
    assert expected in line
    assert KEY not in line
    assert tree(ws) == before  # no session log, no note, no state, no index
    assert len(llm.seen) == (2 if second else 1)


def test_llm_failure_in_a_subprocess(ws, tmp_path, run_mem, clean_failure, llm):
    llm.script(chat("garbage"), chat("garbage"))
    line = clean_failure(run_mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force"), 4)
    assert line.startswith("mem: error: openai:test-model reply rejected twice: not valid JSON")
    assert "(check llm_model_config.model_name" in line and not (ws / "mem_session").exists()


def test_a_500_is_retried_by_the_http_layer(ws, tmp_path, mem, llm):
    (ws / "mem.yaml").write_text((ws / "mem.yaml").read_text().replace("max_retries: 0", "max_retries: 1"))
    llm.script(Reply(503, {"error": {"message": "busy"}}), chat(GOOD))
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    assert len(llm.seen) == 2


def test_existing_note_gets_the_updated_body_and_keeps_its_timeline(ws, tmp_path, mem, llm, note):
    note(
        ws,
        f"memory/{DAY}/database-migration.md",
        "# Database migration\n\n## Timeline\n- 10:00 chose PostgreSQL\n- 10:05 asked for pgloader\n",
        name="database-migration",
        description="Old description.",
        session_id="s1",
        source_conversation="[[mem_session/dialog/s1.jsonl]]",
    )
    dropped = "# Database migration\n\n## Timeline\n- 10:05 asked for pgloader\n"
    kept = "# Database migration\n\n## Timeline\n- 10:00 chose PostgreSQL\n- 10:05 asked for pgloader\n- 11:00 done\n"
    llm.script(
        chat({"name": "renamed-topic", "description": "", "body": dropped}),
        chat({"name": "renamed-topic", "description": "Migration finished.", "body": kept}),
    )
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    assert (
        "timeline entry was removed or changed ('- 10:00 chose PostgreSQL')"
        in llm.seen[1].body["messages"][3]["content"]
    )
    assert "Existing note:\nname: database-migration" in llm.seen[0].body["messages"][1]["content"]
    assert [p.name for p in session_notes(ws)] == ["database-migration.md"]  # the name is kept
    text = (ws / f"memory/{DAY}/database-migration.md").read_text(encoding="utf-8")
    assert text.endswith(kept) and "description: Migration finished." in text


def test_empty_body_means_nothing_to_remember(ws, tmp_path, mem, llm):
    llm.script(chat({"name": "", "description": "", "body": ""}))
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force", "--json")
    rep = json.loads(out)
    assert code == 0 and rep["extracted"] and rep["changes"] == []
    assert rep["reason"].endswith("nothing new worth remembering") and session_notes(ws) == []
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force", "--json")
    assert json.loads(out)["reason"] == "Nothing new to extract" and len(llm.seen) == 1


def test_no_llm_call_without_extraction(ws, tmp_path, mem, llm):
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, KICKOFF[:2]), "-s", "s1")
    assert code == 0 and llm.seen == []


@pytest.mark.parametrize(
    "cfg,expected",
    [
        ("llm_model_config:\n  backend: openai\n", "LLM backend 'openai' needs llm_model_config.model_name"),
        ("llm_model_config:\n  backend: gpt\n  model_name: x\n", "unknown LLM backend 'gpt'"),
        ("llm_model_config:\n  backend: vllm\n  model_name: x\n", "needs llm_model_config.base_url"),
        ("timezone: Mars/Olympus\n", "unknown timezone 'Mars/Olympus'"),
    ],
)
def test_config_errors_exit_3_and_write_nothing(ws, tmp_path, run_mem, clean_failure, cfg, expected):
    (ws / "mem.yaml").write_text(cfg)
    line = clean_failure(run_mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force"), 3)
    assert expected in line and not (ws / "mem_session").exists()


def test_backend_none_is_offline(ws, tmp_path, mem):
    (ws / "mem.yaml").write_text("llm_model_config:\n  backend: none\n  model_name: ignored\n")
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0 and "Extracted with rules (force)" in out


ITEMS = {
    "name": "Night Shift Nurse",
    "description": "",
    "items": [
        {"kind": "fact", "text": "Priya Raman works night shifts as a nurse on ward 7."},
        {"kind": "decision", "text": "The ward rota moves from Excel to Notion."},
        {"kind": "decision", "text": "The ward rota moves from Excel to Notion."},
        {"kind": "next_steps", "text": "- Renew the CPR\ncertification by August 15."},
    ],
}


def test_items_are_rendered_and_repaired_without_a_retry(ws, tmp_path, mem, llm):
    # the shape small models are asked for; the name is slugified, the description derived,
    # the repeated statement dropped, a bullet and a line break inside a statement joined
    llm.script(chat("Here is the JSON:\n```json\n" + json.dumps(ITEMS) + "\n```\nHope it helps."))
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    assert len(llm.seen) == 1
    text = (ws / f"memory/{DAY}/night-shift-nurse.md").read_text(encoding="utf-8")
    assert "description: Priya Raman works night shifts as a nurse on ward 7.\n" in text
    assert text.endswith(
        "---\n# Night shift nurse\n\nPriya Raman works night shifts as a nurse on ward 7.\n\n"
        "## Facts\n- Priya Raman works night shifts as a nurse on ward 7.\n\n"
        "## Decisions\n- The ward rota moves from Excel to Notion.\n\n"
        "## Next steps\n- Renew the CPR certification by August 15.\n"
    )


@pytest.mark.parametrize(
    "reply,name",
    [
        (dict(GOOD, name="Database Migration"), "database-migration"),
        (dict(GOOD, name="2026-06-29 notes"), "notes"),
        (dict(GOOD, name="", description="PostgreSQL 16 replaces MySQL."), "database-migration"),  # from the title
        ({"name": "db-move", "description": "x", "facts": ["MySQL goes."], "next_steps": ["Run pgloader."]}, "db-move"),
        (
            '{"name": "db-move", "description": "Line one\nline two", "items": [{"kind": "fact", "text": "A",},],}',
            "db-move",
        ),  # raw newline in a string, trailing commas
    ],
)
def test_mechanical_repairs_need_no_retry(ws, tmp_path, mem, llm, reply, name):
    llm.script(chat(reply))
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    assert out.splitlines()[0] == f"Added memory/{DAY}/{name}.md" and len(llm.seen) == 1


def test_items_are_added_to_the_existing_note(ws, tmp_path, mem, llm, note):
    old = "# Database migration\n\n## Decisions\n- Replace MySQL.\n\n## Timeline\n- 10:00 chose PostgreSQL\n"
    note(
        ws,
        f"memory/{DAY}/database-migration.md",
        old,
        name="database-migration",
        description="Old.",
        session_id="s1",
        source_conversation="[[mem_session/dialog/s1.jsonl]]",
    )
    llm.script(
        chat(
            {
                "name": "other",
                "description": "New.",
                "items": [
                    {"kind": "decision", "text": "Replace MySQL."},
                    {"kind": "decision", "text": "Use pgloader."},
                    {"kind": "preference", "text": "The user likes JSONB."},
                ],
            }
        )
    )
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    text = (ws / f"memory/{DAY}/database-migration.md").read_text(encoding="utf-8")
    assert "description: Old." in text
    assert text.endswith(
        "# Database migration\n\n## Decisions\n- Replace MySQL.\n- Use pgloader.\n\n"
        "## Timeline\n- 10:00 chose PostgreSQL\n\n## Preferences\n- The user likes JSONB.\n"
    )


def test_a_long_conversation_is_sent_in_parts_that_fit_the_window(ws, tmp_path, mem, llm):
    (ws / "mem.yaml").write_text((ws / "mem.yaml").read_text() + "  context_tokens: 2048\n")
    turns = [
        {
            "role": "user",
            "content": f"Fact number {i}: the server rack {i} sits in room {100 + i}. " * 6,
            "timestamp": f"2026-06-29T10:{i:02d}:00+00:00",
        }
        for i in range(30)
    ]
    first = {
        "name": "server-racks",
        "description": "Where the racks are.",
        "items": [{"kind": "fact", "text": "Rack 0 sits in room 100."}],
    }
    llm.script(
        chat(first),
        *[
            chat({"name": "x", "description": "", "items": [{"kind": "fact", "text": f"Rack part {n} noted."}]})
            for n in range(1, 10)
        ],
    )
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, turns), "-s", "s1", "--force")
    assert code == 0, err
    assert len(llm.seen) >= 3
    from memcli.extraction.ask import tokens

    for seen in llm.seen:
        prompt = "".join(m["content"] for m in seen.body["messages"])
        assert tokens(prompt) <= 2048 - 512  # the window less the reply budget
    assert "Existing note:\nname: server-racks" in llm.seen[1].body["messages"][1]["content"]
    assert "room 100" in llm.seen[0].body["messages"][1]["content"]
    assert "room 129" in llm.seen[-1].body["messages"][1]["content"]
    text = (ws / f"memory/{DAY}/server-racks.md").read_text(encoding="utf-8")
    assert "- Rack 0 sits in room 100.\n- Rack part 1 noted.\n" in text
    assert f"- Rack part {len(llm.seen) - 1} noted.\n" in text


def test_a_reply_cut_off_by_the_token_limit_keeps_its_complete_statements(ws, tmp_path, mem, llm):
    cut = json.dumps(ITEMS)[:-60]  # the last statement is half-written
    llm.script(chat(cut, finish="length"))
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    text = (ws / f"memory/{DAY}/night-shift-nurse.md").read_text(encoding="utf-8")
    assert "- The ward rota moves from Excel to Notion.\n" in text and "CPR" not in text
    assert len(llm.seen) == 1


def test_a_looping_statement_is_kept_once(ws, tmp_path, mem, llm):
    loop = "Priya is a nurse on ward 7. " + "She works nights. " * 5 + "She works"
    llm.script(chat({"name": "priya", "description": loop, "items": [{"kind": "fact", "text": loop}]}))
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0, err
    text = (ws / f"memory/{DAY}/priya.md").read_text(encoding="utf-8")
    assert "- Priya is a nurse on ward 7. She works nights. She works\n" in text
    assert "description: Priya is a nurse on ward 7. She works nights. She works\n" in text
