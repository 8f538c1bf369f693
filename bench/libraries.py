#!/usr/bin/env python3
"""mem's hand-written pieces beside the well-kept libraries that could replace them.

One JSON document on stdout, progress on stderr. Each comparison is skipped (with the
reason) when its library is not importable by the interpreter running this script, so
install the candidates into a throwaway venv, never into mem's own:

    python3 -m venv /tmp/libs
    /tmp/libs/bin/pip install json5 pyjson5 watchfiles inotify_simple mcp fastmcp pydantic-settings
    PYTHONPATH=$PWD /tmp/libs/bin/python bench/libraries.py --runs 10 > bench/out/libraries.json

mem's modules need only the standard library, so the same interpreter imports them.

- import_ms: `python -X importtime -c 'import X'` in a new process, the cumulative time of
  every module X brings in beyond a bare interpreter's; median of --runs processes.
- install_kb: the files of the distribution and of every installed distribution it
  requires (transitively), from their RECORDs; `new_dists` leaves out those mem already
  depends on (typer, rich, httpx, ...).
- json5: every JSON5 text in tests/test_json5.py and tests/test_openclaw.py (string
  literals passed to loads()/install()), parsed by each reader: same value, same error,
  or different; plus the time for a 1 MB config and for 100,000 nested arrays.
- watch: from writing a file to the watcher reporting it (median of --events writes), the
  CPU the watcher process spends idle for 2 s, and the time to watch a tree of 2,000 folders.
- mcp: a new server process answering initialize + tools/list with mem's three memory
  tools (median of --runs): mem's protocol layer alone, the official SDK's low-level
  server, fastmcp, and the whole `mem mcp` (which opens a workspace too).
- config: the import, and building + validating the typed settings from a config dict
  (mem's settings.build against pydantic's TypeAdapter over the same dataclasses).

Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata as md
import json
import math
import os
import platform
import re
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEM_RUNTIME = ("typer", "rich", "numpy", "zstandard", "pyyaml", "python-frontmatter", "croniter", "httpx")
MEM_CLOSURE: set[str] = set()  # mem's runtime distributions, as installed for --mem-python (main())


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def mem_module(filename: str, parent: str = "") -> str | None:
    """The dotted name of mem's module `filename` (found by file, so a package move keeps working)."""
    for path in sorted((ROOT / "memcli").rglob(filename)):
        rel = path.relative_to(ROOT).with_suffix("")
        if not parent or parent in rel.parts:
            return ".".join(rel.parts)
    return None


def available(module: str | None) -> bool:
    if not module:
        return False
    try:
        importlib.import_module(module)
        return True
    except ImportError:
        return False


# --- import time and install size ---------------------------------------------------------


def _importtime(code: str) -> dict[str, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, env=env, check=True
    ).stderr
    top: dict[str, int] = {}
    for line in err.splitlines():  # "import time:  self [us] | cumulative | imported package"
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\S.*)$", line)
        if m and not m.group(3).startswith(" "):
            top[m.group(3).strip()] = int(m.group(2))
    return top


def import_ms(module: str, runs: int) -> float:
    base = set(_importtime("pass"))
    times = []
    for _ in range(runs):
        top = _importtime(f"import {module}")
        times.append(sum(us for name, us in top.items() if name not in base) / 1000)
    return round(statistics.median(times), 1)


def _closure(name: str) -> set[str]:
    """`name` and every installed distribution it requires, extras it asks for included."""
    seen: set[tuple[str, str]] = set()
    names: set[str] = set()
    todo = [(name, "")]
    while todo:
        want, extras = todo.pop()
        try:
            dist = md.distribution(want)
        except md.PackageNotFoundError:
            continue  # a requirement whose marker is false here was never installed
        key = dist.metadata["Name"].lower().replace("_", "-")
        if (key, extras) in seen:
            continue
        seen.add((key, extras))
        names.add(key)
        for req in dist.requires or []:
            extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)", req)
            if extra and extra.group(1) not in extras.split(","):
                continue
            m = re.match(r"\s*([A-Za-z0-9._-]+)\s*(?:\[([^\]]*)\])?", req)
            if m:
                todo.append((m.group(1), (m.group(2) or "").replace(" ", "")))
    return names


