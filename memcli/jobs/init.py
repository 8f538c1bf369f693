"""Create a workspace: the folders and a commented mem.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memcli.errors import BadInput
from memcli.vault import atomic

MEM_YAML = """\
# mem workspace configuration. Every key is optional; defaults are shown.
# Keys match QwenPaw's running.reme_light_memory_config, so the same values work there.
# Precedence: command-line flag > MEM_* environment > this file > agent.json > defaults.

# daily_dir: memory            # daily notes: memory/YYYY-MM-DD/<note>.md
# digest_dir: digest           # long-term nodes: digest/{personal,procedure,wiki}/
# resource_dir: resource       # external files picked up by `mem resource scan`
# session_dir: mem_session     # sanitized conversations: mem_session/dialog/<id>.jsonl
# metadata_dir: mem_metadata   # derived state, rebuilt by `mem reindex`
# auto_memory_interval: 5      # extract after this many new user turns
# summarize_when_compact: true # honour `mem ingest --flush` before a context compaction
# dream_cron_enabled: true
# dream_cron: "0 23 * * *"     # when `mem dream --if-due` consolidates notes
# timezone: ""                 # e.g. Europe/Berlin; empty = this machine's zone
# inbox_push_enabled: true     # record each job that changed memory (`mem inbox`)
# inbox_webhook_url: ""        # also POST those records here

# embedding_model_config:      # vector search; without it search is keyword-only
#   backend: openai            # openai | dashscope | gemini | ollama | voyage | local | none
#   base_url: https://api.openai.com/v1
#   model_name: text-embedding-3-small
#   api_key: ""                # better: export MEM_EMBEDDING_API_KEY
#   dimensions: 1024

# llm_model_config:            # fact extraction; without it (or backend: none) a rule-based
#   backend: openai            #   extractor runs offline. openai | dashscope | ollama | vllm
#   base_url: https://api.openai.com/v1
#   model_name: gpt-4o-mini
#   api_key: ""                # better: export MEM_LLM_API_KEY

# search:
#   limit: 5
#   vector_weight: 0.3           # share of the vector branch in fusion (ReMe: 0.7)
#   candidate_multiplier: 3.0
#   rrf_k: 60
#   fusion: minmax             # or rrf (ReMe's weighted reciprocal rank fusion)
#   expand_terms: 5            # query words' nearest vault words added to the keyword
#                              #   query (needs an embedding backend); 0 = off

# chunking:                    # after a change, `mem reindex` rebuilds what depends on it
#   target_tokens: 400         # a search hit is a chunk of about this many tokens
#   overlap_tokens: 80
#   passage_tokens: 100        # vectors score a chunk by its best passage this size; 0 = whole chunk
#
# shared:                      # team memory on PostgreSQL + pgvector (docs/team.md)
#   dsn: postgresql://mem@db/mem   # better: export MEM_SHARED_DSN; needs memcli[postgres]
#   namespace: default         # agents of one namespace search each other's chunks
#   agent_id: ""               # empty = this folder's name; others see @<agent_id>/<path>
#   memory_isolation: false    # true: search this agent's chunks only
#   search_timeout: 3.0        # seconds; slower or unreachable -> the local index answers
"""

def folders(settings) -> tuple[str, ...]:
    """The workspace's folders under its configured names (agent.json or mem.yaml may rename them)."""
    s = settings
    return (s.daily_dir, *(f"{s.digest_dir}/{b}" for b in ("personal", "procedure", "wiki")), s.resource_dir,
            f"{s.session_dir}/dialog", s.metadata_dir)


@dataclass
class InitReport:
    root: Path
    created: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"workspace": str(self.root), "created": self.created}


def run(root: Path, settings=None) -> InitReport:
    """Create what is missing; `settings` (memcli.vault.settings.Settings) names the folders."""
    from memcli.vault.settings import Settings

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
        atomic.write_text(cfg, MEM_YAML)
        report.created.append("mem.yaml")
    return report
