"""Open a workspace with the real ReMe file memory (reme-ai 0.4.2.0), as QwenPaw wires it, BM25 only.

    <reme python> tests/reme_driver.py WORKSPACE [--search QUERY]... [--limit N] [--no-catalogs]

Run by tests/test_reme.py in the Python that has `reme` installed (not mem's). It starts
the application (the components load mem_metadata/), runs one scan of memory/ and
digest/ (QwenPaw's first index step), searches, and closes (every component dumps its
stores). No LLM, no embedding store, no network. Prints one JSON object: the scan's
counts, the number of chunks and files, and the hits of each query.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

os.environ.setdefault("REME_DISABLE_LOGURU", "true")


def config(ws: str, catalogs: bool) -> dict:
    index_step = {
        "backend": "init_changes_step",
        "monitor_type": "file_store",
        "monitor_name": "default",
        "dispatch_steps": ["update_index_step"],
    }
    search_step = {
        "backend": "search_step",
        "vector_weight": 0.7,
        "candidate_multiplier": 3.0,
        "expand_links": True,
        "max_links_per_direction": 10,
    }
    components = {
        "tokenizer": {"default": {"backend": "regex"}},
        "file_graph": {"default": {"backend": "local"}},
        "file_chunker": {
            "markdown": {"backend": "markdown", "supported_extensions": ["md"]},
            "default": {"backend": "default", "supported_extensions": ["jsonl"]},
        },
        "keyword_index": {"default": {"backend": "bm25", "tokenizer": "default"}},
        "file_store": {
            "default": {
                "backend": "local",
                "store_name": "local",
                "embedding_store": "",
                "keyword_index": "default",
                "file_graph": "default",
            }
        },
    }
    if catalogs:  # QwenPaw's four catalogs: loaded at start, rewritten at close
        components["file_catalog"] = {n: {"backend": "local"} for n in ("default", "resource", "digest", "dream")}
    return {
        "workspace_dir": ws,
        "metadata_dir": "mem_metadata",
        "daily_dir": "memory",
        "digest_dir": "digest",
        "session_dir": "mem_session",
        "mem_session_dir": "mem_agent",
        "resource_dir": "resource",
        "language": "en",
        "enable_logo": False,
        "log_to_console": False,
        "log_to_file": False,
        "service": {"backend": "cli"},
        "components": components,
        "jobs": {
            "index": {
                "backend": "base",
                "watch_dirs": ["daily_dir", "digest_dir"],
                "watch_suffixes": ["md"],
                "steps": [index_step],
            },
            "search": {
                "backend": "base",
                "steps": [search_step],
                "parameters": {
                    "type": "object",
                    "required": ["query"],
                    "properties": {
                        "query": {"type": "string"},
                        "limit": {"type": "integer", "default": 5},
                        "min_score": {"type": "number", "default": 0.0},
                    },
                },
            },
        },
    }


async def run(args) -> dict:
    from reme import ReMe
    from reme.enumeration import ComponentEnum

    app = ReMe(**config(os.path.abspath(args.workspace), not args.no_catalogs))
    await app.start()
    try:
        resp = await app.run_job("index")
        store = app.context.components[ComponentEnum.FILE_STORE.value]["default"]
        out = {
            "success": resp.success,
            "counts": resp.metadata.get("counts"),
            "chunks": len(store.file_chunks),
            "files": len(await store.get_nodes()),
            "searches": [],
        }
        for q in args.search:
            resp = await app.run_job("search", query=q, limit=args.limit)
            hits = [
                {k: c.get(k) for k in ("path", "start_line", "end_line", "id")}
                for c in (resp.metadata or {}).get("results", [])
            ]
            out["searches"].append({"query": q, "success": resp.success, "hits": hits})
    finally:
        await app.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workspace")
    ap.add_argument("--search", action="append", default=[])
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--no-catalogs", action="store_true")
    args = ap.parse_args()
    import logging

    logging.getLogger().setLevel(logging.ERROR)
    json.dump(asyncio.run(run(args)), sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
