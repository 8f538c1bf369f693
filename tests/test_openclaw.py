"""OpenClaw's own memory settings, read when the workspace belongs to an OpenClaw agent.

The conftest pins HOME to an empty folder, so every other test sees no OpenClaw install;
here a fake one is written under that HOME (or at OPENCLAW_CONFIG_PATH).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memcli.config import openclaw
from memcli.config.layers import DEFAULTS
from memcli.vault.workspace import open_workspace

KEY = "sk-openclaw-test-key-1234567890"
OC_VARS = (
    "OPENCLAW_CONFIG_PATH",
    "CLAWDBOT_CONFIG_PATH",
    "OPENCLAW_STATE_DIR",
    "CLAWDBOT_STATE_DIR",
    "OPENCLAW_HOME",
    "OPENCLAW_PROFILE",
)


@pytest.fixture(autouse=True)
def no_openclaw_env(monkeypatch):
    for var in OC_VARS:
        monkeypatch.delenv(var, raising=False)


def opened(ws: Path, **env):
    full = {**os.environ, **{k: v for k, v in env.items() if v is not None}}
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
    return open_workspace(ws.resolve(), full)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def install(home: Path, text: str, name: str = ".openclaw/openclaw.json") -> Path:
    return write(home / name, text)


MAIN = """\
// OpenClaw config: JSON5 with comments and trailing commas
{
  $include: "./memory-defaults.json5",
  agents: {
    list: [
      { id: "main", default: true, workspace: "%(ws)s", },
      { id: "Research", workspace: "%(other)s", memorySearch: { model: "unused" } },
    ],
  },
}
"""
DEFAULTS_FILE = """\
{
  agents: {
    defaults: {
      memorySearch: {
        provider: "openai",
        model: "text-embedding-3-large",
        remote: {
          baseUrl: "${EMB_HOST}/v1",
          apiKey: "${OC_KEY}",
          headers: { "X-Team": "memory", },
          batch: { enabled: true },
        },
        query: { maxResults: 8, minScore: 0.4, hybrid: { vectorWeight: 0.6, textWeight: 0.2, candidateMultiplier: 30 } },
        chunking: { tokens: 300, overlap: 60 },
        extraPaths: ["../team-docs"],
        sync: { watch: true },
        /* a block comment */
      },
    },
  },
}
"""


@pytest.fixture
def oc_home(pinned_env, ws, tmp_path) -> Path:
    install(pinned_env, MAIN % {"ws": ws, "other": tmp_path / "elsewhere"})
    install(pinned_env, DEFAULTS_FILE, ".openclaw/memory-defaults.json5")
    write(tmp_path / "team-docs" / "guide.md", "# Guide\n\nThe osprey protocol.\n")
    return pinned_env


def test_config_shows_openclaw_settings_key_masked(oc_home, ws, run_mem):
    env = {"MEM_EMBEDDING_BACKEND": None, "OC_KEY": KEY, "EMB_HOST": "http://127.0.0.1:9"}
    code, out, err = run_mem("-w", ws, "config", "--json", env=env)
    assert code == 0, err
    assert KEY not in out + err
    cfg = json.loads(out)["config"]
    emb = cfg["embedding_model_config"]
    assert (emb["backend"], emb["model_name"], emb["dimensions"], emb["base_url"], emb["api_key"], emb["headers"]) == (
        "openai",
        "text-embedding-3-large",
        3072,
        "http://127.0.0.1:9/v1",
        "***",
        {"X-Team": "***"},
    )
    assert cfg["search"]["limit"] == 8
    assert cfg["search"]["vector_weight"] == pytest.approx(0.75)  # 0.6 / (0.6 + 0.2)
    assert cfg["search"]["candidate_multiplier"] == 20.0  # clamped as OpenClaw does
    assert (cfg["chunking"]["target_tokens"], cfg["chunking"]["overlap_tokens"]) == (300, 60)
    assert cfg["extra_paths"] == ["../team-docs"]
    code, out, err = run_mem("-w", ws, "config", env=env)  # the YAML form too
    assert code == 0 and KEY not in out + err


def test_layer_reports_its_file_agent_and_ignored_keys(oc_home, ws):
    w = opened(ws, OC_KEY=KEY, EMB_HOST="http://h", MEM_EMBEDDING_BACKEND=None)
    layer = w.openclaw
    assert layer.path == str(oc_home / ".openclaw" / "openclaw.json") and layer.agent == "main"
    assert sorted(layer.ignored) == [
        "memorySearch.query.minScore",
        "memorySearch.remote.batch.enabled",
        "memorySearch.sync.watch",
    ]
    assert layer.warnings == []
    assert KEY not in repr(layer)
    assert w.settings.embedding.api_key == KEY  # used, never printed


def test_openclaw_extra_paths_are_indexed(oc_home, ws, run_mem):
    code, out, err = run_mem("-w", ws, "search", "osprey", "--json", env={"OC_KEY": KEY, "EMB_HOST": "http://h"})
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["extra/team-docs/guide.md"]


def test_mem_yaml_wins(oc_home, ws):
    (ws / "mem.yaml").write_text("search:\n  limit: 3\nextra_paths: []\nembedding_model_config:\n  backend: none\n")
    w = opened(ws, OC_KEY=KEY, EMB_HOST="http://h", MEM_EMBEDDING_BACKEND=None)
    assert (w.settings.search.limit, w.settings.extra_paths, w.settings.embedding.backend) == (3, (), "none")
    assert w.settings.chunking.target_tokens == 300  # what mem.yaml leaves alone still comes from OpenClaw


@pytest.mark.parametrize("own", [{"MEM_EMBEDDING_BACKEND": "gemini"}, {"yaml": "gemini"}])
def test_another_backend_chosen_by_mem_never_gets_openclaws_key(oc_home, ws, own):
    if "yaml" in own:
        (ws / "mem.yaml").write_text("embedding_model_config:\n  backend: gemini\n  model_name: m\n")
    env = {"MEM_EMBEDDING_BACKEND": own.get("MEM_EMBEDDING_BACKEND")}
    e = opened(ws, OC_KEY=KEY, EMB_HOST="http://h", **env).settings.embedding
    assert (e.backend, e.api_key, e.base_url, e.headers) == ("gemini", "", "", {})
    assert opened(ws, OC_KEY=KEY, EMB_HOST="http://h", MEM_EMBEDDING_BACKEND="openai").settings.embedding.api_key == KEY


def test_missing_variable_leaves_the_setting_out_with_a_warning(oc_home, ws, run_mem):
    w = opened(ws, OC_KEY=None, EMB_HOST="http://h", MEM_EMBEDDING_BACKEND=None)
    assert w.settings.embedding.api_key == "" and w.settings.embedding.base_url == "http://h/v1"
    assert w.openclaw.warnings == [
        "agents.defaults.memorySearch.remote.apiKey: ${OC_KEY} is not set; the setting is left out"
    ]
    code, out, err = run_mem("-w", ws, "reindex", env={"EMB_HOST": "http://h"})
    assert code == 0
    assert "${OC_KEY} is not set" in err


def test_no_install_changes_nothing(ws, pinned_env):
    w = opened(ws)
    assert w.openclaw is None and w.config == {
        **DEFAULTS,
        "embedding_model_config": {**DEFAULTS["embedding_model_config"], "backend": "none"},
    }
    assert openclaw.candidates(str(ws), dict(os.environ), str(pinned_env)) == []


def test_unrelated_workspace_gets_nothing(oc_home, tmp_path):
    other = tmp_path / "other-ws"
    (other / "memory").mkdir(parents=True)
    assert opened(other).openclaw is None


def test_openclaw_config_path(ws, tmp_path):
    cfg = write(
        tmp_path / "etc" / "oc.json",
        json.dumps(
            {
                "agents": {
                    "defaults": {
                        "workspace": str(ws),
                        "memorySearch": {"provider": "ollama", "model": "nomic-embed-text:latest"},
                    }
                }
            }
        ),
    )
    w = opened(ws, OPENCLAW_CONFIG_PATH=str(cfg), MEM_EMBEDDING_BACKEND=None)
    e = w.settings.embedding
    assert (w.openclaw.path, e.backend, e.model_name, e.dimensions) == (
        str(cfg),
        "ollama",
        "nomic-embed-text:latest",
        768,
    )
    assert opened(ws, OPENCLAW_CONFIG_PATH=str(tmp_path / "nope.json")).openclaw is None


def test_longest_matching_agent_and_entries_and_new_memory_search(pinned_env, ws, tmp_path):
    install(
        pinned_env,
        json.dumps(
            {
                "memory": {"search": {"query": {"maxResults": 4}, "extraPaths": ["../shared"]}},
                "agents": {
                    "defaults": {"workspace": str(ws.parent), "memorySearch": {"chunking": {"tokens": 200}}},
                    "entries": {
                        "main": {},
                        "coder": {
                            "workspace": str(ws),
                            "memory": {"search": {"extraPaths": ["~/x"], "query": {"maxResults": 9}}},
                        },
                    },
                },
            }
        ),
    )
    w = opened(ws)
    assert w.openclaw.agent == "coder"
    assert w.settings.search.limit == 9 and w.settings.chunking.target_tokens == 200
    assert w.settings.extra_paths == ("../shared", str(pinned_env / "x"))  # concatenated, ~ expanded


def test_default_agent_workspace_and_profiles(pinned_env, tmp_path):
    ws = pinned_env / ".openclaw" / "workspace-work"
    (ws / "memory").mkdir(parents=True)
    install(
        pinned_env, "{agents: {defaults: {memorySearch: {query: {maxResults: 11}}}}}", ".openclaw-work/openclaw.json"
    )
    w = opened(ws)
    assert (w.openclaw.agent, w.settings.search.limit) == ("main", 11)


def test_secret_ref_escapes_and_env_block(pinned_env, ws):
    install(
        pinned_env,
        json.dumps(
            {
                "env": {"vars": {"FROM_BLOCK": "block-key"}},
                "agents": {
                    "defaults": {
                        "workspace": str(ws),
                        "memorySearch": {
                            "provider": "voyage",
                            "remote": {
                                "apiKey": {"source": "env", "provider": "default", "id": "FROM_BLOCK"},
                                "headers": {"X-Literal": "$${NOT_A_VAR}", "x-lower": "${lower}"},
                            },
                        },
                    }
                },
            }
        ),
    )
    w = opened(ws, MEM_EMBEDDING_BACKEND=None)
    e = w.settings.embedding
    assert (e.backend, e.model_name, e.dimensions, e.api_key) == ("voyage", "voyage-4-large", 1024, "block-key")
    assert e.headers == {"X-Literal": "${NOT_A_VAR}", "x-lower": "${lower}"}


@pytest.mark.parametrize(
    "search, backend, warned",
    [
        ({"enabled": False, "provider": "openai"}, "none", False),
        ({"provider": "none"}, "none", False),
        ({"provider": "local", "model": "embeddinggemma-300m-qat-Q8_0.gguf"}, "local", False),
        ({"provider": "bedrock"}, "", True),
        ({"provider": "auto"}, "", False),
    ],
)
def test_provider_mapping(pinned_env, ws, search, backend, warned):
    install(pinned_env, json.dumps({"agents": {"defaults": {"workspace": str(ws), "memorySearch": search}}}))
    w = opened(ws, MEM_EMBEDDING_BACKEND=None)
    assert w.settings.embedding.backend == backend
    assert bool(w.openclaw.warnings) == warned


def test_bad_values_are_warnings_not_errors(pinned_env, ws):
    install(
        pinned_env,
        json.dumps(
            {
                "agents": {
                    "defaults": {
                        "workspace": str(ws),
                        "memorySearch": {
                            "query": {"maxResults": "many", "hybrid": {"vectorWeight": True}},
                            "chunking": {"tokens": 0},
                            "extraPaths": ["ok", 3, {"path": "p", "pattern": "*.md"}],
                        },
                    }
                }
            }
        ),
    )
    w = opened(ws)
    assert w.settings.search.limit == 5 and w.settings.extra_paths == ("ok", "p")
    assert len(w.openclaw.warnings) == 5


@pytest.mark.parametrize(
    "text, why",
    [
        ("{agents: {", "cannot parse"),
        ('{"$include": "../outside.json"}', "outside the config folder"),
        ('{"$include": "./openclaw.json"}', "includes itself"),
        ('{"$include": 3}', "must be a path"),
    ],
)
def test_unusable_config_is_a_warning_and_mem_works(pinned_env, ws, tmp_path, run_mem, text, why):
    write(pinned_env / "outside.json", "{}")
    install(pinned_env, text)
    w = opened(ws)
    assert w.openclaw.agent == "" and w.openclaw.settings == {}
    assert why in w.openclaw.warnings[0]
    code, out, err = run_mem("-w", ws, "reindex")
    assert code == 0 and why in err


def test_include_list_is_deep_merged_siblings_win(pinned_env, ws):
    install(pinned_env, '{"memorySearch": {"extraPaths": ["b"]}}', ".openclaw/b.json5")
    install(pinned_env, '{"memorySearch": {"extraPaths": ["a"], "query": {"maxResults": 2}}}', ".openclaw/a.json5")
    install(
        pinned_env,
        json.dumps(
            {
                "agents": {
                    "defaults": {
                        "workspace": str(ws),
                        "$include": ["./a.json5", "./b.json5"],
                        "memorySearch": {"query": {"maxResults": 7}},
                    }
                }
            }
        ),
    )
    w = opened(ws)
    assert w.settings.extra_paths == ("a", "b") and w.settings.search.limit == 7


# ---------------------------------------------------------------- finding the workspace from inside


@pytest.mark.parametrize("where", [".", "memory/2026-01-01"])
def test_an_openclaw_agent_workspace_is_found_from_inside(oc_home, ws, run_mem, where):
    """The workspace an agent of OpenClaw's config names, without a mem.yaml: `mem config` run
    in it or in a subfolder finds it and reads that agent's settings."""
    (ws / "memory" / "2026-01-01").mkdir(parents=True)
    env = {"MEM_EMBEDDING_BACKEND": None, "OC_KEY": KEY, "EMB_HOST": "http://127.0.0.1:9"}
    code, out, err = run_mem("config", "--json", cwd=ws / where, env=env)
    assert code == 0, err
    assert json.loads(out)["workspace"] == str(ws.resolve())
    assert json.loads(out)["config"]["search"]["limit"] == 8  # the agent's memorySearch
    assert KEY not in out + err


