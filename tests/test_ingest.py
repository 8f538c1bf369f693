"""`mem ingest` with the offline extractor: session log, cadence, note, day index, index."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memcli.vault.lock import Lock

DAY = "2026-06-29"


def msg(role, text, minute, **extra):
    return {"role": role, "content": text, "timestamp": f"{DAY}T10:{minute:02d}:00+00:00", **extra}


KICKOFF = [
    msg("user", "Hi! Thanks for the help yesterday.", 0),
    msg("assistant", "You're welcome! How can I help?", 1),
    msg("user", "We decided to replace MySQL with PostgreSQL 16 for the Lumen API, because we need JSONB.", 2),
    msg("assistant", "Got it, we'll use PostgreSQL 16 on a managed instance. Anything else?", 3),
    msg("user", "I prefer dark mode in every editor.", 4),
    msg("user", "I'll draft the migration script by Friday.", 5),
    msg("user", "ok", 6),
]


def put(tmp_path: Path, messages, name="conv.json", jsonl=False) -> Path:
    path = tmp_path / name
    if jsonl:
        path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    else:
        path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return path


def tree(root: Path) -> dict[str, bytes]:
    """Every file under the workspace except locks (their holder line changes)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "locks" not in p.parts
    }


def session_notes(ws: Path, day: str = DAY) -> list[Path]:
    return sorted((ws / "memory" / day).glob("*.md"))


def test_force_writes_the_note_day_index_and_session_log(ws, tmp_path, mem):
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "--session-id", "s1", "--force")
    assert code == 0, err
    [note] = session_notes(ws)
    text = note.read_text(encoding="utf-8")
    assert out.splitlines() == [
        f"Added memory/{DAY}/{note.name}",
        f"Added memory/{DAY}.md",
        "Saved 7 message(s) to mem_session/dialog/s1.jsonl (7 new, 0 updated)",
        "Extracted with rules (force)",
    ]
    head = text.split("---\n")[1].splitlines()
    assert [line.split(":")[0] for line in head] == ["description", "name", "session_id", "source_conversation"]
    assert f"name: {note.stem}" in head and "session_id: s1" in head
    assert "source_conversation: '[[mem_session/dialog/s1.jsonl]]'" in head
    assert (
        "- The user's team decided to replace MySQL with PostgreSQL 16 for the Lumen API, because they need JSONB."
        in text
    )
    assert "- The user prefers dark mode in every editor." in text
    assert "- The user will draft the migration script by Friday." in text
    assert "User:" not in text and "I prefer" not in text
    assert "Thanks for the help" not in text and "How can I help" not in text
    day = (ws / "memory" / f"{DAY}.md").read_text(encoding="utf-8")
    desc = next(line for line in head if line.startswith("description: "))[len("description: ") :].strip("'")
    assert day == (
        "---\ndescription: 1 note(s) today.\nname: '2026-06-29'\n---\n<!-- notes:auto -->\n"
        f"- [[memory/{DAY}/{note.name}]] name: {note.stem} description: {desc}\n"
        "<!-- /notes:auto -->\n"
    )
    log = [json.loads(x) for x in (ws / "mem_session/dialog/s1.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["role"] for r in log] == [m["role"] for m in KICKOFF]
    assert list(log[0]) == ["id", "name", "role", "content", "timestamp"]


def test_cadence_waits_for_interval_user_turns(ws, tmp_path, mem):
    first = put(tmp_path, KICKOFF[:3], "a.json")  # 2 user turns
    code, out, _ = mem("-w", ws, "ingest", first, "-s", "s1")
    assert code == 0
    assert "Not extracted yet: 2 of 5 user turns since the last extraction (--force extracts now)" in out
    assert session_notes(ws) == [] and (ws / "mem_session/dialog/s1.jsonl").is_file()
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, KICKOFF[:6], "b.json"), "-s", "s1")
    assert "Not extracted yet: 4 of 5" in out  # assistant turns do not count
    more = KICKOFF + [msg("user", "My team has three developers in Berlin.", 7)]
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, more, "c.json"), "-s", "s1", "--json")
    rep = json.loads(out)
    assert rep["extracted"] and rep["reason"] == "Extracted with rules (interval)"
    assert rep["messages"]["new"] == 2 and rep["pending_user_turns"] == 0  # "ok" is a user turn too
    assert "three developers in Berlin" in session_notes(ws)[0].read_text(encoding="utf-8")


