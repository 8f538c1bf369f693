"""`mem mcp`: a real server process driven over stdio with JSON-RPC messages."""

from __future__ import annotations

import ast
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PLAN = "memory/2026-05-18/plan.md"


class Client:
    """A `mem mcp` subprocess; every stdout line must be one JSON-RPC message."""

    def __init__(self, ws: Path, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", str(ws), *args, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONFAULTHANDLER="1"),
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.next_id = 0

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, msg) -> None:
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n" if not isinstance(msg, bytes) else msg)
        self.proc.stdin.flush()

    def recv(self, timeout: float = 30.0):
        line = self.lines.get(timeout=timeout)
        assert line is not None, "the server closed stdout: " + self.stderr_text()
        assert line.endswith(b"\n")
        return json.loads(line)

    def request(self, method: str, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        reply = self.recv()
        assert reply["id"] == self.next_id and reply["jsonrpc"] == "2.0"
        return reply

    def initialize(self, version: str = "2025-06-18"):
        reply = self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply["result"]

    def call(self, name: str, arguments) -> tuple[str, bool]:
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        assert [c["type"] for c in result["content"]] == ["text"]
        return result["content"][0]["text"], result["isError"]

    def close(self) -> tuple[int, str]:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        assert self.lines.get(timeout=5) is None  # nothing but answered messages on stdout
        return code, self.stderr_text()

    def stderr_text(self) -> str:
        if self.proc.poll() is None:
            return "(running)"
        return self.proc.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def memory(ws, note):
    note(
        ws,
        PLAN,
        "# Plan\n\nWe chose PostgreSQL over MySQL for the Lumen API.\nThe migration runs on Friday.\n",
        name="plan",
        description="Database plan.",
    )
    note(ws, "MEMORY.md", "# Preferences\n\nThe user prefers tea over coffee.\n")
    return ws


@pytest.fixture
def client(memory):
    c = Client(memory)
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait(timeout=10)


def test_initialize_and_list_tools(client):
    from memcli.mcp import schemas as agent_prompt

    init = client.initialize()
    assert init["protocolVersion"] == "2025-06-18"
    assert init["capabilities"] == {"tools": {"listChanged": False}}
    assert init["serverInfo"]["name"] == "mem"
    assert 'If someone says "remember this", write it down' in init["instructions"]
    assert client.request("ping")["result"] == {}
    tools = client.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["memory_search", "memory_get", "remember", "ingest"]
    expected = [t.mcp() for t in agent_prompt.memory_tools()] + [agent_prompt.ingest_tool().mcp()]
    assert tools == json.loads(json.dumps(expected))
    code, err = client.close()
    assert code == 0 and "Traceback" not in err


def test_unknown_protocol_version_gets_the_newest(client):
    assert client.initialize("1999-01-01")["protocolVersion"] == "2025-06-18"
    assert client.initialize("2024-11-05")["protocolVersion"] == "2024-11-05"


def cli(ws, *args):
    proc = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(ws), *args], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.removesuffix("\n")


def test_tools_answer_with_the_cli_text(client, memory):
    client.initialize()
    text, failed = client.call("memory_search", {"query": "PostgreSQL migration", "limit": 2})
    assert not failed
    assert text == cli(
        memory, "search", "--citations", "--max-chars", "700", "--limit", "2", "--", "PostgreSQL migration"
    )
    assert f"Source: {PLAN}#L5-L8" in text
    text, failed = client.call("memory_get", {"path": PLAN, "from": 7, "lines": 2})
    assert (text, failed) == (cli(memory, "get", "--from", "7", "--lines", "2", PLAN), False)
    assert text == "We chose PostgreSQL over MySQL for the Lumen API.\nThe migration runs on Friday."
    text, failed = client.call("remember", {"text": "The staging database is db-staging-2.", "tags": ["ops"]})
    assert not failed and text.startswith("Remembered in memory/") and text.endswith("/remembered-facts.md")
    again = cli(memory, "remember", "--tag", "ops", "--", "The staging database is db-staging-2.")
    assert again == "Already remembered in " + text.removeprefix("Remembered in ")
    assert client.call("remember", {"text": "The staging database is db-staging-2.", "tags": ["ops"]}) == (again, False)
    found, _ = client.call("memory_search", {"query": "db-staging-2"})
    assert "The staging database is db-staging-2. #ops" in found
    assert client.call("memory_search", {"query": "zzyzx"}) == ("(no memory results)", False)


