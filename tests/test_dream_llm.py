"""`mem dream` with an LLM: a real HTTP server on 127.0.0.1 answering scripted chat completions.

Every reply is validated before anything is written; a rejected reply is retried once
with the error fed back; a unit rejected twice fails alone (its notes stay changed),
an extraction rejected twice fails the run and writes nothing.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "providers"))
from fake_provider import KEY, Reply, serve  # noqa: E402

from test_dream import D1, D2, assert_links_resolve, coffee_day, digest_files, session_note  # noqa: E402

NOTE = f"memory/{D1}/morning-routine.md"
COFFEE = "digest/personal/coffee-preference.md"
ABSTRACT = ("The user prefers coffee in the morning and plans the first hour of the day around it. "
            "Why: the user said so when describing the morning routine. How to apply: offer coffee, not tea, "
            "when suggesting a morning break; mention cafes near the office when planning early meetings; "
            "treat a change of mind as news and record it here.")


def chat(content, finish="stop", delay=0.0) -> Reply:
    if not isinstance(content, str):
        content = json.dumps(content)
    body = {"id": "c1", "object": "chat.completion", "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]}
    return Reply(200, body, delay=delay)


def units(*items) -> Reply:
    return chat({"units": [dict(zip(("name", "bucket", "summary", "paths"), it)) for it in items],
                 "topics": [{"title": "Morning coffee", "reason": "The user talks about it.",
                             "evidence": "prefers coffee", "keywords": ["coffee"], "paths": [NOTE]}]})


COFFEE_UNIT = ("coffee-preference", "personal", "The user prefers coffee in the morning.", [NOTE])


def receipt(action, target, body, note="done", description="The user prefers coffee in the morning.",
            delay=0.0) -> Reply:
    return chat({"action": action, "target_path": target, "note": note, "description": description, "body": body},
                delay=delay)


def create_body(extra: str = "") -> str:
    return f"# Coffee preference\n\n{ABSTRACT}{extra}\n\n## Sources\n- The preference is stated in [[{NOTE}]].\n"


@pytest.fixture
def llm(ws):
    state, stop = serve()
    (ws / "mem.yaml").write_text(
        "llm_model_config:\n  backend: openai\n  base_url: " + state.url + "/v1\n  model_name: test-model\n"
        f"  api_key: {KEY}\n  timeout: 2.0\n  max_retries: 0\n", encoding="utf-8")
    yield state
    stop()


def run_dream(mem, ws, *args):
    code, out, err = mem("-w", ws, "dream", "--date", D1, "--json", *args)
    assert code == 0, err
    return json.loads(out)


def test_create_writes_the_validated_node(ws, mem, llm):
    coffee_day(ws)
    llm.script(units(COFFEE_UNIT), receipt("CREATE", COFFEE, create_body(), note="new preference node"))
    rep = run_dream(mem, ws)
    assert rep["extractor"] == "openai:test-model"
    assert rep["results"] == [{"unit": "coffee-preference", "bucket": "personal", "paths": [NOTE],
                               "action": "CREATE", "target_path": COFFEE, "note": "new preference node"}]
    text = (ws / COFFEE).read_text(encoding="utf-8")
    assert text == ("---\ndescription: The user prefers coffee in the morning.\nname: coffee-preference\n---\n"
                    + create_body())
    extract, integrate = llm.seen
    assert extract.path == "/v1/chat/completions" and extract.headers["authorization"] == f"Bearer {KEY}"
    prompt = extract.body["messages"][1]["content"]
    assert f'changed_paths: ["{NOTE}"]' in prompt and "User: I prefer coffee in the morning." in prompt
    assert "unit_name: coffee-preference" in integrate.body["messages"][1]["content"]
    assert "personal" in integrate.body["messages"][0]["content"]
    assert (ws / f"memory/{D1}/interests.yaml").read_text(encoding="utf-8").count("Morning coffee") == 1


@pytest.mark.parametrize("action", ["CORROBORATE", "REFINE", "CORRECT"])
def test_updates_of_a_recalled_node(ws, mem, llm, action):
    coffee_day(ws)
    llm.script(units(COFFEE_UNIT), receipt("CREATE", COFFEE, create_body()))
    run_dream(mem, ws)
    session_note(ws, D2, "later", "s2", {"Preferences": ["User: I prefer tea in the morning now."]})
    later = f"memory/{D2}/later.md"
    old = (ws / COFFEE).read_text(encoding="utf-8").split("---\n", 2)[2]
    new_line = {"CORROBORATE": "", "REFINE": " On weekends the user skips coffee.",
                "CORRECT": f"\n> note: contradicted by [[{later}]] - the user now prefers tea."}[action]
    body = old.replace(ABSTRACT, ABSTRACT + new_line) + f"- Confirmed again in [[{later}]].\n"
    llm.script(chat({"units": [{"name": "coffee-preference", "bucket": "personal", "summary": "Tea now.",
                                "paths": [later]}]}),
               receipt(action, COFFEE, body, note=f"{action.lower()}d", description=""))
    code, out, err = mem("-w", ws, "dream", "--date", D2)
    assert code == 0, err
    assert f"- [{COFFEE}][{action}]: {action.lower()}d" in out.splitlines()
    integrate = llm.seen[-1].body["messages"][1]["content"]
    assert f"### {COFFEE}" in integrate  # the recalled node was shown to the model
    text = (ws / COFFEE).read_text(encoding="utf-8")
    assert text.startswith("---\ndescription: The user prefers coffee in the morning.\nname: coffee-preference\n")
    assert f"[[{NOTE}]]" in text and f"[[{later}]]" in text
    assert len(digest_files(ws)) == 1
    assert_links_resolve(ws)


def test_receipt_naming_a_missing_node_is_retried_with_the_error(ws, mem, llm):
    coffee_day(ws)
    llm.script(units(COFFEE_UNIT), receipt("REFINE", "digest/personal/no-such-node.md", create_body()),
               receipt("CREATE", COFFEE, create_body()))
    rep = run_dream(mem, ws)
    assert [r["action"] for r in rep["results"]] == ["CREATE"]
    retry = llm.seen[2].body["messages"]
    assert retry[-1]["content"].startswith("Your answer was rejected: REFINE names digest/personal/no-such-node.md, "
                                           "which is not an existing digest node")


def test_create_over_an_existing_file_is_rejected(ws, mem, llm, note, clean_failure):
    coffee_day(ws)
    note(ws, COFFEE, "# Coffee\n\nHand-written.\n", name="coffee-preference", description="Mine.")
    before = (ws / COFFEE).read_text(encoding="utf-8")
    llm.script(units(COFFEE_UNIT), receipt("CREATE", COFFEE, create_body()), receipt("CREATE", COFFEE, create_body()))
    # the only unit failed: the run failed, and says nothing was written
    line = clean_failure(mem("-w", ws, "dream", "--date", D1), 4)
    assert f"CREATE names {COFFEE}, which already exists" in line and "nothing was written" in line
    assert (ws / COFFEE).read_text(encoding="utf-8") == before
    assert not (ws / "mem_metadata/file_catalog/dream.jsonl.zst").exists()
    llm.script(chat({"units": []}))
    code, out, _ = mem("-w", ws, "dream", "--date", D1, "--dry-run", "--json")
    assert json.loads(out)["files"]["changed"] == [NOTE]  # not checkpointed: dreamed again next run


def test_garbage_extraction_twice_fails_the_run_and_writes_nothing(ws, mem, clean_failure, llm):
    coffee_day(ws)
    llm.script(chat("Sure! The user likes coffee."), chat("{not json"))
    line = clean_failure(mem("-w", ws, "dream", "--date", D1), 4)
    assert line.startswith("mem: error: AutoDream failed: openai:test-model reply rejected twice: not valid JSON")
    assert llm.seen[1].body["messages"][-1]["content"].startswith("Your answer was rejected: not valid JSON")
    assert digest_files(ws) == {}
    assert not (ws / "mem_metadata/file_catalog/dream.jsonl.zst").exists()
    assert not (ws / f"memory/{D1}/interests.yaml").exists()


def test_one_unit_rejected_twice_fails_alone(ws, mem, llm):
    coffee_day(ws)
    other = session_note(ws, D1, "office", "s2", {"Facts": ["User: The office is at Torstrasse 5."]})
    office = f"memory/{D1}/office.md"
    llm.script(units(("office-address", "wiki", "The office address.", [office]), COFFEE_UNIT),
               chat("garbage"), chat("still garbage"), receipt("CREATE", COFFEE, create_body()))
    rep = run_dream(mem, ws)
    assert [r["target_path"] for r in rep["results"]] == [COFFEE]
    assert rep["failed"][0]["unit"] == "office-address" and rep["failed_paths"] == [office]
    assert rep["checkpointed"] == [NOTE] and rep["status"] == "completed_with_warnings"
    assert other.exists() and list(digest_files(ws)) == [COFFEE]


@pytest.mark.parametrize("reply,error", [
    (lambda: receipt("CREATE", COFFEE, "# Coffee\n\n" + "The user drinks coffee. " * 70), "write 50-200"),
    (lambda: receipt("DELETE", COFFEE, create_body()), '"action" must be one of'),
    (lambda: receipt("REFINE", "../etc/passwd.md", create_body()), '"target_path" must look like'),
    (lambda: chat(json.dumps({"action": "CREATE"})[:10], finish="length"), "cut off"),
])
def test_invalid_receipts_are_explained_to_the_model(ws, mem, llm, reply, error):
    coffee_day(ws)
    llm.script(units(COFFEE_UNIT), reply(), receipt("CREATE", COFFEE, create_body()))
    rep = run_dream(mem, ws)
    assert [r["action"] for r in rep["results"]] == ["CREATE"]
    assert error in llm.seen[2].body["messages"][-1]["content"]


@pytest.mark.parametrize("reply,check", [
    # a link to a missing file is unlinked, its text kept
    (lambda: receipt("CREATE", COFFEE, create_body(" See [[digest/wiki/nowhere.md]].")),
     lambda text: "See digest/wiki/nowhere.md." in text and "[[digest/wiki/nowhere.md]]" not in text),
    # a CREATE goes into the unit's bucket; a path without its folder and .md is completed
    (lambda: receipt("CREATE", "digest/wiki/coffee-preference.md", create_body()), lambda text: True),
    (lambda: receipt("create", "personal/Coffee Preference", create_body()), lambda text: True),
    (lambda: receipt("NEW", "[[coffee-preference.md]]", create_body()), lambda text: True),
    # a CREATE naming a note's path (models copy one) gets the path offered for the new node
    (lambda: receipt("CREATE", NOTE, create_body()), lambda text: True),
    (lambda: receipt("CREATE", "../etc/passwd.md", create_body()), lambda text: True),
    (lambda: receipt("REFINE", COFFEE, create_body()), lambda text: True),  # the offered path: a CREATE
    # the prompt's quoting and a copied frontmatter around the body
    (lambda: receipt("CREATE", COFFEE, "<<<\n---\nname: morning-routine\n---\n" + create_body() + ">>>>"),
     lambda text: "<<<" not in text and ">>>" not in text and "name: morning-routine" not in text),
    # frontmatter is ours: stripped from the body
    (lambda: receipt("CREATE", COFFEE, "---\nname: x\n---\n" + create_body()),
     lambda text: text.count("---\n") == 2 and "name: x" not in text),
    # a too-short body gets the unit's summary; a fenced copy of a note's frontmatter is dropped
    (lambda: receipt("CREATE", COFFEE, "# Coffee\n\nToo short.\n"),
     lambda text: "# Coffee\n\nThe user prefers coffee in the morning.\n\nToo short.\n\n## Sources\n" in text),
    (lambda: receipt("CREATE", COFFEE, f"```markdown\n[[{NOTE}]] name: morning-routine description: x\n"
                                       "session_id: s1\n```"),
     lambda text: text.split("---\n", 2)[2] == "# Coffee preference\n\nThe user prefers coffee in the morning.\n\n"
                                               f"## Sources\n- Stated on {D1} in [[{NOTE}]].\n"),
    # the quoting inside a code fence, the prompt's placeholder line, a description copied from the prompt
    (lambda: receipt("CREATE", COFFEE, "```markdown\n<<<\n---\nname: x\n---\n" + create_body(
        "\n> note: contradicted by <path> - <one-line reason>") + ">>>>\n```", description="Integrate the unit."),
     lambda text: "<path>" not in text and "```" not in text and "<<<" not in text
                  and "description: The user prefers coffee in the morning and plans" in text),
    # seen from Qwen 0.5B: a fence opened and never closed, quoting and a note pasted under its own
    # title inside the body, a description that is the prompt's quoting
    (lambda: receipt("CREATE", COFFEE, create_body().replace("\n\n## Sources", "\n\n```markdown\n<<<\n"
                                                               "# Morning routine\n## Facts\n- User: I walk.\n\n"
                                                               "## Sources"), description="<<<"),
     lambda text: "```" not in text and "<<<" not in text and "I walk" not in text and "# Morning routine" not in text
                  and "description: The user prefers coffee in the morning and plans" in text),
    # a missing description and note are derived
    (lambda: receipt("CREATE", COFFEE, create_body(), note="", description=""),
     lambda text: "description: The user prefers coffee in the morning and plans" in text),
])
def test_mechanical_receipt_repairs_need_no_retry(ws, mem, llm, reply, check):
    coffee_day(ws)
    llm.script(units(COFFEE_UNIT), reply())
    rep = run_dream(mem, ws)
    assert len(llm.seen) == 2 and [(r["action"], r["target_path"]) for r in rep["results"]] == [("CREATE", COFFEE)]
    assert rep["results"][0]["note"]
    text = (ws / COFFEE).read_text(encoding="utf-8")
    assert check(text)
    assert_links_resolve(ws)


def test_an_update_that_drops_a_link_gets_it_back(ws, mem, llm):
    coffee_day(ws)
    llm.script(units(COFFEE_UNIT), receipt("CREATE", COFFEE, create_body()))
    run_dream(mem, ws)
    session_note(ws, D2, "later", "s2", {"Preferences": ["User: I still prefer coffee."]})
    unit = chat({"units": [{"name": "coffee", "bucket": "personal", "summary": "Coffee.",
                            "paths": [f"memory/{D2}/later.md"]}]})
    dropped = receipt("CORROBORATE", COFFEE, f"# Coffee\n\n{ABSTRACT}\n\n## Sources\n- [[memory/{D2}/later.md]]\n")
    llm.script(unit, dropped)
    code, out, err = mem("-w", ws, "dream", "--date", D2)
    assert code == 0, err
    assert len(llm.seen) == 4  # no retry
    text = (ws / COFFEE).read_text(encoding="utf-8")
    assert f"- The preference is stated in [[{NOTE}]]." in text and f"[[memory/{D2}/later.md]]" in text


def test_duplicate_unit_names_are_merged(ws, mem, llm):
    coffee_day(ws)
    office = f"memory/{D1}/office.md"
    session_note(ws, D1, "office", "s2", {"Facts": ["User: The office is at Torstrasse 5."]})
    llm.script(units(("Daily Log", "wiki", "The user drinks coffee.", [NOTE]),
                     ("daily-log", "wiki", "The office is at Torstrasse 5.", ["office.md"])),
               receipt("CREATE", "digest/wiki/daily-log.md", create_body()))
    rep = run_dream(mem, ws)
    assert len(llm.seen) == 2
    assert rep["units"] == [{"name": "daily-log", "bucket": "wiki", "paths": [NOTE, office],
                             "summary": "The user drinks coffee. The office is at Torstrasse 5."}]


def test_unit_paths_must_be_changed_inputs(ws, mem, llm):
    coffee_day(ws)
    session_note(ws, D1, "office", "s2", {"Facts": ["User: The office is at Torstrasse 5."]})
    llm.script(units(("coffee-preference", "personal", "Coffee.", ["memory/2020-01-01/old.md"])),
               units(("coffee-preference", "mystery", "Coffee.", [NOTE])), receipt("CREATE",
                                                                                   "digest/wiki/coffee-preference.md",
                                                                                   create_body()))
    rep = run_dream(mem, ws)
    assert "which is not a changed input" in llm.seen[1].body["messages"][-1]["content"]
    assert rep["units"][0]["bucket"] == "wiki"  # unknown bucket -> wiki
    assert [r["target_path"] for r in rep["results"]] == ["digest/wiki/coffee-preference.md"]


def test_a_note_edited_during_the_run_stays_changed(ws, mem, llm):
    note_path = coffee_day(ws)
    scanned = note_path.stat().st_mtime

    def edit():  # once the integration request is in (its answer takes 0.8 s), edit the note
        deadline = time.monotonic() + 10
        while len(llm.seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        note_path.write_text(note_path.read_text(encoding="utf-8") + "- User: I also like cake.\n", encoding="utf-8")

    llm.script(units(COFFEE_UNIT), receipt("CREATE", COFFEE, create_body(), delay=0.8))
    editor = threading.Thread(target=edit)
    editor.start()
    rep = run_dream(mem, ws)
    editor.join()
    assert rep["checkpointed"] == [NOTE]
    from memcli.index import store

    [rec] = store.read_records(ws / "mem_metadata/file_catalog/dream.jsonl.zst")
    assert rec["st_mtime"] == scanned != note_path.stat().st_mtime
    llm.script(chat({"units": []}))
    assert run_dream(mem, ws)["files"]["changed"] == [NOTE]


def test_unreachable_model_fails_with_exit_4(ws, mem, clean_failure, llm):
    coffee_day(ws)
    llm.script(Reply(500, {"error": {"message": "model crashed"}}))
    line = clean_failure(mem("-w", ws, "dream", "--date", D1), 4)
    assert "AutoDream failed" in line and "HTTP 500" in line
    assert digest_files(ws) == {}


def test_notes_that_do_not_fit_the_window_are_extracted_in_batches(ws, mem, llm):
    (ws / "mem.yaml").write_text((ws / "mem.yaml").read_text() + "  context_tokens: 2048\n")
    paths = []
    for i in range(4):
        session_note(ws, D1, f"topic-{i}", f"s{i}", {"Facts": [f"User: Fact {i} about rack {i}, room {100 + i}. " * 60]})
        paths.append(f"memory/{D1}/topic-{i}.md")
    per_batch = [units(("racks", "wiki", f"Rack {i} is in room {100 + i}.", [p])) for i, p in enumerate(paths)]
    body = f"# Racks\n\n{ABSTRACT}\n\n## Sources\n" + "".join(f"- [[{p}]]\n" for p in paths)
    llm.script(*per_batch, receipt("CREATE", "digest/wiki/racks.md", body))
    code, out, err = mem("-w", ws, "dream", "--date", D1, "--json", "--dry-run")
    assert code == 0, err
    from memcli.extraction.ask import tokens

    extracts = [s for s in llm.seen if "changed_paths" in s.body["messages"][1]["content"]]
    assert len(extracts) >= 2
    for seen in llm.seen:
        assert tokens("".join(m["content"] for m in seen.body["messages"])) <= 2048 - 512
    listed = [p for s in extracts for p in s.body["response_format"]["json_schema"]["schema"]["properties"]
              ["units"]["items"]["properties"]["paths"]["items"]["enum"]]
    assert sorted(listed) == paths  # each note in exactly one batch, and only its paths allowed
    rep = json.loads(out)
    assert [u["name"] for u in rep["units"]] == ["racks"]  # one name across batches: one unit
    assert rep["units"][0]["paths"] == paths and len(extracts) == 4


def test_units_over_max_units_stay_for_the_next_run(ws, mem, llm):
    coffee_day(ws)
    office = f"memory/{D1}/office.md"
    session_note(ws, D1, "office", "s2", {"Facts": ["User: The office is at Torstrasse 5."]})
    office_unit = ("office-location", "wiki", "The office is at Torstrasse 5.", [office])
    tea_unit = ("tea-break", "personal", "The user takes tea at four.", [NOTE])
    llm.script(units(COFFEE_UNIT, tea_unit, office_unit), receipt("CREATE", COFFEE, create_body()))
    rep = run_dream(mem, ws, "--max-units", "1")
    # asked for more than the budget, so what is over it is known: its notes are not checkpointed
    schema = llm.seen[0].body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["units"]["maxItems"] > 1
    assert [u["name"] for u in rep["units"]] == ["coffee-preference"]
    assert rep["remaining"] == {"units": 2, "paths": sorted([NOTE, office])}
    assert rep["checkpointed"] == []
    # the next run reads both notes again, is told what is done, and takes the next unit
    tea_body = f"# Tea break\n\n{ABSTRACT}\n\n## Sources\n- [[{NOTE}]]\n"
    llm.script(units(COFFEE_UNIT, tea_unit, office_unit),
               receipt("CREATE", "digest/personal/tea-break.md", tea_body, description="Tea at four."))
    rep = run_dream(mem, ws, "--max-units", "1")
    prompt = llm.seen[-2].body["messages"][1]["content"]
    assert 'already_integrated (do not return these units again): ["coffee-preference"]' in prompt
    assert [u["name"] for u in rep["units"]] == ["tea-break"]  # coffee-preference is done: not again
    assert rep["remaining"] == {"units": 1, "paths": [office]} and rep["checkpointed"] == [NOTE]
    office_body = f"# Office location\n\n{ABSTRACT}\n\n## Sources\n- [[{office}]]\n"
    llm.script(units(office_unit), receipt("CREATE", "digest/wiki/office-location.md", office_body,
                                           description="The office is at Torstrasse 5."))
    rep = run_dream(mem, ws, "--max-units", "1")
    assert rep["files"]["changed"] == [office] and rep["remaining"] == {"units": 0, "paths": []}
    assert rep["checkpointed"] == [office]
    assert sorted(digest_files(ws)) == sorted([COFFEE, "digest/personal/tea-break.md",
                                               "digest/wiki/office-location.md"])


def test_a_unit_cites_only_the_notes_it_comes_from():
    from memcli.extraction.dream.llm import grounded
    from memcli.extraction.dream.schema import Unit

    texts = {"a.md": "- User: Today I prefer oolong tea over coffee. I cycle to work.",
             "b.md": "- The Lumen API is rewritten in Node.js 20.", "c.md": "- Miso the beagle sees the vet."}
    tea = grounded(Unit("today-i-prefer-oolong-tea", "personal", "Today, I prefer oolong tea over coffee.",
                        ["a.md", "b.md", "c.md"]), texts)
    assert tea.paths == ["a.md"] and tea.name == "oolong-tea"
    vague = grounded(Unit("misc-notes", "wiki", "Various things.", ["a.md", "b.md"]), texts)
    assert vague.paths == ["a.md", "b.md"] and vague.name == "misc-notes"  # no evidence: left as it is


def test_a_node_never_links_to_itself(ws, mem, llm):
    coffee_day(ws)
    body = create_body().replace("\n\n## Sources", f"\n\n[[{COFFEE}]]\n\nSee [[{COFFEE}]].\n\n## Sources")
    llm.script(units(COFFEE_UNIT), receipt("CREATE", COFFEE, body))
    run_dream(mem, ws)
    text = (ws / COFFEE).read_text(encoding="utf-8")
    assert f"[[{COFFEE}" not in text and "See ." in text and f"[[{NOTE}]]" in text


@pytest.mark.parametrize("action", ["CORROBORATE", "REFINE"])
def test_an_update_that_drops_the_node_is_repaired_or_refused(ws, mem, llm, action):
    # seen from Qwen 0.5B: an update whose body is only the prompt's scaffolding and a source line
    coffee_day(ws)
    llm.script(units(COFFEE_UNIT), receipt("CREATE", COFFEE, create_body()))
    run_dream(mem, ws)
    before = (ws / COFFEE).read_text(encoding="utf-8")
    session_note(ws, D2, "later", "s2", {"Preferences": ["User: Coffee in the morning, still."]})
    later = f"memory/{D2}/later.md"
    bare = f"## Sources\n- [[{NOTE}]]\n>>\n# Unit material\n### {later}\n- [[{later}]]\n"
    unit = chat({"units": [{"name": "coffee-preference", "bucket": "personal", "summary": "Coffee still.",
                            "paths": [later]}]})
    llm.script(unit, receipt(action, COFFEE, bare), receipt(action, COFFEE, bare))
    code, out, err = mem("-w", ws, "dream", "--date", D2, "--json")
    text = (ws / COFFEE).read_text(encoding="utf-8")
    if action == "CORROBORATE":  # nothing new to say: the node stays, with the new source
        assert code == 0 and json.loads(out)["results"][0]["action"] == "CORROBORATE", err
        assert ABSTRACT in text and f"[[{later}]]" in text and "Unit material" not in text and ">>" not in text
    else:  # a refinement that loses the node is refused twice: the (only) unit fails, nothing is written
        assert "updates are additive" in llm.seen[-1].body["messages"][-1]["content"]
        assert code == 4 and "updates are additive" in err and text == before
