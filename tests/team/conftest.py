"""Fixtures of the team-memory tests: a real PostgreSQL 16 + pgvector started by the suite.

pgserver (a dev dependency) brings the server; one is started per test session in a
temporary folder and every test gets a database of its own. Without the `postgres` extra
(psycopg) or pgserver the tests are skipped with the reason, unless MEM_REQUIRE_POSTGRES=1
(CI), which makes that a failure. Helpers are fixtures defined here: `from conftest import`
would be ambiguous in this test tree.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REQUIRE = os.environ.get("MEM_REQUIRE_POSTGRES") == "1"  # read at import: tests pin MEM_* away
PASSWORD = "pg-Secret-7f3a9c"  # trust auth ignores it; it must never be printed or stored
DIMS = 16


def _missing() -> list[str]:
    return [m for m in ("psycopg", "pgserver") if importlib.util.find_spec(m) is None]


@pytest.fixture(scope="session")
def pg_server():
    missing = _missing()
    if missing:
        why = (
            f"team-memory tests need {' and '.join(missing)} (the postgres extra and pgserver: pip install -e '.[dev]')"
        )
        if REQUIRE:
            pytest.fail(f"MEM_REQUIRE_POSTGRES=1 but {why}", pytrace=False)
        pytest.skip(why)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is not set
        import pgserver

    # not under pytest's basetemp: a concurrent pytest session may prune old basetemps,
    # and a server whose data folder vanishes dies mid-test
    data = Path(tempfile.mkdtemp(prefix="mem-test-pg-"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is not set
        srv = pgserver.get_server(data, cleanup_mode="stop")
    yield srv
    srv.cleanup()
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def pg(pg_server):
    """A fresh database: its DSN (with a password in it) and the socket folder."""
    import psycopg

    uri = pg_server.get_uri()
    host = re.search(r"host=([^&]+)", uri).group(1)
    name = "t_" + secrets.token_hex(6)
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    dsn = f"postgresql://postgres:{PASSWORD}@/{name}?host={host}"
    yield dsn
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def sql(pg):
    """sql(query, *args) -> rows, on the test's database."""
    import psycopg

    def run(query, *args):
        with psycopg.connect(pg, autocommit=True) as conn:
            cur = conn.execute(query, args or None)
            return cur.fetchall() if cur.description else []

    return run


def write_note(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def agent(tmp_path, pg):
    """agent(name, notes={rel: text}, **shared) -> a workspace publishing as `name`."""

    def make(
        name: str, notes: dict | None = None, embedding: dict | None = None, dsn: str | None = None, **shared
    ) -> Path:
        root = tmp_path / name
        (root / "memory").mkdir(parents=True, exist_ok=True)
        (root / "digest").mkdir(exist_ok=True)
        cfg = {
            "shared": {"dsn": dsn if dsn is not None else pg, "namespace": "team", **shared},
            "embedding_model_config": embedding or {"backend": "none"},
        }
        if not cfg["shared"]["dsn"]:
            del cfg["shared"]["dsn"]
        (root / "mem.yaml").write_text(json.dumps(cfg, indent=1), encoding="utf-8")  # JSON is YAML
        for rel, text in (notes or {}).items():
            write_note(root, rel, text)
        return root

    return make


@pytest.fixture
def cli(tmp_path):
    """cli(workspace, *args, env=None) -> (returncode, stdout, stderr): the real `mem` in a subprocess."""

    def run(root, *args, env=None, timeout=120):
        full = dict(os.environ)
        full.pop("MEM_EMBEDDING_BACKEND", None)  # (pinned to none by tests/conftest.py) each mem.yaml says
        full.update({k: v for k, v in (env or {}).items() if v is not None})
        for k, v in (env or {}).items():
            if v is None:
                full.pop(k, None)
        proc = subprocess.run(
            [sys.executable, "-m", "memcli", "-w", str(root), *map(str, args)],
            cwd=tmp_path,
            env=full,
            capture_output=True,
            timeout=timeout,
        )
        return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")

    return run


# ---------------------------------------------------------------- a fake embedding provider


def bow(text: str, dims: int = DIMS) -> list[float]:
    """Bag-of-words hash vector: each word adds ±1 to one dimension (never all zero)."""
    v = [0.0] * dims
    for word in re.findall(r"\w\w+", text.lower()):
        h = hashlib.sha256(word.encode("utf-8")).digest()
        v[h[0] % dims] += 1.0 if h[1] & 1 else -1.0
    v[-1] += 0.01
    return v


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        data = [{"object": "embedding", "index": i, "embedding": bow(t)} for i, t in enumerate(body["input"])]
        out = json.dumps({"object": "list", "model": "bow", "data": data}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def embedder():
    """embedding_model_config of an OpenAI-compatible server on 127.0.0.1 answering bow()."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield {
        "backend": "openai",
        "base_url": f"http://127.0.0.1:{srv.server_address[1]}/v1",
        "api_key": "sk-test",
        "model_name": "bow",
        "dimensions": DIMS,
        "max_retries": 0,
    }
    srv.shutdown()
