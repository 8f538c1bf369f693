"""One deterministic test per bug the reliability campaigns found, at the exact point it bit.

The campaigns find bugs by chance (seeded); these pin each one with a kill or a pause at a
named file operation (killpoint.py KILLPOINT_MATCH), so a regression fails every time.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import sample_vault
from reliability_kit import (
    cli,
    copy_workspace,
    env_with,
    markdown,
    mem_cmd,
    ok,
    one_clear_line,
    pinned_env,
    run,
)

DAY = sample_vault.DAYS[1]


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    base = tmp_path_factory.mktemp("regress")
    with pinned_env(base / "home"):
        yield sample_vault.build(base / "vault", notes_per_day=4)


def kill_at(ws: Path, args: list, match: str, at: int = 1, env: dict | None = None, root: Path | None = None) -> int:
    """Run mem with SIGKILL just before the `at`-th file operation matching `match`."""
    kp = {"KILLPOINT_ROOT": root or ws, "KILLPOINT_MATCH": match, "KILLPOINT_AT": at, "KILLPOINT_ACTION": "kill"}
    code, _, err = run(args, env={**kp, **(env or {})}, killpoint=True)
    assert code == -9, f"never reached {match!r}: exit {code} {err}"
    return code


def health(ws: Path) -> dict:
    code, out, err = cli("-w", ws, "health", "--json")
    data = json.loads(out)
    data["code"] = code
    return data


def failing(report: dict) -> dict[str, str]:
    return {c["name"]: c["message"] for c in report["checks"] if c["status"] == "fail"}


# memcli/index/sync.py: the graph was written after the snapshot, so a kill between them left a
# trusted snapshot beside a stale graph that `mem reindex` never rewrote (health failed forever).


@pytest.mark.parametrize("store", ["file_store/", "file_graph/", "file_catalog/", "keyword_index/"])
def test_reindex_repairs_a_sync_killed_at_any_store_write(vault, tmp_path, store):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    (ws / f"memory/{DAY}/fresh-notes.md").write_text("# Fresh\n\nA fresh note about quetzal.\n")
    kill_at(ws, ["-w", ws, "reindex"], f"os.rename mem_metadata/{store}")
    ok(cli("-w", ws, "reindex"))
    report = health(ws)
    assert report["code"] == 0, failing(report)
    assert "quetzal" in cli("-w", ws, "search", "quetzal")[1]


def test_reindex_repairs_a_graph_deleted_by_hand(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    (ws / "mem_metadata/file_graph/default.jsonl.zst").unlink()
    assert health(ws)["code"] == 5
    ok(cli("-w", ws, "reindex"))
    assert health(ws)["code"] == 0


# memcli/jobs/ingest.py: a rerun whose note was already written skipped the day index, so an
# ingest killed between the note and its day index left the index stale for good.


def test_ingest_rerun_repairs_a_day_index_its_killed_run_left_stale(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    args = ["-w", ws, "ingest", vault["conv_new"], "-s", "s-new", "--force"]
    kill_at(ws, args, f"open memory/.mem-tmp-{DAY}.md")
    [note] = [p for p in (ws / "memory" / DAY).glob("*.md") if "session_id: s-new" in p.read_text()]
    assert note.name not in (ws / f"memory/{DAY}.md").read_text()
    ok(run(args))
    assert f"[[memory/{DAY}/{note.name}]]" in (ws / f"memory/{DAY}.md").read_text()


# memcli/jobs/resource/__init__.py: a scan killed after writing a note but before its catalog took its own
# note for a hand edit ("kept ...: edited since mem wrote it") for ever, left the day index stale,
# and never removed the note of a deleted resource.


@pytest.mark.parametrize(
    "match,at", [("file_catalog/.mem-tmp-resource", 2), ("os.rename memory/", 1), ("os.remove memory/", 1)]
)
def test_resource_scan_rerun_after_a_kill_finishes_the_job(vault, tmp_path, match, at):
    ref = copy_workspace(vault["root"], tmp_path / "ref")
    ok(run(["-w", ref, "resource", "scan"]))
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    kill_at(ws, ["-w", ws, "resource", "scan"], match, at)
    code, out, err = run(["-w", ws, "resource", "scan"])
    assert code == 0 and "kept" not in err, err
    assert markdown(ws) == markdown(ref)
    # and the notes are still mem's own: a later change to a resource reaches its note
    (ws / "resource/2026-06-29/runbook.txt").write_text("Runbook v3: restart the kestrelpelican queue.\n")
    code, out, err = run(["-w", ws, "resource", "scan"])
    assert code == 0 and "kept" not in err, err
    assert "kestrelpelican" in (ws / "memory/2026-06-29/runbook.md").read_text()


# memcli/vault/atomic.py: reindex deleted every temp file under mem_metadata/, including the one
# a running ingest was about to rename (its state file), which then failed with an internal error.


def test_reindex_leaves_a_running_writers_temp_file_alone(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    env = {
        "KILLPOINT_ROOT": ws,
        "KILLPOINT_MATCH": "os.rename mem_metadata/ingest/",
        "KILLPOINT_ACTION": "pause:3",
        "KILLPOINT_LOG": tmp_path / "events.log",
    }
    p = subprocess.Popen(
        mem_cmd(["-w", ws, "ingest", vault["conv_new"], "-s", "s-new", "--force"], killpoint=True),
        env=env_with(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not ((tmp_path / "events.log").exists() and "ingest/" in (tmp_path / "events.log").read_text()):
        assert p.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    ok(run(["-w", ws, "reindex", "--wait", "10"]))  # runs while the ingest holds its temp file
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err.decode()


def test_reindex_removes_temp_files_of_dead_writers_only(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    dead = subprocess.Popen(["true"])  # a pid that has exited
    dead.wait()
    stale = ws / f"mem_metadata/ingest/.mem-tmp-x.json.{dead.pid}.abcd1234"
    live = ws / f"mem_metadata/ingest/.mem-tmp-y.json.{os.getpid()}.abcd1234"
    fresh = ws / f"mem_metadata/ingest/.mem-tmp-z.json.{dead.pid}.0000aaaa"
    for p in (stale, live, fresh):
        p.write_text("{}")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(live, (old, old))
    ok(cli("-w", ws, "reindex"))
    assert not stale.exists() and live.exists() and fresh.exists()


# JSON nested thousands deep made the decoder raise RecursionError: an internal error (exit 1
# with "internal error") for ingest input, agent.json and backup meta.json.

DEEP = "[" * 100_000 + "]" * 100_000


def test_deeply_nested_input_is_bad_input(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    code, out, err = run(["-w", ws, "ingest", "-s", "deep", "--force"], input=DEEP)
    assert code == 2 and one_clear_line(code, err) is None and "nested too deeply" in err, err
    code, out, err = run(["-w", ws, "ingest", "-s", "deep", "--format", "jsonl"], input=DEEP + "\n")
    assert code == 2 and "nested too deeply" in err, err
    (ws / "agent.json").write_text('{"running": ' + DEEP + "}")
    code, out, err = run(["-w", ws, "search", "falcon"])
    assert code == 3 and one_clear_line(code, err) is None, err


def test_deeply_nested_backup_meta_is_a_damaged_backup(tmp_path, vault):
    import zipfile

    bad = tmp_path / "bk" / "ws-20260101T000000Z.zip"
    bad.parent.mkdir()
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("meta.json", DEEP)
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    code, out, err = run(["backup", "verify", bad])
    assert code == 2 and one_clear_line(code, err) is None and "nested too deeply" in err, err
    code, out, err = run(["-w", ws, "backup", "list", "--json"], env={"MEM_BACKUP_DIR": bad.parent})
    assert code == 0 and "RecursionError" in json.loads(out)["backups"][0]["error"], err


def test_deeply_nested_llm_reply_is_refused_not_raised():
    from memcli.extraction.conversation import validate

    with pytest.raises(validate.Invalid, match="nested too deeply"):
        validate.decode_object(DEEP)


# memcli/config/layers.py: a YAML alias bomb under a known key made the error message build the
# bomb's full repr (9**9 items): the command hung.


def test_config_alias_bomb_is_a_quick_config_error(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]" for p, n in zip("abcdefgh", "bcdefghi")]
    (ws / "mem.yaml").write_text("chunking:\n  target_tokens:\n" + "".join(f"    {x}\n" for x in lines))
    t0 = time.monotonic()
    code, out, err = run(["-w", ws, "search", "falcon"], timeout=30)
    assert code == 3 and one_clear_line(code, err) is None and "target_tokens" in err, err
    assert time.monotonic() - t0 < 10


# memcli/vault/lock.py: `--wait inf` never gave up; a wait must be bounded.


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_unbounded_wait_is_refused(vault, tmp_path, value):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    code, out, err = run(["-w", ws, "remember", "a fact", "--wait", value])
    assert code == 2 and one_clear_line(code, err) is None and "--wait" in err, err


# memcli/jobs/health.py + backup_restore.py: a restore killed while it swapped folders left a
# workspace that mixed old and restored files, and `mem health` called it healthy.


def test_health_flags_a_restore_killed_mid_swap_and_rollback_recovers(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    env = {"MEM_BACKUP_DIR": tmp_path / "bk"}
    before = markdown(ws)
    kill_at(ws, ["-w", ws, "backup", "restore", vault["backup"], "--yes"], "os.rename", at=3, env=env, root=ws)
    report = health(ws)
    assert report["code"] == 5 and "mem backup rollback" in failing(report).get("restore", ""), failing(report)
    ok(cli("-w", ws, "backup", "rollback", "--yes", env=env))
    assert markdown(ws) == before
    report = health(ws)  # the rollback completed: the leftover folder is only to be tidied now
    assert report["code"] == 0
    assert [c["status"] for c in report["checks"] if c["name"] == "restore"] == ["warn"]


# memcli/jobs/backup/restoring.py: found by the long crash campaign. The swap moved a folder
# aside, then the restored one in: a kill between the two renames left digest/ missing.


def test_a_restore_killed_at_any_swap_leaves_every_note_old_or_new(vault, tmp_path):
    env = {"MEM_BACKUP_DIR": tmp_path / "bk"}
    done = copy_workspace(vault["root"], tmp_path / "done")
    ok(cli("-w", done, "backup", "restore", vault["backup"], "--yes", env=env))
    new = markdown(done)
    base = copy_workspace(vault["root"], tmp_path / "base")
    old = markdown(base)
    assert new != old
    at = 1
    while True:
        ws = copy_workspace(base, tmp_path / f"ws{at}")
        kp = {
            "KILLPOINT_ROOT": ws,
            "KILLPOINT_MATCH": "os.rename .mem-restore-",
            "KILLPOINT_AT": at,
            "KILLPOINT_ACTION": "kill",
        }
        code, _, err = run(["-w", ws, "backup", "restore", vault["backup"], "--yes"], env={**kp, **env}, killpoint=True)
        if code == 0:
            break
        assert code == -9, err
        after = markdown(ws)
        bad = [rel for rel in set(after) | set(old) if after.get(rel) not in (old.get(rel), new.get(rel))]
        assert not bad, f"killed at swap {at}: {sorted(bad)[:5]}"
        assert health(ws)["code"] in (0, 5)
        at += 1
    assert at > 3, "the restore swapped fewer folders than the sample vault has"


def test_health_only_warns_about_a_restore_killed_before_it_swapped(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    env = {"MEM_BACKUP_DIR": tmp_path / "bk"}
    before = markdown(ws)
    kill_at(ws, ["-w", ws, "backup", "restore", vault["backup"], "--yes"], "open .mem-restore-", at=5, env=env)
    assert markdown(ws) == before
    report = health(ws)
    assert report["code"] == 0
    assert next(c for c in report["checks"] if c["name"] == "restore")["status"] == "warn"


# memcli/extraction/dream: found by the long bad-input campaign (case #585). A digest node made of
# one 10 MB line: every fact of the run was matched against it, and finding the names in a
# statement copied its prefix per word, so `mem dream` gave no answer within 10 minutes.


def test_dream_over_a_digest_node_of_one_huge_line_answers(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    blob = " ".join(f"Word{i} falcon" for i in range(400_000))  # 5.5 MB, one line
    (ws / "digest/wiki/blob.md").write_text(f"---\nname: blob\ndescription: A pasted blob.\n---\n{blob}\n")
    before = (ws / "digest/wiki/blob.md").read_bytes()
    code, out, err = run(["-w", ws, "dream", "--date", DAY], timeout=60)
    assert code == 0 and one_clear_line(code, err) is None, err
    assert (ws / "digest/wiki/blob.md").read_bytes() == before  # kept, not compared, not rewritten


# Found by the long bad-input campaign: PyYAML raises AttributeError/ValueError (not YAMLError)
# for a tag on a value of another type; JSON "\ud800" and non-UTF-8 argv bytes become lone
# surrogates no UTF-8 file can hold; agent.json with a non-object "running"; a backup in
# backup_dir whose meta.json lacks fields. Each was an internal error.


@pytest.mark.parametrize("args", [["dream", "--date", DAY], ["remember", "a fact"], ["reindex"]])
def test_a_tagged_frontmatter_value_of_the_wrong_type_is_only_a_broken_note(vault, tmp_path, args):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    (ws / f"memory/{DAY}/tagged.md").write_text("---\nname: !!timestamp x\ndescription: !!int y\n---\n# T\nfalcon\n")
    code, out, err = run(["-w", ws, *args])
    assert code == 0 and one_clear_line(code, err) is None, err


def test_a_tagged_config_value_of_the_wrong_type_is_a_config_error(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    (ws / "mem.yaml").write_text("timezone: !!timestamp x\n")
    code, out, err = run(["-w", ws, "config"])
    assert code == 3 and one_clear_line(code, err) is None, err


@pytest.mark.parametrize(
    "args,stdin",
    [
        (["ingest", "-s", "s", "--force"], '[{"role": "user", "content": "half \\ud800 a pair"}]'),
        (["ingest", "{conv}", "-s", "bad\udcffid"], None),
        (["remember", "a fact \udcff with a bad byte"], None),
    ],
)
def test_text_that_is_not_unicode_is_bad_input(vault, tmp_path, args, stdin):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    before = markdown(ws)
    args = [str(vault["conv_new"]) if a == "{conv}" else a for a in args]
    code, out, err = run(["-w", ws, *args], input=stdin)
    assert code == 2 and one_clear_line(code, err) is None, err
    assert markdown(ws) == before


def test_agent_json_with_a_running_that_is_not_an_object_is_a_config_error(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    (ws / "agent.json").write_text('{"running": 5}')
    code, out, err = run(["-w", ws, "remember", "a fact"])
    assert code == 3 and one_clear_line(code, err) is None, err


def test_backup_list_shows_a_foreign_zip_without_failing(vault, tmp_path):
    import zipfile

    bk = tmp_path / "bk"
    bk.mkdir()
    with zipfile.ZipFile(bk / "ws-20260101T000000Z.zip", "w") as zf:
        zf.writestr("meta.json", json.dumps({"format": "mem-backup", "format_version": 1, "files": []}))
    code, out, err = run(["-w", vault["root"], "backup", "list"], env={"MEM_BACKUP_DIR": bk})
    assert code == 0 and "ws-20260101T000000Z.zip" in out, err


# Derived files under mem_metadata/ that hold JSON, damaged into deep nesting (a sync tool, a
# disk error, a hand edit): each is read as "unreadable", never an internal error.


def test_a_deeply_nested_inbox_line_is_skipped(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    with open(ws / "mem_metadata/inbox/inbox.jsonl", "a") as fh:
        fh.write(DEEP + "\n")
    code, out, err = run(["-w", ws, "inbox"])
    assert code == 0 and one_clear_line(code, err) is None, err


def test_a_deeply_nested_dream_state_is_unreadable_not_an_internal_error(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    from memcli.jobs.dream import scan as dream_scan
    from memcli.vault.workspace import open_workspace

    state = dream_scan.state_path(open_workspace(ws, dict(os.environ)))
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(DEEP)
    code, out, err = run(["-w", ws, "dream", "--date", DAY])
    assert code == 0 and one_clear_line(code, err) is None, err


def test_a_dream_window_before_year_one_is_bad_input(vault, tmp_path):
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    code, out, err = run(["-w", ws, "dream", "--date", "0001-01-01"])
    assert code in (0, 2) and one_clear_line(code, err) is None, err
