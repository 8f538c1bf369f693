#!/usr/bin/env python3
"""mem and QMD side by side as the vault grows: one JSON document on stdout.

    python bench/scale.py                                  # 2,000 and 20,000 notes
    python bench/scale.py --sizes 2000,20000,100000 --markdown docs/scale.md --note bench/scale_note.md
    python bench/scale.py --sizes 2000 --searches 5 --skip-qmd

Vaults come from /work/shared/tools/gen_vault.py (notes, and one digest node per 20 notes), run
through bench/gen_vault_fast.py (the same bytes, ~30x faster: 100,000 notes in 2 minutes) and
cached in bench/out/vault-<N>. Both
tools index the same copy of the vault in a scratch folder, keyword search only
(MEM_EMBEDDING_BACKEND=none for mem; `qmd search`, QMD's BM25, with no embeddings):

  build      mem reindex --full        | qmd collection add <vault> (indexes every file)
  update     one note edited, then      mem reindex | qmd update
  search     a new process per query:   mem search Q | qmd search Q   (median of --searches)
  watched    update and search again while `mem watch` runs (its change journal; QMD has no
             watcher, so these are set against QMD's plain update and search)

Each figure is a whole process timed with perf_counter; CPU is user+system time and peak RSS
comes from wait4() of that process (its reaped workers included). QMD 2.8.3 runs on Bun 1.4.5
from bench/out/qmd (installed from npm when missing). Ratios are mem / QMD from the same run.
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
OUT = HERE / "out"
QMD_DIR = OUT / "qmd"
GENERATOR = Path("/work/shared/tools/gen_vault.py")
MIB = 1024 * 1024


def log(msg: str) -> None:
    print(f"scale: {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> dict:
    """One process to completion: wall seconds, CPU seconds, peak RSS (MiB); exits on failure."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"scale: {' '.join(cmd)} failed:\n{err.read().decode(errors='replace')[-2000:]}")
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_mib": round(usage.ru_maxrss * 1024 / MIB, 1),
    }


def vault(notes: int, generator: Path) -> Path:
    path = OUT / f"vault-{notes}"
    if not (path / "queries.txt").is_file():
        log(f"generating {path} ({notes} notes; 20,000 take ~14 minutes)")
        shutil.rmtree(path, ignore_errors=True)
        # the generator's own output, ~30x faster (bench/gen_vault_fast.py); --generator another one
        cmd = [str(HERE / "gen_vault_fast.py")] if generator == GENERATOR else [str(generator)]
        subprocess.run(
            [sys.executable, *cmd, str(path), "--notes", str(notes), "--digest", str(max(1, notes // 20))],
            check=True,
            stdout=sys.stderr,
        )
    return path


def qmd_bin() -> Path:
    qmd = QMD_DIR / "home" / "bin" / "qmd"
    if not qmd.exists():
        log("installing QMD 2.8.3 on Bun 1.4.5 from npm")
        subprocess.run(["npm", "install", "--prefix", str(QMD_DIR), "bun@1.4.5"], check=True, stdout=sys.stderr)
        subprocess.run(
            [str(QMD_DIR / "node_modules" / ".bin" / "bun"), "install", "-g", "@tobilu/qmd@2.8.3"],
            check=True,
            stdout=sys.stderr,
            env={**os.environ, "BUN_INSTALL": str(QMD_DIR / "home")},
        )
    return qmd


def median_run(cmds: list[list[str]], env: dict) -> dict:
    runs = [run(c, env) for c in cmds]
    return {
        "wall_s": round(statistics.median(r["wall_s"] for r in runs), 3),
        "cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 3),
        "peak_mib": max(r["peak_mib"] for r in runs),
        "n": len(runs),
    }


def edit(copy: Path, i: int) -> None:
    note = sorted((copy / "memory").rglob("*.md"))[i]
    with note.open("a", encoding="utf-8") as f:
        f.write(f"\nscale edit {i}: the heron counted seventeen lanterns.\n")


def measure_mem(src: Path, scratch: Path, queries: list[str], mem: list[str]) -> dict:
    copy = scratch / "mem-vault"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("mem_metadata", "queries.txt"), symlinks=True)
    # bytecode as an installed mem has it (pip compiles at install): the build writes it; with
    # PYTHONDONTWRITEBYTECODE set (this machine sets it), every run compiled the edited modules anew
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"MEM_EMBEDDING_BACKEND": "none", "NO_COLOR": "1", "HOME": str(scratch)})
    base = [*mem, "-w", str(copy)]
    log(f"mem build of {src.name}")
    out = {"build": run(base + ["reindex", "--full"], env)}
    out["noop"] = run(base + ["reindex"], env)
    updates = []
    for i in range(3):
        edit(copy, i)
        updates.append(run(base + ["reindex"], env))
    out["update"] = {k: statistics.median(u[k] for u in updates) for k in ("wall_s", "cpu_s", "peak_mib")}
    out["search"] = median_run([base + ["search", q] for q in queries], env)
    out.update(measure_watched(copy, queries, base, env))
    return out


