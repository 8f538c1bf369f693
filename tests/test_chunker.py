"""Chunking (memcli.index.notes.chunker) and reading one note (memcli.index.notes.reader.read_note)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import textwrap
from itertools import pairwise

import pytest

from memcli.index.notes.chunker import chunk_lines, estimate_tokens
from memcli.index.notes.reader import read_note

HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+\S")


def ancestors(lines: list[str], body_start: int, idx: int) -> list[str]:
    """Headings enclosing line index `idx` (outside fenced code), outermost first."""
    stack: list[tuple[int, int]] = []
    fence = None
    for i in range(body_start, idx + 1):
        s = lines[i].lstrip()
        if s.startswith(("```", "~~~")):
            if fence is None:
                fence = s[:3]
            elif s.startswith(fence):
                fence = None
            continue
        if fence:
            continue
        m = HEADING.match(lines[i])
        if m:
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            if i < idx:
                stack.append((level, i))
    return [lines[i] for _, i in stack]


def body_of(chunk) -> list[str]:
    return chunk.text.split("\n")[chunk.crumb_lines :]


def crumb_of(chunk) -> list[str]:
    return chunk.text.split("\n")[: chunk.crumb_lines]


def check_chunks(
    lines: list[str], body_start: int, chunks, target: int, overlap: int, *, exact_crumbs: bool = True
) -> None:
    """Invariants every chunking must satisfy (`exact_crumbs`: see check_crumb)."""
    assert chunks, "non-empty body gives at least one chunk"
    covered: set[int] = set()
    prev_start = 0
    for c in chunks:
        assert body_start + 1 <= c.start_line <= c.end_line <= len(lines), c
        assert c.start_line >= prev_start, "chunks come in file order"
        prev_start = c.start_line
        # the text after the breadcrumb is exactly the file lines start..end
        assert body_of(c) == lines[c.start_line - 1 : c.end_line], c
        assert lines[c.start_line - 1].strip() and lines[c.end_line - 1].strip(), "no blank edges"
        check_crumb(lines, body_start, c, exact_crumbs)
        body_tokens = sum(estimate_tokens(x) for x in body_of(c))
        longest = max(estimate_tokens(x) for x in body_of(c))
        if longest <= target:
            # headings (and blank lines) opening a chunk stay with its first block, so
            # they may push it over the budget by their own size
            body = body_of(c)
            lead = 0
            while lead < len(body) and (HEADING.match(body[lead]) or not body[lead].strip()):
                lead += 1
            allowance = sum(estimate_tokens(x) for x in body[:lead])
            assert body_tokens <= target + overlap + allowance, (body_tokens, c)
        covered.update(range(c.start_line, c.end_line + 1))
    # no content is lost: every non-blank body line is in some chunk
    missing = [i + 1 for i in range(body_start, len(lines)) if lines[i].strip() and i + 1 not in covered]
    assert not missing, missing


def check_crumb(lines: list[str], body_start: int, c, exact: bool) -> None:
    """The breadcrumb is the chain of headings enclosing the chunk's first line.

    Without `exact`, only that it is a chain: heading lines above the chunk, in file
    order, each deeper than the one before.
    """
    crumb = crumb_of(c)
    if exact:
        assert crumb == ancestors(lines, body_start, c.start_line - 1), c
        return
    pos, level = body_start, 0
    for h in crumb:
        m = HEADING.match(h)
        assert m, (h, c)
        assert len(m.group(1)) > level, c
        level = len(m.group(1))
        assert h in lines[pos : c.start_line - 1], (h, c)
        pos = lines.index(h, pos) + 1


def words(rng: random.Random, n: int) -> str:
    vocab = (
        "memory note agent search index chunk vector keyword fusion digest dream session "
        "resource workspace token budget overlap heading table fence"
    ).split()
    return " ".join(rng.choice(vocab) for _ in range(n))


def generated_document(seed: int) -> list[str]:
    rng = random.Random(seed)
    lines = ["# Project log", ""]
    for s in range(rng.randint(2, 4)):
        lines += [f"## Section {s}", ""]
        for _ in range(rng.randint(1, 6)):
            kind = rng.random()
            if kind < 0.15:
                lines += (
                    ["```python"] + [f"x{i} = {i}  # {words(rng, 3)}" for i in range(rng.randint(2, 30))] + ["```", ""]
                )
            elif kind < 0.25:
                lines += (
                    ["| key | value |", "|---|---|"]
                    + [f"| k{i} | {words(rng, 4)} |" for i in range(rng.randint(1, 20))]
                    + [""]
                )
            elif kind < 0.35:
                lines += [f"### Detail {s}", ""]
            else:
                lines += [words(rng, rng.randint(5, 120)) for _ in range(rng.randint(1, 4))] + [""]
    return lines


# ---------------------------------------------------------------- line numbers


def test_line_numbers_are_file_lines_with_frontmatter_counted():
    text = "---\nname: kickoff\ndescription: first meeting\n---\n# Kickoff\n\nWe met.\n"
    note = read_note("memory/2026-05-18/kickoff.md", text.encode(), 400, 80)
    assert note.front_matter == {"name": "kickoff", "description": "first meeting"}
    assert note.problem is None and not note.skipped
    assert [(c.start_line, c.end_line) for c in note.chunks] == [(5, 7)]
    assert note.chunks[0].text == "# Kickoff\n\nWe met."
    assert note.chunks[0].crumb_lines == 0


def test_frontmatter_is_never_inside_a_chunk():
    text = "---\nname: x\n---\n\n\nbody line\n"
    note = read_note("a.md", text.encode(), 400, 80)
    assert [(c.start_line, c.end_line, c.text) for c in note.chunks] == [(6, 6, "body line")]


def test_unclosed_frontmatter_fence_is_body():
    text = "---\nname: x\nbody line\n"
    note = read_note("a.md", text.encode(), 400, 80)
    assert note.front_matter == {}
    assert note.chunks[0].start_line == 1
    assert note.chunks[0].text == text.rstrip("\n")


@pytest.mark.parametrize("text", ["", "\n\n", "---\nname: x\n---\n", "---\nname: x\n---\n\n  \n"])
def test_empty_body_gives_no_chunks(text):
    assert read_note("a.md", text.encode(), 400, 80).chunks == []


def test_small_note_is_one_chunk_covering_all_lines():
    lines = ["# A", "", "one", "", "## B", "", "two", "", "### C", "three"]
    chunks = chunk_lines(lines, 0, 400, 80)
    assert [(c.start_line, c.end_line, c.crumb_lines) for c in chunks] == [(1, 10, 0)]


# ---------------------------------------------------------------- breadcrumbs


def test_breadcrumbs_are_ancestor_headings():
    rng = random.Random(7)
    lines = ["# Top", "", words(rng, 10), "", "## Alpha", ""]
    lines += [words(rng, 40) for _ in range(6)]
    lines += ["", "### Alpha deep", ""] + [words(rng, 40) for _ in range(6)]
    lines += ["", "## Beta", "", words(rng, 5), ""] + [words(rng, 40) for _ in range(6)]
    chunks = chunk_lines(lines, 0, 60, 0)
    assert len(chunks) > 3
    check_chunks(lines, 0, chunks, 60, 0)
    deep = [
        c for c in chunks if c.start_line > lines.index("### Alpha deep") + 1 and c.end_line < lines.index("## Beta")
    ]
    assert deep, chunks
    for c in deep:
        assert crumb_of(c) == ["# Top", "## Alpha", "### Alpha deep"]
    beta = [c for c in chunks if c.start_line > lines.index("## Beta") + 1]
    assert beta and all(crumb_of(c) == ["# Top", "## Beta"] for c in beta)


def test_heading_like_lines_inside_code_are_not_headings():
    lines = ["# Real", "", "```bash", "# just a comment", "echo hi", "```", ""]
    lines += [f"line {i} of prose about the script" for i in range(40)]
    chunks = chunk_lines(lines, 0, 40, 0)
    check_chunks(lines, 0, chunks, 40, 0)
    for c in chunks:
        assert "# just a comment" not in crumb_of(c)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("target, overlap", [(400, 80), (120, 30), (60, 0)])
def test_generated_documents_keep_all_invariants(seed, target, overlap):
    # exact breadcrumbs are checked by the focused tests below, which fail with a clear example
    lines = generated_document(seed)
    check_chunks(lines, 0, chunk_lines(lines, 0, target, overlap), target, overlap, exact_crumbs=False)


def line_of(tokens: int, word: str) -> str:
    """An ASCII line that estimate_tokens counts as `tokens`."""
    text = " ".join([word] * 400)[: (tokens - 1) * 4].rstrip()
    assert estimate_tokens(text) == tokens
    return text


def test_no_chunk_is_only_a_heading():
    """A heading belongs with its content; a chunk holding nothing but headings is noise."""
    rng = random.Random(7)
    lines = ["# Top", "", words(rng, 10), "", "## Alpha", ""]
    lines += [words(rng, 40) for _ in range(6)]
    lines += ["", "### Alpha deep", ""] + [words(rng, 40) for _ in range(6)]
    lines += ["", "## Beta", ""] + [words(rng, 40) for _ in range(6)]
    for c in chunk_lines(lines, 0, 60, 0):
        assert not all(HEADING.match(x) or not x.strip() for x in body_of(c)), c


def test_overlap_does_not_misattribute_a_previous_section():
    """The overlap tail carried into the next chunk comes from section Alpha; the chunk's
    breadcrumb must then name Alpha, not only the parents of the following section Beta."""
    lines = [
        "# Top",
        "",
        "## Alpha",
        "",
        line_of(60, "apple"),
        "",
        line_of(20, "banana"),
        "",
        "## Beta",
        "",
        line_of(90, "cherry"),
    ]
    chunks = chunk_lines(lines, 0, 100, 40)
    assert len(chunks) == 2
    check_chunks(lines, 0, chunks, 100, 40)


# ---------------------------------------------------------------- atomic blocks


def test_fenced_code_that_fits_is_not_split():
    rng = random.Random(3)
    code = ["```python"] + [f"value_{i} = compute({i})  # step {i}" for i in range(25)] + ["```"]
    lines = (
        ["# Notes", ""] + [words(rng, 40) for _ in range(4)] + [""] + code + [""] + [words(rng, 40) for _ in range(4)]
    )
    fence_start = lines.index("```python") + 1
    fence_end = fence_start + len(code) - 1
    fence_tokens = sum(estimate_tokens(x) for x in code)
    target = fence_tokens + 20
    chunks = chunk_lines(lines, 0, target, 10)
    check_chunks(lines, 0, chunks, target, 10)
    holders = [c for c in chunks if c.start_line <= fence_end and c.end_line >= fence_start]
    assert any(c.start_line <= fence_start and c.end_line >= fence_end for c in holders), holders
    # no chunk starts or ends inside the fence
    for c in chunks:
        assert not fence_start < c.start_line <= fence_end, c
        assert not fence_start <= c.end_line < fence_end, c


def test_table_that_fits_is_not_split():
    rng = random.Random(4)
    table = ["| id | owner | status |", "|---|---|---|"] + [f"| {i} | person{i} | {words(rng, 3)} |" for i in range(20)]
    lines = (
        ["# Tracker", ""]
        + [words(rng, 50) for _ in range(3)]
        + [""]
        + table
        + [""]
        + [words(rng, 50) for _ in range(3)]
    )
    t_start = lines.index(table[0]) + 1
    t_end = t_start + len(table) - 1
    target = sum(estimate_tokens(x) for x in table) + 10
    chunks = chunk_lines(lines, 0, target, 10)
    check_chunks(lines, 0, chunks, target, 10)
    assert any(c.start_line <= t_start and c.end_line >= t_end for c in chunks), chunks
    for c in chunks:
        assert not t_start < c.start_line <= t_end, c


def test_fence_larger_than_a_chunk_is_cut_between_lines():
    code = ["```"] + [f"print('line {i} of a very long generated script body')" for i in range(200)] + ["```"]
    lines = ["# Script", ""] + code
    chunks = chunk_lines(lines, 0, 100, 20)
    assert len(chunks) > 3
    check_chunks(lines, 0, chunks, 100, 20)


# ---------------------------------------------------------------- long sections, budget


def test_long_paragraph_is_split_with_overlap():
    rng = random.Random(5)
    lines = ["# Long", ""] + [words(rng, 5) for _ in range(300)]  # lines of ~10 tokens
    chunks = chunk_lines(lines, 0, 100, 30)
    assert len(chunks) > 5
    check_chunks(lines, 0, chunks, 100, 30)
    for a, b in pairwise(chunks):
        assert b.start_line <= a.end_line, "consecutive pieces of one section overlap"
        shared = lines[b.start_line - 1 : a.end_line]
        assert sum(estimate_tokens(x) for x in shared) <= 30 + max(estimate_tokens(x) for x in shared)
        assert b.end_line > a.end_line, "every piece makes progress"


def test_long_section_of_paragraphs_is_split_with_overlap():
    rng = random.Random(6)
    lines = ["# Section", ""]
    for _ in range(30):
        lines += [words(rng, 12), ""]  # paragraphs of ~20 tokens
    chunks = chunk_lines(lines, 0, 120, 40)
    assert len(chunks) > 3
    check_chunks(lines, 0, chunks, 120, 40)
    overlapping = sum(1 for a, b in pairwise(chunks) if b.start_line <= a.end_line)
    assert overlapping >= len(chunks) - 2


def test_no_overlap_when_overlap_is_zero():
    rng = random.Random(8)
    lines = [words(rng, 20) for _ in range(100)]
    chunks = chunk_lines(lines, 0, 80, 0)
    check_chunks(lines, 0, chunks, 80, 0)
    for a, b in pairwise(chunks):
        assert b.start_line == a.end_line + 1


def test_default_budget_is_about_400_tokens():
    rng = random.Random(9)
    lines = ["# Daily", ""] + [words(rng, 15) for _ in range(600)]
    note = read_note("memory/2026-05-18/log.md", ("\n".join(lines) + "\n").encode(), 400, 80)
    assert len(note.chunks) > 5
    sizes = [sum(estimate_tokens(x) for x in body_of(c)) for c in note.chunks]
    assert max(sizes) <= 480
    assert sum(sizes[:-1]) / len(sizes[:-1]) >= 250, sizes  # chunks are filled, not tiny


def test_estimate_counts_cjk_wider():
    assert estimate_tokens("a" * 400) == pytest.approx(100, abs=2)
    zh = "我们决定使用向量数据库" * 10  # 110 Han characters
    assert estimate_tokens(zh) >= 100
    ko = "메모리를 파일로 저장한다 " * 10
    assert estimate_tokens(ko) >= 60


def test_chinese_text_respects_the_budget():
    lines = ["# 部署", ""] + ["我们决定使用向量数据库来存储长期记忆，部署流程需要两步。" * 2 for _ in range(40)]
    chunks = chunk_lines(lines, 0, 100, 20)
    assert len(chunks) >= 10
    check_chunks(lines, 0, chunks, 100, 20)


# ---------------------------------------------------------------- encodings


def sample_note() -> str:
    return textwrap.dedent("""\
        ---
        name: sample
        description: a sample note
        ---
        # Title

        First paragraph.

        ## Part

        Second paragraph with [[digest/wiki/rrf.md]].
        """)


def test_crlf_gives_the_same_chunks_as_lf():
    lf = read_note("a.md", sample_note().encode(), 400, 80)
    crlf = read_note("a.md", sample_note().replace("\n", "\r\n").encode(), 400, 80)
    assert [(c.start_line, c.end_line, c.text, c.crumb_lines) for c in crlf.chunks] == [
        (c.start_line, c.end_line, c.text, c.crumb_lines) for c in lf.chunks
    ]
    assert crlf.front_matter == lf.front_matter == {"name": "sample", "description": "a sample note"}
    assert crlf.links == lf.links == [["digest/wiki/rrf.md", ""]]
    assert all("\r" not in c.text for c in crlf.chunks)


def test_crlf_line_numbers_with_small_budget():
    text = sample_note() * 1
    lf = read_note("a.md", text.encode(), 16, 0)
    crlf = read_note("a.md", text.replace("\n", "\r\n").encode(), 16, 0)
    assert len(lf.chunks) > 1
    assert [(c.start_line, c.end_line) for c in crlf.chunks] == [(c.start_line, c.end_line) for c in lf.chunks]


def test_bom_is_ignored_and_frontmatter_still_read():
    plain = read_note("a.md", sample_note().encode(), 400, 80)
    bom = read_note("a.md", b"\xef\xbb\xbf" + sample_note().encode(), 400, 80)
    assert bom.front_matter == {"name": "sample", "description": "a sample note"}
    assert [(c.start_line, c.end_line, c.text) for c in bom.chunks] == [
        (c.start_line, c.end_line, c.text) for c in plain.chunks
    ]
    assert not bom.chunks[0].text.startswith("\ufeff")


# ---------------------------------------------------------------- broken input


@pytest.mark.parametrize(
    "front",
    [
        "name: [unclosed\ndescription: x\n",  # invalid YAML
        "- a\n- b\n",  # a list, not a mapping
        "just a string\n",  # a scalar
        "name: !!python/object/apply:os.system ['echo pwned']\n",  # unsafe tag
        "\tname: tab\n",  # tab indentation is invalid YAML
    ],
)
def test_broken_frontmatter_reads_as_empty_with_a_problem(front):
    text = f"---\n{front}---\nbody text here\n"
    note = read_note("a.md", text.encode(), 400, 80)
    assert note.front_matter == {}
    assert isinstance(note.problem, str) and note.problem
    assert not note.skipped
    n_lines = 2 + front.count("\n")
    assert [(c.start_line, c.text) for c in note.chunks] == [(n_lines + 1, "body text here")]


ALIAS_BOMB = """\
import sys, time, json
from memcli.index.notes.reader import read_note
lines = ['---', 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
for i in range(1, 9):
    lines.append(f'a{i}: &a{i} [' + ",".join([f"*a{i-1}"] * 9) + ']')
lines += ['name: bomb', '---', 'body after the bomb']
t = time.time()
note = read_note('a.md', "\\n".join(lines).encode(), 400, 80)
print(json.dumps({"fm": note.front_matter, "problem": note.problem, "seconds": time.time() - t,
                  "chunks": [[c.start_line, c.text] for c in note.chunks]}))
"""


def test_yaml_alias_bomb_is_defused():
    """Nine levels of nine aliases (the billion laughs) must not be expanded anywhere."""
    import json
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    try:
        proc = subprocess.run(
            [sys.executable, "-c", ALIAS_BOMB], capture_output=True, text=True, timeout=3, preexec_fn=limit
        )
    except subprocess.TimeoutExpired:
        pytest.fail("reading a note with a YAML alias bomb did not finish in 3 s")
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout)
    assert res["fm"] == {}, str(res["fm"])[:300]
    assert isinstance(res["problem"], str) and res["problem"]
    assert res["chunks"] == [[13, "body after the bomb"]]
    assert res["seconds"] < 2


def test_binary_file_is_skipped():
    note = read_note("a.md", b"PK\x03\x04\x00\x00binary\x00data", 400, 80)
    assert note.skipped and note.chunks == [] and isinstance(note.problem, str)


def test_oversized_note_is_skipped():
    data = b"# Huge\n" + b"x" * (10 * 1024 * 1024)
    note = read_note("a.md", data, 400, 80)
    assert note.skipped and note.chunks == [] and isinstance(note.problem, str)


def test_invalid_utf8_is_skipped():
    note = read_note("a.md", b"fine text\n" + b"\xff\xfe broken\n", 400, 80)
    assert note.skipped and note.chunks == [] and "UTF-8" in note.problem


def test_frontmatter_values_are_json_safe():
    text = "---\nname: 2026-05-18\ndescription: 3 note(s) today.\ntags: [a, b]\nwhen: 2026-05-18 10:00:00\n---\nbody\n"
    note = read_note("memory/2026-05-18.md", text.encode(), 400, 80)
    assert note.front_matter["name"] == "2026-05-18"
    assert note.front_matter["description"] == "3 note(s) today."
    assert note.front_matter["tags"] == ["a", "b"]
    assert isinstance(note.front_matter["when"], str)
    json.dumps(note.front_matter)


def test_sha_is_of_the_raw_bytes():
    import hashlib

    data = sample_note().encode()
    assert read_note("a.md", data, 400, 80).sha == hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- links


def test_wikilinks_from_body_only_alias_dropped_anchor_kept():
    text = textwrap.dedent("""\
        ---
        source_conversation: '[[mem_session/dialog/s1.jsonl]]'
        ---
        See [[digest/wiki/rrf.md|RRF]] and [[memory/2026-05-18.md#Decisions]].
        Again [[digest/wiki/rrf.md]].
        ```
        [[not/a/link.md]]
        ```
        """)
    note = read_note("memory/2026-05-18/a.md", text.encode(), 400, 80)
    assert note.links == [["digest/wiki/rrf.md", ""], ["memory/2026-05-18.md", "Decisions"]]
