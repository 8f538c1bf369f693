#!/usr/bin/env python3
"""Vectors at scale: one JSON document on stdout, progress on stderr.

    python bench/scale_vectors.py                       # the cached 20,000-note vault
    python bench/scale_vectors.py --notes 2000 --updates 3 --searches 5

On a copy of bench/out/vault-<N> (bench/scale.py makes it) with the offline static model
(wordllama-l2-supercat-256, `pip install 'memcli[local]'`) as the configured one, so
every chunk, passage and word gets a vector without a server:

  build       mem reindex --full          (keyword index, every passage, the words, the floor)
  update      one note edited, then mem reindex   (median of --updates; each embeds the edit)
  write       mem remember <fact>          (the fact is embedded before the command returns)
  search      mem search Q --mode vector   (a new process per query, the model loaded in it)
  shortlist   in a fresh process, for each query's vector: open the segment vector files
              and rank every chunk (memcli.retrieval.vector.search), timed apart from the
              imports and the keyword index's opening; `exact_overlap` = share of its top
              10 the exact ranking (every chunk row scored, then their passages) shares

Whole processes are timed with perf_counter; CPU and peak RSS come from wait4().
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from scale import edit, log, run, vault  # (the same vaults, edits and timing)

MODEL = "wordllama-l2-supercat-256"

SHORTLIST = r"""
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
import numpy as np
from memcli.index import sync
from memcli.index.vectors import vectors
from memcli.retrieval import vector
from memcli.vault.workspace import open_workspace
ws = open_workspace(Path(sys.argv[1]), {})
q = np.frombuffer(bytes.fromhex(sys.argv[2]), dtype="<f4")
t1 = time.perf_counter()
view = sync.open_snapshot(ws)
t2 = time.perf_counter()
vecs = vectors.open_vectors(view, vectors.active_space(ws.metadata), ws.settings.chunking.passage_tokens)
hits = vector.search(vecs, q, 10)
t3 = time.perf_counter()
print(json.dumps({"imports_s": t1 - t0, "index_s": t2 - t1, "shortlist_s": t3 - t2, "hits": [d for d, _ in hits]}))
"""

EXACT = r"""
import json, sys
from pathlib import Path
import numpy as np
from memcli.index import sync
from memcli.index.vectors import vectors
from memcli.retrieval import vector
from memcli.vault.workspace import open_workspace
ws = open_workspace(Path(sys.argv[1]), {})
view = sync.open_snapshot(ws)
vecs = vectors.open_vectors(view, vectors.active_space(ws.metadata), ws.settings.chunking.passage_tokens)
vector.RESCORE = 10 ** 9  # no Hamming stage: every chunk row is scored
out = []
for hexq in sys.argv[2:]:
    out.append([d for d, _ in vector.search(vecs, np.frombuffer(bytes.fromhex(hexq), dtype="<f4"), 10)])
