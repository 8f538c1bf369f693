"""The CLI as a user runs it: exit codes, streams, configuration, workspace resolution."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager

import pytest

import memcli

SECRET = "sk-test-SECRET-4f9c2a"


def no_traceback(err: str) -> None:
    assert "Traceback" not in err, err
    assert "Exception ignored" not in err, err


# ---------------------------------------------------------------- basics


def test_version(run_mem):
    code, out, err = run_mem("--version")
    assert (code, out, err) == (0, f"mem {memcli.__version__}\n", "")


def test_help_lists_the_commands(run_mem):
    code, out, err = run_mem("--help")
    assert code == 0, err
    for cmd in ("init", "config", "reindex", "search", "get"):
        assert f"  {cmd} " in out, cmd
    no_traceback(err)


@pytest.mark.parametrize("cmd", ["search", "reindex"])
def test_command_help(run_mem, cmd):
    code, out, err = run_mem(cmd, "--help")
    assert code == 0, err
    assert out.startswith(f"Usage: mem {cmd}")


def test_usage_error_exit_2_without_traceback(run_mem, ws):
    code, out, err = run_mem("-w", ws, "search", "--limit", "abc", "x")
    assert code == 2, (out, err)
    assert out == ""
    no_traceback(err)


@pytest.mark.parametrize("args", [["bogus"], ["search"], ["search", "--nope", "x"], ["get"]])
def test_usage_errors_exit_2(mem, ws, args):
    code, out, err = mem("-w", ws, *args)
    assert code == 2, (out, err)
    assert out == ""
    no_traceback(err)


@pytest.mark.parametrize("cmd", [["search", "x", "--json"], ["reindex"]])
def test_missing_workspace_is_one_line_exit_2(run_mem, clean_failure, cmd):
    line = clean_failure(run_mem("-w", "/nonexistent/ws", *cmd), 2)
    assert "/nonexistent/ws" in line


@pytest.mark.parametrize("cmd", [["search", "x"], ["get", "MEMORY.md"], ["reindex", "--json"], ["config"]])
def test_missing_workspace_every_command(mem, clean_failure, cmd):
    line = clean_failure(mem("-w", "/nonexistent/ws", *cmd), 2)
    assert "/nonexistent/ws" in line


def test_empty_query_is_exit_2(run_mem, ws, clean_failure):
    clean_failure(run_mem("-w", ws, "search", ""), 2)


def test_blank_query_is_exit_2(mem, ws, clean_failure):
    clean_failure(mem("-w", ws, "search", "   "), 2)


def test_workspace_that_is_a_file_is_exit_2(mem, tmp_path, clean_failure):
    f = tmp_path / "file"
    f.write_text("x")
    clean_failure(mem("-w", f, "search", "x"), 2)


# ---------------------------------------------------------------- damaged vaults


@pytest.fixture
def messy(ws, note):
    note(ws, "memory/2026-05-18/good.md", "The good note mentions fusion.\n", name="good", description="ok")
    (ws / "memory/2026-05-18/binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR fusion\x00")
    (ws / "memory/2026-05-18/latin1.md").write_bytes("caf\xe9 fusion\n".encode("latin-1"))
    (ws / "memory/2026-05-18/broken-fm.md").write_text("---\nname: [oops\n---\nbroken frontmatter fusion\n")
    os.symlink("loop-b", ws / "memory" / "loop-a")
    os.symlink("loop-a", ws / "memory" / "loop-b")
    os.symlink(".", ws / "memory" / "self")
    os.symlink("..", ws / "memory" / "up")
    return ws


def test_search_on_a_messy_vault_warns_and_answers(messy, run_mem):
    code, out, err = run_mem("-w", messy, "search", "fusion", "--json", "--no-links")
    assert code == 0, err
    no_traceback(err)
    paths = sorted(r["path"] for r in json.loads(out)["results"])
    assert paths == ["memory/2026-05-18/broken-fm.md", "memory/2026-05-18/good.md"]
    warnings = [x for x in err.splitlines() if x.startswith("mem: warning:")]
    assert len(warnings) == len(err.splitlines()), err  # every stderr line is a warning
    for name in ("binary.md", "latin1.md", "broken-fm.md"):
        assert any(name in w for w in warnings), (name, err)


def test_reindex_on_a_messy_vault_warns_and_succeeds(messy, run_mem, mem):
    code, out, err = run_mem("-w", messy, "reindex")
    assert code == 0, err
    no_traceback(err)
    assert " 2 chunks (" in out and "2 skipped" in out, out
    for name in ("binary.md", "latin1.md", "broken-fm.md"):
        assert any(name in w and w.startswith("mem: warning:") for w in err.splitlines()), (name, err)
    code, out, err = mem("-w", messy, "reindex", "--json")
    rep = json.loads(out)
    assert rep["added"] == rep["changed"] == rep["deleted"] == []


def test_symlinked_note_outside_workspace_is_not_indexed(ws, note, tmp_path, run_mem):
    outside = tmp_path / "outside.md"
    outside.write_text("secret walrus outside the workspace\n")
    os.symlink(outside, ws / "memory" / "link.md")
    note(ws, "memory/2026-05-18/in.md", "walrus inside\n")
    code, out, err = run_mem("-w", ws, "search", "walrus", "--json")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2026-05-18/in.md"]


# ---------------------------------------------------------------- init


def test_init_creates_workspace_and_is_idempotent(run_mem, mem, tmp_path):
    root = tmp_path / "new" / "ws"
    code, out, err = run_mem("init", root)
    assert code == 0, err
    for sub in ("memory", "digest", "mem_metadata"):
        assert (root / sub).is_dir(), sub
    cfg = (root / "mem.yaml").read_text(encoding="utf-8")
    lines = [x for x in cfg.splitlines() if x.strip()]
    assert lines and all(x.lstrip().startswith("#") for x in lines), "mem.yaml is all comments"
    assert "embedding_model_config" in cfg and "daily_dir" in cfg
    # the commented file is a valid (empty) configuration
    code, out, err = mem("-w", root, "config", "--json")
    assert code == 0, err
    assert json.loads(out)["config"]["daily_dir"] == "memory"

    (root / "mem.yaml").write_text("auto_memory_interval: 7\n", encoding="utf-8")
    (root / "memory" / "keep.md").write_text("keep me\n")
    code, out, err = run_mem("init", root)
    assert code == 0, err
    assert (root / "mem.yaml").read_text(encoding="utf-8") == "auto_memory_interval: 7\n"
    assert (root / "memory" / "keep.md").read_text() == "keep me\n"


def uncommented(text: str) -> str:
    """mem.yaml with every commented `key: value` line made live (the explanations dropped)."""
    import re

    live = []
    for line in text.splitlines():
        body = line[2:] if line.startswith("# ") else ""
        if re.match(r"\s*[a-z_]+:", body):
            live.append(re.sub(r"\s+# .*$", "", body))
    return "\n".join(live) + "\n"


def test_init_shows_every_default_as_mem_uses_it(run_mem, tmp_path):
    """Every value mem.yaml shows commented out is the effective default: the file with all
    of them made live configures exactly what the commented file (no setting) does."""
    import yaml

    root = tmp_path / "fresh"
    assert run_mem("init", root)[0] == 0
    text = (root / "mem.yaml").read_text(encoding="utf-8")
    assert "#   fusion: adaptive" in text
    shown = yaml.safe_load(uncommented(text))
    assert {"daily_dir", "search", "embedding_model_config", "chunking", "shared"} <= set(shown)
    from memcli.jobs.init import LAYOUT

    leaves = [k for k, _ in filter(None, LAYOUT) if "." in k or not isinstance(shown.get(k), dict)]
    assert sum(len(v) if isinstance(v, dict) else 1 for v in shown.values()) == len(leaves) > 30
    env = {"MEM_EMBEDDING_BACKEND": None}  # the tests' pin, not a default
    code, out, err = run_mem("-w", root, "config", "--json", env=env)
    assert code == 0, err
    effective = json.loads(out)["config"]
    for key, value in shown.items():
        for sub, v in value.items() if isinstance(value, dict) else [(None, value)]:
            assert (effective[key][sub] if sub else effective[key]) == v, (key, sub)
    (root / "mem.yaml").write_text(uncommented(text), encoding="utf-8")
    code, live, err = run_mem("-w", root, "config", "--json", env=env)
    assert (code, json.loads(live)) == (0, json.loads(out)), err


def test_init_writes_the_defaults_of_the_settings():
    """Generated from memcli.config.layers.DEFAULTS: a changed default shows in the file."""
    import copy

    import yaml

    from memcli.config.layers import DEFAULTS
    from memcli.jobs import init

    changed = copy.deepcopy(DEFAULTS)
    changed["search"]["fusion"], changed["dream_cron"], changed["timezone"] = "rrf", "5 4 * * *", "Asia/Tokyo"
    shown = yaml.safe_load(uncommented(init.mem_yaml(changed)))
    assert (shown["search"]["fusion"], shown["dream_cron"], shown["timezone"]) == ("rrf", "5 4 * * *", "Asia/Tokyo")
    assert yaml.safe_load(uncommented(init.mem_yaml()))["search"]["fusion"] == DEFAULTS["search"]["fusion"]


def test_init_json_lists_what_was_created(mem, tmp_path):
    root = tmp_path / "w"
    code, out, err = mem("init", root, "--json")
    assert code == 0, err
    created = json.loads(out)["created"]
    assert "mem.yaml" in created and "memory/" in created
    code, out, err = mem("init", root, "--json")
    assert json.loads(out)["created"] == []


def test_init_without_path_uses_the_resolved_workspace(mem, tmp_path, pinned_env):
    target = tmp_path / "from-env"
    code, out, err = mem("init", env={"MEM_WORKSPACE": str(target)})
    assert code == 0, err
    assert (target / "mem.yaml").is_file()
    code, out, err = mem("init")
    assert code == 0, err
    assert (pinned_env / ".mem" / "workspace" / "mem.yaml").is_file()


def test_init_on_a_file_is_exit_2(mem, tmp_path, clean_failure):
    f = tmp_path / "afile"
    f.write_text("x")
    clean_failure(mem("init", f), 2)


def test_init_then_search_from_inside(run_mem, mem, tmp_path):
    root = tmp_path / "w"
    mem("init", root)
    (root / "memory" / "2026-05-18").mkdir()
    (root / "memory" / "2026-05-18" / "n.md").write_text("the heron landed\n")
    code, out, err = run_mem("search", "heron", "--json", cwd=root / "memory")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2026-05-18/n.md"]


# ---------------------------------------------------------------- config


def config_json(run, ws, env=None, cwd=None):
    code, out, err = run("-w", ws, "config", "--json", env=env, cwd=cwd)
    assert code == 0, err
    return json.loads(out)["config"]


def test_config_masks_api_key_from_mem_yaml(run_mem, mem, ws):
    (ws / "mem.yaml").write_text(
        f"embedding_model_config:\n  backend: openai\n  api_key: {SECRET}\nllm_model_config:\n  api_key: {SECRET}-llm\n"
    )
    for run, args in ((run_mem, ["config"]), (mem, ["config", "--json"]), (mem, ["-v", "config"])):
        code, out, err = run("-w", ws, *args)
        assert code == 0, err
        assert SECRET not in out and SECRET not in err
        assert "***" in out
    cfg = config_json(mem, ws)
    assert cfg["embedding_model_config"]["api_key"] == "***"
    assert cfg["llm_model_config"]["api_key"] == "***"


def test_config_masks_api_key_from_environment(mem, ws):
    env = {"MEM_EMBEDDING_API_KEY": SECRET, "MEM_LLM_API_KEY": SECRET + "2", "OPENAI_API_KEY": SECRET + "3"}
    for args in (["config"], ["config", "--json"]):
        code, out, err = mem("-w", ws, *args, env=env)
        assert code == 0, err
        assert SECRET not in out and SECRET not in err
    cfg = config_json(mem, ws, env=env)
    assert cfg["embedding_model_config"]["api_key"] == "***"
    assert cfg["llm_model_config"]["api_key"] == "***"


def test_config_masks_secret_headers(run_mem, ws):
    """Provider headers carry credentials too (Authorization, x-api-key): never printed."""
    (ws / "mem.yaml").write_text(
        f"embedding_model_config:\n  headers:\n    Authorization: Bearer {SECRET}\n    x-api-key: {SECRET}-2\n"
    )
    code, out, err = run_mem("-w", ws, "config")
    assert code == 0, err
    assert SECRET not in out and SECRET not in err
    assert "Authorization" in out


def test_config_shows_empty_key_as_empty(mem, ws):
    assert config_json(mem, ws)["embedding_model_config"]["api_key"] == ""


@pytest.mark.parametrize(
    "yaml_text, needle",
    [
        ("no_such_key: 1\n", "no_such_key"),
        ("embedding_model_config:\n  no_such_field: 1\n", "no_such_field"),
        ("daily_dir: [unclosed\n", "mem.yaml"),
        ("auto_memory_interval: abc\n", "auto_memory_interval"),
        ('auto_memory_interval: "abc"\n', "auto_memory_interval"),
        ("dream_cron_enabled: maybe\n", "dream_cron_enabled"),
        ("embedding_model_config: 5\n", "embedding_model_config"),
        ("- a\n- b\n", "mem.yaml"),
        ("search:\n  limit: [1, 2]\n", "limit"),
    ],
)
def test_bad_mem_yaml_is_exit_3_one_line(mem, ws, clean_failure, yaml_text, needle):
    (ws / "mem.yaml").write_text(yaml_text, encoding="utf-8")
    for cmd in (["config"], ["search", "x"]):
        line = clean_failure(mem("-w", ws, *cmd), 3)
        assert needle in line


def test_bad_mem_yaml_in_a_real_process(run_mem, ws, clean_failure):
    (ws / "mem.yaml").write_text("no_such_key: 1\n", encoding="utf-8")
    line = clean_failure(run_mem("-w", ws, "search", "x"), 3)
    assert "no_such_key" in line


def test_daily_dir_escaping_the_workspace_is_exit_3(mem, ws, clean_failure):
    (ws / "mem.yaml").write_text("daily_dir: ../elsewhere\n")
    clean_failure(mem("-w", ws, "search", "x"), 3)


def agent_json(ws, section: dict, **extra) -> None:
    (ws / "agent.json").write_text(
        json.dumps({"id": "a1", "running": {"reme_light_memory_config": section, **extra}}), encoding="utf-8"
    )


def test_agent_json_is_honoured(mem, ws, note):
    agent_json(ws, {"daily_dir": "notes", "auto_memory_interval": 9, "some_qwenpaw_only_key": True})
    note(ws, "notes/2026-05-18/a.md", "the ibis flew away\n")
    note(ws, "memory/2026-05-18/b.md", "another ibis in the default folder\n")
    code, out, err = mem("-w", ws, "config", "--json")
    assert code == 0, err
    cfg = json.loads(out)["config"]
    assert cfg["daily_dir"] == "notes" and cfg["auto_memory_interval"] == 9
    assert "some_qwenpaw_only_key" in err  # reported, not fatal: agent.json belongs to QwenPaw
    code, out, err = mem("-w", ws, "search", "ibis", "--json", "--since", "2026-05-01")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["notes/2026-05-18/a.md"]


def test_mem_yaml_overrides_agent_json(mem, ws):
    agent_json(ws, {"daily_dir": "notes", "auto_memory_interval": 9, "dream_cron": "0 1 * * *"})
    (ws / "mem.yaml").write_text("daily_dir: memory\nauto_memory_interval: 4\n")
    cfg = config_json(mem, ws)
    assert (cfg["daily_dir"], cfg["auto_memory_interval"], cfg["dream_cron"]) == ("memory", 4, "0 1 * * *")


def test_broken_agent_json_is_exit_3(mem, ws, clean_failure):
    (ws / "agent.json").write_text("{not json")
    clean_failure(mem("-w", ws, "config"), 3)


def test_environment_beats_mem_yaml(mem, ws):
    (ws / "mem.yaml").write_text(
        "timezone: Europe/Berlin\nembedding_model_config:\n  model_name: from-yaml\n  dimensions: 512\n"
    )
    cfg = config_json(mem, ws)
    assert cfg["timezone"] == "Europe/Berlin"
    assert cfg["embedding_model_config"]["model_name"] == "from-yaml"
    cfg = config_json(
        mem,
        ws,
        env={"MEM_TIMEZONE": "Asia/Tokyo", "MEM_EMBEDDING_MODEL": "from-env", "MEM_EMBEDDING_DIMENSIONS": "256"},
    )
    assert cfg["timezone"] == "Asia/Tokyo"
    assert cfg["embedding_model_config"]["model_name"] == "from-env"
    assert cfg["embedding_model_config"]["dimensions"] == 256


def test_bad_environment_value_is_exit_3(mem, ws, clean_failure):
    line = clean_failure(mem("-w", ws, "config", env={"MEM_EMBEDDING_DIMENSIONS": "lots"}), 3)
    assert "dimensions" in line


# ---------------------------------------------------------------- workspace resolution


def test_workspace_from_mem_workspace(mem, ws):
    code, out, err = mem("config", "--json", env={"MEM_WORKSPACE": str(ws)})
    assert code == 0, err
    assert json.loads(out)["workspace"] == str(ws.resolve())


def test_relative_workspace_flag_is_relative_to_cwd(mem, ws, tmp_path):
    code, out, err = mem("-w", "ws", "config", "--json", cwd=tmp_path)
    assert code == 0, err
    assert json.loads(out)["workspace"] == str(ws.resolve())


def test_flag_beats_mem_workspace(mem, ws, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    code, out, err = mem("-w", other, "config", "--json", env={"MEM_WORKSPACE": str(ws)})
    assert json.loads(out)["workspace"] == str(other.resolve())


@pytest.mark.parametrize("marker", ["mem.yaml", "mem_metadata"])
def test_workspace_is_nearest_marked_parent(mem, tmp_path, marker):
    outer = tmp_path / "outer"
    inner = outer / "inner"
    deep = inner / "memory" / "2026-05-18"
    deep.mkdir(parents=True)
    (outer / "mem.yaml").write_text("")
    if marker == "mem.yaml":
        (inner / "mem.yaml").write_text("")
    else:
        (inner / "mem_metadata").mkdir()
    code, out, err = mem("config", "--json", cwd=deep)
    assert code == 0, err
    assert json.loads(out)["workspace"] == str(inner.resolve())


@pytest.mark.parametrize("where", [".", "memory", "memory/2026-01-01"])
def test_a_qwenpaw_agent_folder_is_a_workspace_before_mem_init(run_mem, tmp_path, where):
    """A QwenPaw agent's folder (agent.json, memory/, no mem.yaml yet) is found from itself
    and from its subfolders, its agent.json read as a config layer; `mem init` there writes
    the agent's mem.yaml, not ~/.mem/workspace's."""
    agent = tmp_path / "qwenpaw" / "agents" / "helper"
    (agent / "memory" / "2026-01-01").mkdir(parents=True)
    (agent / "memory" / "2026-01-01" / "n.md").write_text("The egret waded.\n", encoding="utf-8")
    (agent / "agent.json").write_text(
        json.dumps({"running": {"reme_light_memory_config": {"search": {"limit": 4}}}}), encoding="utf-8"
    )
    cwd = agent / where
    code, out, err = run_mem("config", "--json", cwd=cwd)
    assert code == 0, err
    assert json.loads(out)["workspace"] == str(agent.resolve())
    assert json.loads(out)["config"]["search"]["limit"] == 4
    code, out, err = run_mem("search", "egret", "--json", cwd=cwd)
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2026-01-01/n.md"]
    code, out, err = run_mem("init", cwd=cwd)
    assert code == 0, err
    assert (agent / "mem.yaml").is_file() and not (tmp_path / "home" / ".mem").exists()


def test_no_workspace_anywhere_is_exit_2(mem, tmp_path, clean_failure):
    line = clean_failure(mem("search", "x", cwd=tmp_path), 2)
    assert "workspace" in line


def test_default_workspace_under_home(mem, tmp_path, pinned_env):
    home_ws = pinned_env / ".mem" / "workspace"
    (home_ws / "memory").mkdir(parents=True)
    (home_ws / "memory" / "n.md").write_text("the egret waded\n")
    code, out, err = mem("search", "egret", "--json", cwd=tmp_path)
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/n.md"]


# ---------------------------------------------------------------- reindex


def test_reindex_summary_and_json(run_mem, mem, ws, note):
    note(ws, "memory/2026-05-18/a.md", "alpha\n")
    note(ws, "MEMORY.md", "# Memory\n\nbeta\n")
    code, out, err = run_mem("-w", ws, "reindex")
    assert code == 0, err
    assert out.startswith("Rebuilt 2 files, 2 chunks (2 added, 0 changed, 0 deleted, 0 skipped) in ")
    assert out.endswith("s\n") and out.count("\n") == 1
    assert err == ""  # no progress drawing when stderr is not a terminal
    code, out, err = mem("-w", ws, "reindex", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["files"] == 2 and rep["chunks"] == 2 and rep["full"] is False
    code, out, err = mem("-w", ws, "reindex", "--full", "--json")
    rep = json.loads(out)
    assert rep["full"] is True and sorted(rep["added"]) == ["MEMORY.md", "memory/2026-05-18/a.md"]


def test_reindex_bad_scope_is_exit_2(mem, ws):
    code, out, err = mem("-w", ws, "reindex", "--scope", "everything")
    assert (code, out) == (2, "")
    assert "everything" in err
    no_traceback(err)


@contextmanager
def rebuild_running(ws):
    """Hold the locks a running `mem reindex` holds (flock, from this process)."""
    locks = ws / "mem_metadata" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        for name in ("rebuild.lock", "index.lock"):
            fd = os.open(locks / name, os.O_RDWR | os.O_CREAT, 0o644)
            stack.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            stack.callback(fcntl.flock, fd, fcntl.LOCK_UN)
        yield


@pytest.mark.parametrize("as_json", [False, True])
def test_second_reindex_exits_75_at_once(run_mem, mem, ws, note, clean_failure, as_json):
    note(ws, "memory/2026-05-18/a.md", "alpha\n")
    with rebuild_running(ws):
        t0 = time.monotonic()
        result = run_mem("-w", ws, "reindex", *(["--json"] if as_json else []))
        elapsed = time.monotonic() - t0
    line = clean_failure(result, 75)
    assert "Memory index rebuild is already running" in line
    assert elapsed < 10, "a second rebuild exits at once"
    code, out, err = mem("-w", ws, "reindex")  # and works once the first one is done
    assert code == 0, err


def test_killed_lock_holder_does_not_block(mem, ws, note):
    note(ws, "memory/2026-05-18/a.md", "alpha\n")
    locks = ws / "mem_metadata" / "locks"
    locks.mkdir(parents=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(locks / 'index.lock')!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline() == b"held\n"
    finally:
        holder.kill()
        holder.wait()
    code, out, err = mem("-w", ws, "reindex")
    assert code == 0, err


# ---------------------------------------------------------------- streams


def test_search_json_failure_keeps_stdout_empty(mem, ws, clean_failure):
    (ws / "mem.yaml").write_text("bogus: 1\n")
    clean_failure(mem("-w", ws, "search", "x", "--json"), 3)


def test_broken_pipe_is_silent(ws, note):
    body = "".join(f"Line {i}: the pelican report says the pelican flew over the harbour again.\n" for i in range(40))
    for n in range(40):
        note(ws, f"memory/2026-05-18/n{n:02d}.md", body)
    cmd = f"{sys.executable} -m memcli -w {ws} search pelican --limit 40 | head -1"
    proc = subprocess.run(
        ["bash", "-c", cmd + '; echo "rc=${PIPESTATUS[0]}" >&2'], capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.startswith("========== memory/2026-05-18/n")
    assert proc.stdout.count("\n") == 1
    no_traceback(proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] in ("rc=0", "rc=141"), proc.stderr
    assert lines[:-1] == [], proc.stderr
