"""What every man page says beside the commands: the exit status and the files mem uses
(memcli.cli.docgen writes them into man/)."""

EXIT_STATUS = [
    (0, "ok"),
    (1, "job failed"),
    (2, "bad usage or input"),
    (3, "config error"),
    (4, "provider error (embedding or LLM service)"),
    (5, "unhealthy (`mem health`)"),
    (75, "busy: another process holds the lock (e.g. a rebuild is running)"),
    (130, "interrupted"),
]
FILES = [
    ("<ws>/mem.yaml", "native configuration (optional)"),
    ("<ws>/agent.json", "QwenPaw agent configuration, running.reme_light_memory_config (read only)"),
    ("<ws>/MEMORY.md", "curated long-term memory; indexed"),
    ("<ws>/memory/YYYY-MM-DD.md, <ws>/memory/YYYY-MM-DD/*.md", "day index pages and daily notes; indexed"),
    ("<ws>/digest/{personal,procedure,wiki}/*.md", "digest nodes; indexed"),
    ("<ws>/resource/", "watched external files"),
    ("<ws>/mem_session/dialog/<session_id>.jsonl", "sanitized source conversations"),
    ("<ws>/mem_metadata/", "derived state (index, graph, catalogs, locks); rebuilt by `mem reindex`"),
    (
        "<ws>/mem_metadata/file_catalog/resource.jsonl.zst",
        "resource catalog: which note reads which file (`mem resource scan`)",
    ),
    ("<ws>/mem_metadata/file_catalog/dream.jsonl.zst", "dream catalog: the notes consolidated so far"),
    ("<ws>/mem_metadata/resource/catalog.jsonl.zst", "mem's copy of the resource catalog, which ReMe never rewrites"),
    ("<ws>/mem_metadata/dream/state.json", "dream state: note sizes and the last successful run"),
    ("<ws>/memory/YYYY-MM-DD/interests.yaml", "topics of interest written by `mem dream`"),
    ("<ws>/mem_metadata/inbox/inbox.jsonl", "results of jobs that changed memory (`mem inbox`)"),
    ("<ws>/mem_metadata/ingest/<session_id>.json", "which messages of a session were already extracted"),
    (
        "~/.mem/backups/",
        "backups (backup_dir, MEM_BACKUP_DIR); snapshots/ holds the snapshots taken before each restore",
    ),
    ("~/.mem/workspace", "the workspace used when no other is found"),
]
