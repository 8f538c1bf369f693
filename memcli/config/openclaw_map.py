"""OpenClaw's merged `memorySearch` block mapped onto mem's config keys (mem.yaml's shape).

The mapping itself is described in memcli.config.openclaw. Values are checked here, so the
result always has the types mem's config expects: a value of the wrong type, or one mem
cannot use, is a warning and is left out, never an error. OpenClaw's provider, model and
dimension tables and its `~` live here too: the reader (memcli.config.openclaw) imports the
map, never the reverse.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

PREFIX = "memorySearch"
PROVIDERS = {
    "openai": "openai",
    "gemini": "gemini",
    "voyage": "voyage",
    "ollama": "ollama",
    "local": "local",
    "none": "none",
}  # OpenClaw provider -> mem embedding backend
DEFAULT_MODELS = {"openai": "text-embedding-3-small", "gemini": "gemini-embedding-001", "voyage": "voyage-4-large"}
DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "gemini-embedding-001": 3072,
    "voyage-4-large": 1024,
    "voyage-4": 1024,
    "voyage-4-lite": 1024,
    "voyage-3-large": 1024,
    "voyage-3.5": 1024,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
}


def expand_home(path: str, home: str) -> str:
    """OpenClaw's `~` (and `~/...`): the home folder `home` (OPENCLAW_HOME, else HOME)."""
    if path == "~" or path.startswith(("~/", "~" + os.sep)):
        return home + path[1:]
    return path


class Block:
    """The merged block, remembering which keys were read (the rest is reported as ignored)."""

    def __init__(self, data: dict):
        self.data, self.used = data, set()

    def get(self, dotted: str) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        self.used.add(dotted)
        return node

    def ignored(self) -> list[str]:
        out: list[str] = []

        def walk(node: dict, path: str) -> None:
            for k, v in node.items():
                here = f"{path}.{k}" if path else k
                if here in self.used:
                    continue
                if isinstance(v, dict) and v:
                    walk(v, here)
                else:
                    out.append(f"{PREFIX}.{here}")

        walk(self.data, "")
        return out


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _integer(value: Any) -> int | None:
    n = _number(value)
    return int(n) if n is not None and n == int(n) else None


def _secret(value: Any, lookup: Callable[[str], str], warn) -> str:
    """remote.apiKey: a string, or a SecretRef {source: "env", id: "VAR"}."""
    where = f"{PREFIX}.remote.apiKey"
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        if value.get("source") == "env" and isinstance(value.get("id"), str):
            found = lookup(value["id"])
            if not found:
                warn(f"{where}: environment variable {value['id']} is not set; left out")
            return found
        warn(f"{where}: a SecretRef from {value.get('source')!r} is not supported by mem (only source env); left out")
    elif value is not None:
        warn(f"{where} must be a string or a SecretRef; left out")
    return ""


def _embedding(b: Block, lookup, warn) -> dict:
    if b.get("enabled") is False:
        return {"backend": "none"}
    provider = b.get("provider")
    if provider is None or (isinstance(provider, str) and provider.strip().lower() in ("", "auto")):
        return {}  # no explicit provider: mem keeps its own choice (never a paid API unasked)
    name = provider.strip().lower() if isinstance(provider, str) else ""
    backend = PROVIDERS.get(name)
    if backend is None:
        warn(
            f"{PREFIX}.provider {provider!r} is not supported by mem ({', '.join(PROVIDERS)}); "
            f"mem's own embedding setting is kept"
        )
        return {}
    out: dict = {"backend": backend}
    if backend in ("none", "local"):
        return out  # local: mem's own local model; OpenClaw's model (a GGUF file) is not used
    model = b.get("model")
    model = model.strip() if isinstance(model, str) and model.strip() else DEFAULT_MODELS.get(backend, "")
    if model:
        out["model_name"] = model
        if model.split(":")[0] in DIMENSIONS:
            out["dimensions"] = DIMENSIONS[model.split(":")[0]]
    base_url = b.get("remote.baseUrl")
    if isinstance(base_url, str) and base_url.strip():
        out["base_url"] = base_url.strip()
    key = _secret(b.get("remote.apiKey"), lookup, warn)
    if key:
        out["api_key"] = key
    headers = b.get("remote.headers")
    if isinstance(headers, dict):
        bad = [str(h) for h, v in headers.items() if not isinstance(v, str)]
        if bad:
            warn(f"{PREFIX}.remote.headers: {', '.join(bad)} not a string; left out")
        out["headers"] = {str(h): v for h, v in headers.items() if isinstance(v, str)}
    return out


