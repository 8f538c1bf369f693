"""Throughput of the local embedding backend on ~400-piece chunks.

    python tests/providers/bench_local.py [FILE.md ...] [--chunks N] [--pieces P]

Prints load time (import + sha256 checks + session) and chunks/s. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--chunks", type=int, default=60)
    ap.add_argument("--pieces", type=int, default=400)
    ap.add_argument("--threads", type=int, default=0, help="onnxruntime threads (0 = one per core)")
    args = ap.parse_args()
    root = Path(__file__).resolve().parents[2]
    files = args.files or sorted(root.glob("*.md")) + sorted((root / "docs").glob("*.md"))
    corpus = " ".join(p.read_text(encoding="utf-8") for p in files).split()

    start = time.perf_counter()
    from memcli.providers.embedding.local import LocalEmbedder

    emb = LocalEmbedder({"max_input_length": 0, "max_batch_size": 10}, threads=args.threads)
    emb.embed_batch(["warm up " * 200] * 4)  # large enough for onnxruntime (a query runs in numpy)
    tok = emb._tokenizer_of()
    load = time.perf_counter() - start

    ids = tok.encode(" ".join(corpus), add_special_tokens=False).ids
    while len(ids) < args.chunks * args.pieces:
        ids = ids + ids
    texts = [tok.decode(ids[i * args.pieces : (i + 1) * args.pieces]) for i in range(args.chunks)]
    pieces = sum(len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False))
    start, cpu = time.perf_counter(), time.process_time()
    emb.embed_batch(texts)
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"load {load:.2f}s  chunks {len(texts)} (~{pieces / len(texts):.0f} pieces each)  "
        f"{len(texts) / took:.1f} chunks/s  {len(texts) / cpu:.1f} chunks/cpu-s  "
        f"threads {args.threads or 'auto'}  cpus {os.cpu_count()}  loadavg {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
