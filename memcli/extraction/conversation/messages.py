"""Conversation input: parse, validate and sanitize messages into session-log records.

Accepted: AgentScope/QwenPaw `Msg` objects (content a string or blocks: text,
thinking, tool_use, tool_result, image/audio/video with base64 or URL sources) and
OpenAI chat messages (`role`, `content` string or parts, `tool_calls`, role
`tool`), as a JSON array, an object with `messages`, one object, or JSONL.

Sanitizing drops every tool_result block, every OpenAI `tool` message and every
base64 data block: recalled memory or media must never read as something the
user said in a later extraction. Records come out in AgentScope shape:
{id, name, role, content: [blocks], timestamp (ISO 8601 with offset, or null)}.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

from memcli.errors import BadInput
from memcli.vault.session import text_of

FORMATS = ("auto", "agentscope", "openai", "jsonl")
TIME_KEYS = ("created_at", "timestamp", "createdAt", "time_created")
ROLES = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
}
MEDIA = ("image", "audio", "video", "file")
AGENTSCOPE_BLOCKS = {"text", "thinking", "tool_use", "tool_result", *MEDIA}


@dataclass
class Parsed:
    messages: list[dict] = field(default_factory=list)
    dropped_blocks: int = 0
    dropped_messages: int = 0
    latest: datetime | None = None  # the newest message time, for the note's date


def parse(text: str, fmt: str, tz: tzinfo) -> Parsed:
    """Parse `text` (the whole input) in format `fmt`; BadInput names the line or message."""
    if fmt not in FORMATS:
        raise BadInput(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    items = _items(text.lstrip("\ufeff"), fmt)
    out = Parsed()
    seen: dict[str, int] = {}
    for where, item in items:
        rec = _message(item, where, fmt, tz, out)
        if rec is None:
            continue
        if rec["id"] in seen and rec["id"] != str(item.get("id")):
            # identical id-less messages ("ok", "ok"): the n-th copy gets its own stable id
            seen[rec["id"]] += 1
            rec["id"] = f"{rec['id']}-{seen[rec['id']]}"
        seen.setdefault(rec["id"], 1)
        out.messages.append(rec)
    return out


def _items(text: str, fmt: str) -> list[tuple[str, Any]]:
    stripped = text.lstrip()
    if not stripped:
        raise BadInput("the input holds no messages", "pipe a JSON array or JSONL of messages into `mem ingest`")
    if fmt != "jsonl" and stripped[0] in "[{":
        try:
            doc = json.loads(text)
        except RecursionError:  # the decoder recurses per nesting level: [[[[…]]]] thousands deep
            raise BadInput(
                "input is nested too deeply to be messages", "send a JSON array of message objects"
            ) from None
        except json.JSONDecodeError as exc:
            if stripped[0] == "[":
                raise BadInput(
                    f"input is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                    "fix that line (or send JSONL, one message per line)",
                ) from None
            doc = None  # several objects: JSONL
        if doc is not None:
            if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
                doc = doc["messages"]
            if isinstance(doc, dict):
                return [("message 1", doc)]
            if not doc:
                raise BadInput("the input holds no messages")
            return [(f"message {i}", m) for i, m in enumerate(doc, 1)]
    items = []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            items.append((f"line {n}", json.loads(line)))
        except RecursionError:
            raise BadInput(f"line {n} is nested too deeply to be a message") from None
        except json.JSONDecodeError as exc:
            raise BadInput(
                f"line {n} is not valid JSON: {exc.msg} at column {exc.colno}",
                "send one JSON message object per line, or a JSON array",
            ) from None
    if not items:
        raise BadInput("the input holds no messages")
    return items


def _message(item: Any, where: str, fmt: str, tz: tzinfo, out: Parsed) -> dict | None:
    if not isinstance(item, dict):
        raise BadInput(f"{where}: expected a message object, got {type(item).__name__}")
    _check_text(item, where)
    role = item.get("role")
    if not isinstance(role, str) or role.lower() not in ROLES:
        raise BadInput(f"{where}: role must be one of user, assistant, system, tool; got {role!r:.40}")
    role = ROLES[role.lower()]
    when = _timestamp(item, where, tz)
    if role == "tool":  # an OpenAI tool message is a tool result, nothing the user said
        out.dropped_messages += 1
        return None
    blocks = _blocks(item.get("content"), where, fmt, out)
    blocks += _tool_calls(item.get("tool_calls"), where)
    if not blocks:
        out.dropped_messages += 1
        return None
    if when is not None and (out.latest is None or when > out.latest):
        out.latest = when
    stamp = when.isoformat() if when else None
    mid = item.get("id")
    if isinstance(mid, int) and not isinstance(mid, bool):
        mid = str(mid)
    if not isinstance(mid, str) or not mid.strip():
        canon = json.dumps([role, stamp or "", blocks], ensure_ascii=False, sort_keys=True)
        mid = "msg-" + hashlib.sha256(canon.encode("utf-8")).hexdigest()[:20]
    name = item.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else role
    return {"id": mid, "name": name, "role": role, "content": blocks, "timestamp": stamp}


def _check_text(item: Any, where: str) -> None:
    """BadInput when the message holds a string no UTF-8 file can hold: JSON may escape half
    of a UTF-16 pair ("\ud800"), which decodes to a lone surrogate."""
    try:
        json.dumps(item, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadInput(
            f"{where}: holds a lone surrogate {exc.object[exc.start]!r}, which is not text",
            "send valid Unicode (surrogate pairs complete)",
        ) from None
    except (TypeError, ValueError, RecursionError):
        pass  # not JSON-shaped text: the checks that follow name what is wrong


def _timestamp(item: dict, where: str, tz: tzinfo) -> datetime | None:
    meta = given if isinstance(given := item.get("metadata"), dict) else {}
    for source in (item, meta):
        for key in TIME_KEYS:
            value = source.get(key)
            if value in (None, ""):
                continue
            try:
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    seconds = value / 1000 if value > 1e11 else value  # milliseconds since the epoch
                    return datetime.fromtimestamp(seconds, UTC).astimezone(tz)
                if isinstance(value, str):
                    dt = datetime.fromisoformat(value.strip())
                    return dt if dt.tzinfo else dt.replace(tzinfo=tz)
            except (ValueError, OverflowError, OSError):
                pass
            raise BadInput(
                f"{where}: cannot read {key} {value!r:.60} as a time",
                "use ISO 8601 (2026-06-29T14:03:00+02:00) or seconds since the epoch",
            )
    return None


def _blocks(content: Any, where: str, fmt: str, out: Parsed) -> list[dict]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise BadInput(f"{where}: content must be a string or a list of blocks, got {type(content).__name__}")
    blocks = []
    for part in content:
        if isinstance(part, str):
            part = {"type": "text", "text": part}
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise BadInput(f"{where}: every content block needs a 'type'")
        kind = part["type"]
        if fmt == "agentscope" and kind not in AGENTSCOPE_BLOCKS:
            raise BadInput(f"{where}: {kind!r} is not an AgentScope block type", "try --format auto")
        block = _block(kind, part)
        if block is None:
            out.dropped_blocks += 1
        elif block:
            blocks.append(block)
    return blocks


def _block(kind: str, part: dict) -> dict | None:
    """The sanitized block; None = dropped (tool result, base64 data, unknown); {} = empty text."""
    if kind in ("text", "input_text", "output_text", "refusal"):
        text = part.get("text", part.get("refusal"))
        return {"type": "text", "text": text} if isinstance(text, str) and text.strip() else {}
    if kind == "thinking":
        text = part.get("thinking")
        return {"type": "thinking", "thinking": text} if isinstance(text, str) and text.strip() else {}
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": str(part.get("id", "")),
            "name": str(part.get("name", "")),
            "input": part.get("input", {}),
        }
    if kind in MEDIA:
        source = part.get("source")
        url = source.get("url") if isinstance(source, dict) and source.get("type") == "url" else None
        if isinstance(url, str) and not url.startswith("data:") and "data" not in part:
            return {"type": kind, "source": {"type": "url", "url": url}}
        return None  # base64 payload (or nothing usable)
    if kind == "image_url":
        ref = part.get("image_url")
        url = ref.get("url") if isinstance(ref, dict) else ref
        if isinstance(url, str) and url and not url.startswith("data:"):
            return {"type": "image", "source": {"type": "url", "url": url}}
        return None
    return None  # tool_result, input_audio, unknown kinds


def _tool_calls(calls: Any, where: str) -> list[dict]:
    if calls in (None, []):
        return []
    if not isinstance(calls, list):
        raise BadInput(f"{where}: tool_calls must be a list")
    blocks = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            raise BadInput(f"{where}: every tool call needs a 'function'")
        args = fn.get("arguments")
        try:
            parsed = json.loads(args) if isinstance(args, str) else args
        except (json.JSONDecodeError, RecursionError):
            parsed = {"arguments": args}
        blocks.append(
            {
                "type": "tool_use",
                "id": str(call.get("id", "")),
                "name": str(fn.get("name", "")),
                "input": parsed if parsed is not None else {},
            }
        )
    return blocks


def is_user_turn(record: dict) -> bool:
    return record.get("role") == "user" and bool(text_of(record))