def test_interval_zero_only_extracts_on_force(ws, tmp_path, mem):
    (ws / "mem.yaml").write_text("auto_memory_interval: 0\n")
    many = [msg("user", f"Fact number {i} about the Lumen API.", i) for i in range(8)]
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, many), "-s", "s1")
    assert "8 user turn(s) pending; auto_memory_interval is off" in out and session_notes(ws) == []


def test_flush_extracts_pending_unless_summarize_when_compact_is_off(ws, tmp_path, mem):
    conv = put(tmp_path, KICKOFF[:3])
    (ws / "mem.yaml").write_text("summarize_when_compact: false\n")
    code, out, err = mem("-w", ws, "ingest", conv, "-s", "s1", "--flush")
    assert code == 0 and "--flush ignored: summarize_when_compact is false" in err
    assert session_notes(ws) == []
    (ws / "mem.yaml").write_text("summarize_when_compact: true\n")
    code, out, err = mem("-w", ws, "ingest", conv, "-s", "s1", "--flush")
    assert code == 0 and "Extracted with rules (flush)" in out
    assert len(session_notes(ws)) == 1


def test_reingest_changes_nothing(ws, tmp_path, mem):
    conv = put(tmp_path, KICKOFF)
    assert mem("-w", ws, "ingest", conv, "-s", "s1", "--force")[0] == 0
    before = tree(ws)
    stats = {p: os.stat(ws / p).st_mtime_ns for p in before}
    for flags in ([], ["--force"], ["--flush"]):
        code, out, _ = mem("-w", ws, "ingest", conv, "-s", "s1", *flags, "--json")
        rep = json.loads(out)
        assert code == 0 and rep["changes"] == [] and rep["log_write"] == "unchanged"
    assert tree(ws) == before
    assert {p: os.stat(ws / p).st_mtime_ns for p in before} == stats


def test_messages_without_ids_get_stable_ids(ws, tmp_path, mem):
    plain = [
        {"role": "user", "content": "ok"},
        {"role": "user", "content": "ok"},
        {"role": "user", "content": "We ship on Monday."},
    ]
    conv = put(tmp_path, plain)
    mem("-w", ws, "ingest", conv, "-s", "s1")
    code, out, _ = mem("-w", ws, "ingest", conv, "-s", "s1", "--json")
    rep = json.loads(out)
    assert rep["messages"]["new"] == 0 and rep["log_write"] == "unchanged"
    ids = [json.loads(x)["id"] for x in (ws / "mem_session/dialog/s1.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 3  # the two "ok" are two turns, not one


def test_second_batch_updates_the_same_note(ws, tmp_path, mem):
    mem("-w", ws, "ingest", put(tmp_path, KICKOFF, "a.json"), "-s", "s1", "--force")
    [note] = session_notes(ws)
    note.write_text(note.read_text(encoding="utf-8") + "\nHand-written line stays.\n", encoding="utf-8")
    later = [msg("user", "We decided to run pgloader for the data migration.", 30)]
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, later, "b.json"), "-s", "s1", "--force")
    assert out.splitlines()[0] == f"Updated memory/{DAY}/{note.name}"
    assert session_notes(ws) == [note]
    text = note.read_text(encoding="utf-8")
    assert "Hand-written line stays." in text and "pgloader" in text
    assert text.count("prefers dark mode") == 1
    assert "description: 1 note(s) today." in (ws / "memory" / f"{DAY}.md").read_text()


def test_note_found_by_source_conversation(ws, tmp_path, mem, note):
    note(
        ws,
        f"memory/{DAY}/kickoff.md",
        "# Kickoff\n\n## Decisions\n- Old line.\n",
        name="kickoff",
        description="Kickoff.",
        source_conversation="[[mem_session/dialog/s1.jsonl]]",
    )
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    assert code == 0 and [p.name for p in session_notes(ws)] == ["kickoff.md"]
    text = (ws / f"memory/{DAY}/kickoff.md").read_text(encoding="utf-8")
    assert "session_id: s1" in text and "- Old line.\n- The user's team decided" in text


