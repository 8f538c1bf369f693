"""What an agent is told about its memory: when to search and write, and the memory tools.

One table of tools (name, description, JSON Schema parameters, and the `mem` command
each one runs) feeds `mem agent-prompt` (Markdown, a JSON document, OpenAI tool
definitions) and `mem mcp` (the same tools over MCP), so what the model reads and
what runs cannot drift apart. The guidance follows the reference designs: search
before answering about the past, cite sources, and "if someone says remember this,
write it down" instead of keeping it in context.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

SNIPPET_CHARS = 700  # OpenClaw cuts memory_search snippets at ~700 characters
MAX_LIMIT = 50
MAX_QUERY = 1000
MAX_PATH = 500
MAX_FACT = 2000  # memcli.jobs.remember.MAX_FACT
MAX_TAGS = 10
FORMATS = ("markdown", "json", "openai-tools")
DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}


@dataclass(frozen=True)
class Folders:
    """The workspace's own folder names (a QwenPaw workspace may call memory/ `notes`): the
    agent is told the paths it will actually see and that memory_get accepts."""

    daily: str = "memory"
    digest: str = "digest"
    sessions: str = "mem_session"

    @classmethod
    def of(cls, settings) -> Folders:
        """From memcli.config.settings.Settings."""
        return cls(settings.daily_dir.strip("/"), settings.digest_dir.strip("/"), settings.session_dir.strip("/"))


DEFAULT_FOLDERS = Folders()


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict  # a JSON Schema object
    command: list[str]  # words after `mem -w WS`
    options: dict[str, str] = field(default_factory=dict)  # parameter -> flag; lists repeat the flag
    positional: str | None = None  # parameter passed after `--`, so it is never read as an option

    def openai(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def mcp(self) -> dict:
        return {"name": self.name, "description": self.description, "inputSchema": self.parameters}

    def base(self, mem: list[str], root: str) -> list[str]:
        return [*mem, "-w", root, *self.command]

    def argv(self, mem: list[str], root: str, args: dict) -> list[str]:
        """The exact command line for a call with `args` (an argument list: no shell involved)."""
        out = self.base(mem, root)
        for key, flag in self.options.items():
            value = args.get(key)
            if value is None or value is False:
                continue
            if value is True:
                out.append(flag)
            else:
                for item in value if isinstance(value, list) else [value]:
                    out += [flag, str(item)]
        if self.positional is not None:
            out += ["--", str(args[self.positional])]
        return out

    def shell(self, mem: list[str], root: str) -> str:
        """The command line as a template: [optional parts] and <placeholders>."""
        words = [shlex.quote(w) for w in self.base(mem, root)]
        for key, flag in self.options.items():
            kind = self.parameters["properties"][key].get("type")
            words.append(f"[{flag}]" if kind == "boolean" else f"[{flag} <{key}>]" + ("..." if kind == "array" else ""))
        if self.positional is not None:
            words += ["--", f"<{self.positional}>"]
        return " ".join(words)


def _schema(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def memory_tools(max_chars: int = SNIPPET_CHARS, folders: Folders = DEFAULT_FOLDERS) -> list[Tool]:
    """memory_search, memory_get and remember: the tools a model is given."""
    return [_search_tool(max_chars, folders), _get_tool(folders), _remember_tool(folders)]


def _search_tool(max_chars: int, folders: Folders) -> Tool:
    daily, digest = folders.daily, folders.digest
    return Tool(
        "memory_search",
        f"Search long-term memory (MEMORY.md, daily notes {daily}/YYYY-MM-DD/*.md, {digest}/ nodes) by keywords "
        "and meaning. Call it before answering anything about prior work, decisions, dates, people, "
        "preferences or to-dos. Returns the best matching snippets, each headed by its file, line range and "
        f"score, cut at {max_chars} characters (ending in '…' when cut) and followed by "
        "`Source: <path>#L<start>-L<end>`; read more of a hit with memory_get. A hit holding a statement a newer "
        "note replaced is followed by `Superseded: <newer statement> (<path>, <date>)`: that newer statement "
        "holds the current value. "
        "Returns `(no memory results)` when nothing matches.",
        _schema(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY,
                    "description": "What to look for: the words a note would contain (names, identifiers, "
                    "error codes) or a short question.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "How many results to return (default 5).",
                },
                "since": dict(DATE, description="Only daily notes dated on or after this day (YYYY-MM-DD)."),
                "until": dict(DATE, description="Only daily notes dated on or before this day (YYYY-MM-DD)."),
            },
            ["query"],
        ),
        ["search", "--citations", "--max-chars", str(max_chars)],
        {"limit": "--limit", "since": "--since", "until": "--until"},
        "query",
    )


def _get_tool(folders: Folders) -> Tool:
    daily, digest = folders.daily, folders.digest
    return Tool(
        "memory_get",
        "Read a memory file by the workspace-relative path memory_search shows, whole or `lines` lines "
        f"starting at line `from`. For `Source: {daily}/2026-05-18/plan.md#L7-L15` call it with "
        f"path={daily}/2026-05-18/plan.md, from=7, lines=20. Only Markdown files under MEMORY.md, {daily}/ and "
        f"{digest}/ (and the paths memory_search shows) are readable.",
        _schema(
            {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_PATH,
                    "description": f"Workspace-relative path, e.g. {daily}/2026-05-18/plan.md or MEMORY.md.",
                },
                "from": {"type": "integer", "minimum": 1, "description": "First line to read, 1-based (default 1)."},
                "lines": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines to read (default: to the end).",
                },
            },
            ["path"],
        ),
        ["get"],
        {"from": "--from", "lines": "--lines"},
        "path",
    )


def _remember_tool(folders: Folders) -> Tool:
    daily = folders.daily
    return Tool(
        "remember",
        f"Write one durable fact into today's memory note ({daily}/<today>/remembered-facts.md), verbatim. "
        "Use it for decisions, preferences, commitments and facts that must outlive this conversation, and "
        'always when the user says "remember this". One self-contained fact per call (who, what, when, '
        "why); never passwords, keys or tokens. It is searchable at once; the same fact twice on one day "
        "is written once.",
        _schema(
            {
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_FACT,
                    "description": "The fact, as a complete sentence, e.g. 'The user prefers PostgreSQL 16 "
                    "for new services (decided 2026-05-18).'",
                },
                "tags": {
                    "type": "array",
                    "maxItems": MAX_TAGS,
                    "items": {"type": "string", "maxLength": 50},
                    "description": "Optional topic tags: letters, digits, '-' or '_'.",
                },
            },
            ["text"],
        ),
        ["remember"],
        {"tags": "--tag"},
        "text",
    )


def ingest_tool(folders: Folders = DEFAULT_FOLDERS) -> Tool:
    """For agent hosts (MCP): whole transcripts, the same job as `mem ingest`."""
    return Tool(
        "ingest",
        f"Save conversation messages to the session log ({folders.sessions}/dialog/<session_id>.jsonl) and, every "
        "auto_memory_interval user turns or when forced, extract what is worth remembering into the "
        "session's daily note. Hosts call it with the new turns after each exchange, and with flush=true "
        "before compacting the context. Give `messages` (OpenAI chat {role, content} or AgentScope Msg "
        "objects) or `transcript` (the same as JSON or JSONL text). Tool results and media are dropped.",
        _schema(
            {
                "session_id": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "description": "The conversation's id (a file name: no / \\ : * ? \" < > |).",
                },
                "messages": {
                    "type": "array",
                    "maxItems": 5000,
                    "items": {"type": "object"},
                    "description": "The messages to save.",
                },
                "transcript": {
                    "type": "string",
                    "maxLength": 8 * 1024 * 1024,
                    "description": "The messages as JSON or JSONL text, instead of `messages`.",
                },
                "flush": {"type": "boolean", "description": "Extract what is pending now, before a compaction."},
                "force": {"type": "boolean", "description": "Extract now, whatever the cadence says."},
                "date": dict(DATE, description="Date of the note (default: the newest message's date)."),
            },
            ["session_id"],
        ),
        ["ingest"],
        {"session_id": "--session-id", "date": "--date", "flush": "--flush", "force": "--force"},
    )


def guidance(max_chars: int = SNIPPET_CHARS, folders: Folders = DEFAULT_FOLDERS) -> str:
    """The system-prompt section: when to search memory and when to write it."""
    return f"""## Memory

