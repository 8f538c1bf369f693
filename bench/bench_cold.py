#!/usr/bin/env python3
"""Cold `mem search` cost: wall time and peak memory of fresh processes.

    python bench/bench_cold.py WORKSPACE                       # hybrid, 9 runs, queries from queries.txt
    python bench/bench_cold.py WORKSPACE --mode keyword --runs 15
    python bench/bench_cold.py WORKSPACE --code /tmp/head      # another checkout of memcli (git archive)

Each run is `python -m memcli -w WORKSPACE search --json --no-sync QUERY` in a new process
(what an agent's hook pays), timed from spawn to exit; its CPU time (user + system: what it
costs on an idle machine, where a search runs on one core) and peak RSS from the rusage of a
small intermediate process. The
first run warms the page cache and is not counted. JSON on stdout: median, p90, max of
seconds and MiB, the embedding space searched, and what the searches warned.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_QUERIES = [
    "Database choice for the project",
    "How to reduce unnecessary rebuilds",
    "Performance issue discussed last time",
    "How does the user usually travel to work?",
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--mode", default="auto", choices=("auto", "hybrid", "keyword", "vector"))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--code", type=Path, help="put this memcli checkout first on PYTHONPATH")
    args = ap.parse_args(argv)
    qfile = args.workspace / "queries.txt"
    queries = (
        [q for q in qfile.read_text(encoding="utf-8").splitlines() if q.strip()] if qfile.exists() else DEFAULT_QUERIES
    )
    # bytecode as an installed mem has it (pip compiles at install): the warm-up run writes it
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_") and k != "PYTHONDONTWRITEBYTECODE"}
    if args.code:
        env["PYTHONPATH"] = str(args.code)
    times, rss, cpus, warnings = [], [], [], set()
    hybrid = 0
    for i in range(args.runs + 1):
        q = queries[i % len(queries)]
        cmd = [
            sys.executable,
            "-m",
            "memcli",
            "-w",
            str(args.workspace),
            "search",
            "--json",
            "--no-sync",
            "--mode",
            args.mode,
            "--",
            q,
        ]
        # a child's own peak: run each in a fresh `python -c` that reports its children's rusage
        probe = [
            sys.executable,
            "-c",
            "import resource,subprocess,sys,time; t=time.perf_counter(); "
            "p=subprocess.run(sys.argv[1:], capture_output=True); "
            "r=resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print(time.perf_counter()-t, r.ru_maxrss, p.returncode, r.ru_utime + r.ru_stime); sys.stderr.write(p.stderr.decode()); "
            "sys.stdout.write(p.stdout.decode())",
            *cmd,
        ]
        # cwd outside the repository: `python -m memcli` puts the cwd first on sys.path, which
        # would shadow --code with the working tree's memcli
        out = subprocess.run(probe, capture_output=True, text=True, env=env, check=True, cwd=tempfile.gettempdir())
        head, _, body = out.stdout.partition("\n")
        secs, kib, code, cpu = head.split()
        if int(code) != 0:
            raise SystemExit(f"search failed: {out.stderr[-500:]}")
        doc = json.loads(body)
        warnings.update(doc.get("warnings", []))
        if i == 0:
            continue  # warms the page cache
        hybrid += bool(doc["counts"]["hybrid"])
        times.append(float(secs))
        rss.append(int(kib) / 1024)
        cpus.append(float(cpu))

    def stats(xs):
        xs = sorted(xs)
        return {
            "median": round(statistics.median(xs), 3),
            "p90": round(xs[int(0.9 * (len(xs) - 1))], 3),
            "max": round(xs[-1], 3),
        }

    meta = args.workspace / "mem_metadata" / "embedding_store" / "space.json"
    space = json.loads(meta.read_text()) if meta.exists() else None
    result = {
        "workspace": str(args.workspace),
        "mode": args.mode,
        "runs": args.runs,
        "code": str(args.code or "working tree"),
        "seconds": stats(times),
        "cpu_seconds": stats(cpus),
        "max_rss_mib": stats(rss),
        "hybrid_runs": hybrid,
        "space": space.get("identity") if space else None,
        "warnings": sorted(warnings),
        "load_average": os.getloadavg(),
    }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
