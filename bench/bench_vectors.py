#!/usr/bin/env python3
"""Vector-branch benchmark for `mem`: one JSON document on stdout, progress on stderr.

Measures
  * vector scoring (memcli.retrieval.vector.top) over 10k and 100k random unit
    vectors x 384 dims float16, median of 20 calls;
  * cold hybrid `mem search` (whole processes) on the large vault, vectors filled
    through a loopback OpenAI-compatible server (tests/providers/fake_provider.py,
    hash vectors of 384 dims), which also embeds each query;
  * the local model (all-MiniLM-L6-v2 int8): embedding a smaller generated vault,
    cold hybrid searches on it including the model load, and its throughput on 200
    real chunks sampled from the large vault, extrapolated to that whole vault.

The vaults given are never modified: everything runs on copies in a temporary folder.

    python bench/bench_vectors.py --vault /tmp/vault2k
    python bench/bench_vectors.py --vault /tmp/vault2k --skip-local

Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GENERATOR = Path("/work/shared/tools/gen_vault.py")
DIMS = 384
MIB = 1024 * 1024
CHUNK_STORE = "mem_metadata/file_store/file_chunks_default_v1.jsonl.zst"


class BenchError(Exception):
    """A measurement that cannot be trusted; its part of the report says why."""


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """One process to completion: (seconds, peak RSS MiB, stdout). A non-zero exit stops the benchmark."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
        seconds = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        errors = err.read().decode(errors="replace")
        if code != 0:
            raise BenchError(f"{' '.join(cmd)} exited {code}: {errors[-2000:]}")
        if "warning" in errors:
            raise BenchError(f"{' '.join(cmd)} warned (the measurement would not be what it claims): {errors}")
        out.seek(0)
        return seconds, usage.ru_maxrss * 1024 / MIB, out.read().decode("utf-8")


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def r(x: float, nd: int = 4) -> float:
    return round(x, nd)


def chunk_texts(vault: Path) -> list[str]:
    import zstandard

    raw = (vault / CHUNK_STORE).read_bytes()
    data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
    return [json.loads(line)["text"] for line in data.decode("utf-8").splitlines()]


def copy_vault(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("mem_metadata"), symlinks=True)
    (dest / "digest").mkdir(exist_ok=True)
    return dest


EXTRA_CONFIG: dict[str, dict] = {}  # --set section.key=value, added to every mem.yaml written


def write_config(vault: Path, emb: dict) -> None:
    body = "embedding_model_config:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in emb.items())
    for section, values in EXTRA_CONFIG.items():
        body += f"{section}:\n" + "".join(f"  {k}: {v}\n" for k, v in values.items())
    (vault / "mem.yaml").write_text(body, encoding="utf-8")


def searches(mem: list[str], vault: Path, queries: list[str], env: dict, *extra: str) -> dict:
    times, rss = [], []
    for q in queries:
        s, m, _ = run(mem + ["-w", str(vault), "search", q, *extra], env)
        times.append(s)
        rss.append(m)
    return {
        "median_s": r(statistics.median(times)),
        "p90_s": r(p90(times)),
        "min_s": r(min(times)),
        "peak_rss_mib": round(max(rss), 1),
    }


def check_hybrid(mem: list[str], vault: Path, query: str, env: dict) -> dict:
    """One search as JSON: proves the vector branch ran (else the timings would be keyword-only)."""
    counts = json.loads(run(mem + ["-w", str(vault), "search", query, "--json"], env)[2])["counts"]
    if not (counts["hybrid"] and counts["vector"] > 0):
        raise BenchError(f"search on {vault} is not hybrid: {counts}")
    return counts


# ---------------------------------------------------------------- parts


