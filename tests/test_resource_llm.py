"""`mem resource scan` with an LLM: a real HTTP server on 127.0.0.1 answering scripted chat completions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "providers"))
from fake_provider import KEY, Reply, serve

DAY = "2026-07-14"
REL = f"resource/{DAY}/sales.csv"
CSV = "date,region,units,revenue\n2026-07-01,EU,12,4213.50\n2026-07-02,US,7,1980\n"
GOOD = {
    "description": "July sales by region: EU and US units and revenue.",
    "body": "# July sales\n\n## Summary\nTwo days of sales; EU sold 12 units for 4213.50.\n\n"
    "## Structure\nColumns date, region, units, revenue.\n\n## Key facts\n- 2026-07-02: US, 7 units, 1980\n",
}


def chat(content, finish="stop", status=200) -> Reply:
    if not isinstance(content, str):
        content = json.dumps(content)
    body = {
        "id": "c1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
    }
    return Reply(status, body)


@pytest.fixture
def llm(ws):
    state, stop = serve()
    (ws / "mem.yaml").write_text(
        "llm_model_config:\n  backend: openai\n  base_url: " + state.url + "/v1\n  model_name: test-model\n"
        f"  api_key: {KEY}\n  timeout: 1.0\n  max_retries: 0\n",
        encoding="utf-8",
    )
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
    assert text == (
        "---\ndescription: 'July sales by region: EU and US units and revenue.'\nname: sales\n"
        f"source_resource: '[[{REL}]]'\n---\n# July sales\n\nSource: [[{REL}]]\n\n" + GOOD["body"].split("\n", 2)[2]
    )
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
    assert f'{REL}: openai:test-model reply rejected twice: "body" must start with a "# " title line' in err
    text = (ws / f"memory/{DAY}/sales.md").read_text(encoding="utf-8")
    assert "## Columns" in text and "| 2026-07-01 | EU | 12 | 4213.50 |" in text


def test_a_service_failure_exits_4_and_leaves_the_file_for_the_next_scan(ws, mem, llm, clean_failure):
    put(ws)
    put(ws, f"resource/{DAY}/later.txt", "Written after the outage.\n")
    llm.script(Reply(500, {"error": {"message": "model crashed"}}))
    line = clean_failure(mem("-w", ws, "resource", "scan"), 4)
    assert "HTTP 500" in line and "2 resource(s) left for the next scan" in line
    assert not (ws / "memory" / DAY).exists()
    llm.script(
        chat(
            {
                "description": "A note written after the outage.",  # files go in path order
                "body": "# Later\n\n## Summary\nWritten after the outage.\n",
            }
        ),
        chat(GOOD),
    )
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


PARTS = {
    "title": "July sales",
    "description": "July sales by region.",
    "summary": "Three regions sold units in July. EU sold 12 units for 4213.50. Total revenue was 99999.",
    "key_facts": ["EU: 12 units, 4213.50", "US: 7 units, 1980", "US: 7 units, 1980", "Profit margin is 12345"],
    "action_items": ["Open the spreadsheet in an editor and compute averages"],
}


def test_the_parts_shape_is_rendered_with_the_computed_structure(ws, mem, llm):
    put(ws)
    llm.script(chat(PARTS))
    code, _, err = mem("-w", ws, "resource", "scan")
    assert code == 0, err
    [seen] = llm.seen
    assert seen.body["response_format"]["json_schema"]["schema"]["required"] == [
        "title",
        "description",
        "summary",
        "key_facts",
        "action_items",
    ]
    text = (ws / f"memory/{DAY}/sales.md").read_text(encoding="utf-8")
    # an invented figure drops its sentence or fact, an ungrounded action item is dropped,
    # a repeated fact kept once; the columns and rows come from the offline digest
    assert text.split("---\n", 2)[2] == (
        f"# July sales\n\nSource: [[{REL}]]\n\n## Summary\nThree regions sold units in July. "
        "EU sold 12 units for 4213.50.\n\n## Key facts\n- EU: 12 units, 4213.50\n- US: 7 units, 1980\n\n"
        "## Columns\n4 columns, comma-separated, 2 data rows:\n- `date`: date, 2026-07-01 to 2026-07-02\n"
        '- `region`: text, 2 distinct (e.g. "EU", "US")\n- `units`: number, 7 to 12\n'
        "- `revenue`: number, 1980 to 4213.50\n\n## First rows (2 of 2)\n| date | region | units | revenue |\n"
        "|---|---|---|---|\n| 2026-07-01 | EU | 12 | 4213.50 |\n| 2026-07-02 | US | 7 | 1980 |\n"
    )


def test_a_looping_phrase_is_kept_once(ws, mem, llm):
    put(ws, f"resource/{DAY}/notes.txt", "Opening hours of the Ada room: 9 to 17.\n")
    llm.script(
        chat(
            {
                "title": "Room hours",
                "description": "Opening hours of the Ada room.",
                "summary": "Opening hours, " * 30 + "Open",
                "key_facts": ["Ada room: 9 to 17"],
                "action_items": [],
            }
        )
    )
    code, _, err = mem("-w", ws, "resource", "scan")
    assert code == 0, err
    text = (ws / f"memory/{DAY}/notes.md").read_text(encoding="utf-8")
    assert "## Summary\nOpening hours\n" in text and "## Action items" not in text


def test_a_file_longer_than_the_window_is_read_in_parts(ws, mem, llm):
    (ws / "mem.yaml").write_text((ws / "mem.yaml").read_text() + "  context_tokens: 2048\n")
    lines = [f"Section {i}: the pump in hall {i} was serviced by team {chr(65 + i % 26)}." for i in range(200)]
    put(ws, f"resource/{DAY}/log.txt", "\n".join(lines) + "\n")
    for i in range(4):
        llm.script(
            chat(
                {
                    "title": f"Service log part {i}",
                    "description": "" if i else "Pump service log.",
                    "summary": f"Part {i} lists pump services.",
                    "key_facts": [f"hall {i}", "hall 0"],
                    "action_items": [],
                }
            )
        )
    code, _, err = mem("-w", ws, "resource", "scan")
    assert code == 0, err
    from memcli.extraction.ask import tokens

    assert len(llm.seen) == 4  # at most four parts; the rest is cut and said so
    for seen in llm.seen:
        assert tokens("".join(m["content"] for m in seen.body["messages"])) <= 2048 - 512
    prompts = [s.body["messages"][1]["content"] for s in llm.seen]
    assert prompts[0].startswith(f"File: resource/{DAY}/log.txt (text), part 1 of 4")
    assert "(this part):\n<<<\nSection 0:" in prompts[0] and "(this part):\n<<<\nSection 0:" not in prompts[1]
    assert "more characters…]" in prompts[-1] and "more characters" not in prompts[0]
    text = (ws / f"memory/{DAY}/log.md").read_text(encoding="utf-8")
    assert "description: Pump service log." in text
    assert "## Summary\nPart 0 lists pump services.\n\nPart 1 lists pump services.\n" in text
    assert "## Key facts\n- hall 0\n- hall 1\n- hall 2\n- hall 3\n" in text
