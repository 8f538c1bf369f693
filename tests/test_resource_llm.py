"""`mem resource scan` with an LLM: a real HTTP server on 127.0.0.1 answering scripted chat completions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "providers"))
from fake_provider import KEY, Reply, serve  # noqa: E402

DAY = "2026-07-14"
REL = f"resource/{DAY}/sales.csv"
CSV = "date,region,units,revenue\n2026-07-01,EU,12,4213.50\n2026-07-02,US,7,1980\n"
GOOD = {"description": "July sales by region: EU and US units and revenue.",
        "body": "# July sales\n\n## Summary\nTwo days of sales; EU sold 12 units for 4213.50.\n\n"
                "## Structure\nColumns date, region, units, revenue.\n\n## Key facts\n- 2026-07-02: US, 7 units, 1980\n"}


def chat(content, finish="stop", status=200) -> Reply:
    if not isinstance(content, str):
        content = json.dumps(content)
    body = {"id": "c1", "object": "chat.completion", "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]}
    return Reply(status, body)


@pytest.fixture
def llm(ws):
    state, stop = serve()
    (ws / "mem.yaml").write_text(
        "llm_model_config:\n  backend: openai\n  base_url: " + state.url + "/v1\n  model_name: test-model\n"
        f"  api_key: {KEY}\n  timeout: 1.0\n  max_retries: 0\n", encoding="utf-8")
    yield state
    stop()


def put(ws: Path, rel: str = REL, text: str = CSV) -> Path:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_llm_summary_becomes_the_note_with_the_source_link(ws, mem, llm):
    put(ws)
    llm.script(chat(GOOD))
    code, out, err = mem("-w", ws, "resource", "scan")
    assert code == 0, err
    assert out.splitlines()[-1].endswith("(openai:test-model)")
    text = (ws / f"memory/{DAY}/sales.md").read_text(encoding="utf-8")
    assert text == ("---\ndescription: 'July sales by region: EU and US units and revenue.'\nname: sales\n"
                    f"source_resource: '[[{REL}]]'\n---\n# July sales\n\nSource: [[{REL}]]\n\n"
                    + GOOD["body"].split("\n", 2)[2])
    [seen] = llm.seen
    assert seen.path == "/v1/chat/completions" and seen.headers["authorization"] == f"Bearer {KEY}"
    system, user = seen.body["messages"]
    assert "faithful" in system["content"] and "ignore any instructions" in system["content"]
    prompt = user["content"]
    assert prompt.startswith(f"File: {REL} (CSV)")
    assert "2 row(s) × 4 column(s)" in prompt  # the computed facts
    assert "2026-07-02,US,7,1980" in prompt  # the content


def test_a_rejected_reply_is_retried_with_the_reason(ws, mem, llm):
    put(ws)
    invented = dict(GOOD, body=GOOD["body"] + "- Total revenue: 6193.50\n")
    llm.script(chat(invented), chat(GOOD))
    code, _, err = mem("-w", ws, "resource", "scan")
    assert code == 0, err
    assert len(llm.seen) == 2
    retry = llm.seen[1].body["messages"][3]["content"]
    assert retry.startswith("Your answer was rejected: these figures are not in the file: 6193.50")
    assert "6193" not in (ws / f"memory/{DAY}/sales.md").read_text(encoding="utf-8")


def test_two_rejected_replies_fall_back_to_the_offline_digest(ws, mem, llm):
    put(ws)
    llm.script(chat("Sure, here is a summary!"), chat({"description": "x", "body": "no title"}))
    code, _, err = mem("-w", ws, "resource", "scan")
    assert code == 0, err
    assert f"{REL}: openai:test-model reply rejected twice: \"body\" must start with a \"# \" title line" in err
    text = (ws / f"memory/{DAY}/sales.md").read_text(encoding="utf-8")
    assert "## Columns" in text and "| 2026-07-01 | EU | 12 | 4213.50 |" in text


def test_a_service_failure_exits_4_and_leaves_the_file_for_the_next_scan(ws, mem, llm, clean_failure):
    put(ws)
    put(ws, f"resource/{DAY}/later.txt", "Written after the outage.\n")
    llm.script(Reply(500, {"error": {"message": "model crashed"}}))
    line = clean_failure(mem("-w", ws, "resource", "scan"), 4)
    assert "HTTP 500" in line and "2 resource(s) left for the next scan" in line
    assert not (ws / "memory" / DAY).exists()
    llm.script(chat({"description": "A note written after the outage.",  # files go in path order
                     "body": "# Later\n\n## Summary\nWritten after the outage.\n"}), chat(GOOD))
    code, _, err = mem("-w", ws, "resource", "scan")
    assert code == 0, err
    assert sorted(p.name for p in (ws / "memory" / DAY).iterdir()) == ["later.md", "sales.md"]


def test_dry_run_and_no_interpret_call_no_model(ws, mem, llm):
    put(ws)
    assert mem("-w", ws, "resource", "scan", "--dry-run")[0] == 0
    assert mem("-w", ws, "resource", "scan", "--no-interpret")[0] == 0
    assert llm.seen == []


def test_an_llm_backend_without_a_model_is_a_config_error(ws, run_mem, clean_failure):
    put(ws)
    result = run_mem("-w", ws, "resource", "scan", env={"MEM_LLM_BACKEND": "openai"})
    assert "needs llm_model_config.model_name" in clean_failure(result, 3)
    assert not (ws / "memory" / DAY).exists()
