"""Configuration: defaults < agent.json < mem.yaml < MEM_* environment < flags.

Key names follow QwenPaw's `running.reme_light_memory_config`, so a QwenPaw agent
workspace works as it is (memcli.config.qwenpaw reads its agent.json). Settings are
resolved once, by the CLI, and passed down; nothing below the CLI reads the environment.

Why not pydantic-settings (measured by `bench/libraries.py`; docs/architecture.md, Hand-written
parts): every command resolves its configuration, and importing pydantic-settings takes ~250 ms
against ~70 ms for this module and memcli.config.settings; the layers (agent.json's nested
QwenPaw keys, OpenClaw's, mem.yaml strict and agent.json lenient, the MEM_* names, masking)
would stay written here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memcli.config import settings
from memcli.config.qwenpaw import load_agent_json
from memcli.errors import ConfigError

SECRET_KEYS = frozenset({"api_key"})
DSN_KEYS = frozenset({"dsn"})  # connection strings: shown with their password masked (memcli.secrets.dsn)
FREEFORM = frozenset({"headers", "patterns"})  # provider HTTP headers, redaction patterns: any string keys
MASK = "***"

# The defaults come from the typed settings (memcli.config.settings), the one place that
# names every key; here they are a dict of mem.yaml's shape, for merging and printing.
DEFAULTS: dict[str, Any] = settings.defaults()
EMBEDDING_DEFAULTS: dict[str, Any] = DEFAULTS["embedding_model_config"]

# Environment variables the CLI honours, mapped to a config path.
ENV_KEYS: dict[str, tuple[str, ...]] = {
    "MEM_EMBEDDING_BACKEND": ("embedding_model_config", "backend"),
    "MEM_EMBEDDING_MODEL": ("embedding_model_config", "model_name"),
    "MEM_EMBEDDING_BASE_URL": ("embedding_model_config", "base_url"),
    "MEM_EMBEDDING_API_KEY": ("embedding_model_config", "api_key"),
    "MEM_EMBEDDING_DIMENSIONS": ("embedding_model_config", "dimensions"),
    "MEM_LLM_BACKEND": ("llm_model_config", "backend"),
    "MEM_LLM_MODEL": ("llm_model_config", "model_name"),
    "MEM_LLM_BASE_URL": ("llm_model_config", "base_url"),
    "MEM_LLM_API_KEY": ("llm_model_config", "api_key"),
    "MEM_TIMEZONE": ("timezone",),
    "MEM_BACKUP_DIR": ("backup_dir",),
    "MEM_INBOX_WEBHOOK_URL": ("inbox_webhook_url",),
    "MEM_SHARED_DSN": ("shared", "dsn"),
    "MEM_SHARED_NAMESPACE": ("shared", "namespace"),
    "MEM_SHARED_AGENT_ID": ("shared", "agent_id"),
}

# The provider's usual key variable, used only when no api_key is configured.
PROVIDER_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "dashscope": "DASHSCOPE_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "voyage": "VOYAGE_API_KEY",
}


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    """A short repr for a message. Never the full repr first: a YAML alias bomb (nine
    lists of nine aliases, nine levels deep) is small in memory, since aliases share
    objects, but its repr is 9**9 items long and would hang the command."""
    import reprlib

    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxstring, short.maxother = 2, 4, 4, 50, 50
    return short.repr(value)[:60]


def _coerce(path: str, default: Any, value: Any) -> Any:
    """Check `value` against the type of its default; allow int where float is expected."""
    if value is None:
        return default
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
    elif isinstance(default, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
    elif isinstance(default, str):
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
    elif isinstance(default, list) and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"config key '{path}' must be {_type_name(default)}, got {_shown(value)}", "fix it in mem.yaml")


def merge(base: dict, layer: Mapping, *, source: str, strict: bool, prefix: str = "") -> list[str]:
    """Merge `layer` into `base` in place, validating types; returns unknown keys.

    With `strict`, an unknown key is a ConfigError (mem.yaml is ours); otherwise it
    is only reported (agent.json belongs to QwenPaw and may carry keys we do not use).
    """
    unknown: list[str] = []
    for key, value in layer.items():
        path = f"{prefix}{key}"
        if key not in base:
            if strict:
                raise ConfigError(f"unknown config key '{path}' in {source}", "see `mem config` for valid keys")
            unknown.append(path)
            continue
        default = base[key]
        if isinstance(default, dict):
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise ConfigError(f"config key '{path}' in {source} must be a mapping, got {_shown(value)}")
            if key in FREEFORM:
                if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                    raise ConfigError(f"config key '{path}' in {source} must map strings to strings")
                base[key] = dict(value)
                continue
            unknown += merge(default, value, source=source, strict=strict, prefix=f"{path}.")
        else:
            base[key] = _coerce(path, default, value)
    return unknown


def _set_path(cfg: dict, keys: tuple[str, ...], value: Any, source: str) -> None:
    node = cfg
    for k in keys[:-1]:
        node = node[k]
    node[keys[-1]] = _coerce(".".join(keys), node[keys[-1]], value)


def load_yaml_file(path: Path) -> dict:
    import yaml  # deferred: only needed when the workspace has a mem.yaml

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"cannot read {path.name}: not valid UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path.name}: {exc.strerror}") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(
            f"cannot parse {path.name}{where}: {getattr(exc, 'problem', None) or 'invalid YAML'}", "fix the YAML syntax"
        ) from None
    except RecursionError:
        raise ConfigError(f"cannot parse {path.name}: nested too deeply") from None
    except (ValueError, TypeError, AttributeError, OverflowError):
        # PyYAML's constructors raise these for a tag on the wrong value (`!!timestamp x`)
        raise ConfigError(f"cannot parse {path.name}: a tagged value is not of its type", "fix the YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path.name} must be a mapping of config keys, got {type(data).__name__}")
    return data


def resolve(
    workspace: Path, env: Mapping[str, str], overrides: Mapping[str, Any] | None = None, *, notes: dict | None = None
) -> tuple[dict, list[str]]:
    """Build the effective config for `workspace`; returns (config, ignored agent.json keys).

    Layers: defaults < agent.json < OpenClaw's memory settings (when an OpenClaw install's
    agent has this workspace; memcli.config.openclaw) < mem.yaml < MEM_* < flags. `notes`,
    when given, receives "openclaw": the OpenClaw layer (its file, agent, ignored keys and
    warnings), or None. A `~` in extra_paths is the home folder of `env`."""
    from memcli.config import openclaw
    from memcli.config.openclaw_map import expand_home

    cfg = copy.deepcopy(DEFAULTS)
    ignored: list[str] = []
    agent = workspace / "agent.json"
    if agent.is_file():
        ignored = merge(cfg, load_agent_json(agent), source="agent.json", strict=False)
    native = workspace / "mem.yaml"
    mine = load_yaml_file(native) if native.is_file() else None
    layer = openclaw.layer(workspace, env)
    if layer is not None:
        section = (mine or {}).get("embedding_model_config")
        own = (
            (overrides or {}).get("embedding_model_config.backend")
            or env.get("MEM_EMBEDDING_BACKEND")
            or (section.get("backend") if isinstance(section, dict) else None)
        )
        merge(cfg, openclaw.applicable(layer.settings, own), source=f"OpenClaw config {layer.path}", strict=False)
    if notes is not None:
        notes["openclaw"] = layer
    if mine is not None:
        merge(cfg, mine, source="mem.yaml", strict=True)
    for var, keys in ENV_KEYS.items():
        if env.get(var):
            _set_path(cfg, keys, env[var], var)
    for section in ("embedding_model_config", "llm_model_config"):
        sec = cfg[section]
        if not sec.get("api_key"):
            key_var = PROVIDER_KEY_ENV.get(str(sec.get("backend", "")))
            if key_var and env.get(key_var):
                sec["api_key"] = env[key_var]
    for dotted, value in (overrides or {}).items():
        _set_path(cfg, tuple(dotted.split(".")), value, "flag")
    home = env.get("HOME") or env.get("USERPROFILE")
    if home:
        cfg["extra_paths"] = [expand_home(p, home) for p in cfg["extra_paths"]]
    return cfg, ignored


def masked(cfg: Any) -> Any:
    """A copy of `cfg` safe to print: every secret replaced by a mask.

    Extra HTTP headers are masked whole: they typically carry Authorization or
    x-api-key values, and a header name alone is enough to debug with."""
    if isinstance(cfg, dict):
        from memcli.secrets import dsn

        return {
            k: (
                MASK
                if k in SECRET_KEYS and v
                else dsn.masked(v)
                if k in DSN_KEYS and isinstance(v, str)
                else dict.fromkeys(v, MASK)
                if k in FREEFORM and isinstance(v, dict)
                else masked(v)
            )
            for k, v in cfg.items()
        }
    if isinstance(cfg, list):
        return [masked(v) for v in cfg]
    return cfg
