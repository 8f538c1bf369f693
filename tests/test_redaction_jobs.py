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
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
       "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----")
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
    code, out, err = run_mem("-w", ws, "ingest", "--session-id", "deploy", "--force", "--json", "-",
                             input=json.dumps(convo))
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
    (res / "config.json").write_text(json.dumps({"db_host": "db.internal", "db_port": 5432,
                                                 "db_password": "s3cr3t-Db-pa55", "api_key": OPENAI}),
                                     encoding="utf-8")
    code, out, err = run_mem("-w", ws, "resource", "scan", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["notes"] and sum(rep["redacted"].values()) == 2
    assert_no_secret(ws)
    note = ws / rep["notes"][0]["note"]
    assert "db.internal" in note.read_text(encoding="utf-8")  # ordinary values stay


def test_dream_keeps_a_hand_written_secret_out_of_the_digest_and_health_names_it(ws, run_mem, note):
    note(ws, "memory/2026-05-18/ops.md", f"# Ops\n\n- The staging database password is {PASSWORD} now.\n"
         "- We deploy the billing service with Terraform every Friday.\n", name="ops", description="Ops notes.")
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
    (ws / "mem.yaml").write_text("redaction:\n  patterns:\n    ticket_code: 'TKT-[0-9]{6}'\n"
                                 "  disabled_kinds: [openai_key]\n", encoding="utf-8")
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
