#!/usr/bin/env python3
"""Embedding cost of each local model on real passages: load time, passages/s,
query latency, and onnxruntime's threads and batch size.

    python bench/bench_models.py VAULT                     # every model, 300 passages
    python bench/bench_models.py VAULT --passages 1000 --models all-MiniLM-L6-v2-int8 --threads 1 2

Passages are cut from the vault's chunks as `mem reindex` cuts them (memcli.index.vectors.passages,
100 tokens), sampled evenly. "load" is a fresh process importing the model and embedding one
query (what a cold search pays for the model; median of 5, peak RSS of the process); "query" is the warm time of one query plus
three words (numpy encoder for transformers). JSON on stdout.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as `mem` runs (memcli/cli/main.py)
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

# a fresh process per probe, started from a small one (Linux keeps a parent's peak RSS across
# exec, so a probe spawned by this process would report this process's memory)
RUNNER = (
    "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True, "
    "check=True); print(p.stdout.split()[0], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
)
COLD = (
    "import os; os.environ.setdefault('OPENBLAS_NUM_THREADS', '1'); import resource, sys, time; "
    "t = time.perf_counter(); "
    "from memcli.providers.embedding import local_models, local, static; "
    "m = local_models.MODELS[sys.argv[1]]; "
    "e = static.StaticEmbedder(model=m) if m.kind == 'static' else local.LocalEmbedder(model=m); "
    "e.embed_batch(['Database choice for the project', 'database', 'choice', 'project']); "
    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
)


def sample_passages(vault: Path, n: int) -> list[str]:
    """n passages sampled evenly from the vault's index (keyword index built here if missing)."""
    from memcli.index import sync
    from memcli.index.vectors import passages
    from memcli.jobs import reindex
    from memcli.vault.workspace import open_workspace

    ws = open_workspace(vault, {})
    reindex.run(ws, scope="bm25")
    snap = sync.open_snapshot(ws)
    try:
        step = max(1, snap.n_docs // n)
        out = []
        for d in range(0, snap.n_docs, step):
            out += passages.split(snap.text(d), snap.meta(d)[3], ws.settings.chunking.passage_tokens)[:1]
        return out[:n]
    finally:
        snap.close()


def embedder(name: str, threads: int = 0, batch: int = 8):
    from memcli.providers.embedding import local, local_models, static

    m = local_models.MODELS[name]
    if m.kind == "static":
        return static.StaticEmbedder(model=m)
    local.RUN_BATCH = batch
    return local.LocalEmbedder({"max_batch_size": 10}, model=m, threads=threads, engine="onnxruntime")


def main(argv=None) -> int:
    from memcli.providers.embedding import local_models

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--passages", type=int, default=300)
    ap.add_argument("--models", nargs="+", default=list(local_models.MODELS))
    ap.add_argument("--threads", type=int, nargs="+", default=[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[8])
    args = ap.parse_args(argv)
    colds = {
        name: [
            subprocess.run(
                [sys.executable, "-c", RUNNER, sys.executable, "-c", COLD, name],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            for _ in range(5)
        ]
        for name in args.models
    }  # first, while this process is small
    texts = sample_passages(args.vault, args.passages)
    rows = []
    for name in args.models:
        cold = colds[name]
        row = {
            "model": name,
            "cold_load_s": round(sorted(float(c[0]) for c in cold)[2], 3),
            "cold_load_mib": round(max(float(c[1]) for c in cold)),
            "runs": [],
        }
        for threads in args.threads if local_models.MODELS[name].kind != "static" else [0]:
            for batch in args.batches if local_models.MODELS[name].kind != "static" else [0]:
                emb = embedder(name, threads, batch)
                emb.embed_batch(texts[:8])  # load
                t0 = time.perf_counter()
                emb.embed_batch(texts)
                secs = time.perf_counter() - t0
                row["runs"].append(
                    {"threads": threads, "run_batch": batch, "passages_per_s": round(len(texts) / secs, 1)}
                )
        if local_models.MODELS[name].kind != "static":
            from memcli.providers.embedding import local

            q = local.LocalEmbedder(model=local_models.MODELS[name], engine="numpy")
            q.embed_batch(["warm"])
            t0 = time.perf_counter()
            for _ in range(10):
                q.embed_batch(["How does the user usually travel to work?", "user", "travel", "work"])
            row["query_numpy_ms"] = round(100 * (time.perf_counter() - t0), 1)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    import os

    print(
        json.dumps(
            {"vault": str(args.vault), "passages": len(texts), "load_average": os.getloadavg(), "models": rows},
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
