"""A date-shaped name that names no day (2026-11-31, 2026-02-30, 2026-13-01) is no date.

Everywhere a date comes from a path (search's --since/--until, dream's window, resource
notes and day pages, the shared index: tests/team/test_team_bad_files.py), such a note
is undated and the job that meets it names it; nothing fails, nothing else is held up.
"""

from __future__ import annotations

import json

import pytest
from test_dream import every_statement

BAD = {
    "memory/2026-11-31/x.md": "2026-11-31",
    "memory/2026-02-30.md": "2026-02-30",
    "memory/2026-13-01/y.md": "2026-13-01",
}


@pytest.fixture
def vault(ws, note):
    note(ws, "memory/2026-05-18/good.md", "# Good\n\nThe quokka census is on Monday.\n")
    for rel in BAD:
        note(ws, rel, f"# {rel}\n\nThe quokka census moved again.\n")
    return ws


def test_reindex_names_each_and_indexes_them_undated(vault, run_mem):
    code, out, err = run_mem("-w", vault, "reindex", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert sorted(rep["added"]) == sorted([*BAD, "memory/2026-05-18/good.md"])
    warned = {w["path"]: w["reason"] for w in rep["warnings"]}
    for rel, day in BAD.items():
        assert warned[rel] == f"{day} is not a calendar date: treated as undated (rename it to fix)"
        assert f"mem: warning: {rel}: {day} is not a calendar date" in err
    code, out, err = run_mem("-w", vault, "reindex")  # said when indexed, not on every run
    assert code == 0 and err == "", err


def test_search_finds_them_but_no_date_filter_does(vault, run_mem):
    assert run_mem("-w", vault, "reindex")[0] == 0
    code, out, err = run_mem("-w", vault, "search", "quokka", "census", "--json")
    assert code == 0, err
    assert {h["path"] for h in json.loads(out)["results"]} == {*BAD, "memory/2026-05-18/good.md"}
    for since, until in (("2026-01-01", "2026-12-31"), ("2026-11-01", "2026-12-31"), ("2026-02-01", "2026-03-31")):
        code, out, err = run_mem("-w", vault, "search", "quokka", "--since", since, "--until", until, "--json")
        assert code == 0, err
        found = {h["path"] for h in json.loads(out)["results"]}
        assert not found & BAD.keys(), (since, found)
    code, out, _ = run_mem("-w", vault, "search", "quokka", "--since", "2026-05-18", "--until", "2026-05-18", "--json")
    assert [h["path"] for h in json.loads(out)["results"]] == ["memory/2026-05-18/good.md"]


def test_dream_names_the_days_it_can_never_reach_and_dreams_the_rest(ws, note, run_mem):
    every_statement(ws)
    note(ws, "memory/2026-11-30/real.md", "# Real\n\n## Facts\n- User: I prefer oat milk in my coffee.\n")
    note(ws, "memory/2026-11-31/typo.md", "# Typo\n\n## Facts\n- User: My bike is a green Brompton.\n")
    note(ws, "memory/2026-13-01/typo.md", "# Typo\n\n## Facts\n- User: My cat is called Miso.\n")
    note(ws, "memory/2026-05-31.md", "# A real day page, outside the window\n")
    code, out, err = run_mem("-w", ws, "dream", "--date", "2026-12-01", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["status"] == "completed_with_warnings"
    assert "skipped memory/2026-11-31/: 2026-11-31 is not a calendar date: treated as undated" in " ".join(
        rep["warnings"]
    )
    assert any(w.startswith("skipped memory/2026-13-01/: 2026-13-01 is not a calendar date") for w in rep["warnings"])
    assert "mem: warning: skipped memory/2026-11-31/" in err
    digest = " ".join(p.read_text(encoding="utf-8") for p in (ws / "digest").rglob("*.md"))
    assert "oat milk" in digest and "Brompton" not in digest and "Miso" not in digest
    code, out, err = run_mem("-w", ws, "dream", "--date", "2026-06-02", "--json")  # months away: not named
    assert code == 0 and "2026-11-31" not in out + err


def test_resource_in_a_day_that_is_no_day_is_dated_otherwise_and_named(ws, run_mem):
    (ws / "resource" / "2026-02-30").mkdir(parents=True)
    (ws / "resource" / "2026-02-30" / "tides.txt").write_text("High tide at 06:12.\n", encoding="utf-8")
    (ws / "resource" / "2026-03-01").mkdir()
    (ws / "resource" / "2026-03-01" / "moon.txt").write_text("Full moon tonight.\n", encoding="utf-8")
    code, out, err = run_mem("-w", ws, "resource", "scan", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert (
        "resource/2026-02-30/tides.txt: 2026-02-30 is not a calendar date: treated as undated "
        "(rename it to fix)" in rep["warnings"]
    )
    notes = {n["resource"]: n["note"] for n in rep["notes"]}
    assert notes["resource/2026-03-01/moon.txt"] == "memory/2026-03-01/moon.md"
    day = notes["resource/2026-02-30/tides.txt"].split("/")[1]
    assert day != "2026-02-30" and (ws / "memory" / f"{day}.md").is_file()  # dated today, with its day page
    assert not (ws / "memory" / "2026-02-30").exists() and not (ws / "memory" / "2026-02-30.md").exists()
    code, out, err = run_mem("-w", ws, "resource", "scan")
    assert code == 0 and "2026-02-30" not in err, err  # named when read, not on every scan
