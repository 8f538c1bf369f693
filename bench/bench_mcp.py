#!/usr/bin/env python3
"""Warm `memory_search` latency through `mem mcp`, beside the cold `mem search` process.

One JSON document on stdout, progress on stderr. The vault is copied to a temporary
folder first (its mem_metadata/ included, mtimes kept, so the copy starts indexed)
and never modified; the embedding backend is `none` unless --backend says otherwise.

- mcp_warm_search_ms: round trip of one tools/call memory_search (request written to
  the server's stdin until its reply line is read), every query of the list,
  --repeat times, after one warm-up call. Each call re-checks the vault for changed
  files, as every search does.
  mcp_warm_search_server_cpu_ms_per_call is the server's CPU time over those calls
  divided by their number (/proc, 10 ms ticks): what a call costs without waiting
  for a busy CPU.
- mcp_search_after_edit_ms: the same call right after one note was rewritten (the
  re-sync of that file is part of the answer).
- cli_cold_search_ms: the whole `mem search --citations --max-chars 700` process,
  what an agent's shell tool pays per call.

    python bench/bench_mcp.py --vault /tmp/vault2k --repeat 3

Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
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
FALLBACK_QUERIES = [
    "bm25 ranking",
    "reciprocal rank fusion weight",
    "kubernetes rollout rollback",
    "pull request size review",
    "postgresql migration",
    "websocket reconnect",
]


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def summary(ms: list[float]) -> dict:
    ordered = sorted(ms)

    def pick(q):  # nearest rank
        return ordered[max(0, -(-len(ordered) * q // 100) - 1)]

    return {
        "n": len(ms),
        "p50": round(statistics.median(ms), 2),
        "p90": round(pick(90), 2),
        "mean": round(statistics.fmean(ms), 2),
        "max": round(max(ms), 2),
    }


class Server:
    def __init__(self, mem: list[str], ws: Path, env: dict, stderr):
        self.proc = subprocess.Popen(
            [*mem, "-w", str(ws), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env
        )
        self.n = 0

    def call(self, method: str, params: dict) -> tuple[dict, float]:
        self.n += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}).encode() + b"\n"
        t0 = time.perf_counter()
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        ms = (time.perf_counter() - t0) * 1000
        if not reply:
            sys.exit("bench: the MCP server exited")
        msg = json.loads(reply)
        if "error" in msg or msg["result"].get("isError"):
            sys.exit(f"bench: {method} failed: {msg}")
        return msg["result"], ms

    def cpu_ms(self) -> float | None:
        """CPU time the server process has used (user + system), from /proc; None elsewhere."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, default=Path("/tmp/vault2k"), help="vault to copy (default /tmp/vault2k)")
    ap.add_argument("--mem", default=None, help="mem executable (default: this Python's -m memcli)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds over the query list through MCP")
    ap.add_argument("--cold", type=int, default=10, help="cold CLI searches")
    ap.add_argument("--backend", default="none", help="MEM_EMBEDDING_BACKEND (default none: keyword only)")
    args = ap.parse_args()
    if not args.vault.is_dir():
        sys.exit(f"bench: --vault {args.vault} is not a folder")
    mem = [args.mem] if args.mem else [sys.executable, "-m", "memcli"]
    env = dict(os.environ, MEM_EMBEDDING_BACKEND=args.backend, NO_COLOR="1")
    qfile = args.vault / "queries.txt"
    queries = [q.strip() for q in qfile.read_text().splitlines() if q.strip()] if qfile.is_file() else FALLBACK_QUERIES
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        ws = Path(tmp) / "vault"
        log(f"copying {args.vault} to {ws}")
        shutil.copytree(args.vault, ws, symlinks=True, ignore=shutil.ignore_patterns("locks"))
        notes = sorted(p for p in (ws / "memory").rglob("*.md") if p.parent != ws / "memory")
        log("bringing the copy's index up to date (mem reindex --scope bm25)")
        subprocess.run(
            [*mem, "-w", str(ws), "reindex", "--scope", "bm25"], env=env, check=True, stdout=subprocess.DEVNULL
        )

        log(f"cold CLI: {args.cold} x mem search")
        cold = []
        for q in (queries * (args.cold // len(queries) + 1))[: args.cold]:
            t0 = time.perf_counter()
            subprocess.run(
                [*mem, "-w", str(ws), "search", "--citations", "--max-chars", "700", "--", q],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            cold.append((time.perf_counter() - t0) * 1000)

        log(f"MCP: {args.repeat} x {len(queries)} memory_search calls")
        with open(Path(tmp) / "server.log", "wb") as errlog:
            t0 = time.perf_counter()
            server = Server(mem, ws, env, errlog)
            server.call(
                "initialize",
                {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
            )
            start_ms = (time.perf_counter() - t0) * 1000
            server.call("tools/call", {"name": "memory_search", "arguments": {"query": queries[0]}})  # warm-up
            cpu0 = server.cpu_ms()
            warm = [
                server.call("tools/call", {"name": "memory_search", "arguments": {"query": q}})[1]
                for _ in range(args.repeat)
                for q in queries
            ]
            cpu1 = server.cpu_ms()
            # wall time on a shared machine includes waiting for a CPU; this does not
            cpu_per_call = round((cpu1 - cpu0) / len(warm), 2) if cpu0 is not None else None
            get = [
                server.call(
                    "tools/call",
                    {"name": "memory_get", "arguments": {"path": n.relative_to(ws).as_posix(), "lines": 20}},
                )[1]
                for n in notes[:20]
            ]
            edited = []
            for i, note in enumerate(notes[:5]):
                with open(note, "a", encoding="utf-8") as fh:
                    fh.write(f"\nbench edit {i}: zanzibar{i}\n")
                result, ms = server.call(
                    "tools/call", {"name": "memory_search", "arguments": {"query": f"zanzibar{i}"}}
                )
                if note.relative_to(ws).as_posix() not in result["content"][0]["text"]:
                    sys.exit(f"bench: the edit of {note} was not found")
                edited.append(ms)
            server.close()
    files = len(notes)
    print(
        json.dumps(
            {
                "vault": {"path": str(args.vault), "daily_notes": files, "queries": len(queries)},
                "backend": args.backend,
                "mcp_start_and_initialize_ms": round(start_ms, 1),
                "mcp_warm_search_ms": summary(warm),
                "mcp_warm_search_server_cpu_ms_per_call": cpu_per_call,
                "mcp_get_ms": summary(get),
                "mcp_search_after_edit_ms": summary(edited),
                "cli_cold_search_ms": summary(cold),
                "target_warm_p50_ms": 20,
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                    "load_avg": [round(x, 2) for x in os.getloadavg()],
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
