"""A real HTTP server on 127.0.0.1 (port 0) that speaks each embedding provider's protocol.

Tests script its replies (status, body, headers, delay) and read back the requests
it received; with nothing scripted it answers like the provider would.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY = "sk-test-SECRET-4f2a9c81d7"


def fake_vector(text: str, dims: int) -> list[float]:
    """A deterministic, text-dependent, not normalised vector."""
    seed = hashlib.sha256(text.encode("utf-8")).digest()
    return [((seed[i % 32] + i) % 17 - 8) / 4.0 + 0.01 for i in range(dims)]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; str/bytes -> sent as is; None -> protocol answer
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    dims: int | None = None  # protocol answer with this many dimensions
    drop: int = 0  # protocol answer with this many vectors fewer


@dataclass
class Protocol:
    """How one backend talks: where it posts, how it carries texts and vectors."""

    backend: str
    base_path: str  # appended to the server URL to form base_url
    path: str  # full request path the server should see
    texts: Callable[[Any], list[str]]
    answer: Callable[[list[list[float]]], Any]
    auth: tuple[str, str]  # (header, value) expected

    def cfg(self, url: str, **over) -> dict:
        cfg = {
            "backend": self.backend,
            "base_url": url + self.base_path,
            "model_name": "test-model",
            "api_key": KEY,
            "dimensions": 8,
            "max_input_length": 8192,
            "max_batch_size": 10,
            "use_dimensions": False,
            "timeout": 5.0,
            "max_retries": 3,
            "headers": {},
        }
        cfg.update(over)
        return cfg


def _indexed(vectors, key="index", field_name="embedding"):
    items = [{"object": "embedding", field_name: v, key: i} for i, v in enumerate(vectors)]
    return list(reversed(items))  # out of order on purpose: clients must sort by index


PROTOCOLS = {
    "openai": Protocol(
        "openai",
        "/v1",
        "/v1/embeddings",
        lambda b: b["input"],
        lambda vs: {"object": "list", "data": _indexed(vs), "model": "test-model"},
        ("authorization", f"Bearer {KEY}"),
    ),
    "dashscope": Protocol(
        "dashscope",
        "",
        "/api/v1/services/embeddings/text-embedding/text-embedding",
        lambda b: b["input"]["texts"],
        lambda vs: {
            "output": {"embeddings": _indexed(vs, "text_index")},
            "usage": {"total_tokens": 1},
            "request_id": "r1",
        },
        ("authorization", f"Bearer {KEY}"),
    ),
    "gemini": Protocol(
        "gemini",
        "",
        "/v1/models/test-model:batchEmbedContents",
        lambda b: [r["content"]["parts"][0]["text"] for r in b["requests"]],
        lambda vs: {"embeddings": [{"values": v} for v in vs]},
        ("x-goog-api-key", KEY),
    ),
    "ollama": Protocol(
        "ollama",
        "",
        "/api/embed",
        lambda b: b["input"],
        lambda vs: {"model": "test-model", "embeddings": vs},
        ("authorization", f"Bearer {KEY}"),
    ),  # only because the test config sets a key
    "voyage": Protocol(
        "voyage",
        "/v1",
        "/v1/embeddings",
        lambda b: b["input"],
        lambda vs: {"object": "list", "data": _indexed(vs), "model": "test-model"},
        ("authorization", f"Bearer {KEY}"),
    ),
}


class FakeProvider:
    """The server's state: the protocol it speaks, the scripted replies, what it saw."""

    def __init__(self, url: str):
        self.url = url
        self.protocol: Protocol = PROTOCOLS["openai"]
        self.dims = 8
        self.replies: list[Reply] = []
        self.seen: list[Seen] = []
        self.lock = threading.Lock()

    def script(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self) -> Reply:
        with self.lock:
            return self.replies.pop(0) if self.replies else Reply()


def _handler(state: FakeProvider):
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep pytest output clean
            pass

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            with state.lock:
                state.seen.append(Seen("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            reply = state.next_reply()
            if reply.delay:
                time.sleep(reply.delay)
            payload = reply.body
            if payload is None and reply.status == 200:
                try:
                    texts = state.protocol.texts(body)
                except (KeyError, IndexError, TypeError):
                    texts = None
                if texts is None:  # not this protocol's request: answer like an API would
                    reply = Reply(400, {"error": {"message": "bad request"}})
                    payload = reply.body
                else:
                    texts = texts[: len(texts) - reply.drop]
                    payload = state.protocol.answer([fake_vector(t, reply.dims or state.dims) for t in texts])
            if isinstance(payload, (dict, list)):
                data = json.dumps(payload).encode()
            elif isinstance(payload, str):
                data = payload.encode()
            else:
                data = payload or b""
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

    return Handler


def serve():
    """Start a FakeProvider; returns (state, stop)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), None)
    server.daemon_threads = True
    state = FakeProvider(f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = _handler(state)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()

    def stop():
        server.shutdown()
        server.server_close()

    return state, stop