def bench_top(repeat: int = 20) -> dict:
    import numpy as np

    from memcli.retrieval import vector

    rng = np.random.default_rng(7)
    out = {}
    for n in (10_000, 100_000):
        rows = rng.standard_normal((n, DIMS), dtype=np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        rows = rows.astype("<f2")
        mask = np.ones(n, dtype=np.uint8)
        q = rng.standard_normal(DIMS).astype(np.float32)
        vector.top(rows, mask, q, 15)  # warm-up
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            hits = vector.top(rows, mask, q, 15)
            times.append(time.perf_counter() - t0)
        assert len(hits) == 15
        out[f"{n // 1000}k"] = {
            "median_ms": r(statistics.median(times) * 1000, 3),
            "min_ms": r(min(times) * 1000, 3),
            "matrix_mib": r(rows.nbytes / MIB, 1),
        }
    return {"dims": DIMS, "k": 15, "calls": repeat, **out}


def serve_fast(fp):
    """fake_provider's server with TCP_NODELAY: its handler writes headers and body
    separately, which with Nagle and delayed ACKs adds ~40 ms to every request."""
    import threading
    from http.server import ThreadingHTTPServer

    server = ThreadingHTTPServer(("127.0.0.1", 0), None)
    server.daemon_threads = True
    state = fp.FakeProvider(f"http://127.0.0.1:{server.server_address[1]}")
    handler = fp._handler(state)
    handler.disable_nagle_algorithm = True
    server.RequestHandlerClass = handler
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop():
        server.shutdown()
        server.server_close()

    return state, stop


def one_file_updates(mem: list[str], vault: Path, env: dict, repeat: int = 3) -> dict:
    """`reindex --scope bm25` after appending a line to one note: the index update every
    ingest, remember and search-with-changes pays, vector carry-over included."""
    note = sorted(vault.glob("memory/*/*.md"))[5]
    times, rss = [], []
    for i in range(repeat):
        with open(note, "a", encoding="utf-8") as fh:
            fh.write(f"\nbench edit {i}\n")
        seconds, peak, _ = run(mem + ["-w", str(vault), "reindex", "--scope", "bm25"], env)
        times.append(seconds)
        rss.append(peak)
    return {"median_s": r(statistics.median(times)), "max_s": r(max(times)), "peak_rss_mib": round(max(rss), 1)}


def bench_remote(
    source: Path, scratch: Path, mem: list[str], env: dict, queries: list[str], src: Path
) -> tuple[dict, Path]:
    sys.path.insert(0, str(src / "tests" / "providers"))
    import fake_provider as fp

    state, stop = serve_fast(fp)
    state.dims = DIMS
    try:
        vault = copy_vault(source, scratch / "remote")
        write_config(
            vault,
            {
                "backend": "openai",
                "base_url": state.url + "/v1",
                "model_name": "bench-hash",
                "api_key": "bench-key",
                "dimensions": DIMS,
            },
        )
        log("remote: keyword index (reindex --scope bm25)")
        bm25_s = run(mem + ["-w", str(vault), "reindex", "--scope", "bm25"], env)[0]
        log("remote: filling vectors through the loopback server (reindex --scope embedding)")
        emb_s, emb_rss, out = run(mem + ["-w", str(vault), "reindex", "--scope", "embedding", "--json"], env)
        rep = json.loads(out)["embedding"]
        fill_requests = len(state.seen)
        state.seen.clear()  # keep this process small: children inherit its peak RSS figure otherwise
        counts = check_hybrid(mem, vault, queries[0], env)
        log(f"remote: {len(queries)} cold hybrid searches, then the same keyword-only")
        before = len(state.seen)
        hybrid = searches(mem, vault, queries, env)
        query_requests = len(state.seen) - before
        keyword = searches(mem, vault, queries, env, "--mode", "keyword")
        log("remote: 3 one-file updates (a sync carries the vectors over)")
        update = one_file_updates(mem, vault, env)
    finally:
        stop()
    return {
        "chunks": rep["chunks"],
        "chunks_with_vectors": rep["chunks_with_vectors"],
        "dims": DIMS,
        "server": "fake_provider (loopback, OpenAI protocol, sha256 hash vectors)",
        "keyword_index_build_s": r(bm25_s),
        "embedding_fill": {
            "seconds": r(emb_s),
            "requests": fill_requests,
            "texts": rep["embedded"],
            "peak_rss_mib": round(emb_rss, 1),
        },
        "first_query_counts": counts,
        "search_cold_hybrid": {**hybrid, "provider_requests": query_requests},
        "search_cold_keyword_only": keyword,
        "one_file_update": update,
    }, vault


def bench_local_vault(scratch: Path, mem: list[str], env: dict, queries: list[str], notes: int, digest: int) -> dict:
    gen = scratch / "local-src"
    log(f"local: generating a vault of {notes} notes + {digest} digest nodes")
    subprocess.run(
        [sys.executable, str(GENERATOR), str(gen), "--notes", str(notes), "--digest", str(digest)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    vault = copy_vault(gen, scratch / "local")
    write_config(vault, {"backend": "local"})
    bm25_s = run(mem + ["-w", str(vault), "reindex", "--scope", "bm25"], env)[0]
    n_chunks = len(chunk_texts(vault))
    log(f"local: embedding {n_chunks} chunks with the local model (minutes)")
    emb_s, emb_rss, out = run(mem + ["-w", str(vault), "reindex", "--scope", "embedding", "--json"], env)
    rep = json.loads(out)["embedding"]
    counts = check_hybrid(mem, vault, queries[0], env)
    log(f"local: {len(queries)} cold hybrid searches (model load included), then keyword-only")
    hybrid = searches(mem, vault, queries, env)
    keyword = searches(mem, vault, queries, env, "--mode", "keyword")
    return {
        "notes": notes,
        "digest_nodes": digest,
        "chunks": rep["chunks"],
        "chunks_with_vectors": rep["chunks_with_vectors"],
        "keyword_index_build_s": r(bm25_s),
        "embedding": {
            "seconds": r(emb_s),
            "chunks_per_s": r(rep["embedded"] / emb_s, 2),
            "peak_rss_mib": round(emb_rss, 1),
            "job_seconds": rep["seconds"],
        },
        "first_query_counts": counts,
        "search_cold_hybrid": hybrid,
        "search_cold_keyword_only": keyword,
    }


def bench_local_throughput(vault: Path, sample: int, full_chunks: int | None) -> dict:
    from memcli.providers.embedding.local import LocalEmbedder

    texts = chunk_texts(vault)
    picked = random.Random(7).sample(texts, min(sample, len(texts)))
    emb = LocalEmbedder({"max_batch_size": 10, "max_input_length": 8192})
    t0 = time.perf_counter()
    emb.embed_batch(["warm-up"])
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(0, len(picked), 10):
        emb.embed_batch(picked[i : i + 10])
    seconds = time.perf_counter() - t0
    emb.close()
    rate = len(picked) / seconds
    total = full_chunks or len(texts)
    return {
        "sampled_chunks": len(picked),
        "from_chunks": len(texts),
        "mean_chunk_chars": round(statistics.mean(len(t) for t in picked)),
        "model_load_s": r(load_s),
        "seconds": r(seconds),
        "chunks_per_s": r(rate, 2),
        "extrapolated_full_vault": {
            "chunks": total,
            "seconds": round(total / rate),
            "minutes": round(total / rate / 60, 1),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, default=Path("/tmp/vault2k"), help="the large vault (with queries.txt)")
    ap.add_argument(
        "--src",
        type=Path,
        default=REPO,
        help="the memcli source tree to measure (default: this checkout); e.g. a `git archive` of a commit",
    )
    ap.add_argument("--local-notes", type=int, default=300, help="notes in the vault embedded with the local model")
    ap.add_argument("--local-digest", type=int, default=20)
    ap.add_argument("--sample", type=int, default=200, help="chunks of the large vault for the throughput figure")
    ap.add_argument("--skip-local", action="store_true", help="skip everything that runs the local model")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="config for the measured vaults, e.g. chunking.passage_tokens=0 (repeatable)",
    )
    args = ap.parse_args()
    for item in args.set:
        key, sep, value = item.partition("=")
        section, dot, name = key.partition(".")
        if not (sep and dot):
            raise SystemExit(f"--set wants section.key=value, got {item!r}")
        EXTRA_CONFIG.setdefault(section, {})[name] = value
    src = args.src.resolve()
    sys.path.insert(0, str(src))
    queries = [q.strip() for q in (args.vault / "queries.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
    # -P: `-m` would otherwise put the current folder first on sys.path, ahead of --src
    mem = [sys.executable, "-P", "-m", "memcli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    env.update({"NO_COLOR": "1", "PYTHONPATH": str(src)})
    import memcli

    result: dict = {
        "vault": str(args.vault),
        "queries": len(queries),
        "mem": " ".join(mem),
        "set": args.set,
        "memcli": {"version": memcli.__version__, "src": str(Path(memcli.__file__).parent)},
    }
    failed = []

    def part(name, fn):
        try:
            result[name] = fn()
        except BenchError as exc:
            log(f"{name} failed: {exc}")
            failed.append(name)
            result[name] = {"error": str(exc)}

    scratch = Path(tempfile.mkdtemp(prefix="mem-bench-vec-"))
    big = args.vault  # its chunk store is the throughput sample unless the remote part leaves a fresh one
    try:

        def remote():
            nonlocal big
            out, big = bench_remote(args.vault, scratch, mem, env, queries, src)
            return out

        part("remote_hybrid", remote)
        from memcli.providers.embedding.local import available

        if args.skip_local:
            result["local"] = "skipped (--skip-local)"
        elif not available():
            result["local"] = "skipped: the local extra is not installed"
        else:
            part(
                "local_small_vault",
                lambda: bench_local_vault(scratch, mem, env, queries, args.local_notes, args.local_digest),
            )
            # in this process, after every child process ran (a child's peak RSS counts its parent's)
            log(f"local: throughput on {args.sample} chunks sampled from {big}")
            part("local_throughput", lambda: bench_local_throughput(big, args.sample, None))
        log("vector.top on random unit vectors")
        part("vector_top", bench_top)
    finally:
        if failed:
            log(f"kept {scratch} for a look at what failed")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    result["python"] = platform.python_version()
    result["machine"] = {"cpu_count": os.cpu_count(), "arch": platform.machine(), "system": platform.system()}
    print(json.dumps(result, indent=2))
    if failed:
        sys.exit(f"bench: failed parts: {', '.join(failed)}")


if __name__ == "__main__":
    main()
