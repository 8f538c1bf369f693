#!/usr/bin/env python3
"""Index and search benchmark for `mem`: one JSON document on stdout, progress on stderr.

Every figure is a whole `mem` process, as an agent or a shell would run it, timed
with perf_counter; peak RSS comes from wait4() of that very process (its reaped
workers included). The vault given with --vault is never modified: the benchmark
works on a copy without mem_metadata/ in a temporary folder.

    python bench/bench_index.py                      # generates bench/out/vault-2000 first
    python bench/bench_index.py --vault /tmp/vault2k --repeat 3

Not a test: the numbers depend on the machine. `make bench` runs it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_VAULT = HERE / "out" / "vault-2000"
GENERATOR = Path("/work/shared/tools/gen_vault.py")
MIB = 1024 * 1024


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run one process to completion; returns (seconds, peak RSS in MiB). Fails loudly on a non-zero exit."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        # wait4 rather than wait(): it reports this child's own peak RSS, which
        # getrusage(RUSAGE_CHILDREN) would mix with every earlier child's
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"bench: {' '.join(cmd)} exited {proc.returncode}:\n{err.read().decode(errors='replace')[-2000:]}")
    return seconds, usage.ru_maxrss * 1024 / MIB  # ru_maxrss is in KiB on Linux


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]  # nearest-rank percentile


def vault_stats(root: Path) -> dict:
    notes = [p for p in root.rglob("*.md") if "mem_metadata" not in p.parts]
    return {"path": str(root), "files": len(notes), "bytes": sum(p.stat().st_size for p in notes)}


def ensure_vault(vault: Path | None, generator: Path) -> Path:
    if vault is not None:
        if not vault.is_dir():
            sys.exit(f"bench: --vault {vault} is not a folder")
        return vault
    if not DEFAULT_VAULT.is_dir():
        log(f"generating {DEFAULT_VAULT} with {generator} (about 2 minutes)")
        DEFAULT_VAULT.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, str(generator), str(DEFAULT_VAULT), "--notes", "2000", "--digest", "100"],
            check=True,
            stdout=sys.stderr,
        )
    return DEFAULT_VAULT


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, help=f"vault to measure (default: {DEFAULT_VAULT}, generated if absent)")
    ap.add_argument("--mem", type=Path, default=Path(sys.executable).with_name("mem"), help="the mem executable")
    ap.add_argument("--repeat", type=int, default=1, help="repeat every measurement N times (medians reported)")
    ap.add_argument(
        "--backend", default="none", help="MEM_EMBEDDING_BACKEND for the runs (default none: keyword index only)"
    )
    ap.add_argument("--generator", type=Path, default=GENERATOR, help="gen_vault.py used to create the default vault")
    args = ap.parse_args()
    if not os.access(args.mem, os.X_OK):
        sys.exit(f"bench: {args.mem} is not executable (pass --mem PATH)")
    source = ensure_vault(args.vault, args.generator)
    queries = (
        [q.strip() for q in (source / "queries.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
        if (source / "queries.txt").is_file()
        else []
    )
    if not queries:
        sys.exit(f"bench: {source}/queries.txt is missing or empty")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    env.update({"MEM_EMBEDDING_BACKEND": args.backend, "NO_COLOR": "1"})
    mem = os.path.abspath(args.mem)

    scratch = Path(tempfile.mkdtemp(prefix="mem-bench-"))
    try:
        vault = scratch / "vault"
        log(f"copying {source} to {vault}")
        shutil.copytree(source, vault, ignore=shutil.ignore_patterns("mem_metadata"), symlinks=True)
        edited = sorted((vault / "memory").rglob("*.md"))[0]
        original = edited.read_bytes()
        base = [mem, "-w", str(vault)]
        build, build_rss, noop, update = [], [], [], []
        for i in range(args.repeat):
            shutil.rmtree(vault / "mem_metadata", ignore_errors=True)
            log(f"full build {i + 1}/{args.repeat}")
            s, rss = run(base + ["reindex", "--full"], env)
            build.append(s)
            build_rss.append(rss)
            noop.append(run(base + ["reindex"], env)[0])
            edited.write_bytes(original + f"\nbench edit {i}: one more line.\n".encode())
            update.append(run(base + ["reindex"], env)[0])
            edited.write_bytes(original)
            run(base + ["reindex"], env)  # back in sync before the searches
        log(f"{len(queries)} cold searches x {args.repeat}")
        searches, search_rss = [], []
        for _ in range(args.repeat):
            for q in queries:
                s, rss = run(base + ["search", q], env)
                searches.append(s)
                search_rss.append(rss)
        log("mem --help x 10")
        helps = [run([mem, "--help"], env)[0] for _ in range(10)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    r = lambda x: round(x, 4)  # noqa: E731
    result = {
        "vault": {**vault_stats(source), "queries": len(queries)},
        "mem": mem,
        "embedding_backend": args.backend,
        "repeat": args.repeat,
        "build_s": r(statistics.median(build)),
        "build_peak_rss_mib": round(max(build_rss), 1),
        "noop_reindex_s": r(statistics.median(noop)),
        "one_file_update_s": r(statistics.median(update)),
        "search_cold_median_s": r(statistics.median(searches)),
        "search_cold_p90_s": r(p90(searches)),
        "search_peak_rss_mib": round(max(search_rss), 1),
        "help_median_s": r(statistics.median(helps)),
        "python": platform.python_version(),
        "machine": {"cpu_count": os.cpu_count(), "arch": platform.machine(), "system": platform.system()},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
