"""The start-up fast path (memcli.cli.fast) must agree with the typer commands."""

from __future__ import annotations

import enum
import inspect

import pytest
import typer.main

from memcli.cli import app, fast
from memcli.cli import get as get_cmd
from memcli.cli import reindex as reindex_cmd
from memcli.cli import search as search_cmd


def click_command():
    return typer.main.get_command(app.build())


def option_kind(param):
    if getattr(param, "is_flag", False):
        return bool
    td = getattr(param, "type_descriptor", None)
    ann = getattr(td, "annotation", None)
    if ann in (int, float, str):
        return ann
    if isinstance(ann, type) and issubclass(ann, enum.Enum):
        return tuple(m.value for m in ann)  # a choice: the fast path checks the same values
    name = getattr(getattr(param, "type", None), "name", "")
    return {"integer": int, "float": float, "text": str}.get(name, name)


def typer_options(command) -> dict[str, tuple[str, type]]:
    out = {}
    for p in command.params:
        if getattr(p, "param_type_name", "") != "option":
            continue
        for opt in [*p.opts, *p.secondary_opts]:
            if opt in ("-h", "--help"):
                continue
            out[opt] = (p.name, option_kind(p))
    return out


@pytest.mark.parametrize("name, module", [("search", search_cmd), ("get", get_cmd), ("reindex", reindex_cmd)])
def test_option_table_matches_typer_command(name, module):
    command = click_command().commands[name]
    assert typer_options(command) == module.OPTIONS


@pytest.mark.parametrize("name, module, first", [("search", search_cmd, "query"), ("get", get_cmd, "path")])
def test_positional_argument_and_execute_signature(name, module, first):
    command = click_command().commands[name]
    args = [p.name for p in command.params if getattr(p, "param_type_name", "") == "argument"]
    assert args == [first]
    assert first == module.POSITIONAL
    params = inspect.signature(module.execute).parameters
    assert first in params
    for key, _ in module.OPTIONS.values():
        assert key in params, key


def test_global_options_match():
    root = click_command()
    expected = {}
    for p in root.params:
        if p.name in ("version", "help"):
            continue
        for opt in [*p.opts, *p.secondary_opts]:
            expected[opt] = p.name
    assert expected == {**fast.GLOBAL_VALUE, **fast.GLOBAL_FLAG}
    for opt in fast.GLOBAL_FLAG:
        assert next(p for p in root.params if opt in p.opts).is_flag


@pytest.fixture
def indexed(ws, note, index):
    note(
        ws,
        "memory/2026-05-18/kickoff.md",
        "# Kickoff\n\nWe picked reciprocal rank fusion.\nSee [[digest/wiki/rrf.md]].\n",
        name="kickoff",
        description="Kickoff.",
    )
    note(
        ws,
        "memory/2026-05-18.md",
        "- [[memory/2026-05-18/kickoff.md]] kickoff\n",
        name="2026-05-18",
        description="1 note(s) today.",
    )
    note(ws, "digest/wiki/rrf.md", "Fusion merges ranked lists.\n", name="rrf", description="RRF.")
    note(ws, "MEMORY.md", "# Memory\n\nThe user likes fusion food.\nSecond line.\n")
    index(ws)
    return ws


def main_like(argv):
    """What memcli.cli.main.main does: the fast path, else the typer app."""
    code = fast.run(argv)
    return app.run(argv) if code is None else code


def run_both(argv, capsys):
    """(code, out, err) from the console entry path and from the typer app alone, for the same argv."""
    results = []
    for runner in (main_like, app.run):
        capsys.readouterr()
        try:
            code = runner(list(argv))
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        if "-v" in argv and code:
            err = err.strip().splitlines()[-1]  # tracebacks differ in frames; the message must not
        results.append((code, out, err))
    return results


CASES = [
    ["search", "fusion"],
    ["search", "fusion", "rank"],
    ["search", "--limit", "1", "fusion"],
    ["search", "fusion", "-n", "2", "--json"],
    ["search", "--min-score=0.5", "fusion", "--no-links"],
    ["search", "--since", "2026-05-18", "--until", "2026-05-18", "kickoff"],
    ["search", "--mode", "keyword", "fusion"],
    ["search", "--no-sync", "--json", "--", "--fusion"],
    ["search", "zebra"],
    ["search", "fusion", "--since", "not-a-date"],
    ["search", "fusion", "--limit", "0"],
    ["get", "MEMORY.md"],
    ["get", "MEMORY.md", "--from", "3", "--lines", "1"],
    ["get", "--json", "memory/2026-05-18/kickoff.md"],
    ["get", "../outside.md"],
    ["get", "mem.yaml"],
]


@pytest.mark.parametrize("case", CASES, ids=[" ".join(c) for c in CASES])
@pytest.mark.parametrize("glob", [["-w"], ["--workspace"], ["-v", "-w"]], ids=["w", "workspace", "verbose"])
def test_fast_path_and_typer_give_identical_output(indexed, capsys, case, glob):
    argv = [*glob, str(indexed), *case]
    assert fast.parse(argv) is not None, "this argv must take the fast path"
    (fc, fo, fe), (tc, to, te) = run_both(argv, capsys)
    assert (fc, fo, fe) == (tc, to, te)
    assert fo or fe


@pytest.mark.parametrize(
    "case",
    [
        ["search", "--mode", "bogus", "fusion"],
        ["search", "--limit", "abc", "fusion"],
        ["search", "--min-score", "high", "fusion"],
        ["get", "MEMORY.md", "--from", "x"],
        ["search", "-n=1", "fusion"],
    ],
    ids=["bad-choice", "bad-int", "bad-float", "bad-get-int", "short-option-with-equals"],
)
def test_bad_values_give_typer_messages(indexed, capsys, case):
    """A bad option value is reported the same way whichever parser sees it first
    (click reads `-n=1` as the value "=1", which is not an integer)."""
    argv = ["-w", str(indexed), *case]
    (fc, fo, fe), (tc, to, te) = run_both(argv, capsys)
    assert (fc, fo, fe) == (tc, to, te)
    assert fc == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "--limit", "abc", "x"],
        ["search", "--help"],
        ["search", "--bogus", "x"],
        ["search"],
        ["search", "x", "--limit"],
        ["get", "MEMORY.md", "--json=yes"],
        ["--version"],
        ["reindex", "extra-argument"],
        ["reindex", "--scope", "vectors"],
        ["init"],
    ],
)
def test_unusual_argv_is_left_to_typer(argv):
    assert fast.parse(["-w", "/tmp", *argv]) is None
