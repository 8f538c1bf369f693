"""Extraction pieces in isolation: message parsing, the rule-based extractor, reply validation,
session-log merging and the day index."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC
from zoneinfo import ZoneInfo

import pytest

from memcli.errors import BadInput
from memcli.extraction.conversation import Existing, Request, rules
from memcli.extraction.conversation.messages import parse, text_of
from memcli.extraction.conversation.validate import Invalid, parse_reply
from memcli.vault import notes, session

UTC = UTC


def user(text, **extra):
    return {
        "id": extra.pop("id", text[:20]),
        "name": extra.pop("name", "user"),
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "timestamp": None,
        **extra,
    }


def assistant(text):
    return {
        "id": "a-" + text[:20],
        "name": "assistant",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "timestamp": None,
    }


# --- parsing -----------------------------------------------------------------------------------


def test_agentscope_msg_with_blocks_and_metadata_time():
    msg = {
        "id": "x1",
        "name": "Alice",
        "role": "user",
        "metadata": {"created_at": 1782727200000},
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Hello there"}],
    }
    [rec] = parse(json.dumps([msg]), "agentscope", UTC).messages
    assert rec == {
        "id": "x1",
        "name": "Alice",
        "role": "user",
        "timestamp": "2026-06-29T10:00:00+00:00",
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Hello there"}],
    }
    assert text_of(rec) == "Hello there"


@pytest.mark.parametrize(
    "value,expected",
    [
        ("2026-06-29 12:00:00.123", "2026-06-29T12:00:00.123000+08:00"),  # AgentScope: naive, local zone
        ("2026-06-29T04:00:00Z", "2026-06-29T04:00:00+00:00"),
        (1782705600, "2026-06-29T12:00:00+08:00"),
    ],
)
def test_timestamps(value, expected):
    for key in ("created_at", "timestamp", "createdAt", "time_created"):
        [rec] = parse(
            json.dumps({"role": "user", "content": "x", key: value}), "auto", ZoneInfo("Asia/Shanghai")
        ).messages
        assert rec["timestamp"] == expected


def test_openai_messages_wrapper_and_formats():
    doc = {
        "model": "x",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        ],
    }
    recs = parse(json.dumps(doc), "openai", UTC).messages
    assert [(r["role"], r["name"]) for r in recs] == [("system", "system"), ("user", "user")]
    with pytest.raises(BadInput, match="'image_url' is not an AgentScope block type") as info:
        parse(json.dumps([{"role": "user", "content": [{"type": "image_url", "image_url": "u"}]}]), "agentscope", UTC)
    assert "message 1" in str(info.value)
    jsonl = '{"role": "user", "content": "a"}\n'
    assert len(parse(jsonl, "jsonl", UTC).messages) == 1
    with pytest.raises(BadInput, match="line 1: expected a message object, got list"):
        parse('[{"role": "user", "content": "a"}]\n', "jsonl", UTC)  # jsonl means one object per line


def test_stable_ids_hash_role_time_and_content():
    a = parse('[{"role": "user", "content": "ok"}, {"role": "user", "content": "ok"}]', "auto", UTC).messages
    b = parse('[{"role": "user", "content": "ok"}, {"role": "user", "content": "ok"}]', "auto", UTC).messages
    assert [r["id"] for r in a] == [r["id"] for r in b] and a[0]["id"] != a[1]["id"]
    c = parse('[{"role": "assistant", "content": "ok"}]', "auto", UTC).messages
    assert c[0]["id"] != a[0]["id"]


def test_unknown_block_kinds_are_dropped_and_counted():
    p = parse(
        json.dumps([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "hologram"}]}]), "auto", UTC
    )
    assert p.dropped_blocks == 1 and len(p.messages) == 1


# --- rule-based extractor -------------------------------------------------------------------------


def test_rules_sort_statements_and_skip_small_talk():
    found = rules.findings(
        [
            user("Hey! Thanks a lot."),
            user("How are you doing?"),
            user("My name is Dana and I work as a nurse in Leeds."),
            user("We decided to go with Postgres instead of MySQL."),
            user("I really prefer tea over coffee."),
            user("I'm going to book the flights tomorrow."),
            user("The server has 64 GB of RAM."),
            user("That's so cool!"),
            assistant("The capital of France is Paris."),  # the assistant alone is not evidence
            assistant("Got it, you prefer tea over coffee."),
        ]
    )
    assert found == {
        "Facts": [
            "- The user's name is Dana and the user works as a nurse in Leeds.",
            "- The server has 64 GB of RAM.",
        ],
        "Decisions": ["- The user's team decided to go with Postgres instead of MySQL."],
        "Preferences": ["- The user really prefers tea over coffee.", "- The user prefers tea over coffee."],
        "Next steps": ["- The user is going to book the flights tomorrow."],
        "Procedures": [],
        "Code": [],
    }


def test_rules_chinese():
    found = rules.findings(
        [
            user("你好！"),
            user("我叫李雷，在杭州工作。"),
            user("我们决定采用蓝绿部署。"),
            user("我更喜欢用 Vim。"),
            user("明天要把报告发给王经理。"),
            user("你觉得呢？"),
            user("哈哈"),
            assistant("好的，记住了：你喜欢用 Vim。"),
        ]
    )
    assert found["Facts"] == ["- The user said: 「我叫李雷，在杭州工作。」 (keywords: work job)"]
    assert found["Decisions"] == ["- The user said: 「我们决定采用蓝绿部署。」"]
    assert found["Preferences"] == [
        "- The user said: 「我更喜欢用 Vim。」 (keywords: like likes prefer)",
        "- The assistant confirmed: 「好的，记住了：你喜欢用 Vim。」 (keywords: like likes prefer)",
    ]
    assert found["Next steps"] == ["- The user said: 「明天要把报告发给王经理。」 (keywords: tomorrow, boss manager)"]


def test_rules_never_invent_text():
    msgs = [
        user("We decided to ship v2.3 on 14 July, after the Berlin offsite. I hate long meetings!"),
        user("Caroline went to the LGBTQ support group and it was so powerful.", name="Melanie"),
    ]
    draft = rules.extract(Request(msgs, "2026-06-29", "s"))
    said = " ".join(text_of(m) for m in msgs).lower()
    frame = {"the", "user", "user's", "their", "team", "household", "s", "hates"}  # who, and "I hate" -> "hates"
    bullets = [line[2:] for line in draft.body.splitlines() if line.startswith("- ")]
    assert bullets == [
        "Caroline went to the LGBTQ support group and it was so powerful.",
        "The user's team decided to ship v2.3 on 14 July, after the Berlin offsite.",
        "The user hates long meetings!",
    ]
    for line in bullets:  # every other word is the speaker's own
        assert all(w in frame or w in said for w in re.findall(r"[\w.']+", line.lower().rstrip(".!")))
    assert draft.description == bullets[1]


def test_rules_name_is_deterministic_across_hash_seeds():
    code = (
        "from memcli.extraction.conversation import rules\n"
        "f = rules.findings([{'id':'1','name':'user','role':'user','timestamp':None,'content':[{'type':'text',"
        "'text':'We decided the Lumen API moves to Postgres. Lumen needs JSONB. Alpha beta gamma delta.'}]}])\n"
        "print(rules.topic_name(f, set()))"
    )
    names = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(names) == 1 and names.pop().strip().startswith("lumen-")


def test_a_note_name_keeps_accented_names_whole():
    msgs = [user("Jéssica, my assistant, logs every autoclave cycle. Jéssica prints the log on Fridays.")]
    draft = rules.extract(Request(msgs, "2028-03-13", "s"))
    assert draft.name.startswith("jessica-") and "ssica-" not in draft.name.removeprefix("jessica-")
    msgs = [user("The new price didn't go great. I'm settling at R$200 for everyone, one price didn't hurt.")]
    assert "didn" not in rules.extract(Request(msgs, "2028-04-19", "s")).name.split("-")


def test_merge_body_adds_only_new_items_and_keeps_the_rest():
    body = "# Plan\n\nIntro by hand.\n\n## Decisions\n- User: Use Postgres.\n\n## Notes\nfree text\n"
    found = {
        "Facts": ["- User: Team of 3."],
        "Decisions": ["- User: Use Postgres.", "- User: Use pgloader."],
        "Preferences": [],
        "Next steps": [],
    }
    merged = rules.merge_body(body, found)
    assert merged == (
        "# Plan\n\nIntro by hand.\n\n## Decisions\n- User: Use Postgres.\n- User: Use pgloader.\n\n"
        "## Notes\nfree text\n\n## Facts\n- User: Team of 3.\n"
    )
    assert rules.merge_body(merged, found) == merged


# --- LLM reply validation -------------------------------------------------------------------------

GOOD = {"name": "db-choice", "description": "Chose Postgres.", "body": "# DB\n- Postgres\n"}


def test_valid_replies():
    assert parse_reply(json.dumps(GOOD), "stop", None).name == "db-choice"
    fenced = "```json\n" + json.dumps(GOOD) + "\n```"
    assert parse_reply(fenced, "stop", None).body == GOOD["body"]
    assert parse_reply(json.dumps(dict(GOOD, name="部署-流程")), None, None).name == "部署-流程"
    assert parse_reply('{"name": "", "description": "", "body": "  "}', "stop", None) is None


@pytest.mark.parametrize(
    "reply,error",
    [
        ("nope", "not valid JSON"),
        ('{"name": "x", "description": "y", "body": "# a', "not valid JSON"),
        (json.dumps([GOOD, GOOD]), "expected a JSON object"),
        (json.dumps(dict(GOOD, body=7)), '"body" must be a string'),
        (json.dumps(dict(GOOD, body="\n---\nsession_id: other\n---\nx")), "frontmatter"),
        (json.dumps(dict(GOOD, body="x" * 32001)), "longer than 32000"),
        (json.dumps(dict(GOOD, body="<!-- notes:auto -->")), "reserved"),
    ],
)
def test_invalid_replies(reply, error):
    with pytest.raises(Invalid, match=error):
        parse_reply(reply, "stop", None)


@pytest.mark.parametrize(
    "reply,name,description",
    [
        # what is mechanical is repaired: a one-object list, a missing or long
        # description, a name that is not kebab-case, holds a date or is too long
        (json.dumps([GOOD]), "db-choice", "Chose Postgres."),
        (json.dumps({"name": "x", "body": "b"}), "x", "b"),
        (json.dumps(dict(GOOD, name="DB_choice")), "db-choice", "Chose Postgres."),
        (json.dumps(dict(GOOD, name="notes-20260629")), "notes", "Chose Postgres."),
        (json.dumps(dict(GOOD, name="x" * 65)), "db", "Chose Postgres."),  # from the title
        (json.dumps(dict(GOOD, description="")), "db-choice", "Postgres"),
        (json.dumps(dict(GOOD, description="d" * 301)), "db-choice", "d" * 299 + "…"),
    ],
)
def test_repaired_replies(reply, name, description):
    draft = parse_reply(reply, "stop", None)
    assert (draft.name, draft.description) == (name, description)


def test_cut_off_reply_and_timeline_rules():
    with pytest.raises(Invalid, match="cut off"):
        parse_reply(json.dumps(GOOD), "length", None)
    ex = Existing("db-choice", "Old.", "# DB\n## Timeline\n- a\n- b\n## Other\nx\n")
    ok = parse_reply(json.dumps({"description": "", "body": "# DB\n## Timeline\n- a\n- b\n- c\n"}), "stop", ex)
    assert (ok.name, ok.description) == ("db-choice", "Old.")
    with pytest.raises(Invalid, match="'- a'"):
        parse_reply(json.dumps({"description": "", "body": "# DB\n## Timeline\n- b\n- c\n"}), "stop", ex)


# --- session log and day index --------------------------------------------------------------------


def test_merge_orders_by_time_and_keeps_timeless_in_arrival_order():
    a = {"id": "a", "timestamp": "2026-06-29T10:00:00+00:00"}
    b = {"id": "b", "timestamp": "2026-06-29T09:00:00+00:00"}
    c = {"id": "c", "timestamp": None}
    merged, added, replaced = session.merge([a], [b, c, dict(a, x=1)])
    # c has no time: it keeps b's, the message it arrived after
    assert [r["id"] for r in merged] == ["b", "c", "a"] and (added, replaced) == (2, 1)
    assert merged[2] == dict(a, x=1)


def test_write_log_appends_or_rewrites(tmp_path):
    path = tmp_path / "s.jsonl"
    a, b, c = ({"id": x, "timestamp": None} for x in "abc")
    assert session.write_log(path, [], [a]) == "rewritten"
    assert session.write_log(path, [a], [a, b]) == "appended"
    assert session.write_log(path, [a, b], [a, b]) == "unchanged"
    assert session.write_log(path, [a, b], [c, a, b]) == "rewritten"
    assert session.read_log(path) == [c, a, b]
    path.write_text('{"id": "a"}\nnot json\n')
    with pytest.raises(Exception, match="line 2 is not a saved message"):
        session.read_log(path)


@pytest.mark.parametrize("sid", ["s1", "会话-1", "a.b", "2026-06-29_chat", "A B"])
def test_good_session_ids(sid):
    assert session.validate_session_id(sid) == sid


def test_name_rules():
    assert notes.name_problem("project-plan") is None
    for bad in ("Project", "a--b", "-a", "a_b", "plan-2026-06", "", "a b"):
        assert notes.name_problem(bad)


def test_the_users_code_is_kept_whole_and_read_as_no_sentences():
    """A run command the user pastes is knowledge with identifiers in it: kept as a fenced block
    under ## Code, never as sentences ("Import pandas as pd."); the assistant's code is not kept."""
    msgs = [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "how i run the pipeline on the cluster:\n```bash\nmodule load nextflow\n"
                    "nextflow run nf-core/rnaseq -resume\n```\nthen check the multiqc report first",
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Add this:\n```\nsbatch head.sh\n```"}]},
    ]
    found = rules.findings(msgs)
    assert found["Code"] == ["```bash\nmodule load nextflow\nnextflow run nf-core/rnaseq -resume\n```"]
    said = " ".join(found["Facts"] + found["Decisions"] + found["Next steps"])
    assert "module load" not in said.lower() and "sbatch" not in said
    body = rules.render("pipeline", found)
    assert rules.merge_body(body, found).count("```bash") == 1  # ingesting the session again adds no copy


def test_a_merge_adds_a_statement_that_is_part_of_a_longer_one():
    body = "# Pipeline\n\n## Facts\n- The user uses salmon. Helen is fine with it.\n"
    found = {s: [] for s in rules.SECTIONS} | {"Facts": ["- The user uses salmon."]}
    assert "- The user uses salmon.\n" in rules.merge_body(body, found) + "\n"
