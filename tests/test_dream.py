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
    body = f"# {name}\n" + "".join(f"\n## {title}\n" + "".join(f"- {line}\n" for line in lines)
                                   for title, lines in sections.items())
    path = root / "memory" / day / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndescription: {name}\nname: {name}\nsession_id: {sid}\n---\n{body}", encoding="utf-8")
    return path


def coffee_day(root: Path, day: str = D1, drink: str = "coffee", sid: str = "s1") -> Path:
    return session_note(root, day, "morning-routine", sid, {
        "Preferences": [f"User: I prefer {drink} in the morning."],
        "Facts": ["User: The Lumen launch deadline is April 20."]})


def dream(mem, ws, *args):
    code, out, err = mem("-w", ws, "dream", "--json", *args)
    assert code == 0, err
    return json.loads(out)


def digest_files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((root / "digest").rglob("*.md"))}


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
    coffee_day(ws)
    code, out, err = mem("-w", ws, "dream", "--date", D1)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == ["AutoDream completed", ""]
    assert lines[2:8] == [f"- Date: {D1}", f"- Scan window: 2026-05-31, {D1}",
                          "- Files: 1 scanned, 1 changed, 0 unchanged, 0 deleted",
                          "- Extracted: 2 unit(s), 2 topic candidate(s)", "- Integrated: 2 ok, 0 skipped, 0 failed",
                          "- Catalog: checkpointed 1 changed path(s)"]
    assert "Changes:" in lines
    assert "- [digest/personal/user-coffee.md][CREATE]: new personal node: User: I prefer coffee in the morning." \
        in lines
    nodes = digest_files(ws)
    assert set(nodes) == {"digest/personal/user-coffee.md", "digest/wiki/user-deadline.md"}
    text = nodes["digest/personal/user-coffee.md"]
    assert text.startswith("---\ndescription: 'User: I prefer coffee in the morning.'\nname: user-coffee\n---\n")
    meta, abstract, sources = node_parts(text)
    assert "Rule: User: I prefer coffee in the morning." in abstract
    assert "\nWhy: " in abstract and "\nHow to apply:\n" in abstract
    words = len(re.findall(r"\w+", re.sub(r"^#.*$", "", abstract, flags=re.M)))
    assert 50 <= words <= 200, words
    assert sources == f"- Stated on {D1} in [[memory/{D1}/morning-routine.md]].\n"
    assert assert_links_resolve(ws) == 2


def test_nothing_changed_says_so_and_exits_0(ws, mem):
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    code, out, err = mem("-w", ws, "dream", "--date", D1)
    assert (code, out, err) == (0, f"No changed dream input for 2026-05-31, {D1}\n", "")


def test_repeated_runs_over_the_same_facts_create_no_duplicates(ws, mem):
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    before = digest_files(ws)
    for _ in range(2):  # the catalog forgotten: every fact is seen again
        (ws / "mem_metadata/file_catalog/dream.jsonl.zst").unlink()
        rep = dream(mem, ws, "--date", D1)
        assert rep["results"] == [] and len(rep["skipped"]) == 2
    assert digest_files(ws) == before


def test_a_changed_value_is_corrected_with_a_note_line(ws, mem):
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    session_note(ws, D2, "update", "s2", {"Preferences": ["User: I prefer tea in the morning."],
                                          "Facts": ["User: The Lumen launch deadline moved to May 3."]})
    rep = dream(mem, ws, "--date", D2)
    assert [(r["action"], r["target_path"]) for r in rep["results"]] == [
        ("CORRECT", "digest/personal/user-coffee.md"), ("CORRECT", "digest/wiki/user-deadline.md")]
    coffee = (ws / "digest/personal/user-coffee.md").read_text(encoding="utf-8")
    assert ("Rule: User: I prefer coffee in the morning.\n"
            f"> note: contradicted by [[memory/{D2}/update.md]] - User: I prefer tea in the morning.\n") in coffee
    assert coffee.endswith(f"- Stated on {D1} in [[memory/{D1}/morning-routine.md]].\n"
                           f"- Corrected on {D2} in [[memory/{D2}/update.md]].\n")
    deadline = (ws / "digest/wiki/user-deadline.md").read_text(encoding="utf-8")
    assert f"> note: contradicted by [[memory/{D2}/update.md]] - User: The Lumen launch deadline moved to May 3." \
        in deadline
    assert_links_resolve(ws)


def test_the_same_fact_again_corroborates_and_new_facts_refine(ws, mem):
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    session_note(ws, D2, "again", "s2", {"Preferences": ["User: I prefer coffee in the morning!"]})
    rep = dream(mem, ws, "--date", D2)
    assert [(r["action"], r["target_path"]) for r in rep["results"]] == [
        ("CORROBORATE", "digest/personal/user-coffee.md")]
    assert f"- Corroborated on {D2} in [[memory/{D2}/again.md]]." in \
        (ws / "digest/personal/user-coffee.md").read_text(encoding="utf-8")
    session_note(ws, D3, "more", "s3", {"Preferences": ["User: I prefer my coffee black, with no sugar at all."]})
    rep = dream(mem, ws, "--date", D3)
    assert [(r["action"], r["target_path"]) for r in rep["results"]] == [("REFINE", "digest/personal/user-coffee.md")]
    text = (ws / "digest/personal/user-coffee.md").read_text(encoding="utf-8")
    meta, abstract, sources = node_parts(text)
    assert "- User: I prefer my coffee black, with no sugar at all." in abstract
    assert "Rule: User: I prefer coffee in the morning." in abstract  # additive: nothing dropped
    assert sources.count("[[memory/") == 3
    assert len(digest_files(ws)) == 2