print(json.dumps(out))
"""


def query_vectors(queries: list[str]) -> list[str]:
    """The queries embedded by the model, as hex float32 (what the shortlist is given)."""
    import numpy as np

    from memcli.providers.embedding import local_models
    from memcli.providers.embedding.static import StaticEmbedder

    emb = StaticEmbedder(model=local_models.MODELS[MODEL])
    vecs = np.asarray(emb.embed_batch(queries), dtype="<f4")
    return [v.tobytes().hex() for v in vecs]


def python(code: str, *args: str, env: dict) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        sys.exit(f"scale_vectors: the shortlist measurement failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=20000)
    ap.add_argument("--updates", type=int, default=3)
    ap.add_argument("--searches", type=int, default=10)
    ap.add_argument("--mem", default=f"{sys.executable} -m memcli")
    ap.add_argument("--keep", type=Path, help="work in this folder and leave it (default: a temporary one)")
    ap.add_argument("--markdown", type=Path, help="also write the table here (e.g. docs/scale-vectors.md)")
    ap.add_argument("--note", type=Path, help="Markdown put above the table (what the figures mean)")
    args = ap.parse_args()
    src = vault(args.notes, Path("/work/shared/tools/gen_vault.py"))
    queries = [q for q in (src / "queries.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
    queries = queries[: args.searches]
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, {sys.platform}",
        "load": round(os.getloadavg()[0], 2),
        "notes": args.notes,
        "model": MODEL,
    }
    with tempfile.TemporaryDirectory(prefix="mem-scale-vec-") as tmp:
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            args.keep.mkdir(parents=True)
            tmp = str(args.keep)
        copy = Path(tmp) / "vault"
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("mem_metadata", "queries.txt"), symlinks=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
        env.update({"MEM_EMBEDDING_BACKEND": "local", "MEM_EMBEDDING_MODEL": MODEL, "NO_COLOR": "1", "HOME": tmp})
        base = [*args.mem.split(), "-w", str(copy)]
        log(f"build of {src.name} with {MODEL}")
        result["build"] = run(base + ["reindex", "--full"], env)
        log(f"build: {result['build']}")
        updates = []
        for i in range(args.updates):
            edit(copy, i)
            updates.append(run(base + ["reindex"], env))
        result["update"] = {k: statistics.median(u[k] for u in updates) for k in ("wall_s", "cpu_s", "peak_mib")}
        result["update_runs"] = updates
        log(f"updates: {updates}")
        writes = [run(base + ["remember", f"The parking permit number {i} renews in March"], env) for i in range(3)]
        result["write"] = {k: statistics.median(u[k] for u in writes) for k in ("wall_s", "cpu_s", "peak_mib")}
        searches = [run(base + ["search", q, "--mode", "vector"], env) for q in queries]
        result["search"] = {k: statistics.median(s[k] for s in searches) for k in ("wall_s", "cpu_s", "peak_mib")}
        health = subprocess.run(base + ["health", "--json"], env=env, capture_output=True, text=True, check=False)
        vec = next((c for c in json.loads(health.stdout)["checks"] if c["name"] == "vectors"), {})
        result["vectors_check"] = {"status": vec.get("status"), **(vec.get("figures") or {})}
        hexes = query_vectors(queries)
        log(f"write: {result['write']}, search: {result['search']}")
        shots = [json.loads(python(SHORTLIST, str(copy), h, env=env)) for h in hexes]
        exact = json.loads(python(EXACT, str(copy), *hexes, env=env))
        overlap = [len(set(s["hits"]) & set(e)) / max(1, len(e)) for s, e in zip(shots, exact)]
        result["shortlist"] = {  # the vector files opened and every chunk ranked (imports and index apart)
            "median_s": round(statistics.median(s["shortlist_s"] for s in shots), 4),
            "max_s": round(max(s["shortlist_s"] for s in shots), 4),
            "median_imports_s": round(statistics.median(s["imports_s"] for s in shots), 4),
            "median_index_open_s": round(statistics.median(s["index_s"] for s in shots), 4),
            "exact_overlap": round(statistics.mean(overlap), 3),
        }
        result["files_mb"] = round(sum(p.stat().st_size for p in (copy / "mem_metadata").rglob("*.vec-*")) / 1e6, 1)
    json.dump(result, sys.stdout, indent=1)
    print()
    if args.markdown:
        note = args.note.read_text(encoding="utf-8").strip() + "\n\n" if args.note else ""
        args.markdown.write_text(markdown(result, note, args), encoding="utf-8")
    return 0


def markdown(r: dict, note: str, args) -> str:
    sl, vc = r["shortlist"], r["vectors_check"]
    rows = ["| | wall | CPU | peak RSS |", "|---|---|---|---|"]
    for key, label in (
        ("build", "build from nothing (`reindex --full`)"),
        ("update", "one-file update (`reindex`)"),
        ("write", "`remember` (embedded before it returns)"),
        ("search", "cold `search --mode vector` (model loaded)"),
    ):
        rows.append(f"| {label} | {r[key]['wall_s']:.3g} s | {r[key]['cpu_s']:.3g} s | {r[key]['peak_mib']:.0f} MiB |")
    return (
        f"# Vectors at scale\n\n{note}Measured by `python bench/scale_vectors.py --notes {r['notes']} "
        f"--markdown {args.markdown}{' --note ' + str(args.note) if args.note else ''}` on {r['machine']} "
        f"({r['date']}, load {r['load']} at the start), model {r['model']}: {vc.get('chunks')} chunks, "
        f"{vc.get('passages')} passages, {r['files_mb']} MB of vector files; medians of "
        f"{len(r['update_runs'])} updates and the searches.\n\n" + "\n".join(rows) + "\n\n"
        f"Cold vector shortlist (fresh process; vector files opened and every chunk ranked, imports "
        f"{sl['median_imports_s']} s and keyword index {sl['median_index_open_s']} s apart): median "
        f"{sl['median_s']} s, max {sl['max_s']} s; its top 10 shares {sl['exact_overlap']:.0%} with the exact "
        f"ranking's.\n"
    )


if __name__ == "__main__":
    sys.exit(main())
