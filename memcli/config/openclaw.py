"""OpenClaw's memory settings, for a workspace that belongs to an OpenClaw install.

Found as OpenClaw finds them (research notes: /work/openclaw/FINDINGS.md). The config
file is OPENCLAW_CONFIG_PATH when set; else `openclaw.json` (or a legacy name) in
OPENCLAW_STATE_DIR, ~/.openclaw, the legacy ~/.clawdbot, ~/.moldbot and ~/.moltbot, the
profiles ~/.openclaw-*/, and the state folder the workspace sits in. `~` is OPENCLAW_HOME,
else HOME. The file is JSON5 with `$include` (relative to the including file, inside the
config's folder, at most 10 deep; a list is deep-merged, sibling keys win) and `${VAR}`
(upper-case names; `$${VAR}` is a literal `${VAR}`; the config's `env` block fills in
unset variables). The agent whose workspace holds this one (realpath, longest match;
`agents.list[]` and `agents.entries`) gives the settings: `agents.defaults.memorySearch`,
then `memory.search`, then the agent's own `memorySearch` and `memory.search`, merged key
by key (extraPaths concatenated).

Mapped onto mem's keys: extraPaths -> extra_paths; enabled false or provider none ->
embedding backend none; provider openai|gemini|voyage|ollama -> that backend (with model,
remote.baseUrl, remote.apiKey as a string or an env SecretRef, remote.headers; a model
of known size sets dimensions), local -> mem's own local model (not OpenClaw's GGUF);
query.maxResults -> search.limit; query.hybrid.vectorWeight/textWeight -> search.vector_weight
(normalised to sum 1, as OpenClaw does); query.hybrid.candidateMultiplier ->
search.candidate_multiplier; chunking.tokens/overlap -> chunking.target_tokens/overlap_tokens.
Other keys are listed as ignored. Nothing here fails mem: an unreadable config, a missing
variable or an unsupported value is a warning and the setting is left out. Without an
install this costs a few stat calls; the config is parsed only when a candidate exists.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.config.openclaw_map import expand_home, to_mem

CONFIG_NAMES = ("openclaw.json", "clawdbot.json", "moldbot.json", "moltbot.json")
STATE_DIRS = (".openclaw", ".clawdbot", ".moldbot", ".moltbot")
PROFILE_PREFIX = ".openclaw-"
MAX_INCLUDE_DEPTH = 10
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_NESTING = 200
_VAR = re.compile(r"\$(\$?)\{([A-Z_][A-Z0-9_]*)\}")
_COMMAND_SECRET = re.compile(r"\$\{(?:pass|gopass):[^}]*\}")
MISSING = object()  # a value left out (a variable that is not set)


class OpenClawError(Exception):
    """The config (or a file it includes) cannot be used."""


@dataclass
class Layer:
    path: str  # the config file
    agent: str = ""  # the agent whose workspace holds this one ("" when none matched)
    settings: dict = field(default_factory=dict, repr=False)  # in mem.yaml's shape (may hold an API key)
    ignored: list[str] = field(default_factory=list)  # OpenClaw keys mem does not use
    warnings: list[str] = field(default_factory=list)


def home_of(env: Mapping[str, str]) -> str | None:
    home = env.get("HOME") or env.get("USERPROFILE") or ""
    own = (env.get("OPENCLAW_HOME") or "").strip()
    return expand_home(own, home) if own else home or None


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def applicable(settings: dict, own_backend: Any) -> dict:
    """The layer's settings, without its embedding section when mem's own config (mem.yaml,
    MEM_EMBEDDING_BACKEND, a flag) picks another backend: OpenClaw's key, model and URL
    belong to OpenClaw's provider and are never sent to another one."""
    section = settings.get("embedding_model_config")
    if section and own_backend and str(own_backend).strip().lower() != section.get("backend"):
        return {k: v for k, v in settings.items() if k != "embedding_model_config"}
    return settings


# Finding the config -------------------------------------------------------------------
@dataclass
class Candidate:
    path: str
    state_dir: str
    profile: str


