"""`mem search`: exact output formats, options, merging, freshness and concurrency."""

from __future__ import annotations

import fcntl
import json
import math
import os
import time
from contextlib import contextmanager

import pytest

KICKOFF = "memory/2026-05-18/project-kickoff.md"
DAY = "memory/2026-05-18.md"
RRF = "digest/wiki/rrf.md"


def _write_note(root, rel, body, **front_matter):
    """Same as the `note` fixture (which a module-scoped fixture cannot use)."""
    import textwrap

    import yaml

    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    head = yaml.safe_dump(front_matter, allow_unicode=True, sort_keys=True, width=100000) if front_matter else ""
    path.write_text((f"---\n{head}---\n" if head else "") + textwrap.dedent(body), encoding="utf-8")
    return path


def make_golden(ws, note):
    """A tiny fixed workspace: a daily note, its day page, a digest node, MEMORY.md."""
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
        DAY,
        """\
        <!-- notes:auto -->
        - [[memory/2026-05-18/project-kickoff.md]] name: project-kickoff description: Kickoff meeting of the search project.
        <!-- /notes:auto -->
        """,
        name="2026-05-18",
        description="1 note(s) today.",
    )
    note(
        ws,
        RRF,
        "Fusion merges ranked lists from keyword and vector search.\n",
        name="rrf",
        description="Reciprocal rank fusion combines ranked lists.",
    )
    note(ws, "MEMORY.md", "# Preferences\n\nThe user prefers tea over coffee.\n")
    return ws


@pytest.fixture(scope="module")
def golden_template(tmp_path_factory):
    """The golden workspace, indexed once per module (in-process)."""
    from memcli.index import sync
    from memcli.vault.workspace import open_workspace

    root = tmp_path_factory.mktemp("golden") / "ws"
    make_golden(root, _write_note)
    sync.sync(open_workspace(root, {"MEM_EMBEDDING_BACKEND": "none"}))
    return root


@pytest.fixture
def golden(golden_template, tmp_path):
    """A private copy of the indexed golden workspace (mtimes kept, so the index is current)."""
    import shutil

    root = tmp_path / "golden"
    shutil.copytree(golden_template, root, symlinks=True)
    return root


# "fusion": the day page holds only its generated notes:auto block, which is not
# indexed as text, so N = 3 chunks with 5 (MEMORY.md), 14 (kickoff) and 7 (rrf)
# tokens after stopwords and stemming, avgdl = 26/3; df = 2, so idf = ln(1 + 1.5/2.5) = ln 1.6, and
# score = ln1.6 * 2.5 / (1 + 1.5 * (0.25 + 0.75 * dl / avgdl)).
def bm25_tf1(dl: float, avgdl: float = 26 / 3, df: int = 2, n: int = 3) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * 2.5 / (1 + 1.5 * (0.25 + 0.75 * dl / avgdl))


GOLDEN_FUSION = """\
========== digest/wiki/rrf.md:5-5 [score=0.5145] ==========
Fusion merges ranked lists from keyword and vector search.
  inlinks (1):
    ← memory/2026-05-18/project-kickoff.md  name="project-kickoff"  description="Kickoff meeting of the search project."
========== memory/2026-05-18/project-kickoff.md:5-8 [score=0.3681] ==========
# Kickoff

We picked reciprocal rank fusion for hybrid search.
See [[digest/wiki/rrf.md]] for the details.
  outlinks (1):
    → digest/wiki/rrf.md  name="rrf"  description="Reciprocal rank fusion combines ranked lists."
  inlinks (1):
    ← memory/2026-05-18.md  name="2026-05-18"  description="1 note(s) today."
"""

GOLDEN_FUSION_NO_LINKS = """\
========== digest/wiki/rrf.md:5-5 [score=0.5145] ==========
Fusion merges ranked lists from keyword and vector search.
========== memory/2026-05-18/project-kickoff.md:5-8 [score=0.3681] ==========
# Kickoff

We picked reciprocal rank fusion for hybrid search.
See [[digest/wiki/rrf.md]] for the details.
"""


def test_golden_text_output(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "fusion")
    assert code == 0, err
    assert out == GOLDEN_FUSION
    assert err == ""
    # the golden numbers are the BM25 of docs/architecture.md (Search), not just whatever the code printed once
    assert f"[score={bm25_tf1(7):.4f}]" in GOLDEN_FUSION.splitlines()[0]
    assert f"[score={bm25_tf1(14):.4f}]" in GOLDEN_FUSION.splitlines()[4]


