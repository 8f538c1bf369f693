"""The resolved configuration as typed, frozen settings: built and validated once.

memcli.config.layers merges the layers (defaults < agent.json < mem.yaml < MEM_* <
flags) and checks each value's type against its default; `build` turns the result
into these dataclasses and checks what a type cannot say (ranges, choices, folders
inside the workspace). Jobs read attributes (`ws.settings.search.limit`), never
string paths into a dict. Field names are the config keys; the four sections are
shortened (`embedding_model_config` -> `embedding`, `llm_model_config` -> `llm`,
`auto_memory_search_config` -> `auto_memory_search`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from memcli.errors import ConfigError


@dataclass(frozen=True)
class Embedding:
    backend: str = ""  # "" = automatic: local model when installed, else keyword-only
    api_key: str = ""
    base_url: str = ""
    model_name: str = ""
    dimensions: int = 1024
    enable_cache: bool = True
    use_dimensions: bool = False
    max_cache_size: int = 10000
    max_input_length: int = 8192
    max_batch_size: int = 10
    timeout: float = 30.0
    max_retries: int = 3
    headers: dict = field(default_factory=dict)
    # a fast first pass before the model above embeds a vault (memcli.jobs.embedding): "auto"
    # = static word-piece vectors (wordllama-l2-supercat-256) for the local backend, "none" = off
    first_pass: str = "auto"
    # seconds a write (remember, ingest, resource scan, watch, MCP tools) spends embedding the
    # chunks it added; what is left is embedded by the next command or `mem watch`; 0 = none
    embed_budget_seconds: float = 5.0


@dataclass(frozen=True)
class LLM:
    backend: str = ""
    base_url: str = ""
    api_key: str = ""
    model_name: str = ""
    timeout: float = 60.0
    max_retries: int = 2
    headers: dict = field(default_factory=dict)
    # the model's context window in tokens: prompts are cut or split to fit it, leaving room
    # for the reply (docs/local-models.md); raise it for large hosted models
    context_tokens: int = 8192
    # tokens a reply may use; 0 = a quarter of context_tokens, sent as max_tokens only to the
    # local backends (llamacpp, ollama, vllm), where a small model may otherwise never stop
    max_output_tokens: int = 0
    # llama.cpp's prompt cache (backend llamacpp only): false makes replies repeatable, at the
    # cost of reading the whole prompt again on every call
    cache_prompt: bool = True


@dataclass(frozen=True)
class Search:
    vector_weight: float = 0.3  # measured on LoCoMo: the reference 0.7 buries exact keyword hits
    candidate_multiplier: float = 3.0
    rrf_k: int = 60
    # "adaptive": min-max whose vector weight rises for a query no chunk covers well when the
    # vector branch has a clear winner (docs/evaluation.md); "minmax" keeps vector_weight fixed; "rrf" is
    # the reference formula (docs/evaluation.md)
    fusion: str = "adaptive"
    merge_max_factor: float = 1.5  # merged hits of one file stay within this many chunk budgets
    limit: int = 5
    max_links_per_direction: int = 10
    sync_before_search_max_files: int = 50
    # query expansion with the embedding model's nearest vault words (memcli.retrieval.expand)
    expand_terms: int = 5  # neighbours per query word; 0 = off (no word vectors are computed)
    expand_min_similarity: float = 0.5
    # index each daily note's source conversation with it (memcli.index.notes.source); a log
    # that changes while its note does not makes the note stale (memcli.index.sources)
    source_conversations: bool = True
    expand_weight: float = 0.3  # a neighbour counts weight x similarity of a query word
    expand_vocabulary: int = 50000  # words (most frequent first) given a vector
    # reverse dictionary (memcli.index.vectors.glosses): vault words whose WordNet definition is near the
    # whole query ("travel to work" -> commute); measured on bench/semantic_set, LoCoMo, pydoc
    define_terms: int = 3  # words taken per query; 0 = off (no definitions are embedded)
    define_min_similarity: float = 0.5
    define_weight: float = 2.0  # a word counts weight x similarity: about a query term at 0.5
    # narrower words (memcli.retrieval.narrower): for a query its words barely cover, the vault
    # words WordNet files under a query word ("apiarist" -> beekeeper), at most this many per word; 0 = off
    narrower_terms: int = 2


@dataclass(frozen=True)
class Chunking:
    target_tokens: int = 400
    overlap_tokens: int = 80
    # the vector branch scores a chunk by its best passage of about this many tokens
    # (0 = the whole chunk); measured on LoCoMo and pydoc (docs/evaluation.md)
    passage_tokens: int = 100


@dataclass(frozen=True)
class Redaction:
    """Secret-shaped values replaced by [REDACTED:<kind>] before ingest, remember, resource
    scan and dream write anything (memcli.secrets.redact)."""

    enabled: bool = True
    patterns: dict = field(default_factory=dict)  # extra kinds: name -> regex (group "secret" if only a part)
    disabled_kinds: list = field(default_factory=list)  # built-in kinds to leave alone


@dataclass(frozen=True)
class Shared:
    """Team memory (memcli.team, docs/team.md): this workspace's chunks published to a
    PostgreSQL + pgvector database and searched there with the other agents' of its namespace."""

    backend: str = ""  # "" = postgres when a dsn is set, else off; "none" = off
    dsn: str = ""  # libpq URI or key=value string (MEM_SHARED_DSN); its password is never shown
    namespace: str = "default"  # one team's memory; agents of a namespace search each other
    agent_id: str = ""  # "" = the workspace folder's name; others see our hits as @<agent_id>/<path>
    memory_isolation: bool = False  # true: search (and mem get) this agent's chunks only
    search_timeout: float = 3.0  # seconds; a slower or unreachable database -> the local index answers

    @property
    def enabled(self) -> bool:
        name = self.backend.strip().lower()
        return name == "postgres" or (name == "" and bool(self.dsn.strip()))


