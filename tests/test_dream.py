"""`mem dream` with the offline rules: units, the four actions, the catalog, interests.yaml, the log."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

D1, D2, D3 = "2026-06-01", "2026-06-02", "2026-06-03"
WIKILINK = re.compile(r"\[\[([^\[\]|#]+)")


def session_note(root: Path, day: str, name: str, sid: str, sections: dict[str, list[str]]) -> Path:
    """A daily note shaped like `mem ingest` writes it (speaker-prefixed bullets under sections)."""
    body = f"# {name}\n" + "".join(
        f"\n## {title}\n" + "".join(f"- {line}\n" for line in lines) for title, lines in sections.items()
    )
    path = root / "memory" / day / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndescription: {name}\nname: {name}\nsession_id: {sid}\n---\n{body}", encoding="utf-8")
    return path


def every_statement(root: Path) -> None:
    """Let one statement found a node (`dream_min_statements: 1`; the default, 2, makes a lone
    statement wait for a second: tests/test_dream_waiting.py): these tests are about the nodes."""
    path = root / "mem.yaml"
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(before + "dream_min_statements: 1\n", encoding="utf-8")


def coffee_day(root: Path, day: str = D1, drink: str = "coffee", sid: str = "s1") -> Path:
    return session_note(
        root,
        day,
        "morning-routine",
        sid,
        {
            "Preferences": [f"User: I prefer {drink} in the morning."],
            "Facts": ["User: The Lumen launch deadline is April 20."],
        },
    )


def dream(mem, ws, *args):
    code, out, err = mem("-w", ws, "dream", "--json", *args)
    assert code == 0, err
    return json.loads(out)


def digest_files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted((root / "digest").rglob("*.md"))
    }


def assert_links_resolve(root: Path) -> int:
    n = 0
    for rel, text in digest_files(root).items():
        for target in WIKILINK.findall(text):
            assert (root / target.strip()).is_file(), f"{rel} links to missing {target}"
            n += 1
    return n


def node_parts(text: str) -> tuple[dict, str, str]:
    head, body = text.split("---\n", 2)[1:]
    abstract, _, sources = body.partition("## Sources\n")
    return yaml.safe_load(head), abstract, sources


def test_first_dream_creates_nodes_in_design_format(ws, mem):
    every_statement(ws)
    coffee_day(ws)
    code, out, err = mem("-w", ws, "dream", "--date", D1)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == ["AutoDream completed", ""]
    assert lines[2:8] == [
        f"- Date: {D1}",
        f"- Scan window: 2026-05-31, {D1}",
        "- Files: 1 scanned, 1 changed, 0 unchanged, 0 deleted",
        "- Extracted: 2 unit(s), 2 topic candidate(s)",
        "- Integrated: 2 ok, 0 skipped, 0 failed",
        "- Catalog: checkpointed 1 changed path(s)",
    ]
    assert lines[8] == "- Facts: 2 new, grouped by words only"
    assert "Changes:" in lines
    assert "- [digest/personal/coffee.md][CREATE]: new personal node: The user prefers coffee in the morning." in lines
    nodes = digest_files(ws)
    assert set(nodes) == {"digest/personal/coffee.md", "digest/wiki/lumen-launch-deadline.md"}
    text = nodes["digest/personal/coffee.md"]
    assert text.startswith("---\ndescription: The user prefers coffee in the morning.\nname: coffee\n---\n")
    meta, abstract, sources = node_parts(text)
    # knowledge only: the self-contained statement with its source, no transcript voice, no template prose
    assert abstract == (
        f"# Coffee\n\n- The user prefers coffee in the morning. ([[memory/{D1}/morning-routine.md]])\n\n"
    )
    assert sources == f"- Stated on {D1} in [[memory/{D1}/morning-routine.md]].\n"
    assert assert_links_resolve(ws) == 4


def test_nothing_changed_says_so_and_exits_0(ws, mem):
    every_statement(ws)
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    code, out, err = mem("-w", ws, "dream", "--date", D1)
    assert (code, out, err) == (0, f"No changed dream input for 2026-05-31, {D1}\n", "")


def test_repeated_runs_over_the_same_facts_create_no_duplicates(ws, mem):
    every_statement(ws)
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    before = digest_files(ws)
    for _ in range(2):  # the catalog forgotten: every fact is seen again
        (ws / "mem_metadata/file_catalog/dream.jsonl.zst").unlink()
        rep = dream(mem, ws, "--date", D1)
        assert rep["results"] == [] and len(rep["skipped"]) == 2
    assert digest_files(ws) == before


def test_a_changed_value_is_current_and_the_old_one_history(ws, mem):
    every_statement(ws)
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    session_note(
        ws,
        D2,
        "update",
        "s2",
        {
            "Preferences": ["User: I prefer tea in the morning."],
            "Facts": ["User: The Lumen launch deadline moved to May 3."],
        },
    )
    rep = dream(mem, ws, "--date", D2)
    assert [(r["action"], r["target_path"]) for r in rep["results"]] == [
        ("CORRECT", "digest/personal/coffee.md"),
        ("CORRECT", "digest/wiki/lumen-launch-deadline.md"),
    ]
    assert all(
        r["reason"].startswith("about the subject of digest/") and "CORRECT: gives a new value for" in r["reason"]
        for r in rep["results"]
    )
    coffee = (ws / "digest/personal/coffee.md").read_text(encoding="utf-8")
    meta, abstract, sources = node_parts(coffee)
    # what is true now first, the old value with its source and its end date below
    assert abstract == (
        f"# Coffee\n\n- The user prefers tea in the morning. ([[memory/{D2}/update.md]])\n\n"
        f"## History\n- Previously: The user prefers coffee in the morning, until {D2} "
        f"([[memory/{D1}/morning-routine.md]])\n\n"
    )
    assert meta["description"] == "The user prefers tea in the morning."  # the description says what holds now
    assert sources == (
        f"- Stated on {D1} in [[memory/{D1}/morning-routine.md]].\n- Corrected on {D2} in [[memory/{D2}/update.md]].\n"
    )
    deadline = node_parts((ws / "digest/wiki/lumen-launch-deadline.md").read_text(encoding="utf-8"))[1]
    assert deadline.index("- The Lumen launch deadline moved to May 3.") < deadline.index(
        f"- Previously: The Lumen launch deadline is April 20, until {D2}"
    )
    assert_links_resolve(ws)


def test_the_same_fact_again_corroborates_and_new_facts_refine(ws, mem):
    every_statement(ws)
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    session_note(ws, D2, "again", "s2", {"Preferences": ["User: I prefer coffee in the morning!"]})
    rep = dream(mem, ws, "--date", D2)
    assert [(r["action"], r["target_path"]) for r in rep["results"]] == [("CORROBORATE", "digest/personal/coffee.md")]
    text = (ws / "digest/personal/coffee.md").read_text(encoding="utf-8")
    assert f"- Corroborated on {D2} in [[memory/{D2}/again.md]]." in text
    # the statement cites both notes that make it, the one that states it most recently first
    assert (
        f"- The user prefers coffee in the morning. ([[memory/{D2}/again.md]], [[memory/{D1}/morning-routine.md]])"
    ) in text
    session_note(ws, D3, "more", "s3", {"Preferences": ["User: I prefer my coffee black, with no sugar at all."]})
    rep = dream(mem, ws, "--date", D3)
    assert [(r["action"], r["target_path"]) for r in rep["results"]] == [("REFINE", "digest/personal/coffee.md")]
    text = (ws / "digest/personal/coffee.md").read_text(encoding="utf-8")
    meta, abstract, sources = node_parts(text)
    assert f"- The user prefers their coffee black, with no sugar at all. ([[memory/{D3}/more.md]])" in abstract
    assert "- The user prefers coffee in the morning." in abstract  # additive: nothing dropped
    assert "## History" not in abstract  # more detail about the same value is no correction
    assert sources.count("[[memory/") == 3
    assert len(digest_files(ws)) == 2


def test_procedure_and_wiki_buckets_by_cues(ws, mem, note):
    every_statement(ws)
    note(
        ws,
        f"memory/{D1}/deploy.md",
        """\
        # Deploying Lumen

        ## How to deploy
        1. Merge the branch to main and wait for CI.
        2. Deploy the image to staging and run the smoke tests.
        3. Promote the canary to production after 30 minutes.

        PostgreSQL 16 is the database of the Lumen API since May.
        """,
        name="deploy",
        description="How Lumen is deployed.",
    )
    rep = dream(mem, ws, "--date", D1)
    buckets = {r["target_path"].split("/")[1] for r in rep["results"]}
    assert buckets == {"procedure", "wiki"}
    proc = next(r["target_path"] for r in rep["results"] if "/procedure/" in r["target_path"])
    text = (ws / proc).read_text(encoding="utf-8")
    assert f"\n1. Merge the branch to main and wait for CI. ([[memory/{D1}/deploy.md]])\n2. Deploy the image" in text
    # no template prose: nothing was said about preconditions or failure modes, so nothing is written
    assert "Trigger:" not in text and "Preconditions" not in text and "none recorded" not in text


def test_catalog_checkpoint_and_deleted_inputs(ws, mem, open_ws):
    every_statement(ws)
    from memcli.index.stores import store

    first = coffee_day(ws)
    second = session_note(ws, D1, "other", "s9", {"Facts": ["User: The staging database is db-staging-2."]})
    dream(mem, ws, "--date", D1)
    catalog = ws / "mem_metadata/file_catalog/dream.jsonl.zst"
    records = {r["path"]: r for r in store.read_records(catalog)}
    assert set(records) == {f"memory/{D1}/morning-routine.md", f"memory/{D1}/other.md"}
    assert records[f"memory/{D1}/other.md"]["st_mtime"] == second.stat().st_mtime
    assert list(records[f"memory/{D1}/other.md"]) == ["path", "st_mtime", "links", "chunk_ids", "front_matter"]
    second.unlink()
    first.write_text(first.read_text(encoding="utf-8") + "- User: I live in Lisbon since 2019.\n", encoding="utf-8")
    rep = dream(mem, ws, "--date", D1)
    assert rep["files"]["deleted"] == [f"memory/{D1}/other.md"]
    assert rep["files"]["changed"] == [f"memory/{D1}/morning-routine.md"]
    assert {r["path"] for r in store.read_records(catalog)} == {f"memory/{D1}/morning-routine.md"}


def test_interests_yaml_format_and_recent_topics_not_repeated(ws, mem):
    every_statement(ws)
    coffee_day(ws, D1)
    dream(mem, ws, "--date", D1)
    data = yaml.safe_load((ws / f"memory/{D1}/interests.yaml").read_text(encoding="utf-8"))
    assert list(data) == ["date", "topic_count", "diversity_days", "topics"]
    assert (data["date"], data["topic_count"], data["diversity_days"]) == (D1, 3, 7)
    assert [t["title"] for t in data["topics"]] == ["Coffee", "Lumen launch deadline"]
    for t in data["topics"]:
        assert list(t) == ["title", "reason", "evidence", "keywords", "paths"]
        assert t["paths"] == [f"memory/{D1}/morning-routine.md"] and t["reason"] and t["keywords"]
    session_note(
        ws,
        D2,
        "again",
        "s2",
        {
            "Preferences": ["User: I prefer coffee in the morning!"],
            "Facts": ["User: The Berlin office opens on 2026-07-01 at Torstrasse 5."],
        },
    )
    dream(mem, ws, "--date", D2)
    later = yaml.safe_load((ws / f"memory/{D2}/interests.yaml").read_text(encoding="utf-8"))
    assert "Coffee" not in [t["title"] for t in later["topics"]]  # proposed yesterday already
    assert later["topics"], later


def test_dry_run_writes_nothing(ws, mem):
    every_statement(ws)
    coffee_day(ws)
    rep = dream(mem, ws, "--date", D1, "--dry-run")
    assert rep["dry_run"] and [r["action"] for r in rep["results"]] == ["CREATE", "CREATE"]
    assert not (ws / "digest").exists() or digest_files(ws) == {}
    assert not (ws / f"memory/{D1}/interests.yaml").exists()
    assert not (ws / "mem_metadata/file_catalog/dream.jsonl.zst").exists()
    assert not (ws / "mem_metadata/inbox/inbox.jsonl").exists()
    code, out, _ = mem("-w", ws, "dream", "--date", D1, "--dry-run")
    assert out.startswith("AutoDream completed\n\n- Dry run: nothing was written\n")


def test_inbox_records_what_changed_and_why_and_search_finds_the_node(ws, mem):
    every_statement(ws)
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    [rec] = [
        r
        for r in map(json.loads, (ws / "mem_metadata/inbox/inbox.jsonl").read_text().splitlines())
        if r["job"] == "dream"
    ]
    assert [{k: c[k] for k in ("path", "action")} for c in rec["changes"][:2]] == [
        {"path": "digest/personal/coffee.md", "action": "CREATE"},
        {"path": "digest/wiki/lumen-launch-deadline.md", "action": "CREATE"},
    ]
    # each change carries its own why
    assert rec["changes"][0]["note"].startswith("new personal node: The user prefers coffee")
    assert rec["changes"][2] == {"path": f"memory/{D1}/interests.yaml", "action": "added"}
    assert "CREATE digest/personal/coffee.md: new personal node: The user prefers coffee" in rec["summary"]
    code, out, err = mem("-w", ws, "search", "coffee morning", "--mode", "keyword", "--no-sync", "--json")
    assert "digest/personal/coffee.md" in [h["path"] for h in json.loads(out)["results"]]


def test_a_note_in_another_day_is_outside_the_window(ws, mem):
    coffee_day(ws, "2026-05-20")
    code, out, _ = mem("-w", ws, "dream", "--date", D1, "--scan-days", "3")
    assert out == f"No changed dream input for 2026-05-30, 2026-05-31, {D1}\n"


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--scan-days", "0"], "--scan-days must be between 1 and 366"),
        (["--max-units", "0"], "--max-units must be between 1 and 50"),
        (["--date", "2026-13-01"], "is not a calendar date"),
        (["--date", "yesterday"], "is not YYYY-MM-DD"),
    ],
)
def test_bad_input_is_one_line_exit_2(ws, run_mem, clean_failure, args, expected):
    assert expected in clean_failure(run_mem("-w", ws, "dream", *args), 2)


def test_a_running_dream_makes_the_second_exit_75(ws, run_mem, clean_failure, open_ws):
    from memcli.vault.lock import Lock

    coffee_day(ws)
    with Lock(open_ws(ws).lock_path("dream"), "dream"):
        line = clean_failure(run_mem("-w", ws, "dream", "--date", D1), 75)
    assert "mem dream is already running" in line
    assert not (ws / "digest").exists() or digest_files(ws) == {}


def test_units_are_capped_and_links_between_nodes_resolve(ws, mem):
    every_statement(ws)
    facts = [
        f"User: I prefer {x} for {y}."
        for x, y in [
            ("vim", "editing"),
            ("zsh", "shells"),
            ("firefox", "browsing"),
            ("linux", "servers"),
            ("python", "scripts"),
            ("postgres", "databases"),
            ("rust", "tools"),
        ]
    ]
    session_note(ws, D1, "prefs", "s1", {"Preferences": facts})
    rep = dream(mem, ws, "--date", D1, "--max-units", "3")
    assert len(rep["units"]) == 3 and len(rep["results"]) == 3
    assert_links_resolve(ws)


def test_facts_over_max_units_wait_for_the_next_run_and_the_report_says_how_many(ws, mem, open_ws):
    """The budget cuts units, never facts: the note stays pending until each of its facts is done,
    even once it has left the scan window."""
    every_statement(ws)
    from memcli.extraction.dream.voice import statement
    from memcli.index.stores import store

    facts = [
        "I use vim for editing.",
        "I use zsh as my shell.",
        "Firefox is my browser.",
        "The servers run Debian 12.",
        "Python 3.12 runs the scripts.",
        "Postgres 16 holds the data.",
        "Rust builds the CLI tools.",
    ]
    session_note(ws, D1, "setup", "s1", {"Facts": [f"User: {f}" for f in facts]})
    code, out, err = mem("-w", ws, "dream", "--date", D1, "--max-units", "3")
    assert code == 0, err
    assert "- Catalog: checkpointed 0 changed path(s)" in out
    assert "- Left for the next run: 4 fact(s) in 1 note(s), over --max-units 3" in out
    catalog = ws / "mem_metadata/file_catalog/dream.jsonl.zst"
    assert not catalog.exists() or store.read_records(catalog) == []
    rep = dream(mem, ws, "--date", D2, "--max-units", "3")
    assert (rep["facts"]["new"], rep["facts"]["remaining"], len(rep["results"])) == (4, 1, 3)
    # D3's window (D2, D3) no longer holds the note: it is read again because facts are left
    rep = dream(mem, ws, "--date", D3, "--max-units", "3")
    assert rep["files"]["changed"] == [f"memory/{D1}/setup.md"]
    assert (rep["facts"]["new"], rep["facts"]["remaining"], rep["checkpointed"]) == (1, 0, [f"memory/{D1}/setup.md"])
    said = "\n".join(node_parts(t)[1] for t in digest_files(ws).values())
    stated = [statement(f, "User") for f in facts]  # "I use vim" is "The user uses vim" in a node
    assert sorted(f for f in stated if said.count(f) == 1) == sorted(stated)  # every fact in a node, once
    assert "pending" not in json.loads((ws / "mem_metadata/dream/state.json").read_text())
    code, out, _ = mem("-w", ws, "dream", "--date", D3)
    assert out.startswith("No changed dream input")


def test_resource_summaries_give_facts_only_from_what_the_file_says(ws, mem):
    """A resource note's structural lines (its source line, keys, counts, outline) are no facts."""
    every_statement(ws)
    (ws / "resource").mkdir()
    (ws / "resource/key.json").write_text('{"name": "lumen", "port": 8080, "db": {"host": "db1"}}\n', encoding="utf-8")
    (ws / "resource/notes.txt").write_text("The gateway restarts every night at 02:00 UTC.\n", encoding="utf-8")
    code, out, err = mem("-w", ws, "resource", "scan")
    assert code == 0, err
    day = next(p.name for p in (ws / "memory").iterdir() if p.is_dir())
    rep = dream(mem, ws, "--date", day)
    nodes = digest_files(ws)
    assert [r["facts"] for r in rep["results"]] == [["The gateway restarts every night at 02:00 UTC."]]
    text = "\n".join(nodes.values())
    assert "key(s)" not in text and "line(s)" not in text and "word(s)" not in text