def test_golden_text_output_without_links(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "fusion", "--no-links")
    assert code == 0, err
    assert out == GOLDEN_FUSION_NO_LINKS


def test_query_words_are_joined(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "hybrid", "search", "--json")
    assert code == 0, err
    assert json.loads(out)["query"] == "hybrid search"
    assert "query='hybrid search'" in json.loads(out)["log"]


def test_no_results(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "zebra")
    assert (code, out) == (0, "(no memory results)\n"), err


def test_no_results_json(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "zebra", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["results"] == []
    assert doc["log"] == "[SearchStep] query='zebra' candidates=15 vector_hits=0 keyword_hits=0"


def test_json_output_shape(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "fusion", "--json")
    assert code == 0, err
    doc = json.loads(out)  # exactly one JSON document on stdout
    assert doc["log"] == "[SearchStep] query='fusion' candidates=15 vector_hits=0 keyword_hits=2"
    assert doc["counts"]["keyword"] == 2 and doc["counts"]["vector"] == 0
    assert doc["counts"]["candidates"] == 15
    res = doc["results"]
    assert [(r["path"], r["start_line"], r["end_line"]) for r in res] == [(RRF, 5, 5), (KICKOFF, 5, 8)]
    for r in res:
        assert {"path", "start_line", "end_line", "text", "score", "vector", "keyword", "links"} <= set(r)
        assert r["vector"] is None
        assert r["keyword"] == r["score"]
    assert res[0]["score"] == pytest.approx(bm25_tf1(7), abs=1e-9)
    assert res[1]["score"] == pytest.approx(bm25_tf1(14), abs=1e-9)
    assert res[0]["text"] == "Fusion merges ranked lists from keyword and vector search."
    assert res[1]["text"] == (
        "# Kickoff\n\nWe picked reciprocal rank fusion for hybrid search.\nSee [[digest/wiki/rrf.md]] for the details."
    )
    links = res[1]["links"]
    assert [n["path"] for n in links["outlinks"]] == [RRF]
    assert links["outlinks"][0]["meta"] == {
        "name": "rrf",
        "description": "Reciprocal rank fusion combines ranked lists.",
    }
    assert [n["path"] for n in links["inlinks"]] == [DAY]
    assert [n["path"] for n in res[0]["links"]["inlinks"]] == [KICKOFF]
    assert res[0]["links"]["outlinks"] == []


def test_verbose_logs_the_search_step_on_stderr(golden, run_mem):
    code, out, err = run_mem("-w", golden, "-v", "search", "fusion")
    assert code == 0, err
    assert out == GOLDEN_FUSION
    assert "[SearchStep] query='fusion' candidates=15 vector_hits=0 keyword_hits=2" in err.splitlines()


def test_limit(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "fusion", "--limit", "1", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["path"] for r in doc["results"]] == [RRF]
    assert doc["log"] == "[SearchStep] query='fusion' candidates=3 vector_hits=0 keyword_hits=2"
    code, out2, err = run_mem("-w", golden, "search", "fusion", "-n", "1")
    assert code == 0, err
    assert out2 == GOLDEN_FUSION.split("========== memory/")[0]


def test_limit_from_config(golden, run_mem):
    (golden / "mem.yaml").write_text("search:\n  limit: 1\n", encoding="utf-8")
    code, out, err = run_mem("-w", golden, "search", "fusion", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["results"]) == 1
    assert "candidates=3 " in doc["log"]


def test_candidates_are_capped_at_200(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "fusion", "--json", "--limit", "500")
    assert code == 0, err
    assert "candidates=200 " in json.loads(out)["log"]


@pytest.mark.parametrize("bad", ["0", "-1"])
def test_bad_limit_is_usage_error(golden, run_mem, bad):
    code, out, err = run_mem("-w", golden, "search", "fusion", "--limit", bad)
    assert code == 2 and out == "" and "Traceback" not in err


def test_min_score(golden, run_mem):
    code, out, err = run_mem("-w", golden, "search", "fusion", "--min-score", "0.45", "--json")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == [RRF]
    code, out, err = run_mem("-w", golden, "search", "fusion", "--min-score", "5")
    assert (code, out) == (0, "(no memory results)\n")


def test_since_until_keep_dated_daily_notes_only(golden, note, run_mem):
    note(golden, "memory/2026-05-20/later.md", "More fusion experiments.\n", name="later", description="d")
    note(golden, "MEMORY.md", "# Preferences\n\nThe user likes fusion cuisine.\n")

    def paths(*args):
        code, out, err = run_mem("-w", golden, "search", "fusion", "--json", "--no-links", *args)
        assert code == 0, err
        return sorted(r["path"] for r in json.loads(out)["results"])

    assert paths() == sorted([RRF, KICKOFF, "memory/2026-05-20/later.md", "MEMORY.md"])
    # undated files (digest/, MEMORY.md) are left out as soon as a date filter is given
    assert paths("--since", "2026-01-01") == sorted([KICKOFF, "memory/2026-05-20/later.md"])
    assert paths("--since", "2026-05-19") == ["memory/2026-05-20/later.md"]
    assert paths("--until", "2026-05-18") == [KICKOFF]
    assert paths("--since", "2026-05-18", "--until", "2026-05-18") == [KICKOFF]
    assert paths("--since", "2026-05-21") == []
    assert paths("--until", "2030-01-01") == sorted([KICKOFF, "memory/2026-05-20/later.md"])


def test_undated_daily_folder_notes_are_excluded_by_date_filters(golden, note, run_mem):
    note(golden, "memory/projects/roadmap.md", "The fusion roadmap.\n")
    code, out, err = run_mem("-w", golden, "search", "fusion", "--json", "--since", "2000-01-01")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == [KICKOFF]


def test_since_applies_to_day_pages(golden, run_mem):
    day = golden / DAY
    day.write_text(day.read_text(encoding="utf-8") + "\nRetro: the kickoff went well.\n", encoding="utf-8")
    code, out, err = run_mem("-w", golden, "search", "kickoff", "--json", "--since", "2026-05-18")
    assert code == 0, err
    assert sorted(r["path"] for r in json.loads(out)["results"]) == sorted([DAY, KICKOFF])


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "18.05.2026"])
def test_bad_date_is_usage_error(golden, run_mem, clean_failure, bad):
    line = clean_failure(run_mem("-w", golden, "search", "fusion", "--since", bad), 2)
    assert "--since" in line


