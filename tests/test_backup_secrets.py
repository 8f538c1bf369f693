"""API keys: left out of backups unless the secrets module is asked for, and kept on restore.

The redaction edits the config text in place (comments and layout survive); the
CLI tests look for the key's bytes in every entry of the zip, so a key hiding in
any file or in meta.json would fail them.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import yaml
from test_backup import create

from memcli.jobs.backup.credentials import fill, is_secret_key, redact

MEM_YAML = """# embedding: the team's proxy
embedding_model_config:
  backend: openai
  base_url: http://127.0.0.1:9/v1
  api_key: sk-secret-embed   # rotate monthly
  headers:
    Authorization: Bearer sk-secret-header
llm_model_config:
  model_name: qwen-plus
  api_key: |
    sk-secret-llm
search:
  limit: 7
"""

AGENT_JSON = """{
\t"running": {
\t\t"max_tokens": 4096,
\t\t"reme_light_memory_config": {"embedding_model_config": {"backend": "dashscope", "api_key": "sk-secret-agent"}},
\t\t"providers": [{"name": "x", "apiKey": "sk-secret-provider", "access_token": "tok-secret"}]
\t}
}
"""


def all_bytes(path: Path) -> bytes:
    with zipfile.ZipFile(path) as zf:
        return b"".join(zf.read(n) for n in zf.namelist())


def test_secret_key_names():
    assert all(
        map(
            is_secret_key,
            ["api_key", "apiKey", "API-KEY", "secret", "client_secret", "password", "token", "access_token"],
        )
    )
    assert not any(map(is_secret_key, ["max_tokens", "tokenizer", "backend", "model_name", "keys"]))


def test_redact_yaml_keeps_comments_and_layout():
    out, n = redact(MEM_YAML, is_json=False)
    assert n == 3
    assert "secret" not in out
    assert "# embedding: the team's proxy" in out and "# rotate monthly" in out
    assert out.replace('""', "X").count("\n") == MEM_YAML.count("\n") - 1  # the block scalar's line went
    data = yaml.safe_load(out)
    assert data["embedding_model_config"]["api_key"] == "" and data["search"]["limit"] == 7
    assert data["embedding_model_config"]["headers"] == {"Authorization": ""}
    assert redact("search:\n  limit: 7\n", is_json=False) == ("search:\n  limit: 7\n", 0)


def test_redact_json_with_tabs_and_lists():
    out, n = redact(AGENT_JSON, is_json=True)
    assert n == 3 and "secret" not in out
    assert out.startswith('{\n\t"running"')  # the file's own layout, tabs included
    data = json.loads(out)
    assert data["running"]["max_tokens"] == 4096
    assert data["running"]["providers"][0] == {"name": "x", "apiKey": "", "access_token": ""}


def test_fill_puts_the_current_keys_back():
    redacted, _ = redact(MEM_YAML, is_json=False)
    current = MEM_YAML.replace("sk-secret-embed", "sk-now")
    out, n = fill(redacted, current, is_json=False)
    assert n == 3
    data = yaml.safe_load(out)
    assert data["embedding_model_config"]["api_key"] == "sk-now"
    assert data["llm_model_config"]["api_key"] == "sk-secret-llm\n"
    assert data["embedding_model_config"]["headers"]["Authorization"] == "Bearer sk-secret-header"
    assert "# rotate monthly" in out
    assert fill(redacted, None, is_json=False) == (redacted, 0)
    jout, jn = fill(redact(AGENT_JSON, True)[0], AGENT_JSON, is_json=True)
    assert jn == 3 and json.loads(jout) == json.loads(AGENT_JSON)


def with_config(ws: Path) -> Path:
    (ws / "mem.yaml").write_text(MEM_YAML)
    (ws / "agent.json").write_text(AGENT_JSON)
    return ws


def test_secrets_are_left_out_unless_asked(mem, ws):
    with_config(ws)
    code, out, err = mem("-w", ws, "backup", "create", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert b"-secret" not in all_bytes(Path(data["file"]))
    assert data["secrets_left_out"] == 6 and "6 API key(s) left out" in err
    assert "warning" not in err
    code, out, err = mem("-w", ws, "backup", "create", "--json", "--modules", "vault,config,secrets")
    assert code == 0, err
    assert "mem: warning: this backup holds API keys" in err
    path = Path(json.loads(out)["file"])
    with zipfile.ZipFile(path) as zf:
        assert zf.read("secrets/mem.yaml") == MEM_YAML.encode()
        assert zf.read("secrets/agent.json") == AGENT_JSON.encode()
        assert b"-secret" not in zf.read("config/mem.yaml")


def test_secrets_need_the_config_module(mem, ws):
    code, out, err = mem("-w", ws, "backup", "create", "--modules", "vault,secrets")
    assert code == 2 and "add config to --modules" in err


def test_config_restore_keeps_the_current_keys(mem, ws):
    with_config(ws)
    name = Path(create(mem, ws)["file"]).name
    (ws / "mem.yaml").write_text(MEM_YAML.replace("sk-secret-embed", "sk-rotated").replace("limit: 7", "limit: 2"))
    code, out, err = mem("-w", ws, "backup", "restore", name, "--modules", "config", "--yes")
    assert code == 0, err
    data = yaml.safe_load((ws / "mem.yaml").read_text())
    assert data["search"]["limit"] == 7  # the backup's settings
    assert data["embedding_model_config"]["api_key"] == "sk-rotated"  # the workspace's key
    assert json.loads((ws / "agent.json").read_text()) == json.loads(AGENT_JSON)
    assert "warning" not in err


def test_config_restore_without_keys_anywhere_warns(mem, ws):
    with_config(ws)
    name = Path(create(mem, ws)["file"]).name
    (ws / "mem.yaml").write_text("search:\n  limit: 2\n")
    code, out, err = mem("-w", ws, "backup", "restore", name, "--modules", "config", "--yes")
    assert code == 0, err
    assert "mem.yaml: 3 API key(s) left out of this backup are now empty" in err
    assert yaml.safe_load((ws / "mem.yaml").read_text())["embedding_model_config"]["api_key"] == ""


def test_secrets_restore_gives_the_original_files_back(mem, ws):
    with_config(ws)
    name = Path(create(mem, ws, "--modules", "vault,sessions,resources,config,secrets")["file"]).name
    (ws / "mem.yaml").write_text("search:\n  limit: 2\n")
    (ws / "agent.json").unlink()
    code, out, err = mem("-w", ws, "backup", "restore", name, "--yes")
    assert code == 0, err
    assert (ws / "mem.yaml").read_text() == MEM_YAML
    assert (ws / "agent.json").read_text() == AGENT_JSON


def test_a_config_file_the_backup_lacks_is_left_alone(mem, ws):
    (ws / "mem.yaml").write_text("search:\n  limit: 7\n")
    name = Path(create(mem, ws)["file"]).name
    (ws / "agent.json").write_text(AGENT_JSON)  # QwenPaw's, written after the backup
    (ws / "mem.yaml").write_text("search:\n  limit: 2\n")
    code, out, err = mem("-w", ws, "backup", "restore", name, "--yes")
    assert code == 0, err
    assert (ws / "mem.yaml").read_text() == "search:\n  limit: 7\n"
    assert (ws / "agent.json").read_text() == AGENT_JSON
