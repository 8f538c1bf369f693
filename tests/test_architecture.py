"""The package's shape (docs/architecture.md: the tree, direction of imports) and start-up cost, checked structurally.

Only the CLI layer may import typer or rich; imports flow cli → jobs →
(extraction, retrieval, index, providers) → vault → (config → secrets, watch), with no
circle between parts or between modules (imports inside functions count); and the
commands agents call in loops must not pay for heavy imports they do not use.
"""

from __future__ import annotations

import ast
import functools
import importlib.machinery
import importlib.util
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "memcli"

# subpackage -> memcli subpackages/modules it must never import (docs/architecture.md):
# cli -> (jobs, mcp) -> (extraction, retrieval, index, providers) -> the bottom layer; retrieval
# reads the index, never the reverse (nor does it look at files changing: the index does);
# extraction decides from text alone (no index, no search, no file watch); a provider is
# handed text and its settings
FORBIDDEN = {
    "index": {"cli", "jobs", "mcp", "retrieval", "extraction", "providers"},
    "retrieval": {"cli", "jobs", "mcp", "extraction", "watch"},
    "providers": {"cli", "jobs", "mcp", "index", "retrieval", "extraction", "watch"},
    "extraction": {"cli", "jobs", "mcp", "index", "retrieval", "providers", "watch"},
    "jobs": {"cli", "mcp"},
    "mcp": {"cli"},
    "team": {"cli", "jobs", "mcp", "extraction"},  # team memory: reads vault, index, retrieval, providers
}
# the bottom layer -> the only memcli parts it may import besides itself and errors (no cycle:
# vault opens its settings with config and lists its files with watch's walk; config masks
# and checks secrets with secrets; secrets and watch build on nothing of memcli)
BOTTOM = {
    "vault": {"config", "watch"},
    "config": {"secrets"},
    "secrets": set(),
    "watch": set(),
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
            found += [
                (node.lineno, f"memcli.{alias.name}")
                for alias in node.names
                if base == "memcli" and is_module(alias.name)
            ]
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
    if own in BOTTOM:
        bad = [(line, mod) for line, mod, sub in targets if sub not in (None, own, "errors", *BOTTOM[own])]
    else:
        bad = [(line, mod) for line, mod, sub in targets if sub in FORBIDDEN.get(own, set())]
    assert not bad, f"{path.relative_to(REPO)} imports against the layers (FORBIDDEN, BOTTOM): {bad}"


def test_no_module_imports_another_modules_private_names():
    """A name with a leading underscore is its module's own: another module that needs it
    needs a public name (a private import hides coupling the layer tests cannot see)."""
    bad = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memcli"):
                bad += [
                    f"{path.relative_to(REPO)}:{node.lineno} {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert not bad, f"private names imported from another module: {bad}"


@pytest.mark.parametrize("part", sorted(BOTTOM))
def test_each_bottom_package_says_what_it_may_import(part):
    """Its __init__ docstring is the map a newcomer reads: it names every part BOTTOM lets it import."""
    doc = ast.get_docstring(ast.parse((PACKAGE / part / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert len(doc.split()) > 30, f"memcli/{part}/__init__.py: say what lives here and what it may import"
    missing = [other for other in BOTTOM[part] if f"memcli.{other}" not in doc]
    assert not missing, f"memcli/{part}/__init__.py does not name what it may import: {missing}"


# memcli/index/'s families (docs/architecture.md): each imports only the ones after it, and none
# imports the index's top level (sync, commit, embed, ...), the orchestration that uses them
INDEX_FAMILIES = ("currency", "vectors", "notes", "stores", "keyword")


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "index").glob("*/*.py")), ids=lambda p: p.relative_to(REPO).as_posix()
)
def test_index_families_import_one_way(path):
    allowed = INDEX_FAMILIES[INDEX_FAMILIES.index(path.parent.name) :]
    bad = [
        (line, mod)
        for line, mod in imports(path)
        if mod.split(".")[:2] == ["memcli", "index"] and (len(mod.split(".")) < 3 or mod.split(".")[2] not in allowed)
    ]
    assert not bad, f"{path.relative_to(REPO)} imports against the index families' order {INDEX_FAMILIES}: {bad}"


def imported_modules(args: list[str], cwd: Path) -> tuple[set[str], subprocess.CompletedProcess]:
    """Top-level names of every module a fresh `python -X importtime -m memcli ...` loads."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memcli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
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
    note(
        ws,
        "memory/2026-05-18/kickoff.md",
        "# Kickoff\n\nWe chose PostgreSQL over MySQL.\n",
        name="kickoff",
        description="Project kickoff.",
    )
    rebuild = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(ws), "reindex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
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
    """Small modules and functions: a reader sees one idea at a time."""
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(REPO)} has {lines} lines (> {MAX_MODULE_LINES}): split it"
    long = [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{path.relative_to(REPO)}: functions over {MAX_FUNCTION_LINES} lines: {long}"


# Import circles between modules -------------------------------------------------------------------
#
# An import inside a function runs later, so a circle it closes does not fail at start-up:
# it hides until someone moves the import up. The module graph below counts every import
# (module level and inside functions; not those under `if TYPE_CHECKING:`, which never
# run) and must have no circle, so every import written inside a function could also sit
# at the top of its module; one stays inside a function only for start-up time (a command
# that never needs the module does not load it).
#
# Function-level imports that close a circle and are kept for start-up time, each with the
# reason: (importer, imported) -> why. None is needed today; an entry must name a real
# function-level import (test_circle_exceptions_are_real).
CIRCLE_EXCEPTIONS: dict[tuple[str, str], str] = {}
MODULES = {module_name(p) for p in SOURCES}


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"
    )


def _known(name: str) -> str | None:
    """The memcli module `name` is, or lies in (`memcli.index.data.x` -> memcli.index)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


@functools.cache
def _is_module(package: str, name: str) -> bool:
    """Whether `from package import name` imports a module (memcli's, the standard library's or
    a third party's) rather than a name the package defines; the package itself is not imported."""
    if package.split(".")[0] == "memcli":
        return f"{package}.{name}" in MODULES
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):  # not installed: read as a name
        return False
    places = [Path(place) for place in (spec and spec.submodule_search_locations) or ()]
    suffixes = importlib.machinery.all_suffixes()
    return any((place / name).is_dir() or any((place / (name + s)).is_file() for s in suffixes) for place in places)


def imports_that_run(path: Path) -> list[tuple[str, int, bool]]:
    """(module, line, inside a function) for every import that runs (not under TYPE_CHECKING).

    A memcli import names the memcli module: `from package import name` counts as an import
    of the submodule when `name` is one, else of the package itself (its __init__ defines the
    name). Any other import names the module as written (`from os import path` -> os)."""
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking(child):
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parent = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(parent + ([child.module] if child.module else []))
                targets = [f"{base}.{a.name}" if _is_module(base, a.name) else base for a in child.names]
            for target in dict.fromkeys(targets):
                mod = _known(target) if target.split(".")[0] == "memcli" else target
                if mod and mod != own:
                    found.append((mod, child.lineno, in_function))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), False)
    return found