def test_since_later_than_until_is_usage_error(golden, run_mem, clean_failure):
    """Not an empty result: a reversed range is a mistake worth saying (exit 2, one line)."""
    line = clean_failure(run_mem("-w", golden, "search", "fusion", "--since", "2026-05-20", "--until", "2026-05-18"), 2)
    assert "--since 2026-05-20 is later than --until 2026-05-18" in line


def test_since_later_than_until_is_a_tool_error_over_mcp(golden):
    from test_mcp import Client

    client = Client(golden)
    try:
        client.initialize()
        text, failed = client.call("memory_search", {"query": "fusion", "since": "2026-05-20", "until": "2026-05-18"})
        assert failed and text.startswith("mem: error: ") and "later than" in text and "\n" not in text, text
        text, failed = client.call("memory_search", {"query": "fusion", "since": "2026-05-18", "until": "2026-05-18"})
        assert not failed and text.startswith("========== memory/2026-05-18/project-kickoff.md:"), text
    finally:
        client.close()


# ---------------------------------------------------------------- links


def test_links_are_only_real_and_capped_at_ten(ws, note, run_mem):
    for i in range(12):
        note(
            ws, f"digest/wiki/topic-{i:02d}.md", f"Topic {i} text.\n", name=f"topic-{i:02d}", description=f"Topic {i}."
        )
    body = "The hub mentions quasar.\n" + "".join(f"- [[digest/wiki/topic-{i:02d}.md]]\n" for i in range(12))
    body += "- [[digest/wiki/missing.md]]\n"
    note(ws, "memory/2026-05-18/hub.md", body, name="hub", description="Links everywhere.")
    code, out, err = run_mem("-w", ws, "search", "quasar", "--json")
    assert code == 0, err
    res = json.loads(out)["results"]
    assert [r["path"] for r in res] == ["memory/2026-05-18/hub.md"]
    outl = res[0]["links"]["outlinks"]
    assert [n["path"] for n in outl] == [f"digest/wiki/topic-{i:02d}.md" for i in range(10)]
    code, out, err = run_mem("-w", ws, "search", "quasar")
    assert "  outlinks (10):\n" in out
    assert not [x for x in out.splitlines() if x.startswith("    →") and "missing.md" in x]
    assert '    → digest/wiki/topic-00.md  name="topic-00"  description="Topic 0."\n' in out


