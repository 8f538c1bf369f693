"""The MCP tools: arguments checked against each tool's JSON Schema, then the same job as the CLI.

Every tool returns the text the matching `mem` command prints on stdout, so an agent
sees the same thing whether it runs `mem` in a shell or talks MCP. Nothing here runs a
shell or a subprocess; paths are confined by memcli.jobs.get.check_path (inside get.run),
sizes are capped by the schemas and by MAX_GET_CHARS.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

from memcli.errors import BadInput, ProviderError
from memcli.mcp import schemas as agent_prompt
from memcli.vault import lock
from memcli.vault.workspace import Workspace

MAX_GET_CHARS = 100_000  # one memory_get answer; the rest is read with `from`


@dataclass
class Tools:
    """The tools of one server: the workspace (opened once, kept warm) and its settings."""

    ws: Workspace
    max_chars: int = agent_prompt.SNIPPET_CHARS
    wait: float = lock.WAIT  # seconds a writer waits for the workspace lock, as the CLI's --wait
    warnings: list[str] = field(default_factory=list)  # from the last calls, for the log

    def __post_init__(self):
        folders = agent_prompt.Folders.of(self.ws.settings)
        self.table = {
            t.name: t for t in [*agent_prompt.memory_tools(self.max_chars, folders), agent_prompt.ingest_tool(folders)]
        }
        self._backend = False  # not built yet; None once built means "no embedding backend"
        import threading

        self._turn = threading.Lock()  # one of: a tool call, a refiner slice
        self._last_call = 0.0

    def backend(self):
        """The embedding backend, built on the first search and kept (the local model's
        load costs ~0.5 s, which would otherwise be paid by every call)."""
        if self._backend is False:
            from memcli.providers.embedding import space as embedding

            try:
                self._backend = embedding.configured(self.ws)
            except ProviderError:
                self._backend = None
        return self._backend

    def start_refiner(self, log=None, idle: float = 2.0, seconds: float = 1.0):
        """Embed in a background thread while no call runs (memcli.jobs.embedding.Refiner):
        chunks left without vectors, then the configured model refining a first pass. Calls
        and slices take turns (a call waits at most one slice, ~`seconds`)."""
        import threading

        from memcli.jobs import embedding

        refiner = embedding.Refiner(self.ws, self.backend())
        self._stop = threading.Event()

        def loop():
            while not self._stop.wait(0.5):
                if time.monotonic() - self._last_call < idle or not self._turn.acquire(blocking=False):
                    continue
                try:
                    line = refiner.slice(seconds)
                except Exception as exc:  # noqa: BLE001 - the server must outlive a failed slice
                    line = f"embedding: {type(exc).__name__}: {exc}"
                finally:
                    self._turn.release()
                if line and log:
                    log(line)

        self._thread = threading.Thread(target=loop, name="mem-refiner", daemon=True)
        self._thread.start()
        return self._thread

    def list(self) -> list[dict]:
        return [t.mcp() for t in self.table.values()]

    def call(self, name: str, raw_args) -> str:
        """Tool `name`'s text result; KeyError for an unknown tool, MemError for a failed call."""
        tool = self.table[name]

        with self._turn:  # the background refiner (start_refiner) waits for the call
            try:
                return HANDLERS[name](self, check_arguments(tool, raw_args))
            finally:
                self._last_call = time.monotonic()


def check_arguments(tool: agent_prompt.Tool, args) -> dict:
    """The arguments if they fit the tool's schema, else BadInput naming the first problem.

    Integers sent as digit strings ("5") or whole floats (5.0), a common model slip,
    are accepted as integers; anything else of the wrong type is refused.
    """
    schema = tool.parameters
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise BadInput(f"{tool.name}: arguments must be an object, got {type(args).__name__}")
    props = schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise BadInput(f"{tool.name}: unknown argument(s) {', '.join(unknown)}", f"expected {', '.join(props)}")
    out = {}
    for key in schema["required"]:
        if args.get(key) is None:
            raise BadInput(f"{tool.name}: missing required argument {key!r}")
    for key, value in args.items():
        if value is not None:
            out[key] = _check(f"{tool.name}: {key}", props[key], value)
    return out


