"""Running a query set: every question of every vault through memcli.jobs.search.run, the
job function `mem search` calls, in-process; a named sweep of such runs; and the check
that `mem search --json` subprocesses give the same hits.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.experiments import parse_variant, patched
from bench.experiments.sweeps import SWEEPS
from bench.harness.context import Ctx
from bench.harness.indexes import ensure_index, parse_sets, workspace
from bench.harness.locomo_data import CATEGORIES
from bench.harness.paths import REPO
from bench.harness.report import table
from bench.harness.scoring import KS, TURN_BUDGET, Costs, aggregate, score_question
from bench.harness.vaults import Vault


def search_hits(ws, query: str, limit: int, mode: str) -> list[tuple[str, int, int]]:
    """(path, start_line, end_line) of each hit of one search."""
    from memcli.jobs import search

    Ctx.query, Ctx.limit = query, limit
    res = search.run(ws, query, limit=limit, mode=mode, auto_sync=False)
    if res.warnings:
        raise SystemExit(f"search warned ({mode}): {res.warnings}")
    return [(h.path, h.start_line, h.end_line) for h in res.hits]


def memcli_version() -> str:
    """The commit of the memcli code measured (+dirty when memcli/ has local changes)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "memcli"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except OSError:
        return "unknown"


def evaluate(
    vaults: list[Vault],
    *,
    mode: str,
    sets: dict,
    spec: dict,
    budget: int = TURN_BUDGET,
    details: bool = False,
    categories: dict[int, str] = CATEGORIES,
) -> dict:
    """Run every question of every vault (a @5 and a @10 search each); the result document."""
    t0 = time.perf_counter()
    rows: list[tuple[int, dict]] = []
    per_q = []
    index_info = []
    search_s = 0.0
    with patched(spec):
        for v in vaults:
            ws = workspace(v.root, sets, spec)
            Ctx.target = ws.settings.chunking.target_tokens
            index_info.append(ensure_index(ws, vectors=mode != "keyword"))
            Ctx.now, Ctx.root = v.now, str(v.root)
            cost = Costs(v.root)
            ts = time.perf_counter()
            for q in v.questions:
                runs = {k: search_hits(ws, q.text, k, mode) for k in KS}
                r = score_question(q, runs, budget, cost)
                rows.append((q.category, r))
                if details:
                    per_q.append({"qid": q.qid, "category": q.category, **r, "hits@10": runs[10]})
            search_s += time.perf_counter() - ts
    doc = {
        "memcli": memcli_version(),
        "mode": mode,
        "set": sets,
        "variant": spec,
        "turn_budget_tokens": budget,
        "vaults": len(vaults),
        "questions": len(rows),
        "chunks": sum(i["chunks"] for i in index_info),
        "categories": {str(c): name for c, name in categories.items()},
        "metrics": aggregate(rows, categories),
        "seconds": {
            "total": round(time.perf_counter() - t0, 1),
            "index": round(sum(i["seconds"] for i in index_info), 1),
            "per_search_ms": round(1000 * search_s / max(1, 2 * len(rows)), 2),
        },
        "embedded_now": sum(i["embedded"] for i in index_info),
    }
    if details:
        doc["per_question"] = per_q
    return doc


def run_sweep(name: str, vaults, extra_sets: list[str], **kw) -> list[dict]:
    """Every row of a named sweep (experiments/sweeps.py), --set items applied on top."""
    if name not in SWEEPS:
        raise SystemExit(f"unknown sweep {name!r}: {', '.join(SWEEPS)}")
    docs = []
    for label, mode, sets, variant in SWEEPS[name]:
        sets = {k: str(v) for k, v in sets.items()}
        sets.update(parse_sets(extra_sets))
        doc = evaluate(vaults, mode=mode, sets=sets, spec=parse_variant(variant), **kw)
        doc["label"] = label
        print(
            table(doc, f"\n== {label}: mode={mode} set={sets} variant={variant or '-'} ({doc['seconds']['total']}s)"),
            file=sys.stderr,
            flush=True,
        )
        docs.append(doc)
    return docs


def via_cli(vaults: list[Vault], n: int, *, mode: str, sets: dict, spec: dict) -> dict:
    """Run `n` questions through `mem search --json` subprocesses and compare with run()."""
    if any(k for k in spec):
        raise SystemExit("--via-cli compares the shipped code: use it without --variant")
    mem = shutil.which("mem", path=str(Path(sys.executable).parent)) or "mem"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    checked = agree = 0
    diffs = []
    per_vault = max(1, n // max(1, len(vaults)))
    for v in vaults:
        ws = workspace(v.root, sets, {})
        ensure_index(ws, vectors=mode != "keyword")
        cfg_file = v.root / "mem.yaml"
        cfg_file.write_text(_config_yaml(dict(sets, metadata_dir=ws.settings.metadata_dir)), encoding="utf-8")
        try:
            for q in v.questions[:per_vault]:
                for k in KS:
                    proc = subprocess.run(
                        [
                            mem,
                            "-w",
                            str(v.root),
                            "search",
                            "--json",
                            "--no-sync",
                            "--limit",
                            str(k),
                            "--mode",
                            mode,
                            "--",
                            q.text,
                        ],
                        capture_output=True,
                        text=True,
                        env=env,
                        timeout=300,
                        check=False,
                    )
                    if proc.returncode != 0:
                        raise SystemExit(f"mem search failed: {proc.stderr.strip()}")
                    cli = [(r["path"], r["start_line"], r["end_line"]) for r in json.loads(proc.stdout)["results"]]
                    inproc = search_hits(ws, q.text, k, mode)
                    checked += 1
                    if cli == inproc:
                        agree += 1
                    else:
                        diffs.append({"qid": q.qid, "limit": k, "cli": cli, "in_process": inproc})
        finally:
            cfg_file.unlink()
    return {"checked": checked, "agree": agree, "differences": diffs[:5]}


def _config_yaml(overrides: dict) -> str:
    """mem.yaml holding dotted-key overrides (values parsed as YAML, as --set does)."""
    import yaml

    conf: dict = {}
    for key, value in overrides.items():
        node = conf
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = yaml.safe_load(value) if isinstance(value, str) else value
    return yaml.safe_dump(conf)