def candidates(workspace: str, env: Mapping[str, str], home: str | None) -> list[Candidate]:
    """Existing config files, in OpenClaw's order (one per state folder, first name found)."""
    profile = (env.get("OPENCLAW_PROFILE") or "").strip()
    state = (env.get("OPENCLAW_STATE_DIR") or env.get("CLAWDBOT_STATE_DIR") or "").strip()
    state = expand_home(state, home or "") if state else ""
    explicit = (env.get("OPENCLAW_CONFIG_PATH") or env.get("CLAWDBOT_CONFIG_PATH") or "").strip()
    if explicit:
        path = expand_home(explicit, home or "")
        fallback = state or (os.path.join(home, ".openclaw") if home else os.path.dirname(path))
        return [Candidate(path, fallback, profile)] if os.path.isfile(path) else []
    dirs = [(state, profile)] if state else []
    if home:
        dirs += [(os.path.join(home, d), profile) for d in STATE_DIRS]
        try:
            names = sorted(e.name for e in os.scandir(home) if e.name.startswith(PROFILE_PREFIX))
        except OSError:
            names = []
        dirs += [(os.path.join(home, n), n[len(PROFILE_PREFIX) :]) for n in names]
    parent, name = os.path.split(os.path.normpath(workspace))
    if name == "workspace" or name.startswith("workspace-"):
        dirs.append((parent, profile))
    elif os.path.basename(parent) == "workspace":
        dirs.append((os.path.dirname(parent), profile))
    out: list[Candidate] = []
    seen: set[str] = set()
    for folder, prof in dirs:
        if not os.path.isdir(folder):
            continue
        for n in CONFIG_NAMES:
            path = os.path.join(folder, n)
            if os.path.isfile(path):
                real = os.path.realpath(path)
                if real not in seen:
                    seen.add(real)
                    out.append(Candidate(path, folder, prof))
                break
    return out


# Reading it: JSON5, $include ------------------------------------------------------------
def _read(path: str) -> Any:
    from memcli.config import json5

    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise OpenClawError(f"{path} is larger than 2 MiB")
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        return json5.loads(text, max_depth=MAX_NESTING)
    except OSError as exc:
        raise OpenClawError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise OpenClawError(f"cannot read {path}: not valid UTF-8") from None
    except json5.JSON5Error as exc:
        raise OpenClawError(f"cannot parse {path}: {exc}") from None


def _deep_merge(a: Any, b: Any) -> Any:
    """OpenClaw's include merge: objects recursively, arrays concatenated, otherwise b."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = _deep_merge(out[k], v) if k in out else v
        return out
    if isinstance(a, list) and isinstance(b, list):
        return a + b
    return b


def _includes(node: Any, base: str, top: str, depth: int, stack: frozenset) -> Any:
    if isinstance(node, list):
        return [_includes(v, base, top, depth, stack) for v in node]
    if not isinstance(node, dict):
        return node
    own = {k: _includes(v, base, top, depth, stack) for k, v in node.items() if k != "$include"}
    if "$include" not in node:
        return own
    spec = node["$include"]
    files = [spec] if isinstance(spec, str) else spec
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise OpenClawError("$include must be a path or a list of paths")
    merged: Any = MISSING
    for name in files:
        if depth >= MAX_INCLUDE_DEPTH:
            raise OpenClawError(f"$include {name!r}: includes nested deeper than {MAX_INCLUDE_DEPTH}")
        real = os.path.realpath(os.path.join(base, name))
        if not _within(real, top):
            raise OpenClawError(f"$include {name!r} is outside the config folder {top}")
        if real in stack:
            raise OpenClawError(f"$include {name!r} includes itself")
        value = _includes(_read(real), os.path.dirname(real), top, depth + 1, stack | {real})
        merged = value if merged is MISSING else _deep_merge(merged, value)
    if not own:
        return {} if merged is MISSING else merged
    if not isinstance(merged, dict):
        raise OpenClawError("$include beside other keys must include an object")
    return _deep_merge(merged, own)


def load(path: str) -> dict:
    """The config as OpenClaw sees it after JSON5 and `$include` (variables not yet replaced)."""
    real = os.path.realpath(path)
    try:
        cfg = _includes(_read(real), os.path.dirname(real), os.path.dirname(real), 0, frozenset({real}))
    except RecursionError:
        raise OpenClawError(f"cannot parse {path}: nested too deeply") from None
    if not isinstance(cfg, dict):
        raise OpenClawError(f"{path} is not a JSON5 object")
    return cfg


# ${VAR} -----------------------------------------------------------------------------------
def lookup_for(env: Mapping[str, str], cfg: dict) -> Callable[[str], str]:
    """Variables: the environment first, then the config's `env` block (`env.vars` or `env`)."""
    block = v if isinstance(v := cfg.get("env"), dict) else {}
    extra = {k: v for k, v in block.items() if isinstance(v, str)}
    if isinstance(block.get("vars"), dict):
        extra.update({k: v for k, v in block["vars"].items() if isinstance(v, str)})
    return lambda name: env.get(name) or extra.get(name) or ""


