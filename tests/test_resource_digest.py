"""The pieces of resource interpretation: offline digests, LLM reply validation, note naming."""

from __future__ import annotations

import pytest

from memcli.extraction.ask import Invalid
from memcli.extraction.resource import digest as rd
from memcli.extraction.resource.llm import invented_figures, parse_reply
from memcli.jobs.resource import notefiles as resource_notes


def body_of(rel: str, text: str) -> str:
    return rd.render(rel, rd.digest(rel, text), len(text.encode()))[1]


def test_markdown_outline_skips_fenced_code_and_reads_setext_and_frontmatter():
    text = (
        "---\ntitle: Runbook\ndescription: How we deploy.\n---\nIntro line one\nstill intro.\n\n"
        "Setup\n=====\n\n```bash\n# not a heading\n```\n\n## Deploy ##\n\nRun make deploy.\n"
    )
    body = body_of("resource/r.md", text)
    assert body.startswith("# Runbook\n\nSource: [[resource/r.md]] (Markdown, ")
    assert "## Description\n> How we deploy.\n" in body
    assert "## Outline\n- Setup\n  - Deploy\n" in body
    assert "not a heading" not in body
    assert "## Opening\n> Intro line one still intro.\n>\n> Run make deploy.\n" in body


def test_long_paragraphs_are_cut_and_counted():
    paras = "\n\n".join(f"Paragraph {i} " + "word " * 200 for i in range(5))
    body = body_of("resource/long.txt", paras)
    quoted = [line for line in body.splitlines() if line.startswith("> ")]
    assert len(quoted) == 3 and all(len(q) <= rd.MAX_PARAGRAPH + 4 and q.endswith(" …") for q in quoted)
    assert "(2 more paragraph(s) in the file)" in body


def test_csv_semicolons_ragged_rows_and_wide_tables():
    header = ";".join(f"c{i}" for i in range(10))
    text = header + "\n" + ";".join(str(i) for i in range(10)) + "\n1;2\n"
    body = body_of("resource/w.csv", text)
    assert "10 columns, semicolon-separated, 2 data rows:" in body
    assert "1 row(s) have a different number of fields than the header." in body
    assert "| c0 | c1 | c2 | c3 | c4 | c5 | c6 | c7 | …" in body


def test_csv_cells_cannot_break_the_table():
    body = body_of("resource/p.csv", 'name,note\n"a|b","line1\nline2"\n')
    assert "| a\\|b | line1 line2 |" in body


@pytest.mark.parametrize(
    ("rel", "text", "problem"),
    [
        ("resource/b.json", '{"a": ', "not valid JSON (Expecting value at line 1 column 7)"),
        ("resource/b.yaml", "a: [1\n", "not valid YAML"),
        ("resource/bomb.yaml", "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", "YAML aliases are not expanded"),
        ("resource/b.jsonl", "nope\nstill nope\n", "no valid JSON line (line 1 is not JSON)"),
    ],
)
def test_unparsable_data_is_read_as_text_and_says_why(rel, text, problem):
    body = body_of(rel, text)
    assert f"\nRead as text: {problem}" in body
    assert "## Opening" in body


def test_yaml_documents_and_dates():
    body = body_of("resource/multi.yaml", "when: 2026-07-14\n---\n- a\n- b\n")
    assert "2 documents" in body
    assert "- document 1: object, 1 key(s)\n  - `when`: date 2026-07-14\n- document 2: array, 2 item(s)" in body


def test_json_structure_is_bounded():
    import json

    doc = {f"k{i}": {"deep": {"deeper": {"deepest": {"bottom": 1}}}} for i in range(200)}
    body = body_of("resource/big.json", json.dumps(doc))
    assert "  - … 170 more key(s)" in body
    assert "bottom" not in body
    assert body.count("\n") < 120


def test_html_title_outline_and_text_without_scripts():
    text = (
        "<title> Notes </title><style>.x{}</style><h2>Agenda</h2><p>Discuss the budget for the Q3 "
        "launch.</p><script>steal()</script><p>Broken <b>markup</p></div>"
    )
    body = body_of("resource/n.html", text)
    assert body.startswith("# Notes\n")
    assert "- Agenda" in body and "> Discuss the budget for the Q3 launch." in body
    assert "steal" not in body and ".x{}" not in body


def test_description_names_the_file_and_the_facts():
    desc, _ = rd.render("resource/s.csv", rd.digest("resource/s.csv", "a,b\n1,2\n"), 8)
    assert desc == "CSV resource s.csv: 1 row(s) × 2 column(s)."


@pytest.mark.parametrize(
    ("body", "source", "invented"),
    [
        ("Revenue 4,213.50 in 2026", "revenue: 4213.5 (2026-07-01)", []),
        ("Total 6193.50", "4213.50 and 1980", ["6193.50"]),
        ("Ids 12345 and 99", "id 12345", []),
        ("Sum 1,000,000", "one million", ["1,000,000"]),
        ("v1.2.3 build 2024", "v1.2.3, built in 2024", []),
    ],
)
def test_invented_figures(body, source, invented):
    assert invented_figures(body, source) == invented


@pytest.mark.parametrize(
    ("reply", "finish", "error"),
    [
        ('{"description": "d", "body": "# T\\n"}', "length", "cut off"),
        ("not json", "stop", "not valid JSON"),
        ('{"description": "d"}', "stop", '"body" must be a string'),
        ('{"description": "d", "body": "  "}', "stop", '"body" is empty'),
        ('{"description": "d", "body": "---\\nname: x\\n---\\n# T"}', "stop", "frontmatter"),
        ('{"description": "d", "body": "Summary only"}', "stop", 'must start with a "# " title'),
        ('{"description": "d", "body": "# T\\n<!-- notes:auto -->"}', "stop", "reserved text"),
        ('{"description": "", "body": "# T\\n"}', "stop", '"description" is empty'),
        ('{"description": "d", "body": "# T\\nWe sold 99999 units."}', "stop", "not in the file: 99999"),
    ],
)
def test_reply_validation_names_the_problem(reply, finish, error):
    with pytest.raises(Invalid, match=None) as info:
        parse_reply(reply, finish, "the file text with 1234")
    assert error in str(info.value)


def test_a_valid_reply_is_accepted_in_a_code_fence():
    desc, body = parse_reply('```json\n{"description": "A  file.", "body": "# T\\n\\nHas 1234."}\n```', "stop", "1234")
    assert (desc, body) == ("A file.", "# T\n\nHas 1234.\n")


@pytest.mark.parametrize(
    ("rel", "stem", "slug"),
    [
        ("resource/Q3 Report.final.md", "Q3 Report.final", "q3-report-final"),
        ("resource/a[1]#b|c.txt", "a-1-b-c", "a-1-b-c"),
        ("resource/..txt", "resource", "resource"),
        ("resource/Überblick.txt", "Überblick", "überblick"),
    ],
)
def test_note_stem_and_name(rel, stem, slug):
    assert resource_notes.stem(rel) == stem
    assert resource_notes.slug(rel) == slug


def test_source_link_is_added_after_the_title_only_when_missing():
    assert resource_notes.with_source("# T\n\nText\n", "resource/a.md") == "# T\n\nSource: [[resource/a.md]]\n\nText\n"
    assert resource_notes.with_source("No title\n", "resource/a.md") == "Source: [[resource/a.md]]\nNo title\n"
    kept = "# T\nFrom [[resource/a.md]].\n"
    assert resource_notes.with_source(kept, "resource/a.md") == kept
