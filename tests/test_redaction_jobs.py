"""Secrets never enter memory: remember, ingest, resource scan and dream through the real CLI.

The values below have real formats (and are fake). After each job no Markdown note, session
log, store or inbox record under the workspace holds them; the report counts what went, and
`mem health` warns about a note that already held one.
"""

from __future__ import annotations

import json

import zstandard

OPENAI = "sk-proj-" + "Tq8vR2mXw9LpZ4nB7cJ1kD6fH3sY0aGe" + "uVt5iOoQrWzXb2Nm"
AWS_ID = "AKIA" + "QX7TZ4NR2B9KLM3W"
AWS_SECRET = "wJalrXUtnF" + "EMI/K7MDENG/bPxRfi" + "CYzq8Vv3Tm1Y"
GITHUB = "ghp_" + "Zr4TqW8vNx2LmP9kJ7bH3cY6dF1sA0eGuViO"
PASSWORD = "Tr0ub4dor&3x"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----"
)
SECRETS = [OPENAI, AWS_ID, AWS_SECRET, GITHUB, PASSWORD, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMx", "s3cr3t-Db-pa55"]


def memory_bytes(root) -> bytes:
    """Everything mem keeps under the workspace, the zstd stores decompressed."""
    out = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or "resource" in p.relative_to(root).parts[:1]:
            continue  # resource/ holds the user's own external files, which mem never edits
        data = p.read_bytes()
        if p.name.endswith(".zst"):
            with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as r:
                data = r.read()  # every frame: the stores are runs of frames
        out.append(data)
    return b"\n".join(out)


def assert_no_secret(root):
    data = memory_bytes(root)
    leaked = [s for s in SECRETS if s.encode() in data]
    assert not leaked, f"secrets kept in memory: {leaked}"


def test_remember_redacts_before_the_note_and_the_session_log(ws, run_mem):
    code, out, err = run_mem("-w", ws, "remember", f"my api key is {OPENAI}", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["redacted"] == {"openai_key": 1} and "[REDACTED:openai_key]" in rep["text"]
    assert "redacted 1 secret-shaped value(s) before writing (openai_key)" in err
    assert_no_secret(ws)
    code, out, _ = run_mem("-w", ws, "search", "api key", "--json")
    assert "[REDACTED:openai_key]" in json.loads(out)["results"][0]["text"]


def test_ingest_redacts_messages_log_note_and_store(ws, run_mem):
    convo = [
        {"role": "user", "content": f"Our AWS keys: access key {AWS_ID}, secret access key {AWS_SECRET}."},
        {"role": "assistant", "content": "Noted. Anything else for the deploy?"},
        {"role": "user", "content": f"The CI token is {GITHUB} and the db password={PASSWORD} for staging."},
        {"role": "user", "content": f"Here is the deploy key:\n{PEM}\nWe decided to deploy on Fridays."},
    ]
    code, out, err = run_mem(
        "-w", ws, "ingest", "--session-id", "deploy", "--force", "--json", "-", input=json.dumps(convo)
    )
    assert code == 0, err
    rep = json.loads(out)
    assert rep["extracted"] and rep["changes"]
    assert {"aws_access_key_id", "aws_secret_key", "github_token", "password", "private_key"} <= set(rep["redacted"])
    assert_no_secret(ws)
    log = (ws / "mem_session/dialog/deploy.jsonl").read_text(encoding="utf-8")
    assert "[REDACTED:github_token]" in log and "deploy on Fridays" in log  # the rest is kept


def test_resource_scan_redacts_config_values(ws, run_mem):
    res = ws / "resource" / "2026-05-18"
    res.mkdir(parents=True)
    (res / "config.json").write_text(
        json.dumps({"db_host": "db.internal", "db_port": 5432, "db_password": "s3cr3t-Db-pa55", "api_key": OPENAI}),
        encoding="utf-8",
    )
    code, out, err = run_mem("-w", ws, "resource", "scan", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["notes"] and sum(rep["redacted"].values()) == 2
    assert_no_secret(ws)
    note = ws / rep["notes"][0]["note"]
    assert "db.internal" in note.read_text(encoding="utf-8")  # ordinary values stay


def test_dream_keeps_a_hand_written_secret_out_of_the_digest_and_health_names_it(ws, run_mem, note):
    note(
        ws,
        "memory/2026-05-18/ops.md",
        f"# Ops\n\n- The staging database password is {PASSWORD} now.\n"
        "- We deploy the billing service with Terraform every Friday.\n",
        name="ops",
        description="Ops notes.",
    )
    code, out, err = run_mem("-w", ws, "dream", "--date", "2026-05-18", "--json")
    assert code == 0, err
    assert json.loads(out)["redacted"] == {"password": 1}
    digest = b"".join(p.read_bytes() for p in (ws / "digest").rglob("*.md"))
    assert PASSWORD.encode() not in digest
    code, out, err = run_mem("-w", ws, "health", "--json")
    secrets = next(c for c in json.loads(out)["checks"] if c["name"] == "secrets")
    assert secrets["status"] == "warn" and secrets["figures"]["paths"] == ["memory/2026-05-18/ops.md"]
    assert (ws / "memory/2026-05-18/ops.md").read_text(encoding="utf-8").count(PASSWORD) == 1  # never edited


def test_redaction_can_be_configured(ws, run_mem):
    (ws / "mem.yaml").write_text(
        "redaction:\n  patterns:\n    ticket_code: 'TKT-[0-9]{6}'\n  disabled_kinds: [openai_key]\n", encoding="utf-8"
    )
    code, out, err = run_mem("-w", ws, "remember", f"ticket TKT-123456 uses {OPENAI}", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["redacted"] == {"ticket_code": 1} and OPENAI in rep["text"]
    (ws / "mem.yaml").write_text("redaction:\n  patterns:\n    broken: '(unclosed'\n", encoding="utf-8")
    code, out, err = run_mem("-w", ws, "remember", "anything")
    assert code == 3 and out == "" and "broken" in err and len(err.strip().splitlines()) == 1
    (ws / "mem.yaml").write_text("redaction:\n  enabled: false\n", encoding="utf-8")
    code, out, err = run_mem("-w", ws, "remember", f"kept as written {GITHUB}", "--json")
    assert code == 0 and json.loads(out)["redacted"] == {} and GITHUB in json.loads(out)["text"]


# ---------------------------------------------------------------- secrets as people write them, end to end
SENTENCE = "My password for the staging admin is Tr0ub4dor&3-Lumen and the root password on logs-02 is hunter2-Xq9!zz"
SENTENCE_VALUES = ["Tr0ub4dor&3-Lumen", "hunter2-Xq9!zz"]
ACCOUNT_KEY = "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NQ=="
CONNECTION = (
    f"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={ACCOUNT_KEY};EndpointSuffix=core.windows.net"
)


def every_file(root) -> list:
    """(relative path, bytes) of every file under the workspace, the zstd stores decompressed."""
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            if p.name.endswith(".zst"):
                with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as r:
                    data = r.read()
            out.append((p.relative_to(root).as_posix(), data))
    return out


def test_sentence_secrets_reach_no_file_and_dream_prints_no_account_key(ws, run_mem):
    convo = [
        {"role": "user", "content": SENTENCE},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": f"The logs storage connection string is {CONNECTION} and we keep logs 30 days."},
    ]
    code, out, err = run_mem(
        "-w", ws, "ingest", "--session-id", "ops", "--force", "--json", "-", input=json.dumps(convo)
    )
    assert code == 0, err
    assert json.loads(out)["redacted"] == {"azure_key": 1, "password": 2}
    code, out, err = run_mem("-w", ws, "remember", SENTENCE, "--json")
    assert code == 0, err
    assert json.loads(out)["text"] == (
        "My password for the staging admin is [REDACTED:password] and the root password "
        "on logs-02 is [REDACTED:password]"
    )
    code, out, err = run_mem("-w", ws, "dream")
    assert code == 0, err
    assert "AccountKey=" + ACCOUNT_KEY[:8] not in out and ACCOUNT_KEY not in out + err
    files = every_file(ws)
    assert any(rel.startswith("mem_session/dialog/") for rel, _ in files) and any("digest/" in rel for rel, _ in files)
    assert any(rel.endswith("interests.yaml") for rel, _ in files) and any("inbox" in rel for rel, _ in files)
    for value in (*SENTENCE_VALUES, ACCOUNT_KEY):
        held = [rel for rel, data in files if value.encode() in data or value.lower()[:9] in rel.lower()]
        assert not held, f"{value} kept in {held}"
    code, out, err = run_mem("-w", ws, "health", "--json")
    assert code == 0, err
    check = next(c for c in json.loads(out)["checks"] if c["name"] == "secrets")
    assert check["status"] == "ok" and check["figures"] == {"files": 0, "values": 0}


def test_health_names_a_note_holding_a_sentence_password(ws, run_mem, note):
    note(ws, "memory/2026-05-18/access.md", f"# Access\n\n- {SENTENCE}\n- my PIN is 4821\n")
    assert run_mem("-w", ws, "reindex")[0] == 0  # its chunks hold them too: reported once, as the note
    code, out, err = run_mem("-w", ws, "health")
    assert code == 0, err  # a note is your text: a warning, the workspace stays healthy
    line = next(x for x in out.splitlines() if x.startswith("[SECRETS]"))
    assert "-> WARN" in line and "memory/2026-05-18/access.md" in line and "files=1 values=3" in line
    assert not any(v in out + err for v in (*SENTENCE_VALUES, "4821"))
    code, out, err = run_mem("-w", ws, "health", "--json")
    check = next(c for c in json.loads(out)["checks"] if c["name"] == "secrets")
    assert check["status"] == "warn" and check["figures"]["paths"] == ["memory/2026-05-18/access.md"]


def test_health_fails_on_mem_records_and_warns_on_stale_chunks(ws, run_mem, note):
    """A session log, the inbox or interests.yaml written before the rules knew a kind: fail (no command
    rewrites them); a chunk of a note since cleaned: warn, `mem reindex` rewrites it."""
    note(ws, "memory/2026-05-18/access.md", f"# Access\n\n- {SENTENCE}\n")
    code, _, err = run_mem("-w", ws, "search", "staging admin")  # indexes the note, secret and all
    assert code == 0, err
    note(ws, "memory/2026-05-18/access.md", "# Access\n\n- The staging admin password is in the vault.\n")
    log = ws / "mem_session" / "dialog" / "old.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(
        json.dumps(
            {"id": "m1", "role": "user", "content": [{"type": "text", "text": "密码是 Zh8#kL2m9"}]}, ensure_ascii=True
        )
        + "\n",
        encoding="utf-8",
    )  # \u-escaped: still found
    code, out, err = run_mem("-w", ws, "health", "--json")
    assert code == 5, err
    check = next(c for c in json.loads(out)["checks"] if c["name"] == "secrets")
    assert check["status"] == "fail" and "mem_session/dialog/old.jsonl" in check["message"]
    assert check["figures"]["paths"] == [
        "mem_metadata/file_store/file_chunks_default_v1.jsonl.zst (memory/2026-05-18/access.md)",
        "mem_session/dialog/old.jsonl",
    ]
    assert "mem reindex" in check["message"] and "Zh8#kL2m9" not in out and SENTENCE_VALUES[0] not in out
    log.unlink()
    code, out, err = run_mem("-w", ws, "reindex")
    assert code == 0, err
    code, out, err = run_mem("-w", ws, "health", "--json")
    assert code == 0 and next(c for c in json.loads(out)["checks"] if c["name"] == "secrets")["status"] == "ok"
