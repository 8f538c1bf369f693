"""`mem get`: read a memory file or a line range of it; refuse anything else."""

from __future__ import annotations

import json
import os

import pytest

NOTE = "memory/2026-05-18/plan.md"
NOTE_TEXT = "---\nname: plan\ndescription: The plan.\n---\n# Plan\n\nStep one.\nStep two.\nStep three.\n"


@pytest.fixture
def vault(ws):
    (ws / "memory" / "2026-05-18").mkdir(parents=True)
    (ws / NOTE).write_text(NOTE_TEXT, encoding="utf-8")
    (ws / "MEMORY.md").write_text("# Memory\n\nTea, not coffee.", encoding="utf-8")  # no final newline
    (ws / "digest" / "wiki").mkdir(parents=True)
    (ws / "digest/wiki/rrf.md").write_text("RRF node.\n", encoding="utf-8")
    (ws / "resource").mkdir()
    (ws / "resource/doc.md").write_text("a resource\n")
    (ws / "memory/2026-05-18/data.txt").write_text("not markdown\n")
    return ws


def test_whole_file(vault, run_mem):
    code, out, err = run_mem("-w", vault, "get", NOTE)
    assert (code, out, err) == (0, NOTE_TEXT, "")


def test_file_without_final_newline(vault, mem):
    code, out, err = mem("-w", vault, "get", "MEMORY.md")
    assert (code, out) == (0, "# Memory\n\nTea, not coffee.\n"), err


def test_line_range(vault, run_mem):
    code, out, err = run_mem("-w", vault, "get", NOTE, "--from", "7", "--lines", "2")
    assert (code, out, err) == (0, "Step one.\nStep two.\n", "")


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--from", "5"], "# Plan\n\nStep one.\nStep two.\nStep three.\n"),
        (["--lines", "1"], "---\n"),
        (["--from", "9", "--lines", "50"], "Step three.\n"),
        (["--from=8", "--lines=1"], "Step two.\n"),
    ],
)
def test_range_variants(vault, mem, args, expected):
    code, out, err = mem("-w", vault, "get", NOTE, *args)
    assert (code, out) == (0, expected), err


def test_json(vault, mem):
    code, out, err = mem("-w", vault, "get", NOTE, "--from", "7", "--lines", "2", "--json")
    assert code == 0, err
    assert json.loads(out) == {
        "path": NOTE,
        "start_line": 7,
        "end_line": 8,
        "total_lines": 9,
        "text": "Step one.\nStep two.",
        "superseded": [],
    }


def test_digest_and_day_page_are_readable(vault, mem):
    (vault / "memory/2026-05-18.md").write_text("day page\n")
    assert mem("-w", vault, "get", "digest/wiki/rrf.md")[:2] == (0, "RRF node.\n")
    assert mem("-w", vault, "get", "memory/2026-05-18.md")[:2] == (0, "day page\n")


def test_search_hit_range_reads_back_with_get(vault, mem):
    code, out, err = mem("-w", vault, "search", "step", "--json")
    hit = json.loads(out)["results"][0]
    assert hit["path"] == NOTE
    n = hit["end_line"] - hit["start_line"] + 1
    code, out, err = mem("-w", vault, "get", NOTE, "--from", str(hit["start_line"]), "--lines", str(n))
    assert out.rstrip("\n") == hit["text"]


def test_daily_dir_from_config_is_readable(ws, mem):
    (ws / "mem.yaml").write_text("daily_dir: notes\n")
    (ws / "notes").mkdir()
    (ws / "notes/a.md").write_text("in notes\n")
    assert mem("-w", ws, "get", "notes/a.md")[:2] == (0, "in notes\n")
    assert mem("-w", ws, "get", "memory/x.md")[0] == 2


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/etc/hostname.md",
        "../outside.md",
        "memory/../../outside.md",
        "memory/2026-05-18/../../MEMORY.md",
        "memory/2026-05-18/data.txt",
        "mem.yaml",
        "resource/doc.md",
        "mem_metadata/x.md",
        "memory/2026-05-18/missing.md",
        "memory\\2026-05-18\\plan.md",
        "",
    ],
)
def test_refused_paths(vault, mem, clean_failure, path):
    clean_failure(mem("-w", vault, "get", path), 2)


def test_refusal_in_a_real_process(vault, run_mem, clean_failure, tmp_path):
    (tmp_path / "outside.md").write_text("outside secret\n")
    line = clean_failure(run_mem("-w", vault, "get", "../outside.md"), 2)
    assert "outside secret" not in line


def test_symlinked_file_is_refused(vault, tmp_path, mem, clean_failure):
    secret = tmp_path / "secret.md"
    secret.write_text("the secret\n")
    os.symlink(secret, vault / "memory" / "link.md")
    os.symlink(vault / NOTE, vault / "memory" / "inner-link.md")  # even one pointing inside
    for p in ("memory/link.md", "memory/inner-link.md"):
        code, out, err = mem("-w", vault, "get", p)
        assert "the secret" not in out
        clean_failure((code, out, err), 2)


def test_symlinked_folder_is_refused(vault, tmp_path, mem, clean_failure):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside text\n")
    os.symlink(outside, vault / "memory" / "linked-dir")
    clean_failure(mem("-w", vault, "get", "memory/linked-dir/x.md"), 2)


def test_symlinked_daily_dir_is_refused(tmp_path, mem, clean_failure):
    ws = tmp_path / "w2"
    ws.mkdir()
    real = tmp_path / "real-memory"
    real.mkdir()
    (real / "a.md").write_text("real\n")
    os.symlink(real, ws / "memory")
    clean_failure(mem("-w", ws, "get", "memory/a.md"), 2)


@pytest.mark.parametrize("args", [["--from", "0"], ["--from", "99"], ["--lines", "0"], ["--lines", "-3"]])
def test_bad_ranges(vault, mem, clean_failure, args):
    clean_failure(mem("-w", vault, "get", NOTE, *args), 2)


def test_invalid_utf8_is_refused(vault, mem, clean_failure):
    (vault / "memory/2026-05-18/bad.md").write_bytes(b"caf\xe9\n")
    clean_failure(mem("-w", vault, "get", "memory/2026-05-18/bad.md"), 2)


def test_two_paths_are_refused(vault, mem, clean_failure):
    clean_failure(mem("-w", vault, "get", NOTE, "MEMORY.md"), 2)
