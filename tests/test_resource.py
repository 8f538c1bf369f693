"""`mem resource scan` offline: dates, every suffix, modify/delete flows, collisions, bad input."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memcli.index.stores import store
from memcli.vault.lock import Lock

DAY = "2026-07-14"


def res(ws: Path, rel: str, content: str | bytes) -> Path:
    """Write a resource file at `ws/resource/rel`."""
    path = ws / "resource" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def tree(root: Path) -> dict[str, bytes]:
    """Every file under the workspace except locks (their holder line changes)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "locks" not in p.parts
    }


def scan(mem, ws, *args):
    code, out, err = mem("-w", ws, "resource", "scan", "--json", *args)
    assert code == 0, err
    return json.loads(out), err


def note_text(ws: Path, rel: str) -> str:
    return (ws / rel).read_text(encoding="utf-8")


def today(open_ws, ws) -> str:
    from memcli.vault import notes

    return notes.today(open_ws(ws))


SAMPLES = {
    "plan.md": (
        "# Q3 plan\n\nWe ship Lumen 2.0 on 2026-09-30.\n\n## Risks\n\nThe database migration.\n",
        ["## Outline", "- Q3 plan", "  - Risks", "> We ship Lumen 2.0 on 2026-09-30."],
    ),
    "minutes.txt": (
        "MEETING NOTES\n=============\n\nAttendees: Ana, Bo.\n\nWe go with PostgreSQL.\n",
        ["- MEETING NOTES", "> Attendees: Ana, Bo.", "> We go with PostgreSQL."],
    ),
    "sales.csv": (
        "date,region,units\n2026-07-01,EU,12\n2026-07-02,US,7\n2026-07-03,EU,30\n",
        [
            "3 columns, comma-separated, 3 data rows:",
            "- `units`: number, 7 to 30",
            "- `date`: date, 2026-07-01 to 2026-07-03",
            "| date | region | units |",
            "| 2026-07-02 | US | 7 |",
        ],
    ),
    "config.json": (
        '{"service": "lumen", "replicas": 3, "ports": [80, 443]}',
        ["- (root): object, 3 key(s)", '  - `service`: string "lumen"', "  - `ports`: array, 2 item(s)"],
    ),
    "events.jsonl": (
        '{"id": 1, "kind": "deploy"}\n{"id": 2, "kind": "rollback", "by": "ana"}\n',
        [
            "- items: object ×2",
            '  - `kind`: string (in 2 of 2) e.g. "deploy"',
            '  - `by`: string (in 1 of 2) e.g. "ana"',
            "- record 1: object, 2 key(s)",
        ],
    ),
    "compose.yaml": (
        "services:\n  api:\n    image: lumen:2.0\n  db:\n    image: postgres:16\n",
        ["- (root): object, 1 key(s)", "  - `services`: object, 2 key(s)", '      - `image`: string "postgres:16"'],
    ),
    "release.html": (
        (
            "<html><head><title>Release 2.0</title><script>alert(1)</script></head><body>"
            "<h1>Lumen 2.0</h1><p>Fixes the reconnect storm in handleWebSocketReconnect.</p></body></html>"
        ),
        ["- Lumen 2.0", "> Fixes the reconnect storm in handleWebSocketReconnect."],
    ),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_suffix_becomes_a_source_linked_note(ws, mem, name):
    content, expected = SAMPLES[name]
    res(ws, f"{DAY}/{name}", content)
    data, _ = scan(mem, ws)
    rel = f"resource/{DAY}/{name}"
    note = f"memory/{DAY}/{name.rsplit('.', 1)[0]}.md"
    assert data["resources"]["added"] == [rel]
    assert data["notes"] == [{"resource": rel, "note": note, "action": "added"}]
    text = note_text(ws, note)
    assert f"source_resource: '[[{rel}]]'" in text.split("---")[1]
    assert f"\nSource: [[{rel}]] (" in text
    for line in expected:
        assert f"\n{line}\n" in text, (line, text)
    assert "alert(1)" not in text
    day_page = note_text(ws, f"memory/{DAY}.md")
    assert f"- [[{note}]] name: {name.rsplit('.', 1)[0]} description: " in day_page


def test_the_readme_and_the_help_list_the_suffixes_the_scan_reads(run_mem):
    """The scan reads SUFFIXES (.yml and .htm too); the README and `mem resource scan --help`
    name exactly those."""
    import re

    from memcli.jobs.resource.catalog import SUFFIXES

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"Watched suffixes, in any case: (.*?) \(not binaries\)", readme, re.S)
    assert listed and set(re.findall(r"`(\w+)`", listed.group(1))) == SUFFIXES
    code, out, err = run_mem("resource", "scan", "--help")
    assert code == 0, err
    helped = re.search(r"Watched suffixes \(any case\): ([\w, \n]+)\.", out)
    assert helped and set(re.split(r"[,\s]+", helped.group(1).strip())) == SUFFIXES


