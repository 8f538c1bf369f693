"""A note is found through the conversation it was written from, and the hit shown is the note
(memcli.index.notes.source, memcli.retrieval.sources), through the real CLI."""

from __future__ import annotations

import json
import os

import pytest
from test_mcp import Client

POTLUCK = [
    {"role": "user", "content": "I'm bringing feijoada to the street party on Saturday, a big pot of it."},
    {
        "role": "assistant",
        "content": "Great potluck dish: it feeds a crowd. Soak the black beans overnight and keep it warm in a slow cooker.",
    },
    {"role": "user", "content": "Perfect, thanks."},
]
DECOY = [
    {"role": "user", "content": "My cello lesson moved to Tuesday evenings at the conservatory."},
    {"role": "assistant", "content": "Noted: cello on Tuesday evenings."},
]


def ingest(run_mem, ws, tmp_path, sid, day, messages):
    path = tmp_path / f"{sid}.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    code, out, err = run_mem("-w", ws, "ingest", path, "--session-id", sid, "--date", day, "--force", "--json")
    assert code == 0, err
    return json.loads(out)


def search(run_mem, ws, query, *extra):
    code, out, err = run_mem("-w", ws, "search", *extra, "--limit", "5", "--", query)
    assert code == 0, err
    return out


ON = "search:\n  source_conversations: true\n"


@pytest.fixture(autouse=True)
def sources_on(ws):
    (ws / "mem.yaml").write_text(ON, encoding="utf-8")  # the default, said where a test relies on it


@pytest.fixture
def chats(ws, tmp_path, run_mem):
    ingest(run_mem, ws, tmp_path, "party", "2026-05-02", POTLUCK)
    ingest(run_mem, ws, tmp_path, "music", "2026-05-03", DECOY)
    code, _, err = run_mem("-w", ws, "reindex")
    assert code == 0, err
    notes = sorted((ws / "memory/2026-05-02").glob("*.md"))
    assert notes, "ingest wrote no note for the party session"
    return ws, notes[0].relative_to(ws).as_posix()


def test_a_word_said_only_in_the_conversation_finds_the_note(chats, run_mem):
    ws, note = chats
    assert "potluck" not in (ws / note).read_text(encoding="utf-8").lower()  # the assistant's word, not kept
    hits = json.loads(search(run_mem, ws, "potluck", "--json"))["results"]
    assert hits and hits[0]["path"] == note
    assert hits[0]["via_source"] is True
    assert hits[0]["start_line"] >= 1  # the note's own lines are shown, never the transcript
    assert "feijoada" in hits[0]["text"].lower()
    assert len([h for h in hits if h["path"] == note]) == 1


def test_a_match_in_the_note_itself_is_not_marked(chats, run_mem):
    ws, note = chats
    hits = json.loads(search(run_mem, ws, "feijoada street party", "--json"))["results"]
    assert hits[0]["path"] == note and hits[0]["via_source"] is False
    assert all(h["start_line"] >= 1 for h in hits)


def test_text_output_says_the_conversation_matched(chats, run_mem):
    ws, note = chats
    out = search(run_mem, ws, "potluck")
    lines = out.splitlines()
    assert lines[0].startswith(f"========== {note}:")
    assert "Matched: the conversation this note was written from (its source_conversation)" in lines


def test_a_damaged_log_line_is_skipped_and_the_rest_indexed(ws, note, run_mem):
    log = ws / "mem_session/dialog/garden.jsonl"
    log.parent.mkdir(parents=True)
    good = {"id": "m2", "role": "user", "content": [{"type": "text", "text": "the quince tree needs pruning"}]}
    log.write_text('{"id": "m1", "role": \n' + json.dumps(good) + "\n", encoding="utf-8")
    note(
        ws,
        "memory/2026-05-04/garden.md",
        "# Garden\n\n- The user has a fruit tree in the back garden.\n",
        name="garden",
        source_conversation="[[mem_session/dialog/garden.jsonl]]",
    )
    code, _, err = run_mem("-w", ws, "reindex")
    assert code == 0, err
    hits = json.loads(search(run_mem, ws, "quince pruning", "--json"))["results"]
    assert [h["path"] for h in hits][:1] == ["memory/2026-05-04/garden.md"] and hits[0]["via_source"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_missing_or_symlinked_log_adds_nothing(ws, note, tmp_path, run_mem):
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(json.dumps({"id": "m1", "role": "user", "content": "the walnut cabinet"}) + "\n")
    (ws / "mem_session/dialog").mkdir(parents=True)
    os.symlink(outside, ws / "mem_session/dialog/linked.jsonl")
    note(
        ws, "memory/2026-05-05/a.md", "# A\n\n- Furniture.\n", source_conversation="[[mem_session/dialog/linked.jsonl]]"
    )
    note(ws, "memory/2026-05-05/b.md", "# B\n\n- Tools.\n", source_conversation="[[mem_session/dialog/gone.jsonl]]")
    code, _, err = run_mem("-w", ws, "reindex")
    assert code == 0, err
    assert json.loads(search(run_mem, ws, "walnut cabinet", "--json"))["results"] == []


def test_mcp_memory_search_shows_the_note_and_says_the_conversation_matched(chats):
    ws, note = chats
    c = Client(ws)
    try:
        c.initialize()
        text, failed = c.call("memory_search", {"query": "potluck", "limit": 5})
        assert not failed
        assert text.startswith(f"========== {note}:")
        assert "Matched: the conversation this note was written from (its source_conversation)" in text
        assert "assistant:" not in text  # the conversation is never shown as a result
    finally:
        c.close()


def test_it_can_be_switched_off(ws, tmp_path, run_mem):
    (ws / "mem.yaml").write_text("search:\n  source_conversations: false\n", encoding="utf-8")
    ingest(run_mem, ws, tmp_path, "party", "2026-05-02", POTLUCK)
    code, _, err = run_mem("-w", ws, "reindex")
    assert code == 0, err
    assert json.loads(search(run_mem, ws, "potluck", "--json"))["results"] == []


def test_a_log_that_changes_while_its_note_does_not_is_read_again(chats, run_mem):
    ws, note = chats
    log = ws / "mem_session/dialog/party.jsonl"
    said = {"id": "late", "role": "user", "content": [{"type": "text", "text": "we also need a gazebo"}]}
    said["timestamp"] = json.loads(log.read_text(encoding="utf-8").splitlines()[0]).get("timestamp")
    with log.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(said) + "\n")
    hits = json.loads(search(run_mem, ws, "gazebo", "--json"))["results"]  # the sync before a search
    assert [h["path"] for h in hits][:1] == [note] and hits[0]["via_source"]
    code, _, err = run_mem("-w", ws, "reindex", "--full")
    assert code == 0, err
    assert json.loads(search(run_mem, ws, "gazebo", "--json"))["results"] == hits