@pytest.mark.parametrize("folder", [".openclaw/workspace", ".openclaw/workspace-coder", ".openclaw-work/workspace"])
def test_openclaws_default_workspace_folders_are_found_without_a_config(pinned_env, run_mem, folder):
    ws = pinned_env / folder
    (ws / "memory" / "2026-01-01").mkdir(parents=True)
    (ws / "memory" / "2026-01-01" / "n.md").write_text("The heron fished.\n", encoding="utf-8")
    for cwd in (ws, ws / "memory" / "2026-01-01"):
        code, out, err = run_mem("search", "heron", "--json", cwd=cwd)
        assert code == 0, err
        assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2026-01-01/n.md"]
    assert openclaw.workspace_holding(str(ws / "memory"), dict(os.environ)) == str(ws.resolve())


def test_a_folder_no_agent_owns_is_still_no_workspace(oc_home, tmp_path, run_mem, clean_failure):
    other = tmp_path / "elsewhere-entirely" / "memory"
    other.mkdir(parents=True)
    clean_failure(run_mem("config", cwd=other), 2)
    plain = oc_home / ".openclaw" / "notes"  # in the state folder, not a workspace
    plain.mkdir(parents=True)
    assert openclaw.workspace_holding(str(plain), dict(os.environ)) is None