def substitute(node: Any, lookup: Callable[[str], str], where: str, warnings: list[str]) -> Any:
    """`node` with ${VAR} replaced; a string naming an unset variable is left out (MISSING)."""
    if isinstance(node, str):
        if "$" not in node:
            return node
        if _COMMAND_SECRET.search(node):
            warnings.append(f"{where}: pass/gopass secrets are not read by mem; the setting is left out")
            return MISSING
        unset: list[str] = []

        def value(m: re.Match) -> str:
            if m.group(1):
                return "${" + m.group(2) + "}"
            found = lookup(m.group(2))
            if not found:
                unset.append(m.group(2))
            return found

        out = _VAR.sub(value, node)
        if unset:
            warnings.append(f"{where}: ${{{unset[0]}}} is not set; the setting is left out")
            return MISSING
        return out
    if isinstance(node, dict):
        items = ((k, substitute(v, lookup, f"{where}.{k}", warnings)) for k, v in node.items())
        return {k: v for k, v in items if v is not MISSING}
    if isinstance(node, list):
        items = (substitute(v, lookup, f"{where}[{i}]", warnings) for i, v in enumerate(node))
        return [v for v in items if v is not MISSING]
    return node


# Which agent ------------------------------------------------------------------------------
def _agents(agents: dict) -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = []
    if isinstance(agents.get("list"), list):
        out += [
            (e["id"].strip().lower(), e)
            for e in agents["list"]
            if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"].strip()
        ]
    if isinstance(agents.get("entries"), dict):
        out += [(str(k).strip().lower(), e) for k, e in agents["entries"].items() if isinstance(e, dict)]
    return out or [("main", {})]


def _default_agent(items: list[tuple[str, dict]]) -> str:
    for aid, entry in items:
        if entry.get("default") is True:
            return aid
    ids = [aid for aid, _ in items]
    return "main" if "main" in ids else ids[0]


def _workspaces(
    c: Candidate, home: str | None, lookup, aid: str, entry: dict, default: str, defaults: dict
) -> list[str]:
    def path(value: Any) -> str | None:
        if not isinstance(value, str) or not value.strip():
            return None
        v = substitute(value.strip(), lookup, "", [])
        if v is MISSING:
            return None
        return os.path.normpath(os.path.join(os.path.dirname(c.path), expand_home(v, home or "")))

    own = path(entry.get("workspace"))
    if own:
        return [own]
    shared = path(defaults.get("workspace"))
    if aid == default:
        if shared:
            return [shared]
        suffix = f"-{c.profile}" if c.profile and c.profile != "default" else ""
        return [os.path.join(home, ".openclaw", f"workspace{suffix}")] if home else []
    return [os.path.join(c.state_dir, f"workspace-{aid}"), *([os.path.join(shared, aid)] if shared else [])]


def match(cfg: dict, c: Candidate, home: str | None, lookup, ws_real: str) -> tuple[int, str, dict, dict] | None:
    """(length of the matching workspace, agent id, its entry, agents.defaults), longest match."""
    agents = v if isinstance(v := cfg.get("agents"), dict) else {}
    defaults = v if isinstance(v := agents.get("defaults"), dict) else {}
    items = _agents(agents)
    default = _default_agent(items)
    best = None
    for aid, entry in items:
        for w in _workspaces(c, home, lookup, aid, entry, default, defaults):
            real = os.path.realpath(w)
            if _within(ws_real, real) and (best is None or len(real) > best[0]):
                best = (len(real), aid, entry, defaults)
    return best