def measure_watched(copy: Path, queries: list[str], base: list[str], env: dict) -> dict:
    """The same update and searches while `mem watch` runs: its change journal answers
    which files changed (memcli.watch.journal), so nothing stats every file. Each edit is
    followed by the reindex at once, then a pause for the watcher's own debounced batch."""
    watcher = subprocess.Popen(base + ["watch"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        first = watcher.stderr.readline()
        if "change journal" not in first:
            sys.exit(f"scale: mem watch keeps no change journal here: {first.strip()}")
        if "catch-up" not in watcher.stderr.readline():
            sys.exit("scale: mem watch did not catch up")
        updates = []
        for i in range(3, 6):
            edit(copy, i)
            updates.append(run(base + ["reindex"], env))
            time.sleep(2.5)
        return {
            "update_watched": {k: statistics.median(u[k] for u in updates) for k in ("wall_s", "cpu_s", "peak_mib")},
            "search_watched": median_run([base + ["search", q] for q in queries], env),
        }
    finally:
        watcher.terminate()
        watcher.wait(timeout=60)


def measure_qmd(src: Path, scratch: Path, queries: list[str]) -> dict:
    qmd = str(qmd_bin())
    copy = scratch / "qmd-vault"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("mem_metadata", "queries.txt"), symlinks=True)
    home = scratch / "qmd-home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "NO_COLOR": "1",
        "PATH": f"{QMD_DIR / 'home' / 'bin'}:{QMD_DIR / 'node_modules' / '.bin'}:{os.environ.get('PATH', '')}",
    }
    log(f"qmd build of {src.name}")
    out = {"build": run([qmd, "collection", "add", str(copy), "--name", "vault"], env)}
    out["noop"] = run([qmd, "update"], env)
    updates = []
    for i in range(3):
        edit(copy, i)
        updates.append(run([qmd, "update"], env))
    out["update"] = {k: statistics.median(u[k] for u in updates) for k in ("wall_s", "cpu_s", "peak_mib")}
    out["search"] = median_run([[qmd, "search", q] for q in queries], env)
    return out


def ratios(mem: dict, qmd: dict) -> dict:
    out = {}
    for stage in ("build", "update", "search"):
        for key in ("wall_s", "cpu_s", "peak_mib"):
            if qmd[stage][key]:
                out[f"{stage}_{key}"] = round(mem[stage][key] / qmd[stage][key], 3)
    for stage, theirs in (("update_watched", "update"), ("search_watched", "search")):
        if stage in mem and qmd[theirs]["wall_s"]:  # QMD has no watcher: against its plain figure
            out[f"{stage}_wall_s"] = round(mem[stage]["wall_s"] / qmd[theirs]["wall_s"], 3)
    return out


def markdown(result: dict) -> str:
    rows = [
        "| notes | | build wall | build CPU | build peak | update wall | update peak | cold search "
        "| update, mem watch running | search, mem watch running |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in result["sizes"]:
        for tool in ("mem", "qmd"):
            m = size.get(tool)
            if m:
                rows.append(
                    f"| {size['notes']:,} ({size['mb']} MB) | {tool} | {m['build']['wall_s']} s | "
                    f"{m['build']['cpu_s']} s | {m['build']['peak_mib']} MiB | {m['update']['wall_s']} s | "
                    f"{m['update']['peak_mib']} MiB | {m['search']['wall_s']} s | "
                    + (
                        f"{m['update_watched']['wall_s']} s | {m['search_watched']['wall_s']} s |"
                        if "update_watched" in m
                        else "| |"
                    )
                )
        if size.get("ratio"):
            r = size["ratio"]
            rows.append(
                f"| | mem/QMD | {r.get('build_wall_s')}x | {r.get('build_cpu_s')}x | "
                f"{r.get('build_peak_mib')}x | {r.get('update_wall_s')}x | {r.get('update_peak_mib')}x | "
                f"{r.get('search_wall_s')}x | {r.get('update_watched_wall_s', '')}x | "
                f"{r.get('search_watched_wall_s', '')}x |"
            )
    note = f"{result['note'].strip()}\n\n" if result.get("note") else ""
    return (
        "# Scale: mem and QMD side by side\n\n" + note + "Measured by `python bench/scale.py --sizes "
        f"{','.join(str(s['notes']) for s in result['sizes'])} --markdown docs/scale.md"
        f"{' --note bench/scale_note.md' if note else ''}` on "
        f"{result['machine']} ({result['date']}, load {result.get('load', '?')} at the start); keyword "
        f"search only, medians of {result['searches']} cold searches and 3 one-file updates.\n\n"
        + "\n".join(rows)
        + "\n"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,20000", help="vault sizes in notes, comma-separated")
    ap.add_argument("--searches", type=int, default=10, help="cold searches per tool and size")
    ap.add_argument("--mem", default=f"{sys.executable} -m memcli", help="how to run mem")
    ap.add_argument("--skip-qmd", action="store_true")
    ap.add_argument("--generator", type=Path, default=GENERATOR)
    ap.add_argument("--markdown", type=Path, help="also write the table here (e.g. docs/scale.md)")
    ap.add_argument("--note", type=Path, help="Markdown put above the table (what the figures mean)")
    args = ap.parse_args()
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, {sys.platform}",
        "load": round(os.getloadavg()[0], 2),
        "searches": args.searches,
        "sizes": [],
        "note": args.note.read_text(encoding="utf-8") if args.note else "",
    }
    for notes in (int(s) for s in args.sizes.split(",")):
        src = vault(notes, args.generator)
        queries = [q for q in (src / "queries.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
        queries = queries[: args.searches]
        mb = round(sum(p.stat().st_size for p in src.rglob("*.md")) / 1e6, 1)
        size = {"notes": notes, "mb": mb}
        with tempfile.TemporaryDirectory(prefix="mem-scale-") as tmp:
            size["mem"] = measure_mem(src, Path(tmp), queries, args.mem.split())
            if not args.skip_qmd:
                size["qmd"] = measure_qmd(src, Path(tmp), queries)
                size["ratio"] = ratios(size["mem"], size["qmd"])
        result["sizes"].append(size)
    json.dump(result, sys.stdout, indent=1)
    print()
    if args.markdown:
        args.markdown.write_text(markdown(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