def test_day_index_keeps_text_outside_markers_and_lists_other_keys(ws, tmp_path, mem, note):
    note(
        ws,
        f"memory/{DAY}/other.md",
        "# Other\n",
        name="other",
        description="From another session.",
        session_id="s0",
        tags=["db", "plan"],
    )
    (ws / "memory" / f"{DAY}.md").write_text(
        "# My day\n\nWritten by hand.\n\n<!-- notes:auto -->\n- stale\n<!-- /notes:auto -->\n\nFooter.\n",
        encoding="utf-8",
    )
    mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    [mine] = [p for p in session_notes(ws) if p.name != "other.md"]
    page = (ws / "memory" / f"{DAY}.md").read_text(encoding="utf-8")
    assert page.startswith(
        "---\ndescription: 2 note(s) today.\nname: '2026-06-29'\n---\n# My day\n\nWritten by hand.\n"
    )
    assert page.endswith("<!-- /notes:auto -->\n\nFooter.\n") and "- stale" not in page
    lines = page.split("<!-- notes:auto -->\n")[1].split("<!-- /notes:auto -->")[0].splitlines()
    assert lines[0] == (f"- [[memory/{DAY}/other.md]] name: other description: From another session. tags: db, plan")
    assert lines[1].startswith(f"- [[memory/{DAY}/{mine.name}]] name: {mine.stem} description: ")  # by file name
    assert "session_id" not in page and "source_conversation" not in page


def test_search_finds_the_new_fact_at_once(ws, tmp_path, mem):
    mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    code, out, _ = mem("-w", ws, "search", "dark mode editor", "--no-sync", "--json")
    hits = json.loads(out)["results"]
    assert code == 0 and hits and hits[0]["path"] == f"memory/{DAY}/{session_notes(ws)[0].name}"


def test_sanitizes_tool_results_and_base64_media(ws, tmp_path, mem):
    conv = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here is my passport scan for the visa."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAA"}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "memory_search", "input": {"query": "visa"}}],
        },
        {
            "role": "system",
            "content": [
                {
                    "type": "tool_result",
                    "id": "t1",
                    "name": "memory_search",
                    "output": [{"type": "text", "text": "RECALLED: user hates Paris"}],
                }
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "visa"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "TOOL OUTPUT: user hates Rome"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "I am flying to Tokyo on 12 July."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}},
            ],
        },
    ]
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, conv), "-s", "s1", "--force", "--date", DAY, "--json")
    rep = json.loads(out)
    assert code == 0 and rep["messages"]["dropped_blocks"] == 4 and rep["messages"]["dropped_messages"] == 2
    log = (ws / "mem_session/dialog/s1.jsonl").read_text(encoding="utf-8")
    for gone in ("RECALLED", "TOOL OUTPUT", "iVBORw0KGgo", "base64", "UklGR", "tool_result"):
        assert gone not in log
    assert "https://example.com/a.png" in log and '"tool_use"' in log and '"name":"lookup"' in log
    text = session_notes(ws)[0].read_text(encoding="utf-8")
    assert "Tokyo on 12 July" in text and "Paris" not in text and "Rome" not in text


def test_out_of_order_batches_merge_sorted_by_time(ws, tmp_path, mem):
    conv = [dict(m, id=f"m{i}") for i, m in enumerate(KICKOFF)]
    logf = ws / "mem_session/dialog/s1.jsonl"
    _, out, _ = mem("-w", ws, "ingest", put(tmp_path, conv[2:4], "a.json"), "-s", "s1", "--json")
    assert json.loads(out)["log_write"] == "rewritten"
    _, out, _ = mem("-w", ws, "ingest", put(tmp_path, conv[4:], "b.json"), "-s", "s1", "--json")
    assert json.loads(out)["log_write"] == "appended"
    _, out, _ = mem("-w", ws, "ingest", put(tmp_path, conv[:3], "c.json"), "-s", "s1", "--json")
    rep = json.loads(out)
    assert rep["log_write"] == "rewritten" and rep["messages"]["new"] == 2
    assert [json.loads(x)["id"] for x in logf.read_text().splitlines()] == [f"m{i}" for i in range(7)]
    edited = [dict(conv[3], content="Got it, PostgreSQL 16 it is.")]
    _, out, _ = mem("-w", ws, "ingest", put(tmp_path, edited, "d.json"), "-s", "s1", "--json")
    assert json.loads(out)["messages"]["updated"] == 1
    assert "PostgreSQL 16 it is" in logf.read_text().splitlines()[3]