@dataclass(frozen=True)
class AutoMemorySearch:
    enabled: bool = False
    max_results: int = 2


@dataclass(frozen=True)
class Settings:
    metadata_dir: str = "mem_metadata"
    session_dir: str = "mem_session"
    mem_session_dir: str = "mem_agent"
    resource_dir: str = "resource"
    daily_dir: str = "memory"
    digest_dir: str = "digest"
    summarize_when_compact: bool = True
    inbox_push_enabled: bool = True
    auto_memory_interval: int = 5
    dream_cron_enabled: bool = True
    dream_cron: str = "0 23 * * *"
    dream_min_statements: int = 2  # statements about a subject before dream founds a node for it
    auto_memory_search: AutoMemorySearch = field(default_factory=AutoMemorySearch)
    embedding: Embedding = field(default_factory=Embedding)
    llm: LLM = field(default_factory=LLM)
    search: Search = field(default_factory=Search)
    chunking: Chunking = field(default_factory=Chunking)
    redaction: Redaction = field(default_factory=Redaction)
    shared: Shared = field(default_factory=Shared)
    extra_paths: tuple[str, ...] = ()
    # the names the memory's owner goes by ("Oh Ha-eun", "Ha-eun"): a query naming them asks about
    # "the user" (memcli.vault.owner adds those USER.md and the conversations give)
    owner_names: tuple[str, ...] = ()
    timezone: str = ""
    backup_dir: str = ""
    inbox_webhook_url: str = ""


# config key of a section -> Settings field
SECTIONS = {
    "auto_memory_search_config": "auto_memory_search",
    "embedding_model_config": "embedding",
    "llm_model_config": "llm",
    "search": "search",
    "chunking": "chunking",
    "redaction": "redaction",
    "shared": "shared",
}
FOLDERS = ("metadata_dir", "session_dir", "resource_dir", "daily_dir", "digest_dir")
FUSIONS = ("adaptive", "minmax", "rrf")
# a negative value means nothing: an error, not a clamp
NON_NEGATIVE = (("chunking", "passage_tokens"), ("llm", "max_output_tokens"))
LOCAL_BACKENDS = ("", "local", "none")  # backends whose vector size is the model's own
MIN_CONTEXT = 2048  # tokens: below that no prompt of mem's fits with room for a reply
SHARED_BACKENDS = ("", "none", "postgres")
# namespace and agent_id name PostgreSQL rows and roles (mem_team_<namespace>) and `@<agent_id>/`
SHARED_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,47}"