def test_procedure_and_wiki_buckets_by_cues(ws, mem, note):
    note(ws, f"memory/{D1}/deploy.md", """\
        # Deploying Lumen

        ## How to deploy
        1. Merge the branch to main and wait for CI.
        2. Deploy the image to staging and run the smoke tests.
        3. Promote the canary to production after 30 minutes.

        PostgreSQL 16 is the database of the Lumen API since May.
        """, name="deploy", description="How Lumen is deployed.")
    rep = dream(mem, ws, "--date", D1)
    buckets = {r["target_path"].split("/")[1] for r in rep["results"]}
    assert buckets == {"procedure", "wiki"}
    proc = next(r["target_path"] for r in rep["results"] if "/procedure/" in r["target_path"])
    text = (ws / proc).read_text(encoding="utf-8")
    assert "Trigger: " in text and "\nSteps:\n1. Merge the branch to main and wait for CI.\n" in text
    assert "Preconditions:" in text and "Failure modes:" in text


def test_catalog_checkpoint_and_deleted_inputs(ws, mem, open_ws):
    from memcli.index import store

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
    assert set(r["path"] for r in store.read_records(catalog)) == {f"memory/{D1}/morning-routine.md"}


def test_interests_yaml_format_and_recent_topics_not_repeated(ws, mem):
    coffee_day(ws, D1)
    dream(mem, ws, "--date", D1)
    data = yaml.safe_load((ws / f"memory/{D1}/interests.yaml").read_text(encoding="utf-8"))
    assert list(data) == ["date", "topic_count", "diversity_days", "topics"]
    assert (data["date"], data["topic_count"], data["diversity_days"]) == (D1, 3, 7)
    assert [t["title"] for t in data["topics"]] == ["User coffee", "User deadline"]
    for t in data["topics"]:
        assert list(t) == ["title", "reason", "evidence", "keywords", "paths"]
        assert t["paths"] == [f"memory/{D1}/morning-routine.md"] and t["reason"] and t["keywords"]
    session_note(ws, D2, "again", "s2", {"Preferences": ["User: I prefer coffee in the morning!"],
                                         "Facts": ["User: The Berlin office opens on 2026-07-01 at Torstrasse 5."]})
    dream(mem, ws, "--date", D2)
    later = yaml.safe_load((ws / f"memory/{D2}/interests.yaml").read_text(encoding="utf-8"))
    assert "User coffee" not in [t["title"] for t in later["topics"]]  # proposed yesterday already
    assert later["topics"], later


def test_dry_run_writes_nothing(ws, mem):
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
    coffee_day(ws)
    dream(mem, ws, "--date", D1)
    [rec] = [r for r in map(json.loads, (ws / "mem_metadata/inbox/inbox.jsonl").read_text().splitlines())
             if r["job"] == "dream"]
    assert [{k: c[k] for k in ("path", "action")} for c in rec["changes"][:2]] == [
        {"path": "digest/personal/user-coffee.md", "action": "CREATE"},
        {"path": "digest/wiki/user-deadline.md", "action": "CREATE"}]
    # each change carries its own why
    assert rec["changes"][0]["note"].startswith("new personal node: User: I prefer coffee")
    assert rec["changes"][2] == {"path": f"memory/{D1}/interests.yaml", "action": "added"}
    assert "CREATE digest/personal/user-coffee.md: new personal node: User: I prefer coffee" in rec["summary"]
    code, out, err = mem("-w", ws, "search", "coffee morning", "--mode", "keyword", "--no-sync", "--json")
    assert "digest/personal/user-coffee.md" in [h["path"] for h in json.loads(out)["results"]]


def test_a_note_in_another_day_is_outside_the_window(ws, mem):
    coffee_day(ws, "2026-05-20")
    code, out, _ = mem("-w", ws, "dream", "--date", D1, "--scan-days", "3")
    assert out == f"No changed dream input for 2026-05-30, 2026-05-31, {D1}\n"


@pytest.mark.parametrize("args,expected", [
    (["--scan-days", "0"], "--scan-days must be between 1 and 366"),
    (["--max-units", "0"], "--max-units must be between 1 and 50"),
    (["--date", "2026-13-01"], "is not a calendar date"),
    (["--date", "yesterday"], "is not YYYY-MM-DD"),
])
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
    facts = [f"User: I prefer {x} for {y}." for x, y in
             [("vim", "editing"), ("zsh", "shells"), ("firefox", "browsing"), ("linux", "servers"),
              ("python", "scripts"), ("postgres", "databases"), ("rust", "tools")]]
    session_note(ws, D1, "prefs", "s1", {"Preferences": facts})
    rep = dream(mem, ws, "--date", D1, "--max-units", "3")
    assert len(rep["units"]) == 3 and len(rep["results"]) == 3
    assert_links_resolve(ws)
