"""The package's shape (DESIGN.md §8) and start-up cost, checked structurally.

Only the CLI layer may import typer or rich; imports flow cli → jobs →
(extraction, retrieval, index, providers) → vault; and the commands agents call
in loops must not pay for heavy imports they do not use.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "memcli"

# subpackage -> memcli subpackages/modules it must never import (docs/architecture.md):
# cli -> (jobs, mcp) -> (extraction, retrieval, index, providers) -> vault; retrieval reads
# the index, never the reverse; extraction decides from text alone (no index, no search)
FORBIDDEN = {
    "index": {"cli", "jobs", "mcp", "retrieval", "extraction", "providers"},
    "retrieval": {"cli", "jobs", "mcp", "extraction"},
    "providers": {"cli", "jobs", "mcp", "index", "retrieval", "extraction"},
    "extraction": {"cli", "jobs", "mcp", "index", "retrieval", "providers"},
    "jobs": {"cli", "mcp"},
    "mcp": {"cli"},
    "team": {"cli", "jobs", "mcp", "extraction"},  # team memory: reads vault, index, retrieval, providers
}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in the file, nested ones included.

    `from memcli import errors` also yields memcli.errors (when the name is a module);
    relative imports are resolved against the file's own package.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"memcli.{alias.name}") for alias in node.names
                      if base == "memcli" and is_module(alias.name)]
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


def subpackage(module: str) -> str | None:
    """`memcli.index.sync` -> "index"; `memcli.errors` -> "errors"; `memcli` -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "memcli" else None


def test_sources_found():
    assert len(SOURCES) > 10


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_only_the_cli_imports_typer_or_rich(path):
    if path.relative_to(PACKAGE).parts[0] == "cli":
        return
    bad = [(line, mod) for line, mod in imports(path) if mod.split(".")[0] in ("typer", "rich", "click")]
    assert not bad, f"{path.relative_to(REPO)} imports the CLI framework outside memcli/cli/: {bad}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_imports_flow_one_way(path):
    own = subpackage(module_name(path))
    targets = [(line, mod, subpackage(mod)) for line, mod in imports(path) if mod.split(".")[0] == "memcli"]
    if own == "vault":
        bad = [(line, mod) for line, mod, sub in targets if sub not in (None, "vault", "errors")]
    else:
        bad = [(line, mod) for line, mod, sub in targets if sub in FORBIDDEN.get(own, set())]
    assert not bad, f"{path.relative_to(REPO)} imports against DESIGN.md §8 (cli → jobs → core → vault): {bad}"


def imported_modules(args: list[str], cwd: Path) -> tuple[set[str], subprocess.CompletedProcess]:
    """Top-level names of every module a fresh `python -X importtime -m memcli ...` loads."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "memcli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name.split(".")[0])
    return names, proc


def test_help_imports_no_http_client(tmp_path):
    names, proc = imported_modules(["--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "typer" in names  # the probe works: --help is rendered by typer
    assert "httpx" not in names


def test_search_imports_nothing_heavy(tmp_path, ws, note):
    note(ws, "memory/2026-05-18/kickoff.md", "# Kickoff\n\nWe chose PostgreSQL over MySQL.\n",
         name="kickoff", description="Project kickoff.")
    rebuild = subprocess.run([sys.executable, "-m", "memcli", "-w", str(ws), "reindex"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    assert rebuild.returncode == 0, rebuild.stderr
    names, proc = imported_modules(["-w", str(ws), "search", "postgresql"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "kickoff.md" in proc.stdout
    heavy = names & {"typer", "click", "numpy", "rich", "httpx", "psycopg"}
    assert not heavy, f"a cold `mem search` imported {sorted(heavy)}"


def part_graph() -> dict[str, set[str]]:
    """memcli part (subpackage or top module) -> the other parts it imports."""
    graph: dict[str, set[str]] = {}
    for path in SOURCES:
        own = subpackage(module_name(path))
        for _, mod in imports(path):
            other = subpackage(mod) if mod.split(".")[0] == "memcli" else None
            if own and other and other != own:
                graph.setdefault(own, set()).add(other)
    return graph


def test_no_import_cycle_between_parts():
    graph = part_graph()
    assert "retrieval" in graph.get("jobs", set())  # the probe sees real edges
    state: dict[str, str] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                raise AssertionError("import cycle between memcli parts: " + " -> ".join(trail + [node, nxt]))
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_modules_and_functions_stay_small(path):
    """Small modules and functions (issue 15): a reader sees one idea at a time."""
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(REPO)} has {lines} lines (> {MAX_MODULE_LINES}): split it"
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"{path.relative_to(REPO)}: functions over {MAX_FUNCTION_LINES} lines: {long}"