def test_suffixes_are_matched_in_any_case_and_others_are_not_watched(ws, mem):
    res(ws, f"{DAY}/NOTES.TXT", "Upper-case suffix.\n")
    res(ws, f"{DAY}/settings.yml", "a: 1\n")  # .yml is YAML too
    res(ws, f"{DAY}/photo.png", b"\x89PNG\r\n\x1a\n")
    res(ws, f"{DAY}/.hidden.md", "# hidden\n")
    data, _ = scan(mem, ws)
    assert data["resources"]["added"] == [f"resource/{DAY}/NOTES.TXT", f"resource/{DAY}/settings.yml"]
    assert data["skipped"] == [
        {"path": f"resource/{DAY}/photo.png", "reason": "unsupported type (.png files are not read)"}
    ]  # named, not silent
    assert sorted(p.name for p in (ws / "memory" / DAY).iterdir()) == ["NOTES.md", "settings.md"]


def test_dates_from_the_folder_nested_folders_and_root(ws, mem, open_ws):
    res(ws, f"{DAY}/project/deep/data.json", '{"a": 1}')
    res(ws, "report.txt", "A report at the root.\n")
    res(ws, "2026-13-45/odd.txt", "Not a calendar date.\n")
    data, _ = scan(mem, ws)
    now = today(open_ws, ws)
    assert {n["resource"]: n["note"] for n in data["notes"]} == {
        f"resource/{DAY}/project/deep/data.json": f"memory/{DAY}/data.md",
        "resource/report.txt": f"memory/{now}/report.md",
        "resource/2026-13-45/odd.txt": f"memory/{now}/odd.md",
    }


def test_undated_files_keep_their_first_date(ws, open_ws):
    from memcli.jobs import resource

    day1 = datetime(2026, 3, 1, 12, tzinfo=UTC)
    day2 = datetime(2026, 3, 9, 12, tzinfo=UTC)
    path = res(ws, "inbox/todo.txt", "Call the bank.\n")
    res(ws, "root.txt", "At the root.\n")
    resource.run(open_ws(ws), now=day1)
    path.write_text("Call the bank. Then the notary.\n", encoding="utf-8")
    (ws / "resource" / "root.txt").write_text("At the root, edited.\n", encoding="utf-8")
    rep = resource.run(open_ws(ws), now=day2)
    assert sorted(rep.modified) == ["resource/inbox/todo.txt", "resource/root.txt"]
    assert [(n["note"], n["action"]) for n in rep.notes] == [
        ("memory/2026-03-01/todo.md", "updated"),
        ("memory/2026-03-01/root.md", "updated"),
    ]
    assert "Then the notary." in note_text(ws, "memory/2026-03-01/todo.md")
    assert not (ws / "memory" / "2026-03-09").exists()


def test_a_root_file_takes_the_date_of_its_existing_note(ws, mem, note):
    note(
        ws,
        "memory/2026-01-05/report.md",
        "# Report\n\nWritten before the catalog existed.\n",
        name="report",
        description="An older reading.",
        source_resource="[[resource/report.txt]]",
    )
    res(ws, "report.txt", "Quarterly report.\n")
    data, _ = scan(mem, ws)
    assert data["notes"] == [
        {"resource": "resource/report.txt", "note": "memory/2026-01-05/report.md", "action": "linked"}
    ]
    assert "Written before the catalog existed." in note_text(ws, "memory/2026-01-05/report.md")
    res(ws, "report.txt", "Quarterly report, second edition.\n")
    data, _ = scan(mem, ws)
    assert data["notes"] == [
        {"resource": "resource/report.txt", "note": "memory/2026-01-05/report.md", "action": "updated"}
    ]
    assert "second edition" in note_text(ws, "memory/2026-01-05/report.md")
    assert sorted(p.name for p in (ws / "memory").iterdir()) == ["2026-01-05", "2026-01-05.md"]