def test_alias_and_anchor_links_resolve(ws, note, run_mem):
    note(ws, RRF, "Fusion text.\n", name="rrf", description="RRF.")
    note(
        ws,
        KICKOFF,
        "We chose [[digest/wiki/rrf.md|RRF]] and [[digest/wiki/rrf.md#Usage]] for pulsar.\n",
        name="k",
        description="K.",
    )
    code, out, err = run_mem("-w", ws, "search", "pulsar", "--json")
    assert code == 0, err
    outl = json.loads(out)["results"][0]["links"]["outlinks"]
    assert [n["path"] for n in outl] == [RRF]


def test_watched_files_extra_paths_and_ignored_ones(ws, note, tmp_path, run_mem):
    (ws / "mem.yaml").write_text('extra_paths: ["projects", "../outside"]\n')
    note(ws, "projects/p.md", "the otter in an extra path\n")
    note(tmp_path, "outside/o.md", "the otter outside the workspace\n")
    note(ws, "memory/.trash/t.md", "the otter in a dot folder\n")
    note(ws, "memory/2026-05-18/.draft.md", "the otter in a dot file\n")
    note(ws, "memory/2026-05-18/n.txt", "the otter in a text file\n")
    note(ws, "resource/r.md", "the otter in a resource\n")
    note(ws, "mem_session/dialog/s.md", "the otter in a session\n")
    note(ws, "memory/2026-05-18/n.md", "the otter in a daily note\n")
    note(ws, "digest/wiki/d.md", "the otter in the digest\n")
    code, out, err = run_mem("-w", ws, "search", "otter", "--json", "--limit", "20")
    assert code == 0, err
    assert sorted(r["path"] for r in json.loads(out)["results"]) == [  # outside: OpenClaw's extra paths
        "digest/wiki/d.md",
        "extra/outside/o.md",
        "memory/2026-05-18/n.md",
        "projects/p.md",
    ]


# ---------------------------------------------------------------- merging


def test_merged_hits_stay_within_the_merge_budget(ws, note, run_mem):
    lines = [f"Step {i}: deploy the billing service to region {i} and verify it." for i in range(150)]
    note(ws, "memory/2026-05-18/deploy-log.md", "# Deploy log\n\n" + "\n".join(lines) + "\n")
    from memcli.index.notes.chunker import estimate_tokens

    code, out, err = run_mem("-w", ws, "search", "deploy", "--json", "--no-links")
    assert code == 0, err
    res = json.loads(out)["results"]
    assert len(res) >= 2  # the long note is not folded into one whole-file hit
    for r in res:  # default budget: 1.5 x chunking.target_tokens (400)
        assert sum(estimate_tokens(x) for x in r["text"].split("\n")) <= 600, (r["start_line"], r["end_line"])


def test_overlapping_chunks_of_one_note_merge_into_one_result(ws, note, run_mem):
    lines = [f"Step {i}: deploy the billing service to region {i} and verify it." for i in range(150)]
    p = note(ws, "memory/2026-05-18/deploy-log.md", "# Deploy log\n\n" + "\n".join(lines) + "\n")
    note(ws, "memory/2026-05-19/other.md", "We will deploy again tomorrow.\n")
    (ws / "mem.yaml").write_text("search:\n  merge_max_factor: 100\n", encoding="utf-8")  # no budget
    from memcli.index.stores import store

    code, out, err = run_mem("-w", ws, "search", "deploy", "--json", "--no-links")
    assert code == 0, err
    chunks = [
        r
        for r in store.read_records(ws / "mem_metadata/file_store/file_chunks_default_v1.jsonl.zst")
        if r["path"] == "memory/2026-05-18/deploy-log.md"
    ]
    assert len(chunks) >= 3, "the note must be long enough to need several chunks"
    res = json.loads(out)["results"]
    mine = [r for r in res if r["path"] == "memory/2026-05-18/deploy-log.md"]
    assert len(mine) == 1, [(r["start_line"], r["end_line"]) for r in mine]
    hit = mine[0]
    assert (hit["start_line"], hit["end_line"]) == (
        min(c["start_line"] for c in chunks),
        max(c["end_line"] for c in chunks),
    )
    file_lines = p.read_text(encoding="utf-8").split("\n")
    assert hit["text"] == "\n".join(file_lines[hit["start_line"] - 1 : hit["end_line"]])
    assert "memory/2026-05-19/other.md" in [r["path"] for r in res]
    # the text format shows the merged range once
    code, out, err = run_mem("-w", ws, "search", "deploy", "--no-links")
    assert out.count("========== memory/2026-05-18/deploy-log.md:") == 1
    assert f"========== memory/2026-05-18/deploy-log.md:{hit['start_line']}-{hit['end_line']} [score=" in out


