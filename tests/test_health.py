"""`mem health` in a subprocess: the exact embedding line against a real provider server on
127.0.0.1 (tests/providers/fake_provider.py), store integrity, stale files, config, exit codes."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "providers"))
import fake_provider as fp

import memcli

SECRET = "sk-secret-XYZ"
UNPIN = {"MEM_EMBEDDING_BACKEND": None}  # conftest pins `none`; these tests configure mem.yaml
HEALTHY = f"✅ mem {memcli.__version__} - healthy"
UNHEALTHY = f"❌ mem {memcli.__version__} - unhealthy"
NUM = r"(\d+\.\d{3})"


@pytest.fixture
def server():
    state, stop = fp.serve()  # speaks OpenAI embeddings, 8 dims, unless a reply says otherwise
    yield state
    stop()


@pytest.fixture
def root(tmp_path) -> Path:
    ws = tmp_path / "ws"
    for rel, text in {
        "memory/2026-05-01/bike.md": "# Bike\n\nMy preferred commute is a bicycle.\n",
        "memory/2026-05-01/tea.md": "# Tea\n\nGreen tea in the morning.\n",
        "MEMORY.md": "# Memory\n\nThe user likes short answers.\n",
    }.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    (ws / "digest").mkdir()
    return ws


def configure(root: Path, server=None, *, extra: str = "", **emb) -> None:
    cfg = (
        {"backend": "none"}
        if server is None
        else {
            "backend": "openai",
            "base_url": server.url + "/v1",
            "model_name": "test-emb",
            "api_key": SECRET,
            "dimensions": 8,
            "max_retries": 0,
        }
    )
    cfg.update(emb)
    body = "embedding_model_config:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in cfg.items())
    (root / "mem.yaml").write_text(body + extra, encoding="utf-8")


@pytest.fixture
def cli(run_mem, root):
    def run(*args):
        code, out, err = run_mem("-w", root, *args, env=UNPIN)
        assert SECRET not in out and SECRET not in err, (out, err)
        assert "Traceback" not in err, err
        return code, out, err

    return run


def head(root: Path) -> str:
    return re.escape(f"[EMBEDDING HEALTH CHECK] name=default workspace_dir={root.resolve()} -> ")


def embedding_line(out: str) -> str:
    return out.splitlines()[0]


def pings(server) -> list:
    return [s.body for s in server.seen if s.path == "/v1/embeddings"]


# ---------------------------------------------------------------- the embedding line


def test_ok_line(root, server, cli):
    configure(root, server)
    assert cli("reindex")[0] == 0
    before = len(pings(server))
    code, out, err = cli("health")
    assert (code, err) == (0, ""), out
    m = re.fullmatch(head(root) + r"OK timeout=15\.0s elapsed=" + NUM + "s", embedding_line(out))
    assert m, embedding_line(out)
    assert 0 <= float(m[1]) < 15
    assert out.splitlines()[-1] == HEALTHY
    assert pings(server)[before:] == [{"model": "test-emb", "input": ["ping"], "encoding_format": "float"}]

    code, out, _ = cli("health", "--timeout", "2.5")
    assert code == 0 and re.fullmatch(head(root) + r"OK timeout=2\.5s elapsed=" + NUM + "s", embedding_line(out))


@pytest.mark.parametrize("failure", ["http-500", "server-down"])
def test_failing_provider_is_a_fail_line(root, server, cli, failure):
    configure(root, server)
    if failure == "http-500":
        server.script(*[fp.Reply(500, {"error": {"message": "model overloaded"}})] * 10)
    else:
        configure(root, server, base_url="http://127.0.0.1:9/v1")  # discard port: nothing listens
    code, out, err = cli("health")
    assert code == 5, out
    m = re.fullmatch(
        head(root) + r"FAIL timeout=15\.0s elapsed=" + NUM + r"s error=ProviderError: (.+)", embedding_line(out)
    )
    assert m, embedding_line(out)
    assert ("HTTP 500" in m[2] and "model overloaded" in m[2]) if failure == "http-500" else "connect" in m[2]
    assert out.splitlines()[-1] == UNHEALTHY


def test_timeout_line(root, server, cli):
    configure(root, server)
    server.script(fp.Reply(delay=2.0))
    code, out, err = cli("health", "--timeout", "0.5")
    assert code == 5, out
    m = re.fullmatch(
        head(root) + r"FAIL timeout=0\.5s elapsed=" + NUM + r"s error=timeout\(0\.5s\)", embedding_line(out)
    )
    assert m, embedding_line(out)
    assert 0.5 <= float(m[1]) < 2.0
    assert out.splitlines()[-1] == UNHEALTHY


def test_dimension_mismatch_names_both_numbers(root, server, cli):
    configure(root, server)
    server.script(fp.Reply(dims=4))
    code, out, err = cli("health")
    assert code == 5, out
    m = re.fullmatch(
        head(root) + r"FAIL timeout=15\.0s elapsed=" + NUM + r"s error=ProviderError: (.+)", embedding_line(out)
    )
    assert m, embedding_line(out)
    assert "dimension" in m[2] and re.search(r"\b4\b", m[2]) and re.search(r"\b8\b", m[2]), m[2]


def test_no_backend_says_so_and_stays_healthy(root, cli):
    configure(root)  # backend: none
    assert cli("reindex")[0] == 0
    code, out, err = cli("health")
    assert (code, err) == (0, ""), out
    line = embedding_line(out)
    assert re.match(head(root), line), line
    assert " OK " not in line and "FAIL" not in line
    assert "none" in line or "keyword-only" in line, line
    assert out.splitlines()[-1] == HEALTHY
    data = json.loads(cli("health", "--json")[1])
    assert data["healthy"] is True and data["embedding"] == line


# ---------------------------------------------------------------- stores, files, config


def test_truncated_chunk_store_is_unhealthy(root, cli):
    configure(root)
    assert cli("reindex")[0] == 0
    store = root / "mem_metadata/file_store/file_chunks_default_v1.jsonl.zst"
    raw = store.read_bytes()
    store.write_bytes(raw[: len(raw) // 2])
    code, out, err = cli("health")
    assert code == 5, out
    assert out.splitlines()[-1] == UNHEALTHY
    assert any("FAIL" in ln for ln in out.splitlines()[1:]), out
    code, out, err = cli("health", "--json")
    assert code == 5 and json.loads(out)["healthy"] is False


def test_stale_file_is_a_warning_not_unhealthy(root, cli):
    configure(root)
    assert cli("reindex")[0] == 0
    note = root / "memory/2026-05-01/tea.md"
    note.write_text("# Tea\n\nGreen tea in the morning, and a longer line now.\n", encoding="utf-8")
    code, out, err = cli("health")
    assert code == 0, out
    assert out.splitlines()[-1] == HEALTHY + ", 1 warning"  # counted, not hidden behind "healthy"
    assert any("WARN" in ln and "memory/2026-05-01/tea.md" in ln for ln in out.splitlines()), out
    data = json.loads(cli("health", "--json")[1])
    files = next(c for c in data["checks"] if c["name"] == "files")
    assert data["healthy"] is True and files["status"] == "warn" and files["figures"]["stale"] == 1


def test_notes_whose_frontmatter_does_not_parse_are_listed_with_the_reason(root, cli):
    """A description written by hand with a colon (`description: Note: about x`) does not parse:
    a search warns about it when it syncs the note, and `mem health` lists every such note with
    its one-line reason, edited since indexing or not; a warning, not unhealthy."""
    configure(root)
    day = root / "memory/2026-05-01"
    (day / "colon.md").write_text(
        "---\nname: colon\ndescription: Note: about x\n---\n# X\n\nAbout x.\n", encoding="utf-8"
    )
    (day / "bracket.md").write_text("---\nname: [oops\n---\n", encoding="utf-8")  # no body: no chunk
    (day / "fine.md").write_text("---\nname: fine\ndescription: 'Note: quoted'\n---\n# Fine\n", encoding="utf-8")
    code, out, err = cli("reindex")
    assert code == 0 and "colon.md: broken frontmatter at line 3" in err, err
    (day / "tea.md").write_text("---\ndescription: Tea: green\n---\n# Tea\n", encoding="utf-8")  # since indexing
    code, out, err = cli("health")
    assert code == 0, out
    lines = out.splitlines()
    head = next(ln for ln in lines if ln.startswith("[FRONTMATTER]"))
    assert head.startswith("[FRONTMATTER] broken=3 -> WARN: 3 note(s) whose frontmatter does not parse"), head
    listed = lines[lines.index(head) + 1 : lines.index(head) + 4]
    assert listed == [
        "    memory/2026-05-01/bracket.md: broken frontmatter at line 3: did not find expected ',' or ']'",
        "    memory/2026-05-01/colon.md: broken frontmatter at line 3: mapping values are not allowed in this "
        "context (quote a value that holds ': ')",
        "    memory/2026-05-01/tea.md: broken frontmatter at line 2: mapping values are not allowed in this "
        "context (quote a value that holds ': ')",
    ], out
    assert "[FILES] indexed=6 stale=1 skipped=0" in out  # a note without a body is not "not indexable"
    data = json.loads(cli("health", "--json")[1])
    check = next(c for c in data["checks"] if c["name"] == "frontmatter")
    assert check["status"] == "warn" and check["figures"]["broken"] == 3
    assert [n["path"] for n in check["figures"]["notes"]] == [
        f"memory/2026-05-01/{n}.md" for n in ("bracket", "colon", "tea")
    ]
    for name in ("colon", "bracket", "tea"):  # fixed: gone from the list, indexed again or not
        (day / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: 'Note: about x'\n---\n# X\n", encoding="utf-8"
        )
    data = json.loads(cli("health", "--json")[1])
    assert next(c for c in data["checks"] if c["name"] == "frontmatter")["status"] == "ok"


@pytest.mark.parametrize("cron", ["61 25 * * *", "every night", "0 23 * *"])
def test_bad_dream_cron_is_unhealthy(root, cli, cron):
    configure(root, extra=f"dream_cron: {json.dumps(cron)}\n")
    code, out, err = cli("health")
    assert code == 5, out
    assert out.splitlines()[-1] == UNHEALTHY
    assert any("FAIL" in ln and "dream_cron" in ln for ln in out.splitlines()), out


# ---------------------------------------------------------------- --json and secrets


@pytest.mark.parametrize(
    "reply", [None, fp.Reply(401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}})]
)
def test_json_parses_and_holds_no_api_key(root, server, cli, reply):
    configure(root, server)
    assert cli("reindex")[0] == 0
    if reply:
        server.script(reply)
    code, out, err = cli("health", "--json")
    assert code == (5 if reply else 0), out
    data = json.loads(out)
    assert data["healthy"] is (reply is None)
    assert data["version"] == memcli.__version__
    assert data["embedding"].startswith("[EMBEDDING HEALTH CHECK] name=default workspace_dir=")
    assert {c["name"] for c in data["checks"]} >= {"embedding", "index", "files", "config"}
    assert SECRET not in out
    assert server.seen[-1].headers["authorization"] == f"Bearer {SECRET}"  # the key was used, not shown