def defaults() -> dict[str, Any]:
    """The defaults as a config dict (mem.yaml's shape): what memcli.config.layers merges into."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Settings):
        key = next((k for k, v in SECTIONS.items() if v == f.name), f.name)
        value = getattr(Settings(), f.name)
        out[key] = (
            dataclasses.asdict(value)
            if dataclasses.is_dataclass(value) and not isinstance(value, type)
            else list(value)
            if isinstance(value, tuple)
            else value
        )
    return out


def build(cfg: Mapping[str, Any]) -> Settings:
    """Settings from a merged, type-checked config dict; ConfigError for a value out of range."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(Settings):
        key = next((k for k, v in SECTIONS.items() if v == f.name), f.name)
        raw = cfg[key]
        if f.name in SECTIONS.values():
            values[f.name] = section(type(getattr(Settings(), f.name)), raw)
        else:
            values[f.name] = tuple(raw) if f.name in ("extra_paths", "owner_names") else raw
    settings = Settings(**values)
    validate(settings)
    return settings


def section(cls, raw: Mapping[str, Any] | Any):
    """One section dataclass from its mapping; a mapping may leave keys out (defaults apply)."""
    if isinstance(raw, cls):
        return raw
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in dict(raw).items() if k in names})


def as_mapping(section_value) -> dict[str, Any]:
    """A provider section as the plain mapping providers read (a dataclass or a mapping)."""
    if dataclasses.is_dataclass(section_value) and not isinstance(section_value, type):
        return dataclasses.asdict(section_value)
    return dict(section_value)


def validate(s: Settings) -> None:
    """Every check a value's type cannot express, in one place."""
    for key in FOLDERS:
        v = getattr(s, key)
        if not v or os.path.isabs(v) or ".." in PurePath(v).parts:
            raise ConfigError(f"config key '{key}' must be a relative folder inside the workspace, got {v!r}")
    for path in NON_NEGATIVE:
        value = _at(s, path)
        if value < 0:
            raise ConfigError(f"config key '{_key(path)}' must be 0 or more, got {value}", "fix it in mem.yaml")
    if s.llm.context_tokens < MIN_CONTEXT:
        raise ConfigError(
            f"llm_model_config.context_tokens must be at least {MIN_CONTEXT}, got {s.llm.context_tokens}",
            "set the model's context window (e.g. 4096 or 8192)",
        )
    if s.search.fusion not in FUSIONS:
        raise ConfigError(f"search.fusion must be adaptive, minmax or rrf, got {s.search.fusion!r}")
    validate_embedding(s.embedding)
    if s.embedding.embed_budget_seconds < 0:
        raise ConfigError(
            f"embedding_model_config.embed_budget_seconds must be 0 or more, got {s.embedding.embed_budget_seconds}",
            "fix it in mem.yaml",
        )
    validate_shared(s.shared)
    if s.redaction.patterns or s.redaction.disabled_kinds:  # only then: a cold search never compiles them
        from memcli.secrets.scrub import redactor

        redactor(s.redaction)  # ConfigError for a bad regex or an unknown kind


def validate_embedding(e: Embedding) -> None:
    """A remote backend needs its vector size (a local model knows its own)."""
    if str(e.backend).strip().lower() in LOCAL_BACKENDS:
        return
    if not isinstance(e.dimensions, int) or isinstance(e.dimensions, bool) or e.dimensions <= 0:
        raise ConfigError(
            f"embedding_model_config.dimensions must be a positive integer, got {e.dimensions!r}",
            "set it to the model's vector size",
        )


def validate_shared(sh: Shared) -> None:
    """The shared index's choices; the DSN itself is checked by the first connection."""
    import re

    if sh.backend.strip().lower() not in SHARED_BACKENDS:
        raise ConfigError(f"shared.backend must be postgres or none, got {sh.backend!r}")
    if not sh.enabled:
        return
    if not sh.dsn.strip():
        raise ConfigError(
            "shared.backend is postgres but shared.dsn is empty", "set shared.dsn in mem.yaml or MEM_SHARED_DSN"
        )
    for key in ("namespace", "agent_id"):
        value = getattr(sh, key)
        if (value or key == "namespace") and not re.fullmatch(SHARED_NAME, value):
            raise ConfigError(f"shared.{key} must be 1-48 letters, digits, '.', '_' or '-', got {value!r}")
    if not sh.search_timeout > 0:
        raise ConfigError(f"shared.search_timeout must be more than 0 seconds, got {sh.search_timeout}")


def _at(s: Settings, path: tuple[str, ...]):
    node: Any = s
    for name in path:
        node = getattr(node, name)
    return node


def _key(path: tuple[str, ...]) -> str:
    head = next((k for k, v in SECTIONS.items() if v == path[0]), path[0])
    return ".".join((head, *path[1:]))