def test_modify_updates_the_note_and_search_finds_the_new_text(ws, mem):
    path = res(ws, f"{DAY}/plan.md", "# Plan\n\nThe launch is in autumn.\n")
    scan(mem, ws)
    path.write_text("# Plan\n\nThe launch moved to winter, codename zeppelin.\n", encoding="utf-8")
    data, _ = scan(mem, ws)
    assert data["resources"]["modified"] == [f"resource/{DAY}/plan.md"]
    assert data["notes"] == [
        {"resource": f"resource/{DAY}/plan.md", "note": f"memory/{DAY}/plan.md", "action": "updated"}
    ]
    text = note_text(ws, f"memory/{DAY}/plan.md")
    assert "zeppelin" in text and "autumn" not in text
    code, out, err = mem("-w", ws, "search", "zeppelin", "--no-sync")
    assert code == 0, err
    assert f"memory/{DAY}/plan.md" in out
    code, out, _ = mem("-w", ws, "inbox", "--json")
    records = json.loads(out)["records"]
    assert [r["job"] for r in records] == ["resource", "resource"]
    assert records[1]["changes"] == [{"path": f"memory/{DAY}/plan.md", "action": "updated"}]


def test_delete_removes_the_note_its_empty_day_page_and_its_index_entries(ws, mem):
    path = res(ws, f"{DAY}/gone.txt", "Ephemeral quokka facts.\n")
    scan(mem, ws)
    assert mem("-w", ws, "search", "quokka", "--no-sync")[1].startswith("==========")
    path.unlink()
    data, _ = scan(mem, ws)
    assert data["resources"]["deleted"] == [f"resource/{DAY}/gone.txt"]
    assert data["changes"] == [
        {"path": f"memory/{DAY}/gone.md", "action": "deleted"},
        {"path": f"memory/{DAY}.md", "action": "deleted"},
    ]
    assert not (ws / "memory" / DAY).exists() and not (ws / "memory" / f"{DAY}.md").exists()
    code, out, _ = mem("-w", ws, "search", "quokka", "--no-sync")
    assert (code, out.strip()) == (0, "(no memory results)")


def test_delete_keeps_a_day_page_that_still_lists_notes(ws, mem, note):
    note(ws, f"memory/{DAY}/meeting.md", "# Meeting\n", name="meeting", description="A meeting.")
    path = res(ws, f"{DAY}/gone.txt", "Temporary.\n")
    scan(mem, ws)
    path.unlink()
    scan(mem, ws)
    page = note_text(ws, f"memory/{DAY}.md")
    assert "1 note(s) today." in page and "meeting.md" in page and "gone.md" not in page


def test_collisions_get_a_path_hash_then_a_counter(ws, mem, note):
    note(
        ws,
        f"memory/{DAY}/report.md",
        "# From a conversation\n",
        name="report",
        description="Not a resource.",
        session_id="s1",
    )
    first, second = f"resource/{DAY}/report.md", f"resource/{DAY}/sub/report.txt"
    h1 = hashlib.sha1(first.encode()).hexdigest()[:8]
    h2 = hashlib.sha1(second.encode()).hexdigest()[:8]
    note(ws, f"memory/{DAY}/report--{h2}.md", "# Someone else's\n", name="x", description="Taken.")
    res(ws, f"{DAY}/report.md", "# First report\n")
    res(ws, f"{DAY}/sub/report.txt", "Second report.\n")
    data, _ = scan(mem, ws)
    assert {n["resource"]: n["note"] for n in data["notes"]} == {
        first: f"memory/{DAY}/report--{h1}.md",
        second: f"memory/{DAY}/report--{h2}-2.md",
    }
    assert "session_id: s1" in note_text(ws, f"memory/{DAY}/report.md")
    assert "# Someone else's" in note_text(ws, f"memory/{DAY}/report--{h2}.md")


def test_bad_input_is_skipped_with_a_reason_and_the_rest_goes_on(ws, run_mem):
    res(ws, f"{DAY}/big.txt", b"a" * (12 * 1024 * 1024))
    res(ws, f"{DAY}/photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")
    res(ws, f"{DAY}/latin1.txt", "Caf\u00e9 cr\u00e8me\n".encode("latin-1"))
    res(ws, f"{DAY}/empty.md", " \n\n")
    res(ws, f"{DAY}/wide.txt", "wide".encode("utf-16"))
    res(ws, f"{DAY}/good.txt", "Still interpreted.\n")
    locked = res(ws, f"{DAY}/locked.txt", "secret")
    locked.chmod(0)
    can_lock = not os.access(locked, os.R_OK)  # root reads it anyway
    code, out, err = run_mem("-w", ws, "resource", "scan")
    locked.chmod(0o644)
    assert code == 0, err
    assert "Traceback" not in err
    lines = out.splitlines()
    assert f"Added memory/{DAY}/good.md (resource/{DAY}/good.txt)" in lines
    assert f"Skipped resource/{DAY}/big.txt: larger than 10 MiB (12.0 MiB)" in lines
    assert f"Skipped resource/{DAY}/photo.txt: binary content" in lines
    assert f"Skipped resource/{DAY}/latin1.txt: not valid UTF-8 (line 1, byte 3)" in lines
    assert f"Skipped resource/{DAY}/empty.md: empty" in lines
    assert f"Skipped resource/{DAY}/wide.txt: UTF-16 text; convert it to UTF-8" in lines
    if can_lock:
        assert f"Skipped resource/{DAY}/locked.txt: unreadable: Permission denied" in lines
    assert sorted(p.name for p in (ws / "memory" / DAY).iterdir()) == ["good.md"] + ([] if can_lock else ["locked.md"])