You have a long-term memory of plain Markdown files: MEMORY.md (curated long-term memory),
{folders.daily}/YYYY-MM-DD/*.md (daily notes) and {folders.digest}/ (consolidated knowledge). It outlives this
conversation; your context does not.

Recall
- Before answering anything about prior work, decisions, dates, people, preferences or to-dos,
  call memory_search. Use the words a note would contain (names, identifiers, error codes); if
  nothing comes back, try other words once before saying memory has nothing.
- Each result is a snippet of at most {max_chars} characters followed by
  `Source: <path>#L<start>-L<end>`. To read more, call memory_get with that path and from=<start>.
- When an answer rests on memory, cite its Source line. Prefer the newest note when notes disagree,
  and heed lines marked "contradicted". A digest node states what is true now first; its
  `## History` lists values that no longer hold ("Previously: ..., until <date>").
- A result followed by `Superseded: <statement> (<path>, <date>)` holds a value that a newer note
  changed (a new editor, a moved meeting, a new goal): answer with the statement on that line as
  what is true now, and mention the older value only as history. In `mem search --json` the same
  is the hit's `superseded_by` (path, date, line, text of the newer statement, and `statement`, the
  older one it replaces); memory_get ends with a `[Superseded: ...]` line for each such statement.
- A result followed by `Matched: the conversation this note was written from ...` was found
  through what was said in that conversation, not through the note's own lines (`via_source` in
  `mem search --json`): the note is the knowledge kept from it; if the snippet does not answer,
  read the note with memory_get.

Writing
- Write decisions, preferences and durable facts with remember: one self-contained fact per call
  (who, what, when, why).
- If someone says "remember this", write it down with remember right away. Do not keep it only in
  your context: context is cut when it is compacted, memory files are not.
- When told the session is nearing compaction, store what must last with remember now; if nothing
  needs storing, reply NO_REPLY.
- Never store passwords, API keys or tokens.
"""


def document(mem: list[str], root: str, max_chars: int = SNIPPET_CHARS, folders: Folders = DEFAULT_FOLDERS) -> dict:
    """The `--format json` document: guidance, OpenAI tools, and the command behind each tool."""
    tools = memory_tools(max_chars, folders)
    return {
        "workspace": root,
        "system_prompt": guidance(max_chars, folders),
        "tools": [t.openai() for t in tools],
        "commands": {
            t.name: {
                "argv": t.base(mem, root),
                "options": t.options,
                "positional": t.positional,
                "shell": t.shell(mem, root),
            }
            for t in tools
        },
        "how_to_run": "argv, then for each given parameter in `options` its flag and value (booleans: the flag "
        "alone; lists: the flag once per item), then `--` and the `positional` parameter. "
        "Run it as an argument list, never through a shell; stdout is the tool result, and a "
        "non-zero exit means an error whose one-line reason is on stderr.",
        "mcp": {"command": [*mem, "-w", root, "mcp"]},
    }


def markdown(mem: list[str], root: str, max_chars: int = SNIPPET_CHARS, folders: Folders = DEFAULT_FOLDERS) -> str:
    """Guidance plus each tool's description, parameters, command line and OpenAI definition."""
    import json

    tools = memory_tools(max_chars, folders)
    out = [
        guidance(max_chars, folders).rstrip("\n"),
        "",
        "## Memory tools",
        "",
        (
            f"Each tool is one `mem` command on the workspace {root}. Run it as an argument list (no shell), "
            "with `--` before the free text; stdout is the result, a non-zero exit an error explained on stderr."
        ),
        "",
    ]
    for t in tools:
        out += [f"### {t.name}", "", t.description, "", "```", t.shell(mem, root), "```", "", "Parameters:"]
        required = t.parameters["required"]
        for key, prop in t.parameters["properties"].items():
            need = "required" if key in required else "optional"
            out.append(f"- `{key}` ({prop['type']}, {need}): {prop['description']}")
        out.append("")
    out += [
        "## OpenAI tool definitions",
        "",
        "```json",
        json.dumps([t.openai() for t in tools], indent=2, ensure_ascii=False),
        "```",
    ]
    return "\n".join(out)