def module_imports(path: Path) -> list[tuple[str, int, bool]]:
    """(memcli module, line, inside a function) for every import of a memcli module that runs."""
    return [found for found in imports_that_run(path) if found[0].split(".")[0] == "memcli"]


def module_graph() -> dict[str, dict[str, tuple[int, bool]]]:
    """importer -> {imported: (line of the first import, inside a function)}."""
    graph: dict[str, dict[str, tuple[int, bool]]] = {}
    for path in SOURCES:
        edges = graph.setdefault(module_name(path), {})
        for mod, line, in_function in module_imports(path):
            edges.setdefault(mod, (line, in_function))
    return graph


def circles(graph: dict[str, dict[str, tuple[int, bool]]]) -> list[list[str]]:
    """The shortest circle (a, b, ..., a) of each group of modules that import each other
    (the groups: Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:  # v is the first of its group: the group is the stack down to it
            at = stack.index(v)
            group = set(stack[at:])
            del stack[at:]
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [min((_shortest(graph, group, start) for start in sorted(group)), key=len) for group in groups]


def _shortest(graph, group: set[str], start: str) -> list[str]:
    """The shortest circle from `start` back to it inside `group` (breadth first)."""
    came: dict[str, str] = {}
    queue = [start]
    while start not in came:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w in group and w not in came:
                came[w] = v
                queue.append(w)
    path = [start]
    while len(path) == 1 or path[-1] != start:
        path.append(came[path[-1]])
    return path[::-1]


def describe(graph, circle: list[str]) -> str:
    steps = []
    for a, b in itertools.pairwise(circle):
        line, in_function = graph[a][b]
        steps.append(f"{a} -> {b} (line {line}{', inside a function' if in_function else ''})")
    return "; ".join(steps)


def test_no_import_circle_between_modules():
    graph = module_graph()
    assert "memcli.retrieval.rank" in graph["memcli.jobs.search"]  # the probe sees real edges
    assert graph["memcli.cli.health"]["memcli.jobs.health"][1]  # ...and imports inside functions
    for a, b in CIRCLE_EXCEPTIONS:
        graph.get(a, {}).pop(b, None)
    found = circles(graph)
    assert not found, "import circles between memcli modules (imports inside functions count):\n" + "\n".join(
        describe(graph, c) for c in found
    )


def test_circle_exceptions_are_real():
    graph = module_graph()
    for (a, b), why in CIRCLE_EXCEPTIONS.items():
        assert why and b in graph.get(a, {}) and graph[a][b][1], f"{a} -> {b} is not a function-level import"


def test_the_circle_finder_finds_a_circle():
    graph = {
        "a": {"b": (1, False)},
        "b": {"c": (2, True), "d": (3, False)},
        "c": {"a": (4, False)},
        "d": {},
        "e": {"a": (5, False)},
    }
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert "b -> c (line 2, inside a function)" in describe(graph, circles(graph)[0])
    del graph["c"]["a"]
    assert circles(graph) == []


# Imports inside functions that save no start-up time ----------------------------------------------
#
# An import inside a function is there for start-up time: a command that never calls the
# function does not load the module. When the module is loaded anyway whenever the importer
# is (its module-level imports load it, directly or through other memcli modules, or it is
# the importer's own package), the late import saves nothing and only hides a dependency:
# it belongs at the top. The modules loaded with a memcli module are those its module-level
# imports name and, for the memcli ones, what they load in turn; what a module outside
# memcli (standard library, third party) imports is not read: it is not ours to rely on.


def _with_parents(module: str) -> list[str]:
    """`a.b.c` -> [a, a.b, a.b.c]: importing a module first loads its packages."""
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts) + 1)]


@functools.cache
def _runs(module: str) -> tuple[tuple[str, int, bool], ...]:
    path = PACKAGE.joinpath(*module.split(".")[1:])
    return tuple(imports_that_run(path / "__init__.py" if path.is_dir() else path.with_suffix(".py")))


def loaded_with(module: str) -> dict[str, str]:
    """Every module loaded whenever the memcli `module` is -> the module that loads it first."""
    by: dict[str, str] = {}

    def load(name: str, loader: str) -> None:
        if name not in by and name != module:
            by[name] = loader
            todo.append(name)

    todo = [module]
    while todo:
        current = todo.pop(0)
        if current.split(".")[0] != "memcli":
            continue  # what a module outside memcli loads in turn is not read
        for name in _with_parents(current)[:-1]:  # its packages
            load(name, current)
        for target, _, inside in _runs(current):
            if not inside:
                for name in _with_parents(target):
                    load(name, current)
    return by


def _chain(by: dict[str, str], module: str, target: str) -> str:
    steps = [target]
    while steps[-1] != module:
        steps.append(by[steps[-1]])
    return " -> ".join(reversed(steps))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_imports_inside_functions_save_start_up_time(path):
    own = module_name(path)
    by = loaded_with(own)
    late = [
        f"line {line}: {target} (loaded {_chain(by, own, target)})"
        for target, line, inside in _runs(own)
        if inside and target in by
    ]
    assert not late, (
        f"{path.relative_to(REPO)} imports inside a function a module it loads anyway; "
        "move the import to the top:\n" + "\n".join(late)
    )


def test_loaded_with_follows_module_level_imports_only():
    by = loaded_with("memcli.jobs.health")
    assert by["memcli.jobs"] == "memcli.jobs.health"  # its package
    assert "memcli.index.sync" in by  # through its module-level imports
    assert "memcli.jobs.health" not in by
    assert _chain(by, "memcli.jobs.health", "memcli").startswith("memcli.jobs.health -> ")
    cli = loaded_with("memcli.cli.health")
    assert "memcli.jobs.health" not in cli  # imported inside a function only: not loaded with it
    assert "os" not in loaded_with("memcli.cli.main")  # its `import os` sits inside a function
    assert _is_module("concurrent", "futures") and _is_module("memcli.index", "sync")
    assert not _is_module("pathlib", "Path") and not _is_module("memcli.index", "PARSER_VERSION")