def test_a_second_scan_without_changes_writes_nothing(ws, mem):
    res(ws, f"{DAY}/a.md", "# A\n\nAlpha.\n")
    res(ws, "b.csv", "x,y\n1,2\n")
    res(ws, f"{DAY}/bad.txt", b"\xff\xfe\x00")
    scan(mem, ws)
    before = tree(ws)
    data, err = scan(mem, ws)
    assert tree(ws) == before
    assert data["resources"] == {
        "added": [],
        "modified": [],
        "deleted": [],
        "unchanged": [f"resource/{DAY}/a.md", "resource/b.csv"],
    }
    assert data["notes"] == [] and data["changes"] == [] and err == ""
    # a touch without a content change only refreshes the catalog's stat
    os.utime(ws / "resource" / "b.csv", (1_700_000_000, 1_700_000_000))
    data, _ = scan(mem, ws)
    assert data["resources"]["unchanged"] == [f"resource/{DAY}/a.md", "resource/b.csv"]
    catalogs = ("file_catalog/resource", "mem_metadata/resource/catalog")  # the catalog and mem's copy of it
    assert {k: v for k, v in tree(ws).items() if not any(c in k for c in catalogs)} == {
        k: v for k, v in before.items() if not any(c in k for c in catalogs)
    }


def test_dry_run_writes_nothing_and_says_what_it_would_do(ws, mem):
    res(ws, f"{DAY}/a.md", "# A\n")
    before = tree(ws)
    code, out, err = mem("-w", ws, "resource", "scan", "--dry-run")
    assert code == 0, err
    assert out.splitlines() == [
        f"Would add memory/{DAY}/a.md (resource/{DAY}/a.md)",
        (
            "Dry run, nothing written: 1 resource(s): 1 added, 0 modified, 0 deleted, "
            "0 skipped, 0 unchanged (offline digest)"
        ),
    ]
    assert tree(ws) == before


def test_no_interpret_catalogs_only_and_a_later_scan_writes_the_notes(ws, mem):
    res(ws, f"{DAY}/a.md", "# A\n\nAlpha.\n")
    data, _ = scan(mem, ws, "--no-interpret")
    assert data["pending"] == [f"resource/{DAY}/a.md"] and data["notes"] == []
    assert not (ws / "memory" / DAY).exists()
    assert [r["path"] for r in store.read_records(ws / "mem_metadata/file_catalog/resource.jsonl.zst")] == [
        f"resource/{DAY}/a.md"
    ]
    data, _ = scan(mem, ws)
    assert data["resources"]["unchanged"] == [f"resource/{DAY}/a.md"]
    assert data["notes"] == [{"resource": f"resource/{DAY}/a.md", "note": f"memory/{DAY}/a.md", "action": "added"}]
    (ws / "resource" / DAY / "a.md").unlink()
    data, _ = scan(mem, ws, "--no-interpret")
    assert data["resources"]["deleted"] == [f"resource/{DAY}/a.md"] and data["changes"] == []
    assert (ws / "memory" / DAY / "a.md").is_file()
    data, _ = scan(mem, ws)
    assert data["changes"][0] == {"path": f"memory/{DAY}/a.md", "action": "deleted"}


