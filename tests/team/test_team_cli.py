"""Team memory end to end: the real CLI in subprocesses against a real PostgreSQL + pgvector.

Two workspaces are two agents publishing to one namespace; what one writes the other
finds as `@<agent_id>/<path>` and reads with `mem get`, unless memory_isolation is on.
"""

from __future__ import annotations

import json
import re

DAY = "memory/2026-05-18"
ALICE = {f"{DAY}/db.md": "# Database\n\nWe chose PostgreSQL over MySQL for the billing service.\n"}
BOB = {
    f"{DAY}/deploy.md": "# 部署流程\n\n部署流程先跑测试，然后发布到生产环境。Kubernetes rollout checklist.\n",
    f"{DAY}/oncall.md": "# Oncall\n\nThe pager rotation changes every Monday; escalate billing outages.\n",
}
HEAD = re.compile(r"^========== (?P<path>\S+):(?P<lines>\d+-\d+) \[score=[0-9.]+\] ==========$", re.M)


def paths(out: str) -> list[str]:
    return [m.group("path") for m in HEAD.finditer(out)]


def two_agents(agent, cli, **shared):
    a, b = agent("alice", ALICE, **shared), agent("bob", BOB, **shared)
    for ws in (a, b):
        code, out, err = cli(ws, "reindex")
        assert code == 0, err
        assert "Published" in out and "namespace team as" in out, out
    return a, b


def test_two_agents_find_each_other(agent, cli):
    a, b = two_agents(agent, cli)
    code, out, err = cli(a, "search", "rollout", "checklist")
    assert code == 0 and err == "", err
    assert paths(out) == [f"@bob/{DAY}/deploy.md"]
    assert out.startswith(f"========== @bob/{DAY}/deploy.md:1-3 [score=")
    code, out, _ = cli(a, "search", "billing")
    assert set(paths(out)) == {f"{DAY}/db.md", f"@bob/{DAY}/oncall.md"}  # own paths plain, others prefixed
    code, out, _ = cli(b, "search", "PostgreSQL", "--citations")
    assert f"Source: @alice/{DAY}/db.md#L1-L3" in out


def test_cjk_query_finds_chinese_text(agent, cli):
    a, _ = two_agents(agent, cli)
    for query in ("部署流程", "生产环境", "测试"):
        code, out, err = cli(a, "search", query)
        assert code == 0, err
        assert paths(out) == [f"@bob/{DAY}/deploy.md"], (query, out)


def test_get_reads_another_agents_stored_text(agent, cli):
    a, b = two_agents(agent, cli)
    code, out, err = cli(a, "get", f"@bob/{DAY}/deploy.md")
    assert code == 0, err
    assert out == (b / DAY / "deploy.md").read_text(encoding="utf-8")
    code, out, _ = cli(a, "get", f"@bob/{DAY}/oncall.md", "--from", "3", "--lines", "1", "--json")
    assert code == 0
    assert '"path": "@bob/memory/2026-05-18/oncall.md"' in out and "pager rotation" in out
    code, out, _ = cli(a, "get", f"@alice/{DAY}/db.md")  # our own: read from the Markdown
    assert code == 0 and "billing service" in out
    code, _, err = cli(a, "get", f"@bob/{DAY}/nothing.md")
    assert code == 2 and "not in the shared index" in err


def test_isolation_keeps_to_this_agent(agent, cli):
    a, b = two_agents(agent, cli, memory_isolation=True)
    code, out, _ = cli(a, "search", "billing")
    assert paths(out) == [f"{DAY}/db.md"]
    code, out, _ = cli(a, "search", "rollout")
    assert out.strip() == "(no memory results)"
    code, _, err = cli(a, "get", f"@bob/{DAY}/deploy.md")
    assert code == 2 and "memory_isolation" in err


def test_deleted_and_edited_files_are_published(agent, cli, sql):
    a, b = two_agents(agent, cli)
    (b / DAY / "deploy.md").unlink()
    (b / DAY / "oncall.md").write_text("# Oncall\n\nNow the rotation changes on Fridays.\n", encoding="utf-8")
    code, out, _ = cli(b, "reindex")
    assert code == 0 and "(0 added, 1 changed, 1 deleted)" in out
    code, out, _ = cli(a, "search", "rollout")
    assert out.strip() == "(no memory results)"
    code, out, _ = cli(a, "search", "fridays")
    assert paths(out) == [f"@bob/{DAY}/oncall.md"]
    assert sql("SELECT path FROM mem.chunks WHERE agent_id = 'bob'") == [(f"{DAY}/oncall.md",)]
    assert sql("SELECT files, chunks FROM mem.agents WHERE agent_id = 'bob'") == [(1, 1)]


def test_search_publishes_what_its_sync_indexed(agent, cli):
    a, b = two_agents(agent, cli)
    (b / DAY / "new.md").write_text("# Retro\n\nThe flamingo incident retro is on Thursday.\n", encoding="utf-8")
    code, out, _ = cli(b, "search", "anything")  # syncs bob's local index, so publishes it
    assert code == 0
    code, out, _ = cli(a, "search", "flamingo")
    assert paths(out) == [f"@bob/{DAY}/new.md"]


def test_reindex_is_incremental_and_idempotent(agent, cli, sql):
    a = agent("alice", ALICE)
    assert "(1 added, 0 changed, 0 deleted)" in cli(a, "reindex")[1]
    before = sql("SELECT id FROM mem.chunks")
    code, out, _ = cli(a, "reindex")
    assert "(0 added, 0 changed, 0 deleted)" in out
    assert sql("SELECT id FROM mem.chunks") == before  # nothing rewritten
    code, out, _ = cli(a, "reindex", "--json")
    assert json.loads(out)["shared"] == {
        "namespace": "team",
        "agent_id": "alice",
        "files": 1,
        "chunks": 1,
        "added": 0,
        "changed": 0,
        "deleted": 0,
        "stale": [],
        "skipped": None,
        "failed": [],
    }


def test_agent_id_defaults_to_the_folder_name(agent, cli, sql):
    ws = agent("Team Notes", ALICE)
    cli(ws, "reindex")
    assert sql("SELECT agent_id FROM mem.agents") == [("Team-Notes",)]