class CountingEmbedder:
    """Made-up vectors (one axis per subject word) and a count of the texts each batch asks for."""

    backend, model, dims, endpoint = "fake", "axes", 4, "test"
    identity = "fake:axes:4:test"
    AXES = ("commute", "tram", "invoice", "tea")

    def __init__(self):
        self.batches: list[int] = []

    def embed_batch(self, texts):
        import numpy as np

        self.batches.append(len(texts))
        rows = [
            [1.0 if a in t.lower() or (a == "commute" and "tram" in t.lower()) else 0.0 for a in self.AXES]
            for t in texts
        ]
        rows = np.asarray(rows, dtype=np.float32) + 0.01
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def close(self):
        pass


def test_with_an_embedding_model_dream_groups_by_meaning_in_one_batch_and_caches(ws, open_ws, monkeypatch):
    from memcli.jobs import dream
    from memcli.providers.embedding import space

    fake = CountingEmbedder()
    monkeypatch.setattr(
        space,
        "configured",
        lambda w, timeout=None: space.Backend(fake, {"id": "fake0000", "identity": fake.identity, "dims": fake.dims}),
    )
    # only dream's own batches are counted here: the indexing of the nodes it writes embeds
    # them too (every write is searchable by meaning), which this budget of 0 leaves out
    (ws / "mem.yaml").write_text("embedding_model_config:\n  embed_budget_seconds: 0\n", encoding="utf-8")
    every_statement(ws)
    session_note(
        ws,
        D1,
        "commute",
        "s1",
        {
            "Facts": [
                "User: I commute by bike.",
                "User: On rainy days I take the tram.",
                "User: Invoices go out monthly.",
            ]
        },
    )
    rep = dream.run(open_ws(ws), day=D1, jitter=False)
    assert fake.batches == [3]  # every fact in one call
    assert rep.progress.grouping == "meaning+words" and rep.progress.model == "fake:axes"
    # the tram shares no word with the bike, but its meaning (here: an axis) puts it beside it
    assert sorted(len(u.facts) for u in rep.units) == [1, 2]
    session_note(ws, D2, "more", "s2", {"Facts": ["User: I commute by bike.", "User: I drink tea."]})
    dream.run(open_ws(ws), day=D2, jitter=False)
    # the node statements and the repeated fact come from the cache: only the new fact is embedded
    assert fake.batches == [3, 1]
    assert (ws / "mem_metadata/dream/vectors_fake0000.npz").is_file()
