"""A QwenPaw workspace with its own folder names: every command uses them, none invents memory/."""

from __future__ import annotations

import json
import re

import pytest
from test_mcp import Client

AGENT_JSON = {
    "running": {
        "reme_light_memory_config": {"daily_dir": "notes", "digest_dir": "knowledge", "resource_dir": "inbox_files"}
    }
}
DEFAULT_NAMES = re.compile(r"(?<![\w/.-])(memory|digest|resource)/")


@pytest.fixture
def qwenpaw(tmp_path):
    root = tmp_path / "agent"
    root.mkdir()
    (root / "agent.json").write_text(json.dumps(AGENT_JSON), encoding="utf-8")
    return root


def test_init_creates_the_configured_folders_only(qwenpaw, run_mem):
    code, out, err = run_mem("init", qwenpaw, "--json")
    assert code == 0, err
    created = json.loads(out)["created"]
    assert created[:5] == ["notes/", "knowledge/personal/", "knowledge/procedure/", "knowledge/wiki/", "inbox_files/"]
    assert not any((qwenpaw / d).exists() for d in ("memory", "digest", "resource"))


@pytest.mark.parametrize("fmt", ["markdown", "json", "openai-tools"])
def test_agent_prompt_names_the_workspace_folders(qwenpaw, run_mem, fmt):
    code, out, err = run_mem("-w", qwenpaw, "agent-prompt", "--format", fmt)
    assert code == 0, err
    assert "notes/" in out and "knowledge/" in out
    assert not DEFAULT_NAMES.search(out), DEFAULT_NAMES.search(out)


def test_mcp_tool_descriptions_and_get_use_the_workspace_folders(qwenpaw, run_mem):
    day = qwenpaw / "notes" / "2026-05-18"
    day.mkdir(parents=True)
    (day / "plan.md").write_text("# Plan\n\nShip on Friday.\n", encoding="utf-8")
    client = Client(qwenpaw)
    try:
        init = client.initialize()
        tools = json.dumps(client.request("tools/list")["result"]["tools"])
        assert "notes/YYYY-MM-DD" in tools and "knowledge/" in tools and "notes/" in init["instructions"]
        assert not DEFAULT_NAMES.search(tools + init["instructions"])
        text, is_error = client.call("memory_get", {"path": "notes/2026-05-18/plan.md"})
        assert not is_error and "Ship on Friday." in text
    finally:
        client.close()
    code, out, err = run_mem("-w", qwenpaw, "get", "memory/2026-05-18/plan.md")
    assert code == 2 and "notes/" in err and "knowledge/" in err and "memory/" not in err.split("outside")[1]


def test_schedule_and_health_name_the_workspace_folders(qwenpaw, run_mem):
    code, out, err = run_mem("-w", qwenpaw, "schedule", "--cron")
    assert code == 0, err
    assert "files under inbox_files/ into daily notes" in out and "resource/" not in out
    code, out, err = run_mem("-w", qwenpaw, "health", "--json")
    config = next(c for c in json.loads(out)["checks"] if c["name"] == "config")
    assert "notes/ does not exist" in config["message"] and "memory/" not in config["message"]