def _search(b: Block, warn) -> dict:
    out: dict = {}
    limit = _integer(b.get("query.maxResults"))
    if limit is not None and limit >= 1:
        out["limit"] = limit
    elif b.get("query.maxResults") is not None:
        warn(f"{PREFIX}.query.maxResults must be a positive integer; left out")
    vw, tw = b.get("query.hybrid.vectorWeight"), b.get("query.hybrid.textWeight")
    if vw is not None or tw is not None:
        v, t = _number(0.7 if vw is None else vw), _number(0.3 if tw is None else tw)
        if v is None or t is None:
            warn(f"{PREFIX}.query.hybrid weights must be numbers; left out")
        else:
            v, t = min(max(v, 0.0), 1.0), min(max(t, 0.0), 1.0)
            if v + t > 0:
                out["vector_weight"] = v / (v + t)
    mult = b.get("query.hybrid.candidateMultiplier")
    if mult is not None:
        m = _number(mult)
        if m is None:
            warn(f"{PREFIX}.query.hybrid.candidateMultiplier must be a number; left out")
        else:
            out["candidate_multiplier"] = min(max(m, 1.0), 20.0)
    return out


def _chunking(b: Block, warn) -> dict:
    out: dict = {}
    tokens, overlap = b.get("chunking.tokens"), b.get("chunking.overlap")
    t = _integer(tokens)
    if t is not None and t >= 1:
        out["target_tokens"] = t
    elif tokens is not None:
        warn(f"{PREFIX}.chunking.tokens must be a positive integer; left out")
    if overlap is not None:
        o = _integer(overlap)
        if o is None:
            warn(f"{PREFIX}.chunking.overlap must be an integer; left out")
        else:
            out["overlap_tokens"] = min(max(o, 0), out.get("target_tokens", 400) - 1)
    return out


def _extra_paths(b: Block, home: str, warn) -> list[str] | None:
    paths = b.get("extraPaths")
    if paths is None:
        return None
    if not isinstance(paths, list):
        warn(f"{PREFIX}.extraPaths must be a list; left out")
        return None
    out: list[str] = []
    for item in paths:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            if item.get("pattern"):
                warn(
                    f"{PREFIX}.extraPaths: pattern {item['pattern']!r} of {item['path']} is not supported; "
                    f"every .md file under it is indexed"
                )
            item = item["path"]
        if isinstance(item, str) and item.strip():
            path = expand_home(item.strip(), home) if home else item.strip()
            if path not in out:
                out.append(path)
        else:
            warn(f"{PREFIX}.extraPaths: {item!r} is not a path; left out")
    return out


def to_mem(ms: dict, home: str, lookup: Callable[[str], str], warnings: list[str]) -> tuple[dict, list[str]]:
    """(settings in mem.yaml's shape, ignored OpenClaw keys) from the merged block."""
    b = Block(ms)
    warn = warnings.append
    settings: dict = {}
    sections = (
        ("embedding_model_config", _embedding(b, lookup, warn)),
        ("search", _search(b, warn)),
        ("chunking", _chunking(b, warn)),
    )
    settings.update({k: v for k, v in sections if v})
    paths = _extra_paths(b, home, warn)
    if paths is not None:
        settings["extra_paths"] = paths
    return settings, b.ignored()
