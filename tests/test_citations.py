"""`mem search --citations` and `--max-chars N`: the agent-sized result format."""

from __future__ import annotations

import json

import pytest

KICKOFF = "memory/2026-05-18/project-kickoff.md"
LONG = "memory/2026-05-19/long-note.md"
CJK = "memory/2026-05-20/bushu.md"


@pytest.fixture
def golden(ws, note, index):
    note(
        ws,
        KICKOFF,
        """\
        # Kickoff

        We picked reciprocal rank fusion for hybrid search.
        See [[digest/wiki/rrf.md]] for the details.
        """,
        name="project-kickoff",
        description="Kickoff meeting of the search project.",
    )
    note(
        ws,
        "digest/wiki/rrf.md",
        "Fusion merges ranked lists from keyword and vector search.\n",
        name="rrf",
        description="Reciprocal rank fusion combines ranked lists.",
    )
    words = " ".join(f"word{i}" for i in range(120))
    note(ws, LONG, f"# Long note\n\nZebrafish appear here. {words}\n", name="long-note", description="Long.")
    note(
        ws,
        CJK,
        "# 部署\n\n" + "部署流程先在预发环境验证然后灰度发布最后全量上线" * 4 + "\n",
        name="bushu",
        description="部署流程。",
    )
    index(ws)
    return ws


def test_citation_line_follows_each_snippet(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "reciprocal fusion", "--citations", "--limit", "1")
    assert (code, err) == (0, "")
    assert out == (
        "========== memory/2026-05-18/project-kickoff.md:5-8 [score=3.0343] ==========\n"
        "# Kickoff\n"
        "\n"
        "We picked reciprocal rank fusion for hybrid search.\n"
        "See [[digest/wiki/rrf.md]] for the details.\n"
        "Source: memory/2026-05-18/project-kickoff.md#L5-L8\n"
        "  outlinks (1):\n"
        '    → digest/wiki/rrf.md  name="rrf"  description="Reciprocal rank fusion combines ranked lists."\n'
    )


def test_every_result_gets_a_source_that_names_its_header_range(golden, mem):
    code, out, _ = mem("-w", golden, "search", "fusion search", "--citations", "--no-links")
    assert code == 0
    headers = [line for line in out.splitlines() if line.startswith("==========")]
    sources = [line for line in out.splitlines() if line.startswith("Source: ")]
    assert len(headers) == len(sources) >= 2
    for header, source in zip(headers, sources):
        path, lines = header.split()[1].rsplit(":", 1)
        start, end = lines.split("-")
        assert source == f"Source: {path}#L{start}-L{end}"


def test_without_the_new_flags_output_is_unchanged(golden, mem):
    plain = mem("-w", golden, "search", "fusion search")
    assert "Source:" not in plain[1] and "…" not in plain[1]
    # a cap longer than every snippet changes nothing; citations only add their lines
    assert mem("-w", golden, "search", "fusion search", "--max-chars", "100000") == plain
    cited = mem("-w", golden, "search", "fusion search", "--citations")
    assert "\n".join(x for x in cited[1].split("\n") if not x.startswith("Source: ")) == plain[1]
    assert mem("-w", golden, "search", "fusion search", "--json")[1] == plain_json(golden, mem)


def plain_json(ws, mem):
    code, out, _ = mem("-w", ws, "search", "fusion search", "--json")
    assert code == 0
    data = json.loads(out)
    assert all(
        set(r)
        == {
            "path",
            "start_line",
            "end_line",
            "text",
            "score",
            "vector",
            "keyword",
            "links",
            "superseded_by",
            "via_source",
        }
        for r in data["results"]
    )
    return out


def test_max_chars_caps_each_snippet_at_a_word(golden, mem):
    code, out, _ = mem("-w", golden, "search", "zebrafish", "--max-chars", "80", "--no-links", "--citations")
    assert code == 0
    header, rest = out.rstrip("\n").split("\n", 1)
    snippet, source = rest.rsplit("\n", 1)
    assert header.startswith(f"========== {LONG}:")
    assert len(snippet) <= 80 and snippet.endswith("…")
    assert snippet.startswith("# Long note\n\nZebrafish appear here. word0 word1")
    assert snippet[:-1].split()[-1].startswith("word") and f"{snippet[:-1]} " in f"{full_text(golden, mem)} "
    assert source.startswith(f"Source: {LONG}#L")


def full_text(ws, mem):
    return json.loads(mem("-w", ws, "search", "zebrafish", "--json")[1])["results"][0]["text"]


def test_text_without_spaces_is_cut_exactly(golden, mem):
    code, out, _ = mem("-w", golden, "search", "部署流程", "--max-chars", "20", "--no-links", "--limit", "1")
    assert code == 0
    snippet = out.split("\n", 1)[1].rstrip("\n")
    assert len(snippet) == 20 and snippet.endswith("…")
    assert snippet == full_text_of(golden, mem, "部署流程")[:19] + "…"


def full_text_of(ws, mem, query):
    return json.loads(mem("-w", ws, "search", query, "--json", "--limit", "1")[1])["results"][0]["text"]


def test_json_gets_citation_and_truncated_fields(golden, mem):
    code, out, _ = mem("-w", golden, "search", "zebrafish fusion", "--json", "--citations", "--max-chars", "60")
    assert code == 0
    results = json.loads(out)["results"]
    assert results
    for r in results:
        assert r["citation"] == f"{r['path']}#L{r['start_line']}-L{r['end_line']}"
        assert len(r["text"]) <= 60
        assert r["truncated"] is r["text"].endswith("…")
    assert any(r["truncated"] for r in results)


@pytest.mark.parametrize("value", ["0", "-3"])
def test_max_chars_below_one_is_bad_input(golden, run_mem, clean_failure, value):
    line = clean_failure(run_mem("-w", golden, "search", "fusion", f"--max-chars={value}"), 2)
    assert "--max-chars must be at least 1" in line


@pytest.mark.parametrize(
    "args",
    [["--citations"], ["--max-chars", "30"], ["--citations", "--max-chars=30", "--json"], ["--max-chars", "many"]],
)
def test_fast_path_and_typer_agree_on_the_new_flags(golden, capsys, args):
    from memcli.cli import app, fast

    argv = ["-w", str(golden), "search", "fusion", *args]
    results = []

    def main_like(a):  # the console entry: the fast path, else typer
        code = fast.run(a)
        return app.run(a) if code is None else code

    for runner in (main_like, app.run):
        capsys.readouterr()
        try:
            code = runner(list(argv))
        except SystemExit as exc:
            code = exc.code
        results.append((code, *capsys.readouterr()))
    assert results[0] == results[1]
    assert (fast.parse(argv) is None) == ("many" in args)  # a bad value is left to typer's message