def _check(where: str, prop: dict, value):
    kind = prop["type"]
    if kind == "integer":
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise BadInput(f"{where} must be an integer, got {json.dumps(value)[:60]}")
        if value < prop.get("minimum", value) or value > prop.get("maximum", value):
            bounds = f"at least {prop['minimum']}" + (f" and at most {prop['maximum']}" if "maximum" in prop else "")
            raise BadInput(f"{where} must be {bounds}, got {value}")
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise BadInput(f"{where} must be true or false, got {json.dumps(value)[:60]}")
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise BadInput(f"{where} must be a string, got {json.dumps(value)[:60]}")
        if prop.get("minLength") and not value.strip():
            raise BadInput(f"{where} is empty")
        if len(value) > prop.get("maxLength", len(value)):
            raise BadInput(f"{where} is longer than {prop['maxLength']} characters")
        if "pattern" in prop and not re.search(prop["pattern"], value):  # only dates carry a pattern
            raise BadInput(f"{where} must be a date like 2026-05-18, got {value[:40]!r}")
        return value
    if kind == "array":
        if not isinstance(value, list):
            raise BadInput(f"{where} must be a list, got {json.dumps(value)[:60]}")
        if len(value) > prop.get("maxItems", len(value)):
            raise BadInput(f"{where} has more than {prop['maxItems']} items")
        return [_check(f"{where}[{i}]", prop["items"], v) for i, v in enumerate(value)]
    if kind == "object":
        if not isinstance(value, dict):
            raise BadInput(f"{where} must be an object, got {json.dumps(value)[:60]}")
        return value
    raise AssertionError(f"schema type {kind} not handled")  # a programming error in our own schemas


def _search(server: Tools, args: dict) -> str:
    from memcli.jobs import search

    # the same call as `mem search --citations --max-chars N`; search.run first
    # indexes files changed since the last call, so an edited note is found at once
    result = search.run(
        server.ws,
        args["query"],
        limit=args.get("limit"),
        since=args.get("since"),
        until=args.get("until"),
        backend=server.backend(),
    )
    server.warnings.extend(result.warnings)
    return result.text(citations=True, max_chars=server.max_chars)


def _get(server: Tools, args: dict) -> str:
    from memcli.jobs import get

    excerpt = get.run(server.ws, args["path"], start=args.get("from", 1), lines=args.get("lines"))
    notes = "".join(f"\n[{line}]" for line in excerpt.superseded_lines())  # what holds those values now
    if len(excerpt.text) <= MAX_GET_CHARS:
        return excerpt.text + notes
    # whole lines up to the cap, then where to go on: one answer must fit a context window
    kept, size = [], 0
    for line in excerpt.text.split("\n"):
        if size + len(line) + 1 > MAX_GET_CHARS and kept:
            break
        kept.append(line[:MAX_GET_CHARS])
        size += len(line) + 1
    last = excerpt.start_line + len(kept) - 1
    return (
        "\n".join(kept) + f"\n[truncated at {MAX_GET_CHARS} characters: lines {excerpt.start_line}-{last} "
        f"of {excerpt.total_lines}; call memory_get with from={last + 1} for more]"
    ) + notes


def _remember(server: Tools, args: dict) -> str:
    from memcli.jobs import remember

    rep = remember.run(server.ws, args["text"], args.get("tags") or [], wait=server.wait)
    server.warnings.extend(rep.warnings)
    # the words `mem remember` prints (memcli/cli/remember.py)
    return f"Remembered in {rep.path}" if rep.new else f"Already remembered in {rep.path}"


def _ingest(server: Tools, args: dict) -> str:
    from memcli.jobs import ingest

    if ("messages" in args) == ("transcript" in args):
        raise BadInput("ingest: give exactly one of `messages` or `transcript`")
    text = args["transcript"] if "transcript" in args else json.dumps(args["messages"], ensure_ascii=False)
    rep = ingest.run(
        server.ws,
        text,
        args["session_id"],
        day=args.get("date"),
        force=args.get("force", False),
        flush=args.get("flush", False),
        wait=server.wait,
    )
    server.warnings.extend(rep.warnings)
    return "\n".join(rep.lines())


HANDLERS = {"memory_search": _search, "memory_get": _get, "remember": _remember, "ingest": _ingest}