def test_a_remes_catalog_and_notes_are_taken_over_without_rewriting(ws, mem, note):
    path = res(ws, "report.txt", "Quarterly report.\n")
    note(
        ws,
        "memory/2026-01-05/report.md",
        "# Report\n\nReMe wrote this.\n",
        name="report",
        description="ReMe's reading.",
        source_resource="[[resource/report.txt]]",
    )
    catalog = ws / "mem_metadata/file_catalog/resource.jsonl.zst"
    store.write_lines(catalog, [store.catalog_line("resource/report.txt", path.stat().st_mtime)])
    before = note_text(ws, "memory/2026-01-05/report.md")
    data, err = scan(mem, ws)
    assert err == ""
    assert data["notes"] == [
        {"resource": "resource/report.txt", "note": "memory/2026-01-05/report.md", "action": "linked"}
    ]
    assert note_text(ws, "memory/2026-01-05/report.md") == before


def test_a_note_edited_by_hand_is_never_overwritten_or_removed(ws, mem):
    path = res(ws, f"{DAY}/a.md", "# A\n\nAlpha.\n")
    scan(mem, ws)
    note = ws / "memory" / DAY / "a.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nMy own remark.\n", encoding="utf-8")
    path.write_text("# A\n\nBeta.\n", encoding="utf-8")
    data, err = scan(mem, ws)
    assert f"kept memory/{DAY}/a.md: edited since mem wrote it" in err
    assert data["pending"] == [f"resource/{DAY}/a.md"]
    assert "My own remark." in note.read_text(encoding="utf-8")
    path.unlink()
    data, err = scan(mem, ws)
    assert f"kept memory/{DAY}/a.md: edited since mem wrote it, although resource/{DAY}/a.md was deleted" in err
    assert note.is_file()


def test_catalog_records_have_the_graph_shape_then_our_fields(ws, mem):
    res(ws, f"{DAY}/a.md", "# A\n")
    scan(mem, ws)
    raw = store.read_raw_lines(ws / "mem_metadata/file_catalog/resource.jsonl.zst")
    [rec] = [json.loads(line) for line in raw]
    assert list(rec) == [
        "path",
        "st_mtime",
        "links",
        "chunk_ids",
        "front_matter",
        "st_size",
        "sha256",
        "date",
        "note",
        "note_sha256",
        "interpreted",
        "skipped",
        "checked_ns",
    ]
    assert rec["links"] == [] and rec["chunk_ids"] == [] and rec["front_matter"] == {"name": "", "description": ""}
    assert rec["note"] == f"memory/{DAY}/a.md" and rec["date"] == DAY and rec["interpreted"] == rec["sha256"]


def test_a_lost_or_corrupt_catalog_is_rebuilt_from_the_notes_without_duplicates(ws, mem):
    res(ws, f"{DAY}/a.md", "# A\n")
    res(ws, "b.txt", "Bee.\n")
    scan(mem, ws)
    before = tree(ws)
    catalog = ws / "mem_metadata/file_catalog/resource.jsonl.zst"
    catalog.write_bytes(b"not zstd at all")
    data, err = scan(mem, ws)
    assert "rebuilt from the notes" in err
    assert sorted(n["action"] for n in data["notes"]) == ["linked", "linked"]
    catalogs = ("resource.jsonl", "mem_metadata/resource/catalog.jsonl")  # the catalog and mem's copy of it
    assert {k: v for k, v in tree(ws).items() if not any(c in k for c in catalogs)} == {
        k: v for k, v in before.items() if not any(c in k for c in catalogs)
    }
    catalog.unlink()
    data, _ = scan(mem, ws)
    assert sorted(n["action"] for n in data["notes"]) == ["linked", "linked"]


def test_a_held_workspace_lock_exits_75_and_writes_nothing(ws, run_mem, clean_failure):
    res(ws, f"{DAY}/a.md", "# A\n")
    with Lock(ws / "mem_metadata/locks/workspace.lock", "test"):
        result = run_mem("-w", ws, "resource", "scan", "--wait", "0.2")
    assert "busy" in clean_failure(result, 75).lower()
    assert not (ws / "memory" / DAY).exists()


def test_text_report_and_streams(ws, run_mem):
    res(ws, f"{DAY}/a.md", "# A\n")
    code, out, err = run_mem("-w", ws, "resource", "scan")
    assert code == 0 and err == ""
    assert out.splitlines() == [
        f"Added memory/{DAY}/a.md (resource/{DAY}/a.md)",
        f"Added memory/{DAY}.md",
        ("Scanned 1 resource(s): 1 added, 0 modified, 0 deleted, 0 skipped, 0 unchanged (offline digest)"),
    ]


def test_a_missing_resource_folder_is_an_empty_scan(ws, mem):
    data, _ = scan(mem, ws)
    assert data["resources"] == {"added": [], "modified": [], "deleted": [], "unchanged": []}
    assert not (ws / "mem_metadata/file_catalog/resource.jsonl.zst").exists()
