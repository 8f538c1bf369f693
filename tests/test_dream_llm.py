"""`mem dream` with an LLM: a real HTTP server on 127.0.0.1 answering scripted chat completions.

The model is asked one short question at a time (extraction/dream/judge.py): per statement,
its subject and whether it is worth keeping; per statement with close nodes, where it goes
and what it does there. Every reply is validated; a bad one is retried once with the error
fed back, and a second bad one is decided by the offline rules, said so in the report. The
node text is the offline writer's. An unreachable model fails the run and writes nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "providers"))
from fake_provider import KEY, Reply, serve
from test_dream import D1, D2, coffee_day, digest_files, session_note

NOTE = f"memory/{D1}/morning-routine.md"


def chat(content, finish="stop") -> Reply:
    if not isinstance(content, str):
        content = json.dumps(content)
    body = {
        "id": "c1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
    }
    return Reply(200, body)


def verdict(subject, remember="yes") -> Reply:
    return chat({"subject": subject, "remember": remember})


def filing(node, action, replaces="none") -> Reply:
    return chat({"node": node, "action": action, "replaces": replaces})


@pytest.fixture
def llm(ws):
    state, stop = serve()
    (ws / "mem.yaml").write_text(
        "llm_model_config:\n  backend: openai\n  base_url: " + state.url + "/v1\n  model_name: test-model\n"
        f"  api_key: {KEY}\n  timeout: 2.0\n  max_retries: 0\n",
        encoding="utf-8",
    )
    yield state
    stop()


def run_dream(mem, ws, day=D1):
    code, out, err = mem("-w", ws, "dream", "--date", day, "--json")
    assert code == 0, err
    return json.loads(out)


def asked(llm) -> list[str]:
    """The last user message of each request the model got."""
    return [s.body["messages"][-1]["content"] for s in llm.seen]


def first_day(ws, mem, llm):
    """D1 dreamed: the coffee preference and the launch deadline in two nodes named by the model."""
    coffee_day(ws)
    llm.script(verdict("morning drink"), verdict("Lumen launch"))
    return run_dream(mem, ws)


def test_each_statement_is_asked_about_alone_and_the_nodes_are_named_for_its_subject(ws, mem, llm):
    rep = first_day(ws, mem, llm)
    assert rep["extractor"] == "openai:test-model" and not rep["failed"]
    assert sorted(digest_files(ws)) == ["digest/personal/morning-drink.md", "digest/wiki/lumen-launch.md"]
    # the statements as a node states them: self-contained, the user in the third person
    assert asked(llm) == ["The user prefers coffee in the morning.", "The Lumen launch deadline is April 20."]
    schema = llm.seen[0].body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["remember"]["enum"] == ["yes", "no"] and schema["properties"]["subject"]["maxLength"]
    node = digest_files(ws)["digest/personal/morning-drink.md"]
    assert "# Morning drink\n" in node and f"- The user prefers coffee in the morning. ([[{NOTE}]])" in node
    [drink] = [r for r in rep["results"] if r["target_path"] == "digest/personal/morning-drink.md"]
    # nothing close to ask about: the rules' new node, under the subject the model named
    assert drink["decided_by"] == "rules" and "a new node" in drink["decisions"][0]["reason"]
    assert rep["checkpointed"] == [NOTE]


def test_facts_over_max_units_are_not_asked_about_until_the_next_run(ws, mem, llm):
    coffee_day(ws)
    llm.script(verdict("morning drink"))
    code, out, err = mem("-w", ws, "dream", "--date", D1, "--json", "--max-units", "1")
    rep = json.loads(out)
    assert code == 0 and len(llm.seen) == 1 and list(digest_files(ws)) == ["digest/personal/morning-drink.md"]
    assert rep["remaining"]["facts"] == 1 and rep["remaining"]["paths"] == [NOTE] and rep["checkpointed"] == []
    llm.script(verdict("Lumen launch"))
    rep = run_dream(mem, ws)
    assert [r["target_path"] for r in rep["results"]] == ["digest/wiki/lumen-launch.md"]
    assert rep["checkpointed"] == [NOTE] and len(llm.seen) == 2


def test_small_talk_the_model_rejects_stays_in_the_note(ws, mem, llm):
    coffee_day(ws)
    llm.script(verdict("coffee", "no"), verdict("Lumen launch"))
    rep = run_dream(mem, ws)
    assert list(digest_files(ws)) == ["digest/wiki/lumen-launch.md"]
    [kept] = rep["facts"]["kept"]
    assert kept["fact"] == "User: I prefer coffee in the morning." and "the model judged it" in kept["why"]
    assert rep["checkpointed"] == [NOTE]  # decided: not dreamed again


def test_a_change_the_model_files_as_correct_marks_the_old_statement(ws, mem, llm):
    first_day(ws, mem, llm)
    coffee_day(ws, D2, "green tea", "s2")
    llm.script(
        verdict("morning drink"), filing("1", "CORRECT", "1.1"), verdict("Lumen launch"), filing("1", "CORROBORATE")
    )
    rep = run_dream(mem, ws, D2)
    by_path = {r["target_path"]: r for r in rep["results"]}
    drink = by_path["digest/personal/morning-drink.md"]
    assert drink["action"] == "CORRECT" and drink["decided_by"] == "model"
    text = digest_files(ws)["digest/personal/morning-drink.md"]
    now, history = text.split("## History")
    assert "- The user prefers green tea in the morning. ([[memory/2026-06-02/morning-routine.md]])" in now
    assert "- Previously: The user prefers coffee in the morning, until 2026-06-02" in history
    assert by_path["digest/wiki/lumen-launch.md"]["action"] == "CORROBORATE"
    listing = asked(llm)[3]
    assert "Node 1: morning drink\n  1.1. The user prefers coffee in the morning." in listing
    schema = llm.seen[3].body["response_format"]["json_schema"]["schema"]["properties"]
    assert schema["node"]["enum"] == ["none", "1"] and schema["replaces"]["enum"][0] == "none"


def test_a_change_the_model_would_leave_out_is_kept_so_the_old_value_is_not_current(ws, mem, llm):
    first_day(ws, mem, llm)
    coffee_day(ws, D2, "green tea", "s2")
    llm.script(verdict("tea", "no"), filing("1", "CORRECT", "1.1"), verdict("Lumen launch", "no"))
    rep = run_dream(mem, ws, D2)
    [drink] = rep["results"]
    assert drink["action"] == "CORRECT" and "judged it no lasting knowledge, but" in drink["decisions"][0]["reason"]
    # the deadline stated again changes nothing: the model's "no" stands
    assert [k["fact"] for k in rep["facts"]["kept"]] == ["User: The Lumen launch deadline is April 20."]


@pytest.mark.parametrize(
    "bad,error",
    [
        (("1", "CORROBORATE"), "does not state this yet (CORROBORATE would drop it)"),
        (("1", "REFINE"), "that is CORRECT"),
        (("1", "CORRECT", "none"), "CORRECT must name"),
        (("1", "CREATE"), 'CREATE goes with node "none"'),
    ],
)
def test_a_reply_that_would_lose_knowledge_is_retried_then_decided_by_the_rules(ws, mem, llm, bad, error):
    first_day(ws, mem, llm)
    coffee_day(ws, D2, "green tea", "s2")
    llm.script(
        verdict("morning drink"), filing(*bad), filing(*bad), verdict("Lumen launch"), filing("1", "CORROBORATE")
    )
    rep = run_dream(mem, ws, D2)
    assert asked(llm)[4].startswith("Your answer was rejected: ") and error in asked(llm)[4]
    drink = {r["target_path"]: r for r in rep["results"]}["digest/personal/morning-drink.md"]
    # the rules see the change the model could not file: still recorded, and said who decided
    assert drink["action"] == "CORRECT" and drink["decided_by"] == "rules"
    assert (
        drink["decisions"][0]["reason"].startswith("model reply invalid: ") and error in drink["decisions"][0]["reason"]
    )
    assert "## History" in digest_files(ws)["digest/personal/morning-drink.md"]


def test_a_correct_that_changes_nothing_is_refused_and_the_second_answer_used(ws, mem, llm):
    first_day(ws, mem, llm)
    session_note(ws, D2, "launch", "s2", {"Facts": ["User: The Lumen launch needs a sign-off from legal."]})
    llm.script(verdict("Lumen launch"), filing("1", "CORRECT", "1.1"), filing("1", "REFINE"))
    rep = run_dream(mem, ws, D2)
    [res] = rep["results"]
    assert (res["action"], res["decided_by"]) == ("REFINE", "model")
    assert "changes no value of statement 1.1" in asked(llm)[4]
    assert "## History" not in digest_files(ws)["digest/wiki/lumen-launch.md"]


def test_garbage_twice_is_decided_by_the_rules_and_the_night_succeeds(ws, mem, llm):
    coffee_day(ws)
    llm.script(chat("Sure! The user likes coffee."), chat("{not json"), verdict("Lumen launch"))
    rep = run_dream(mem, ws)
    assert rep["status"] == "completed" and len(digest_files(ws)) == 2
    drink = next(r for r in rep["results"] if "coffee" in r["decisions"][0]["fact"])
    assert drink["decided_by"] == "rules" and "model reply invalid: " in drink["decisions"][0]["reason"]
    assert drink["target_path"].startswith("digest/personal/")  # named by the rules' words instead


def test_unreachable_model_fails_with_exit_4_and_writes_nothing(ws, mem, clean_failure, llm):
    coffee_day(ws)
    llm.script(Reply(500, {"error": {"message": "model crashed"}}))
    line = clean_failure(mem("-w", ws, "dream", "--date", D1), 4)
    assert "AutoDream failed" in line and "HTTP 500" in line
    assert digest_files(ws) == {}
    assert not (ws / "mem_metadata/file_catalog/dream.jsonl.zst").exists()


# ---------------------------------------------------------------- the validation, without a server
def test_verdict_validation():
    from memcli.extraction.ask import Invalid
    from memcli.extraction.dream.judge import parse_verdict

    assert parse_verdict('{"subject": " Half-marathon  goal.", "remember": "yes"}').subject == "Half-marathon goal"
    assert parse_verdict('{"subject": "thanks", "remember": "no"}').remember is False
    assert parse_verdict('{"subject": "Sam\'s preferences", "remember": "yes"}').subject == "Sam's preferences"
    for bad, why in [
        ('{"subject": "tea", "remember": "maybe"}', '"remember" must be'),
        ('{"subject": "", "remember": "yes"}', '"subject" must name'),
        ('{"subject": "123", "remember": "yes"}', '"subject" must name'),
        ('{"subject": "the user", "remember": "yes"}', "says nothing"),
        ('{"subject": "User preferences", "remember": "yes"}', "says nothing"),
        ('{"subject": "a b c d e f g", "remember": "yes"}', "at most 6 words"),
    ]:
        with pytest.raises(Invalid, match=why):
            parse_verdict(bad)


def test_filing_validation():
    from memcli.extraction.ask import Invalid
    from memcli.extraction.dream.evidence import Evidence
    from memcli.extraction.dream.judge import Candidate, parse_filing
    from memcli.extraction.dream.schema import Fact

    ev = Evidence()
    cands = [Candidate("editor", ["The user's editor is Vim.", "The user maps jk to Escape."])]
    new = Fact("The user's editor is now Helix.", "memory/2026-06-02/a.md")

    def parse(**reply):  # (the Fact's line is the statement shown)
        return parse_filing(json.dumps(reply), new.line(), cands, ev, new)

    assert parse(node="none", action="CREATE", replaces="none").node is None
    ok = parse(node="1", action="CORRECT", replaces="1.1")
    assert (ok.node, ok.action, ok.statement) == (0, "CORRECT", "The user's editor is Vim.")
    for reply, why in [
        ({"node": "2", "action": "REFINE"}, '"node" must be'),
        ({"node": "1", "action": "DELETE"}, '"action" must be one of'),
        ({"node": "1", "action": "CORRECT", "replaces": "1.2"}, "changes no value of statement 1.2"),
        ({"node": "1", "action": "REFINE"}, "that is CORRECT"),
        ({"node": "1", "action": "CORROBORATE"}, "CORROBORATE would drop it"),
    ]:
        with pytest.raises(Invalid, match=why):
            parse(**reply)
    again = Fact("The user's editor is Vim.", "memory/2026-06-03/b.md")
    same = parse_filing('{"node": "1", "action": "REFINE", "replaces": "none"}', again.line(), cands, ev, again)
    assert (same.action, same.statement) == ("CORROBORATE", "The user's editor is Vim.") and same.repaired
    with pytest.raises(Invalid, match="says the same thing"):
        parse_filing('{"node": "1", "action": "CORRECT", "replaces": "1.1"}', again.line(), cands, ev, again)
