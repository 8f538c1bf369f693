"""`mem agent-prompt`: guidance and tool definitions an agent framework can paste in as they are."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

NOTE = "memory/2026-05-18/plan.md"
JSON_SCHEMA_TYPES = {"object", "string", "integer", "number", "boolean", "array", "null"}
SCHEMA_KEYWORDS = {
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "items",
    "maxItems",
    "enum",
}


def check_json_schema(schema: dict, where: str) -> None:
    """A JSON Schema built only from keywords and types the schema language defines."""
    assert set(schema) <= SCHEMA_KEYWORDS, (where, set(schema) - SCHEMA_KEYWORDS)
    assert schema["type"] in JSON_SCHEMA_TYPES, where
    if "pattern" in schema:
        re.compile(schema["pattern"])
    if schema["type"] == "object" and "properties" in schema:
        for key, prop in schema["properties"].items():
            assert isinstance(prop.get("description", ""), str), (where, key)
            check_json_schema(prop, f"{where}.{key}")
        assert set(schema.get("required", [])) <= set(schema["properties"]), where
    if schema["type"] == "array":
        check_json_schema(schema["items"], f"{where}[]")


def check_openai_tools(tools) -> dict:
    """The OpenAI tool-schema shape: {"type": "function", "function": {name, description, parameters}}."""
    assert isinstance(tools, list) and tools
    by_name = {}
    for tool in tools:
        assert set(tool) == {"type", "function"} and tool["type"] == "function", tool
        fn = tool["function"]
        assert set(fn) == {"name", "description", "parameters"}, fn
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", fn["name"]), fn["name"]
        assert isinstance(fn["description"], str) and 40 < len(fn["description"]) < 1024
        params = fn["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        check_json_schema(params, fn["name"])
        for prop in params["properties"].values():
            assert prop["description"].strip()
        by_name[fn["name"]] = fn
    return by_name


@pytest.fixture
def memory(ws, note):
    note(
        ws,
        NOTE,
        "# Plan\n\nWe chose PostgreSQL over MySQL for the Lumen API.\nThe migration runs on Friday.\n",
        name="plan",
        description="Database plan.",
    )
    return ws


def test_openai_tools_format_is_a_valid_tool_list(memory, run_mem):
    code, out, err = run_mem("-w", memory, "agent-prompt", "--format", "openai-tools")
    assert (code, err) == (0, "")
    tools = check_openai_tools(json.loads(out))
    assert list(tools) == ["memory_search", "memory_get", "remember"]
    assert tools["memory_search"]["parameters"]["required"] == ["query"]
    assert set(tools["memory_search"]["parameters"]["properties"]) == {"query", "limit", "since", "until"}
    assert set(tools["memory_get"]["parameters"]["properties"]) == {"path", "from", "lines"}
    assert tools["remember"]["parameters"]["required"] == ["text"]


def test_json_format_maps_each_tool_to_its_command(memory, run_mem):
    code, out, _ = run_mem("-w", memory, "agent-prompt", "--format", "json", "--max-chars", "300")
    assert code == 0
    doc = json.loads(out)
    tools = check_openai_tools(doc["tools"])
    assert doc["workspace"] == str(memory.resolve())
    assert set(doc["commands"]) == set(tools)
    search = doc["commands"]["memory_search"]
    assert search["argv"][-6:] == ["-w", str(memory.resolve()), "search", "--citations", "--max-chars", "300"]
    assert search["options"] == {"limit": "--limit", "since": "--since", "until": "--until"}
    assert search["positional"] == "query"
    assert "300 characters" in tools["memory_search"]["description"]
    assert "at most 300 characters" in doc["system_prompt"]
    assert doc["mcp"]["command"][-1] == "mcp"
    for name, cmd in doc["commands"].items():
        assert set(cmd["options"]) | {cmd["positional"]} <= set(tools[name]["parameters"]["properties"])


def build_argv(command: dict, args: dict) -> list[str]:
    """The rule the document states in `how_to_run`, implemented independently of mem."""
    argv = list(command["argv"])
    for key, flag in command["options"].items():
        value = args.get(key)
        if value is True:
            argv.append(flag)
        elif isinstance(value, list):
            for item in value:
                argv += [flag, str(item)]
        elif value not in (None, False):
            argv += [flag, str(value)]
    return argv + ["--", str(args[command["positional"]])]


def test_the_mapped_commands_run(memory, run_mem):
    doc = json.loads(run_mem("-w", memory, "agent-prompt", "--format", "json")[1])
    assert "never through a shell" in doc["how_to_run"]

    def run(name, args):
        proc = subprocess.run(build_argv(doc["commands"][name], args), capture_output=True, text=True, timeout=60)
        return proc.returncode, proc.stdout, proc.stderr

    code, out, err = run("memory_search", {"query": "PostgreSQL", "limit": 1})
    assert code == 0, err
    assert out.startswith(f"========== {NOTE}:5-8 ") and f"Source: {NOTE}#L5-L8\n" in out
    assert (
        run("memory_get", {"path": NOTE, "from": 7, "lines": 1})[1]
        == "We chose PostgreSQL over MySQL for the Lumen API.\n"
    )
    code, out, err = run("remember", {"text": "-- The user wants answers in German.", "tags": ["lang", "prefs"]})
    assert code == 0, err
    assert re.fullmatch(r"Remembered in memory/\d{4}-\d{2}-\d{2}/remembered-facts\.md\n", out)
    written = (memory / out.split()[-1]).read_text(encoding="utf-8")
    assert "- -- The user wants answers in German. #lang #prefs" in written  # a leading "--" is text, not an option
    code, out, _ = run("memory_get", {"path": "--help"})
    assert code == 2 and out == ""  # after `--` even "--help" is only a path, and refused as one


def test_markdown_format_has_guidance_commands_and_parseable_tools(memory, run_mem):
    code, out, err = run_mem("-w", memory, "agent-prompt")
    assert (code, err) == (0, "")
    assert out.startswith("## Memory\n")
    for heading in (
        "## Memory tools",
        "### memory_search",
        "### memory_get",
        "### remember",
        "## OpenAI tool definitions",
    ):
        assert f"\n{heading}\n" in out
    # the guidance of the reference designs
    assert 'If someone says "remember this", write it down' in out
    assert "decisions, preferences and durable facts" in out
    assert "NO_REPLY" in out and "Source: <path>#L<start>-L<end>" in out
    blocks = re.findall(r"```json\n(.*?)\n```", out, re.S)
    assert len(blocks) == 1
    check_openai_tools(json.loads(blocks[0]))
    commands = re.findall(r"```\n(.*?)\n```", out, re.S)
    assert [c.split(" -w ")[1].split()[1] for c in commands] == ["search", "get", "remember"]
    assert all(f"-w {memory.resolve()} " in c for c in commands)
    assert commands[0].endswith(
        "search --citations --max-chars 700 [--limit <limit>] [--since <since>] [--until <until>] -- <query>"
    )


def test_markdown_and_json_share_the_same_guidance(memory, mem):
    markdown = mem("-w", memory, "agent-prompt")[1]
    doc = json.loads(mem("-w", memory, "agent-prompt", "--format", "json")[1])
    assert markdown.startswith(doc["system_prompt"])


def test_the_memory_tools_are_the_mcp_tools():
    from memcli.jobs import remember
    from memcli.mcp import schemas as agent_prompt

    tools = agent_prompt.memory_tools()
    mcp = [t.mcp() for t in tools]
    assert [t["name"] for t in mcp] == ["memory_search", "memory_get", "remember"]
    assert all(t["inputSchema"] is tool.parameters for t, tool in zip(mcp, tools))
    assert agent_prompt.MAX_FACT == remember.MAX_FACT
    check_json_schema(agent_prompt.ingest_tool().parameters, "ingest")


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--format", "yaml"], 2, "yaml"),
        (["--max-chars", "0"], 2, "--max-chars must be at least 1"),
    ],
)
def test_bad_options_fail_cleanly(memory, run_mem, args, code, needle):
    rc, out, err = run_mem("-w", memory, "agent-prompt", *args)
    assert rc == code and out == "" and needle in err and "Traceback" not in err


def test_missing_workspace_is_an_error(tmp_path, run_mem, clean_failure):
    line = clean_failure(run_mem("-w", tmp_path / "nope", "agent-prompt"), 2)
    assert "does not exist" in line