def test_distant_chunks_of_one_note_stay_separate(ws, note, run_mem):
    filler = [f"Line {i} is about something unrelated entirely, like weather and lunch." for i in range(120)]
    text = (
        "# Notes\n\nThe walrus appeared at the start.\n\n" + "\n".join(filler) + "\n\nThe walrus returned at the end.\n"
    )
    note(ws, "memory/2026-05-18/long.md", text)
    code, out, err = run_mem("-w", ws, "search", "walrus", "--json", "--no-links")
    assert code == 0, err
    res = json.loads(out)["results"]
    assert len(res) == 2 and {r["path"] for r in res} == {"memory/2026-05-18/long.md"}
    a, b = sorted(res, key=lambda r: r["start_line"])
    assert a["end_line"] + 1 < b["start_line"]
    assert "walrus appeared" in a["text"] and "walrus returned" in b["text"]


# ---------------------------------------------------------------- freshness


def test_edited_note_is_found_without_reindex(golden, run_mem):
    # `golden` is indexed; the edit below is not
    p = golden / KICKOFF
    p.write_text(p.read_text(encoding="utf-8") + "A narwhal joined the team.\n", encoding="utf-8")
    code, out, err = run_mem("-w", golden, "search", "narwhal", "--json", "--no-links")
    assert code == 0, err
    res = json.loads(out)["results"]
    assert [r["path"] for r in res] == [KICKOFF]
    assert res[0]["text"].endswith("A narwhal joined the team.")
    # a deleted note disappears the same way
    os.remove(golden / RRF)
    code, out, err = run_mem("-w", golden, "search", "fusion", "--json", "--no-links")
    assert [r["path"] for r in json.loads(out)["results"]] == [KICKOFF]


def test_new_note_is_found_without_reindex(golden, note, run_mem):
    note(golden, "memory/2026-05-19/new.md", "The platypus is new.\n")
    code, out, err = run_mem("-w", golden, "search", "platypus", "--json")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2026-05-19/new.md"]


def test_no_sync_answers_from_the_index(golden, run_mem):
    p = golden / KICKOFF
    p.write_text(p.read_text(encoding="utf-8") + "An okapi joined.\n", encoding="utf-8")
    code, out, err = run_mem("-w", golden, "search", "okapi", "--no-sync")
    assert (code, out) == (0, "(no memory results)\n")


@contextmanager
def holding(path):
    """Hold an flock on `path` from this process, as a running rebuild would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def test_search_while_index_locked_answers_from_previous_snapshot(golden, run_mem):
    p = golden / KICKOFF
    p.write_text(p.read_text(encoding="utf-8").replace("reciprocal rank fusion", "a narwhal"), encoding="utf-8")
    with holding(golden / "mem_metadata" / "locks" / "index.lock"):
        t0 = time.monotonic()
        code, out, err = run_mem("-w", golden, "search", "fusion", "--no-links")
        elapsed = time.monotonic() - t0
    assert code == 0, err
    assert elapsed < 10, "a search must not wait for a running rebuild"
    assert out == GOLDEN_FUSION_NO_LINKS  # the previous snapshot, as it was
    assert "Traceback" not in err
    warnings = [x for x in err.splitlines() if x.startswith("mem: warning:")]
    assert warnings and "stale" in warnings[0], err
    # once the lock is free the next search syncs and sees the edit
    code, out, err = run_mem("-w", golden, "search", "narwhal", "--json")
    assert [r["path"] for r in json.loads(out)["results"]] == [KICKOFF]
    assert err == ""
