"""A stdio MCP server: newline-delimited JSON-RPC 2.0 on stdin/stdout, logs on stderr.

Implemented with the standard library (the protocol needs only initialize,
notifications/initialized, ping, tools/list and tools/call), so `mem mcp` needs no
extra. One process serves one host, one request at a time: the workspace is opened
once and its index stays warm in the page cache between calls. stdout carries
protocol messages only; a tool that fails answers with an error result (isError),
and nothing a client sends can stop the loop except closing stdin.

Why not the official `mcp` SDK or fastmcp (measured by `bench/libraries.py` (docs/architecture.md, Hand-written parts)): a server
with mem's three memory tools answers initialize + tools/list in a new process in ~0.1 s
with this module, ~1.0 s with the SDK's low-level server and ~1.9 s with fastmcp, which add
28 MB (21 packages) and 64 MB (48 packages) to the install; `mem mcp` as a whole starts in ~0.5 s.
"""

from __future__ import annotations

import json
import time
import traceback
from typing import BinaryIO, TextIO

from memcli import __version__
from memcli.errors import MemError
from memcli.mcp.tools import Tools

PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")  # newest first
MAX_MESSAGE = 16 * 1024 * 1024  # bytes in one line; an ingest transcript is capped at 8 MiB
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


class Session:
    def __init__(self, tools: Tools, log: TextIO, verbose: bool = False, instructions: str = ""):
        self.tools = tools
        self.log = log
        self.verbose = verbose
        self.instructions = instructions
        self.logged_why_not = ""

    def say(self, text: str) -> None:
        self.log.write(f"mem mcp: {text}\n")
        self.log.flush()

    def handle(self, msg) -> dict | None:
        """The response to one message; None for notifications and stray responses."""
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return _error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        method, rid = msg.get("method"), msg.get("id")
        if "id" not in msg:
            if self.verbose and method != "notifications/initialized":
                self.say(f"notification {str(method)[:80]} ignored")
            return None  # notifications (initialized, cancelled, ...) get no answer
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            return _error(None, INVALID_REQUEST, "id must be a string or a number")
        if not isinstance(method, str):
            if "result" in msg or "error" in msg:
                return None  # a response, but this server never sends requests
            return _error(rid, INVALID_REQUEST, "method is missing")
        params = msg.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _error(rid, INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            return _result(rid, self.initialize(params))
        if method == "ping":
            return _result(rid, {})
        if method == "tools/list":
            return _result(rid, {"tools": self.tools.list()})
        if method == "tools/call":
            name = params.get("name")
            if not isinstance(name, str) or name not in self.tools.table:
                return _error(rid, INVALID_PARAMS, f"Unknown tool: {str(name)[:80]}")
            return _result(rid, self.call(name, params.get("arguments")))
        return _error(rid, METHOD_NOT_FOUND, f"Method not found: {method[:80]}")

    def initialize(self, params: dict) -> dict:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        client = info if isinstance(info := params.get("clientInfo"), dict) else {}
        self.say(
            f"client {str(client.get('name', '?'))[:60]} {str(client.get('version', ''))[:20]}, protocol {version}"
        )
        out = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "mem", "version": __version__},
        }
        if self.instructions:
            out["instructions"] = self.instructions
        return out

    def call(self, name: str, arguments) -> dict:
        started = time.perf_counter()
        try:
            text, failed = self.tools.call(name, arguments), False
        except MemError as exc:
            text, failed = f"mem: error: {exc.line()}", True  # the line `mem` prints on stderr
        except Exception as exc:  # noqa: BLE001 - a bug in one call must not end the session
            if self.verbose:
                traceback.print_exc(file=self.log)
            detail = str(exc).replace("\n", " ")[:300]
            text, failed = f"mem: internal error: {type(exc).__name__}: {detail}", True
            self.say(f"{name}: {text}")
        why_not = getattr(self.tools.ws, "why_not", "")  # the file watch gave up (memcli.mcp.watch)
        if why_not and why_not != self.logged_why_not:
            self.logged_why_not = why_not
            self.say(f"every search walks the workspace for changes: {why_not}")
        for warning in self.tools.warnings:
            self.log.write(f"mem: warning: {warning}\n")
        self.tools.warnings.clear()
        if self.verbose:
            self.say(f"{name} {'failed' if failed else 'ok'} in {(time.perf_counter() - started) * 1000:.1f} ms")
        return {"content": [{"type": "text", "text": text}], "isError": failed}


def _result(rid, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _error(rid, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def messages(stdin: BinaryIO):
    """Each line of stdin, or None for a line longer than MAX_MESSAGE (which is skipped)."""
    while True:
        line = stdin.readline(MAX_MESSAGE + 1)
        if not line:
            return
        if len(line) > MAX_MESSAGE and not line.endswith(b"\n"):
            while (rest := stdin.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            yield None
            continue
        if line.strip():
            yield line


def serve(session: Session, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer requests until stdin closes; 0 then, or when the host stops reading."""
    for line in messages(stdin):
        if line is None:
            reply: dict | list[dict] | None = _error(None, INVALID_REQUEST, f"message larger than {MAX_MESSAGE} bytes")
        else:
            try:
                msg = json.loads(line.decode("utf-8"))
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                reply = _error(None, PARSE_ERROR, f"Parse error: {str(exc)[:200]}")
            else:
                if isinstance(msg, list):  # a batch (protocol 2025-03-26)
                    replies = [r for r in map(session.handle, msg) if r is not None]
                    reply = replies or (None if msg else _error(None, INVALID_REQUEST, "empty batch"))
                else:
                    reply = session.handle(msg)
        if reply is None:
            continue
        try:
            # ASCII on the wire: valid JSON whatever the locale, decoded to the same text
            stdout.write(json.dumps(reply, separators=(",", ":")).encode("ascii") + b"\n")
            stdout.flush()
        except BrokenPipeError:
            return 0
    return 0