def workspace_holding(path: str, env: Mapping[str, str]) -> str | None:
    """The OpenClaw agent workspace holding `path` (one without a mem.yaml yet), or None: an
    agent's workspace in a config found, matched as `layer` matches (realpath, longest); else
    `workspace` or `workspace-<agent>` right in a state folder, OpenClaw's default. A few stat
    calls without an install; an unreadable config is skipped (`layer` reports it)."""
    home = home_of(env)
    real = os.path.realpath(path)
    chain = [real, *(str(p) for p in Path(real).parents)]
    found: dict[str, Candidate] = {}
    for d in chain:  # (a workspace's own state folder holds a config too)
        for c in candidates(d, env, home):
            found.setdefault(os.path.realpath(c.path), c)
    best = 0
    for c in found.values():
        try:
            cfg = load(c.path)
        except OpenClawError:
            continue
        m = match(cfg, c, home, lookup_for(env, cfg), real)
        best = max(best, m[0] if m else 0)
    if best:
        return real[:best]
    states = {os.path.realpath(os.path.join(home, d)) for d in STATE_DIRS} if home else set()
    own = (env.get("OPENCLAW_STATE_DIR") or env.get("CLAWDBOT_STATE_DIR") or "").strip()
    if own:
        states.add(os.path.realpath(expand_home(own, home or "")))
    for d in chain:
        parent, name = os.path.split(d)
        if (name == "workspace" or name.startswith("workspace-")) and (
            parent in states or os.path.basename(parent).startswith(PROFILE_PREFIX)
        ):
            return d
    return None


# Merging and mapping ----------------------------------------------------------------------
def _overlay(base: dict, over: dict, path: str = "") -> dict:
    """OpenClaw's mergeConfig: key by key; extraPaths concatenated; remote.headers replaced."""
    out = dict(base)
    for k, v in over.items():
        here = f"{path}.{k}" if path else k
        if here == "extraPaths" and isinstance(out.get(k), list) and isinstance(v, list):
            out[k] = out[k] + v
        elif here != "remote.headers" and isinstance(out.get(k), dict) and isinstance(v, dict):
            out[k] = _overlay(out[k], v, here)
        else:
            out[k] = v
    return out


def memory_search(cfg: dict, aid: str, entry: dict, defaults: dict, lookup, warnings: list[str]) -> dict:
    memory = v if isinstance(v := cfg.get("memory"), dict) else {}
    own = v if isinstance(v := entry.get("memory"), dict) else {}
    blocks = [
        ("agents.defaults.memorySearch", defaults.get("memorySearch")),
        ("memory.search", memory.get("search")),
        (f"agents.{aid}.memorySearch", entry.get("memorySearch")),
        (f"agents.{aid}.memory.search", own.get("search")),
    ]
    merged: dict = {}
    for where, block in blocks:
        if isinstance(block, dict):
            merged = _overlay(merged, substitute(block, lookup, where, warnings))
    return merged


def layer(workspace, env: Mapping[str, str]) -> Layer | None:
    """The OpenClaw layer for `workspace`, or None when no OpenClaw config exists."""
    home = home_of(env)
    found = candidates(str(workspace), env, home)
    if not found:
        return None
    ws_real = os.path.realpath(str(workspace))
    best, errors = None, []
    for c in found:
        try:
            cfg = load(c.path)
        except OpenClawError as exc:
            errors.append(str(exc))
            continue
        lookup = lookup_for(env, cfg)
        m = match(cfg, c, home, lookup, ws_real)
        if m is not None and (best is None or m[0] > best[0][0]):
            best = (m, c, cfg, lookup)
    if best is None:
        if not errors:
            return None
        return Layer(found[0].path, warnings=[f"{e}; OpenClaw's memory settings are not used" for e in errors])
    (_, aid, entry, defaults), c, cfg, lookup = best
    warnings: list[str] = []
    ms = memory_search(cfg, aid, entry, defaults, lookup, warnings)
    settings, ignored = to_mem(ms, home or "", lookup, warnings)
    return Layer(c.path, aid, settings, ignored, warnings)