def install_kb(dist: str) -> dict:
    names = _closure(dist)
    if not names:
        return {"skipped": f"{dist} not installed"}
    mem = MEM_CLOSURE or set().union(*(_closure(d) for d in MEM_RUNTIME))
    total = new = 0
    for name in names:
        files = md.distribution(name).files or []
        size = sum(f.locate().stat().st_size for f in files if f.locate().is_file())
        total += size
        new += size if name not in mem else 0
    return {"dists": len(names), "kb": total // 1024, "new_dists": sorted(names - mem), "new_kb": new // 1024}


# --- JSON5 ---------------------------------------------------------------------------------


def json5_inputs() -> list[str]:
    """String literals handed to loads() or install() in mem's JSON5 and OpenClaw tests."""
    out = []
    for test in ("test_json5.py", "test_openclaw.py"):
        tree = ast.parse((ROOT / "tests" / test).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "loads",
                "install",
            ):
                args = [a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                out += (
                    [a.value for a in args[:1]]
                    if getattr(node.func, "id", "") == "loads"
                    else [a.value for a in args if "{" in a.value][:1]
                )
    return out


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _run(fn, text):
    try:
        return "ok", fn(text)
    except RecursionError:
        return "RecursionError", None
    except Exception as exc:  # noqa: BLE001 - any failure is a finding here
        return type(exc).__name__, None


def bench_json5(runs: int) -> dict:
    name = mem_module("json5.py")
    mem = importlib.import_module(name).loads  # type: ignore[arg-type]
    readers = {"mem": mem}
    if available("json5"):
        readers["json5"] = importlib.import_module("json5").loads
    if available("pyjson5"):
        readers["pyjson5"] = importlib.import_module("pyjson5").decode
    inputs = json5_inputs()
    out: dict = {"inputs": len(inputs), "module": name}
    big = (
        "{\n"
        + ",\n".join(f"  key{i}: {{name: 'agent {i}', tags: ['a', 'b',], n: 0x{i:x}, // note\n}}" for i in range(16000))
        + "\n}"
    )
    deep = "[" * 100_000 + "]" * 100_000
    for label, fn in readers.items():
        row: dict = {"import_ms": import_ms(name if label == "mem" else label, runs)}
        if label != "mem":
            agree = differ = 0
            examples = []
            for text in inputs:
                a, b = _run(mem, text), _run(fn, text)
                if (a[0] == "ok") == (b[0] == "ok") and (a[0] != "ok" or _same(a[1], b[1])):
                    agree += 1
                else:
                    differ += 1
                    if len(examples) < 8:
                        examples.append(
                            {
                                "text": text[:80],
                                "mem": a[0] if a[0] != "ok" else repr(a[1])[:60],
                                label: b[0] if b[0] != "ok" else repr(b[1])[:60],
                            }
                        )
            row.update(agree=agree, differ=differ, differences=examples)
        started = time.perf_counter()
        status, _ = _run(fn, big)
        row["1mb_ms"] = round((time.perf_counter() - started) * 1000, 1) if status == "ok" else status
        row["deep_100k"] = _run(fn, deep)[0]
        out[label] = row
    out["1mb_bytes"] = len(big.encode())
    return out


# --- file watching -------------------------------------------------------------------------


def _latency(events: int, start_watch, wait_event) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        handle = start_watch(tmp)
        lat = []
        for i in range(events):
            started = time.perf_counter()
            with open(os.path.join(tmp, f"n{i % 5}.md"), "w") as fh:
                fh.write(f"note {i}\n")
            wait_event(handle)
            lat.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        time.sleep(2)
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        idle = (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) * 1000
        stop = getattr(handle, "stop", None)
        if stop:
            stop()
    return {
        "write_to_event_ms_median": round(statistics.median(lat), 2),
        "write_to_event_ms_max": round(max(lat), 2),
        "idle_cpu_ms_per_2s": round(idle, 1),
    }


def _tree(root: str, n: int = 2000) -> list[str]:
    dirs = [os.path.join(root, f"d{i // 50}", f"e{i % 50}") for i in range(n)]
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    return dirs


def _timed_tree(add_all) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        dirs = _tree(tmp)
        started = time.perf_counter()
        handle = add_all(tmp, dirs)
        took = (time.perf_counter() - started) * 1000
        stop = getattr(handle, "stop", None)
        if stop:
            stop()
        return round(took, 1)


class _WatchfilesThread:
    """watchfiles.watch in a thread: its generator blocks, mem's callers poll."""

    def __init__(self, path: str):
        import queue

        import watchfiles

        self.queue: queue.Queue = queue.Queue()
        self.stop_event = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(watchfiles, path), daemon=True)
        self.thread.start()
        time.sleep(0.3)  # the Rust watcher starts in the thread

    def _run(self, watchfiles, path):
        for changes in watchfiles.watch(path, stop_event=self.stop_event, rust_timeout=200):
            self.queue.put(changes)

    def stop(self):
        self.stop_event.set()
        self.thread.join(5)


def bench_watch(events: int, runs: int) -> dict:
    name = mem_module("inotify.py")
    out: dict = {"module": name}
    if sys.platform != "linux":
        return {"skipped": "inotify is Linux only"}
    mod = importlib.import_module(name)  # type: ignore[arg-type]

    def mem_start(path):
        ino = mod.Inotify()
        ino.add(path)
        return ino

    def mem_wait(ino):
        while not ino.read():
            select.select([ino.fd], [], [], 5)

    def mem_tree(root, dirs):
        ino = mod.Inotify()
        for d in [root, *{os.path.dirname(x) for x in dirs}, *dirs]:
            ino.add(d)
        ino.close()

    out["mem"] = {
        "import_ms": import_ms(name, runs),
        **_latency(events, mem_start, mem_wait),
        "watch_2000_folders_ms": _timed_tree(mem_tree),
    }
    if available("inotify_simple"):
        import inotify_simple as ins

        mask = (
            ins.flags.MODIFY
            | ins.flags.CLOSE_WRITE
            | ins.flags.CREATE
            | ins.flags.DELETE
            | ins.flags.MOVED_FROM
            | ins.flags.MOVED_TO
            | ins.flags.ATTRIB
        )

        def ins_start(path):
            ino = ins.INotify()
            ino.add_watch(path, mask)
            return ino

        def ins_tree(root, dirs):
            ino = ins.INotify()
            for d in [root, *{os.path.dirname(x) for x in dirs}, *dirs]:
                ino.add_watch(d, mask)
            ino.close()

        out["inotify_simple"] = {
            "import_ms": import_ms("inotify_simple", runs),
            **_latency(events, ins_start, lambda ino: ino.read(timeout=5000)),
            "watch_2000_folders_ms": _timed_tree(ins_tree),
            "install": install_kb("inotify_simple"),
        }
    if available("watchfiles"):
        out["watchfiles"] = {
            "import_ms": import_ms("watchfiles", runs),
            **_latency(max(5, events // 5), _WatchfilesThread, lambda w: w.queue.get(timeout=10)),
            "watch_2000_folders_ms": "recursive, in a Rust thread (not comparable)",
            "install": install_kb("watchfiles"),
        }
    return out


# --- MCP -----------------------------------------------------------------------------------

_TOOLS = "from memcli.mcp.schemas import memory_tools\nTOOLS = memory_tools()\n"
SERVERS = {
    "mem_protocol": _TOOLS
    + """
import sys
from memcli.mcp.server import Session, serve
class T:
    ws = None; warnings = []
    table = {t.name: t for t in TOOLS}
    def list(self):
        return [{"name": t.name, "description": t.description, "inputSchema": t.parameters} for t in TOOLS]
serve(Session(T(), sys.stderr), sys.stdin.buffer, sys.stdout.buffer)
""",
    "mcp_sdk": _TOOLS
    + """
import anyio, mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name=t.name, description=t.description,
                                                   input_schema=t.parameters) for t in TOOLS])
server = Server("mem", on_list_tools=list_tools)
async def main():
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())
anyio.run(main)
""",
    "fastmcp": _TOOLS
    + """
from fastmcp import FastMCP
from fastmcp.tools import Tool
mcp = FastMCP("mem")
for t in TOOLS:
    tool = Tool.from_function(lambda query="": "", name=t.name, description=t.description)
    tool.parameters = t.parameters
    mcp.add_tool(tool)
mcp.run(show_banner=False)
""",
}
_NEEDS = {"mem_protocol": None, "mcp_sdk": "mcp.server.lowlevel", "fastmcp": "fastmcp"}


def _mcp_round(argv: list[str], env: dict) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin and proc.stdout
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    proc.stdin.write((json.dumps(init) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    for msg in (
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    took = (time.perf_counter() - started) * 1000
    proc.stdin.close()
    proc.wait(10)
    names = [t["name"] for t in reply["result"]["tools"]]
    if names[:3] != ["memory_search", "memory_get", "remember"]:
        raise RuntimeError(f"unexpected tools/list reply: {names}")
    return took


def bench_mcp(runs: int, mem_python: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out: dict = {}
    for label, code in SERVERS.items():
        if _NEEDS[label] and not available(_NEEDS[label]):
            out[label] = {"skipped": f"{_NEEDS[label]} not importable"}
            continue
        try:
            times = [_mcp_round([sys.executable, "-c", code], env) for _ in range(runs)]
        except Exception as exc:  # noqa: BLE001 - an API change in a candidate is reported, not fatal
            out[label] = {"skipped": f"{type(exc).__name__}: {exc}"[:200]}
            continue
        out[label] = {"initialize_and_tools_list_ms": round(statistics.median(times), 1)}
    with tempfile.TemporaryDirectory() as ws:
        Path(ws, "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
        times = [_mcp_round([mem_python, "-m", "memcli", "-w", ws, "mcp"], env) for _ in range(runs)]
    out["mem_mcp_whole"] = {"initialize_and_tools_list_ms": round(statistics.median(times), 1), "python": mem_python}
    for label, dist in (("mcp_sdk", "mcp"), ("fastmcp", "fastmcp")):
        if "skipped" not in out[label]:
            out[label]["import_ms"] = import_ms(_NEEDS[label] or "", runs)
            out[label]["install"] = install_kb(dist)
    out["mem_protocol"]["import_ms"] = import_ms("memcli.mcp.server", runs)
    return out


# --- config --------------------------------------------------------------------------------


def bench_config(runs: int) -> dict:
    settings = importlib.import_module(mem_module("settings.py") or "")
    config = mem_module("layers.py", "config")  # the layering (memcli.config.layers)
    cfg = settings.defaults()
    cfg["search"] = dict(cfg["search"], limit=9)

    def timed(fn, n=200):
        started = time.perf_counter()
        for _ in range(n):
            fn()
        return round((time.perf_counter() - started) * 1000 / n, 3)

    out: dict = {"mem": {"import_ms": import_ms(config or "", runs), "build_ms": timed(lambda: settings.build(cfg))}}
    if available("pydantic_settings"):
        from pydantic import TypeAdapter

        started = time.perf_counter()
        adapter = TypeAdapter(settings.Settings)
        first = (time.perf_counter() - started) * 1000
        shaped = {settings.SECTIONS.get(k, k): v for k, v in cfg.items()}
        out["pydantic_settings"] = {
            "import_ms": import_ms("pydantic_settings", runs),
            "adapter_first_ms": round(first, 1),
            "validate_ms": timed(lambda: adapter.validate_python(shaped)),
            "install": install_kb("pydantic-settings"),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="processes per import / cold-start figure")
    ap.add_argument("--events", type=int, default=50, help="file writes per watcher")
    ap.add_argument(
        "--mem-python",
        default=sys.executable,
        help="interpreter with mem's dependencies, for the whole `mem mcp` (default: this one)",
    )
    ap.add_argument("--only", choices=("json5", "watch", "mcp", "config"), action="append")
    args = ap.parse_args(argv)
    parts = args.only or ["json5", "watch", "mcp", "config"]
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import libraries as L; "
        "print(json.dumps(sorted(set().union(*map(L._closure, L.MEM_RUNTIME)))))"
    )
    MEM_CLOSURE.update(
        json.loads(
            subprocess.run(
                [args.mem_python, "-c", code, str(ROOT / "bench")], capture_output=True, text=True, check=True
            ).stdout
        )
    )
    out: dict = {"python": platform.python_version(), "machine": platform.machine(), "runs": args.runs}
    for part in parts:
        log(part)
        try:
            out[part] = {
                "json5": lambda: bench_json5(args.runs),
                "watch": lambda: bench_watch(args.events, args.runs),
                "mcp": lambda: bench_mcp(args.runs, args.mem_python),
                "config": lambda: bench_config(args.runs),
            }[part]()
        except Exception as exc:  # noqa: BLE001 - one missing piece must not lose the others
            out[part] = {"skipped": f"{type(exc).__name__}: {exc}"[:300]}
    if "json5" in out and "mem" in out["json5"]:
        for dist in ("json5", "pyjson5"):
            if dist in out["json5"]:
                out["json5"][dist]["install"] = install_kb(dist)
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