def test_torn_log_tail_is_dropped_and_repaired(ws, tmp_path, mem):
    conv = put(tmp_path, [dict(m, id=f"m{i}") for i, m in enumerate(KICKOFF)])
    mem("-w", ws, "ingest", conv, "-s", "s1")
    logf = ws / "mem_session/dialog/s1.jsonl"
    good = logf.read_text()
    logf.write_text(good.rsplit("\n", 2)[0] + "\n" + '{"id":"m6","na')  # a crash mid-append
    code, out, _ = mem("-w", ws, "ingest", conv, "-s", "s1", "--json")
    assert code == 0 and json.loads(out)["log_write"] == "rewritten" and logf.read_text() == good


def test_chinese_conversation(ws, tmp_path, mem):
    conv = [
        {"role": "user", "content": "你好！", "timestamp": f"{DAY}T09:00:00Z"},
        {
            "role": "user",
            "content": "我们决定把数据库从 MySQL 换成 PostgreSQL，因为需要 JSONB。",
            "timestamp": f"{DAY}T09:01:00Z",
        },
        {"role": "assistant", "content": "好的，已记录：数据库改用 PostgreSQL。", "timestamp": f"{DAY}T09:02:00Z"},
        {
            "role": "user",
            "content": "我喜欢用深色主题。下周一之前要完成数据库迁移脚本。这样可以吗？",
            "timestamp": f"{DAY}T09:03:00Z",
        },
        {"role": "user", "content": "谢谢", "timestamp": f"{DAY}T09:04:00Z"},
    ]
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, conv), "-s", "会话-1", "--force")
    assert code == 0, err
    [note] = session_notes(ws)
    text = note.read_text(encoding="utf-8")
    assert "## Decisions\n- The user said: 「我们决定把数据库从 MySQL 换成 PostgreSQL，因为需要 JSONB。」" in text
    assert "## Preferences\n- The user said: 「我喜欢用深色主题。下周一之前要完成数据库迁移脚本。」" in text
    assert "你好" not in text and "谢谢" not in text and "这样可以吗" not in text
    assert "数据" in note.stem.split("-")  # topic words: Han bigrams as well as Latin words
    assert "session_id: 会话-1" in text
    code, out, _ = mem("-w", ws, "search", "数据库迁移", "--no-sync", "--json")
    assert json.loads(out)["results"][0]["path"] == f"memory/{DAY}/{note.name}"


def test_date_comes_from_the_newest_message_in_the_configured_zone(ws, tmp_path, mem):
    (ws / "mem.yaml").write_text("timezone: Asia/Shanghai\n")
    conv = [
        {"role": "user", "content": "We decided to use Redis for the job queue.", "timestamp": "2026-06-29T20:00:00Z"}
    ]
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, conv), "-s", "s1", "--force")
    assert code == 0 and "memory/2026-06-30/" in out
    code, out, _ = mem("-w", ws, "ingest", put(tmp_path, conv, "b.json"), "-s", "s2", "--force", "--date", "2026-01-02")
    assert "memory/2026-01-02/" in out


def test_inbox_gets_a_record_when_memory_changed(ws, tmp_path, mem):
    mem("-w", ws, "ingest", put(tmp_path, KICKOFF[:2]), "-s", "s1")  # log only: no record
    assert not (ws / "mem_metadata/inbox/inbox.jsonl").exists()
    mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "-s", "s1", "--force")
    [rec] = [json.loads(x) for x in (ws / "mem_metadata/inbox/inbox.jsonl").read_text().splitlines()]
    assert rec["job"] == "ingest" and rec["summary"] == "session s1: Extracted with rules (force)"
    assert [c["action"] for c in rec["changes"]] == ["added", "added"]