def test_a_file_edited_between_two_calls_is_seen(client, memory):
    client.initialize()
    first, _ = client.call("memory_search", {"query": "Friday migration"})
    assert "The migration runs on Friday." in first
    path = memory / PLAN
    before = path.stat()
    # same length, same second: only the content hash can tell (change detection compares mtime and size)
    path.write_text(path.read_text(encoding="utf-8").replace("Friday", "Monday"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    second, _ = client.call("memory_search", {"query": "Monday migration"})
    assert "The migration runs on Monday." in second and "Friday" not in second
    assert client.call("memory_get", {"path": PLAN, "from": 8})[0] == "The migration runs on Monday."
    (memory / "memory/2026-05-19").mkdir()
    (memory / "memory/2026-05-19/quokka.md").write_text(
        "# Zoo\n\nA quokka lives on Rottnest Island.\n", encoding="utf-8"
    )
    third, _ = client.call("memory_search", {"query": "quokka"})
    assert third.startswith("========== memory/2026-05-19/quokka.md:1-3 ")


BAD_CALLS = [  # (tool, arguments, part of the error line)
    ("memory_search", {}, "missing required argument 'query'"),
    ("memory_search", {"query": "   "}, "query is empty"),
    ("memory_search", {"query": "x", "limit": "many"}, "limit must be an integer"),
    ("memory_search", {"query": "x", "limit": 0}, "limit must be at least 1"),
    ("memory_search", {"query": "x", "limit": 10_000}, "at most 50"),
    ("memory_search", {"query": "x", "since": "yesterday"}, "since must be a date"),
    ("memory_search", {"query": "x", "shell": "rm -rf /"}, "unknown argument(s) shell"),
    ("memory_search", {"query": "x" * 1001}, "longer than 1000"),
    ("memory_search", ["x"], "arguments must be an object"),
    ("memory_get", {"path": "../../etc/passwd.md"}, "must not contain '..'"),
    ("memory_get", {"path": "/etc/passwd"}, "must be relative"),
    ("memory_get", {"path": "mem.yaml"}, "not a Markdown memory file"),
    ("memory_get", {"path": "resource/secret.md"}, "outside the memory areas"),
    ("memory_get", {"path": PLAN, "from": 99}, "past the end"),
    ("memory_get", {"path": PLAN, "lines": True}, "lines must be an integer"),
    ("remember", {"text": ""}, "text is empty"),
    ("remember", {"text": "x" * 2001}, "longer than 2000"),
    ("remember", {"text": "fact", "tags": ["no spaces allowed"]}, "is not a word"),
    ("ingest", {"session_id": "s1"}, "exactly one of `messages` or `transcript`"),
    ("ingest", {"session_id": "../up", "messages": [{"role": "user", "content": "hi"}]}, "session"),
    ("ingest", {"session_id": "s1", "transcript": "not json"}, "mem: error:"),
]


def test_bad_arguments_are_tool_errors_and_the_server_goes_on(client, memory):
    client.initialize()
    for name, arguments, needle in BAD_CALLS:  # one server for all: each error must leave it serving
        text, failed = client.call(name, arguments)
        assert failed and text.startswith("mem: error: ") and needle in text, (name, arguments, text)
        assert "\n" not in text, text
        ok, failed = client.call("memory_get", {"path": "MEMORY.md", "from": 3})
        assert (ok, failed) == ("The user prefers tea over coffee.", False), (name, arguments)
    assert sorted(p.name for p in (memory / "memory").rglob("*")) == ["2026-05-18", "plan.md"]  # nothing written
    assert not (memory / "mem_session").exists()
    code, err = client.close()
    assert code == 0 and "Traceback" not in err


def test_protocol_errors_get_json_rpc_errors(client):
    client.initialize()
    assert client.request("tools/call", {"name": "rm", "arguments": {}})["error"]["code"] == -32602
    assert client.request("resources/list")["error"]["code"] == -32601
    assert client.request("tools/call", ["not", "an", "object"])["error"]["code"] == -32602
    client.send(b"{not json\n")
    assert client.recv()["error"]["code"] == -32700
    client.send(b"\xff\xfe\n")
    assert client.recv()["error"]["code"] == -32700
    client.send({"jsonrpc": "1.0", "id": 5, "method": "ping"})
    assert client.recv() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "not a JSON-RPC 2.0 message"},
    }
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    client.send({"jsonrpc": "2.0", "id": 9, "result": {}})  # a stray response: no answer either
    client.send(
        [
            {"jsonrpc": "2.0", "id": "a", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": "b",
                "method": "tools/call",
                "params": {"name": "memory_get", "arguments": {"path": "MEMORY.md", "lines": 1}},
            },
        ]
    )
    batch = client.recv()
    assert [r["id"] for r in batch] == ["a", "b"]
    assert batch[1]["result"]["content"][0]["text"] == "# Preferences"
    client.send(b"\n   \n")  # blank lines are skipped
    assert client.request("ping")["result"] == {}
    code, err = client.close()
    assert code == 0 and "Traceback" not in err


