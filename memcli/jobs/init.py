"""Create a workspace: the folders and a commented mem.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memcli.errors import BadInput
from memcli.vault import atomic

HEADER = """\
# mem workspace configuration. Every key is optional; each line below shows its default.
# Keys match QwenPaw's running.reme_light_memory_config, so the same values work there.
# Precedence: command-line flag > MEM_* environment > this file > agent.json > defaults.
"""
# What mem.yaml shows, and why each key is there; the values come from the settings' own
# defaults (memcli.config.layers.DEFAULTS) when the file is written, so they cannot drift.
# (key, comment lines); a section's keys follow it as ("section.key", ...); None = a blank line.
LAYOUT: list = [
    ("daily_dir", ["daily notes: memory/YYYY-MM-DD/<note>.md"]),
    ("digest_dir", ["long-term nodes: digest/{personal,procedure,wiki}/"]),
    ("resource_dir", ["external files picked up by `mem resource scan`"]),
    ("session_dir", ["sanitized conversations: mem_session/dialog/<id>.jsonl"]),
    ("metadata_dir", ["derived state, rebuilt by `mem reindex`"]),
    ("auto_memory_interval", ["extract after this many new user turns"]),
    ("summarize_when_compact", ["honour `mem ingest --flush` before a context compaction"]),
    ("dream_cron_enabled", []),
    ("dream_cron", ["when `mem dream --if-due` consolidates notes"]),
    ("dream_min_statements", ["statements about a subject before dream founds a node (1 = every one)"]),
    ("timezone", ["e.g. Europe/Berlin; empty = this machine's zone"]),
    ("inbox_push_enabled", ["record each job that changed memory (`mem inbox`)"]),
    ("inbox_webhook_url", ["also POST those records here"]),
    None,
    ("embedding_model_config", ["vector search"]),
    (
        "embedding_model_config.backend",
        [
            '"" = the local model when the local extra is installed, else',
            "keyword-only; openai | dashscope | gemini | ollama | voyage | local | none",
        ],
    ),
    ("embedding_model_config.base_url", ['"" = the provider\'s own, e.g. https://api.openai.com/v1']),
    ("embedding_model_config.model_name", ["a remote backend needs one, e.g. text-embedding-3-small"]),
    ("embedding_model_config.api_key", ["better: export MEM_EMBEDDING_API_KEY"]),
    ("embedding_model_config.dimensions", []),
    None,
    ("llm_model_config", ["fact extraction; without it (or backend: none) a rule-based", "extractor runs offline"]),
    ("llm_model_config.backend", ["openai | dashscope | ollama | vllm | none"]),
    ("llm_model_config.base_url", ['"" = the provider\'s own']),
    ("llm_model_config.model_name", ["e.g. gpt-4o-mini"]),
    ("llm_model_config.api_key", ["better: export MEM_LLM_API_KEY"]),
    None,
    ("search", []),
    ("search.limit", []),
    ("search.vector_weight", ["share of the vector branch in fusion (ReMe: 0.7)"]),
    ("search.candidate_multiplier", []),
    ("search.rrf_k", []),
    (
        "search.fusion",
        [
            "adaptive: vector_weight rises towards 0.8 when no note covers the",
            "query's words and one note is clearly nearest in meaning;",
            "minmax: vector_weight fixed; rrf: ReMe's weighted reciprocal rank fusion",
        ],
    ),
    (
        "search.expand_terms",
        ["query words' nearest vault words added to the keyword", "query (needs an embedding backend); 0 = off"],
    ),
    None,
    ("chunking", ["after a change, `mem reindex` rebuilds what depends on it"]),
    ("chunking.target_tokens", ["a search hit is a chunk of about this many tokens"]),
    ("chunking.overlap_tokens", []),
    ("chunking.passage_tokens", ["vectors score a chunk by its best passage this size; 0 = whole chunk"]),
    None,
    ("shared", ["team memory on PostgreSQL + pgvector (docs/team.md)"]),
    ("shared.dsn", ["e.g. postgresql://mem@db/mem; better: export MEM_SHARED_DSN;", "needs memcli[postgres]"]),
    ("shared.namespace", ["agents of one namespace search each other's chunks"]),
    ("shared.agent_id", ["empty = this folder's name; others see @<agent_id>/<path>"]),
    ("shared.memory_isolation", ["true: search this agent's chunks only"]),
    ("shared.search_timeout", ["seconds; slower or unreachable -> the local index answers"]),
]
COMMENT_COLUMN = 31  # where the explanations start


def yaml_value(value) -> str:
    """`value` as YAML reads it back: plain when that round-trips, else JSON's quoted form."""
    import json
    import re

    import yaml

    if isinstance(value, str):
        if re.fullmatch(r"[A-Za-z0-9_./-]+", value) and yaml.safe_load(value) == value:
            return value
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value)  # booleans, numbers, [] and {} are JSON and YAML alike


def mem_yaml(defaults: dict | None = None) -> str:
    """The commented mem.yaml `mem init` writes: each key of LAYOUT with its default."""
    from memcli.config.layers import DEFAULTS

    defaults = DEFAULTS if defaults is None else defaults
    out = [HEADER]
    for item in LAYOUT:
        if item is None:
            out.append("")
            continue
        key, notes = item
        section, _, sub = key.partition(".")
        if sub:
            line = f"#   {sub}: {yaml_value(defaults[section][sub])}"
        else:
            value = defaults[key]
            line = f"# {key}:" if isinstance(value, dict) else f"# {key}: {yaml_value(value)}"
        for i, note in enumerate(notes or [""]):
            head = line if i == 0 else "#"
            out.append(f"{head.ljust(COMMENT_COLUMN)}# {note}" if note else head)
    return "\n".join(out) + "\n"


def folders(settings) -> tuple[str, ...]:
    """The workspace's folders under its configured names (agent.json or mem.yaml may rename them)."""
    s = settings
    return (
        s.daily_dir,
        *(f"{s.digest_dir}/{b}" for b in ("personal", "procedure", "wiki")),
        s.resource_dir,
        f"{s.session_dir}/dialog",
        s.metadata_dir,
    )


@dataclass
class InitReport:
    root: Path
    created: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"workspace": str(self.root), "created": self.created}


def run(root: Path, settings=None) -> InitReport:
    """Create what is missing; `settings` (memcli.config.settings.Settings) names the folders."""
    from memcli.config.settings import Settings

    if root.exists() and not root.is_dir():
        raise BadInput(f"{root} exists and is not a folder")
    report = InitReport(root)
    for sub in folders(settings or Settings()):
        sub = sub.strip("/")
        d = root / sub
        if not d.is_dir():
            d.mkdir(parents=True, exist_ok=True)
            report.created.append(sub + "/")
    cfg = root / "mem.yaml"
    if not cfg.exists():
        atomic.write_text(cfg, mem_yaml())
        report.created.append("mem.yaml")
    return report