@pytest.mark.parametrize(
    "sid", ["../x", "a/b", "a\\b", "..", ".", "x\x01y", "a:b", "a*b", 'a"b', "a|b", "", " x", "x" * 201]
)
def test_bad_session_ids_exit_2_and_write_nothing(ws, tmp_path, mem, sid):
    before = tree(ws)
    code, out, err = mem("-w", ws, "ingest", put(tmp_path, KICKOFF), "--session-id", sid, "--force")
    assert code == 2 and out == "" and "mem: error: session id" in err
    assert tree(ws) == before and not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    "payload,expected",
    [
        (
            '[\n{"role": "user", "content": "a"},\n{"role": "user" "content": "b"}\n]\n',
            "input is not valid JSON: Expecting ',' delimiter at line 3 column 17",
        ),
        ('{"role": "user", "content": "a"}\n{"role": "user", "content": "b"\n', "line 2 is not valid JSON"),
        ('{"role": "user", "content": "a"}\n\n{"role": "robot", "content": "b"}\n', "line 3: role must be one of"),
        (
            '[{"role": "user", "content": "a", "timestamp": "yesterday"}]',
            "message 1: cannot read timestamp 'yesterday'",
        ),
        ('[{"role": "user", "content": 5}]', "message 1: content must be a string or a list of blocks"),
        ("[]", "the input holds no messages"),
        ("   \n", "the input holds no messages"),
        ("hello", "line 1 is not valid JSON"),
    ],
)
def test_malformed_input_names_the_line_and_writes_nothing(ws, tmp_path, mem, payload, expected):
    conv = tmp_path / "bad.json"
    conv.write_text(payload, encoding="utf-8")
    before = tree(ws)
    code, out, err = mem("-w", ws, "ingest", conv, "-s", "s1", "--force")
    assert code == 2 and out == "" and expected in err, err
    assert tree(ws) == before


def test_bad_date_and_unreadable_file(ws, tmp_path, mem):
    conv = put(tmp_path, KICKOFF)
    for date in ("2026-02-30", "29.06.2026"):
        code, _, err = mem("-w", ws, "ingest", conv, "-s", "s1", "--date", date)
        assert code == 2 and "date" in err
    code, _, err = mem("-w", ws, "ingest", tmp_path / "missing.json", "-s", "s1")
    assert code == 2 and "cannot read" in err


def test_subprocess_stdin_jsonl_and_streams(ws, run_mem):
    data = "".join(json.dumps(m) + "\n" for m in KICKOFF)
    code, out, err = run_mem("-w", ws, "ingest", "-", "-s", "s1", "--force", "--json", input=data)
    assert code == 0 and err == ""
    rep = json.loads(out)
    assert rep["extracted"] and rep["changes"][0]["action"] == "added"


def test_subprocess_failures_are_one_line(ws, tmp_path, run_mem, clean_failure):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "a"}\n{"role": \n', encoding="utf-8")
    line = clean_failure(run_mem("-w", ws, "ingest", bad, "-s", "s1"), 2)
    assert "line 2 is not valid JSON" in line
    line = clean_failure(run_mem("-w", ws, "ingest", bad, "-s", "../etc/passwd"), 2)
    assert "session id" in line and "contains '/'" in line
    clean_failure(run_mem("-w", ws, "ingest", "-", "-s", "s1", input=b"\xff\xfe[]"), 2)
    assert not (ws / "mem_session").exists()


def test_busy_workspace_exits_75(ws, tmp_path, run_mem, clean_failure, open_ws):
    conv = put(tmp_path, KICKOFF)
    with Lock(open_ws(ws).lock_path("workspace"), "test"):
        line = clean_failure(run_mem("-w", ws, "ingest", conv, "-s", "s1", "--wait", "0.2"), 75)
    assert "Workspace is busy" in line and "job=test" in line
    assert not (ws / "mem_session").exists()