def test_a_message_over_the_size_cap_is_refused_without_reading_it_all_in(client):
    from memcli.mcp.server import MAX_MESSAGE

    client.initialize()
    client.send(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * MAX_MESSAGE + b'"}}\n')
    reply = client.recv()
    assert reply["error"]["code"] == -32600 and "larger than" in reply["error"]["message"]
    assert client.request("ping")["result"] == {}


def test_ingest_saves_the_session_and_flushes_into_a_searchable_note(client, memory):
    client.initialize()
    messages = [
        {
            "role": "user",
            "content": "We decided to deploy the Lumen API with blue-green releases.",
            "timestamp": "2026-06-29T10:02:00Z",
        },
        {"role": "assistant", "content": "Noted: blue-green releases for Lumen.", "timestamp": "2026-06-29T10:03:00Z"},
    ]
    text, failed = client.call("ingest", {"session_id": "a3f9c2e1", "messages": messages, "flush": True})
    assert not failed, text
    assert text.splitlines()[-2:] == [
        "Saved 2 message(s) to mem_session/dialog/a3f9c2e1.jsonl (2 new, 0 updated)",
        "Extracted with rules (flush)",
    ]
    note = next(line.split()[1] for line in text.splitlines() if line.startswith("Added memory/2026-06-29/"))
    assert (memory / note).is_file()
    found, _ = client.call("memory_search", {"query": "blue-green"})
    assert found.startswith(f"========== {note}:")
    transcript = "\n".join(json.dumps(m) for m in messages)
    again, failed = client.call("ingest", {"session_id": "a3f9c2e1", "transcript": transcript})
    assert not failed and "(0 new, 0 updated)" in again


def test_sigterm_ends_the_server_cleanly(client):
    client.initialize()
    client.call("memory_search", {"query": "migration"})  # the refiner and file watch have work
    client.proc.send_signal(signal.SIGTERM)
    try:
        code = client.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        client.proc.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER: every thread's stack on stderr
        client.proc.wait(timeout=10)
        pytest.fail("SIGTERM did not end the server:\n" + client.stderr_text()[-6000:])
    assert code == 0, client.stderr_text()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_repeated_searches_hold_no_extra_files_open(client):
    client.initialize()

    def open_files():
        return len(os.listdir(f"/proc/{client.proc.pid}/fd"))

    client.call("memory_search", {"query": "PostgreSQL"})
    before = open_files()
    for _ in range(20):
        client.call("memory_search", {"query": "PostgreSQL"})
    assert open_files() <= before


def test_the_server_package_stays_out_of_the_cli_layer():
    """memcli/mcp is a front end beside memcli/cli: no typer, rich or click, no memcli.cli."""
    for path in sorted((REPO / "memcli" / "mcp").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        bad = [n for n in names if n.split(".")[0] in ("typer", "rich", "click") or n.startswith("memcli.cli")]
        assert not bad, (path.name, bad)
    assert any((REPO / "memcli" / "mcp").glob("server.py"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")
def test_the_file_list_is_walked_again_only_after_a_change(memory, open_ws):
    """The server's workspace serves the last walk until inotify reports a change."""
    from memcli.mcp.watch import WatchedWorkspace

    plain = open_ws(memory)
    watched = WatchedWorkspace.of(plain)
    assert watched.why_not == "" and watched.config == plain.config

    def same():
        assert dict(watched.iter_watched()) == dict(plain.iter_watched())
        return watched.walks

    assert same() == 1
    assert same() == 1 and same() == 1  # nothing changed: no walk
    (memory / "mem_metadata").mkdir()
    (memory / "mem_metadata" / "x.tmp").write_text("derived state is not watched")
    (memory / "resource").mkdir()
    (memory / "resource" / "r.md").write_text("not indexed")
    assert same() == 2  # the root saw two new folders; nothing inside them counts
    assert same() == 2
    plan = memory / PLAN
    os.utime(plan, ns=(plan.stat().st_atime_ns, plan.stat().st_mtime_ns + 1))  # mtime only
    assert same() == 3
    new_day = memory / "memory" / "2026-05-19"
    new_day.mkdir()
    assert same() == 4
    (new_day / "later.md").write_text("# Later\n")  # inside a folder created after the first walk
    assert same() == 5
    (memory / "MEMORY.md").unlink()
    assert same() == 6
    (memory / "digest" / "wiki").mkdir(parents=True)
    (memory / "digest" / "wiki" / "node.md").write_text("# Node\n")
    os.rename(plan, memory / "memory" / "2026-05-19" / "plan.md")
    walks = same()
    assert walks > 6 and same() == walks


def test_a_filesystem_inotify_cannot_trust_means_walking_every_time(memory, open_ws):
    from memcli.mcp.watch import WatchedWorkspace

    watched = WatchedWorkspace.of(open_ws(memory))
    if watched._inotify is not None:  # (Linux) the mount table as /proc/self/mountinfo reads on an NFS mount
        watched._inotify._mounts = [("/", "nfs4")]
    first = dict(watched.iter_watched())
    assert "nfs4" in watched.why_not or not sys.platform.startswith("linux")
    assert set(first) == {PLAN, "MEMORY.md"}
    walks = watched.walks
    dict(watched.iter_watched())
    assert watched.walks == walks + 1  # no cache: every call walks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")
def test_the_server_keeps_a_change_journal_and_finds_an_edit_in_place(client, memory):
    """An in-place edit (no folder mtime moves) found by the next search through the
    journal the server keeps, as `mem watch` does (memcli.watch.journal)."""
    from memcli.watch import journal

    client.initialize()
    client.call("memory_search", {"query": "PostgreSQL"})  # the first sync: a walk, then the mark
    assert journal.watcher(memory / "mem_metadata") == client.proc.pid
    with (memory / PLAN).open("a", encoding="utf-8") as fh:
        fh.write("\nA pangolin guards the staging database.\n")
    text, failed = client.call("memory_search", {"query": "pangolin"})
    assert not failed and PLAN in text, text
    code, err = client.close()
    assert code == 0, err
    assert journal.watcher(memory / "mem_metadata") is None
