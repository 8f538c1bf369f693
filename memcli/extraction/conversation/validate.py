"""Check an LLM reply before any file is touched, repairing what is mechanical.

The reply asked for is {"name", "description", "items": [{"kind", "text"}]}: short
statements that mem renders into the note's sections, or adds to the sections of the
session's existing note (nothing there is dropped or rewritten). Small models manage
this shape, where a whole Markdown note inside a JSON string makes them loop. A reply
with a Markdown "body" instead (the older shape) is validated as the complete body.

Repaired, not rejected: a name that is not kebab-case or holds a date (slugified, or
taken from the description), a missing or long description (the first statement, or
cut at a word), items given as bare strings or as per-section lists ("facts": [...]),
repeated statements, bullets and line breaks inside a statement. Rejected (fed back
once): no JSON object, a cut-off reply, an oversized body, reserved markers, a body
with frontmatter, a timeline entry removed from an existing note.
"""

from __future__ import annotations

import re

from memcli.extraction.ask import Invalid, decode_object, first_sentence, kebab, salvage, shorten, unloop
from memcli.extraction.conversation import Draft, Existing
from memcli.extraction.conversation.rules import merge_body
from memcli.vault.notes import AUTO_CLOSE, AUTO_OPEN, name_problem

MAX_BODY = 32_000  # characters
MAX_DESCRIPTION = 300
MAX_ITEM = 400  # characters of one statement
MAX_ITEMS = 60
MAX_NAME_WORDS = 5
FALLBACK_NAME = "conversation-notes"
SECTIONS = {
    "fact": "Facts",
    "decision": "Decisions",
    "preference": "Preferences",
    "next_step": "Next steps",
    "procedure": "Procedures",
}
KINDS = list(SECTIONS)
LISTS = {
    "facts": "fact",
    "decisions": "decision",
    "preferences": "preference",
    "next_steps": "next_step",
    "procedures": "procedure",
    "todos": "next_step",
    "tasks": "next_step",
}
_TIMELINE = re.compile(r"^#{2,6}\s*(?:timeline|时间线)\b", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


def items_schema(reply_tokens: int) -> dict:
    """What the server is asked to constrain the reply to (llama.cpp, Ollama, vLLM, OpenAI): as
    many statements as fit in the reply budget (~100 tokens each at most), so none is cut off."""
    return {
        "type": "object",
        "required": ["name", "description", "items"],
        "properties": {
            "name": {"type": "string", "maxLength": 64},
            "description": {"type": "string", "maxLength": 240},
            "items": {
                "type": "array",
                "maxItems": max(4, min(20, (reply_tokens - 200) // 100)),
                "items": {
                    "type": "object",
                    "required": ["kind", "text"],
                    "properties": {"kind": {"enum": KINDS}, "text": {"type": "string", "maxLength": 240}},
                },
            },
        },
    }


def timeline(body: str) -> list[str]:
    """The entries under a Timeline heading (they may only grow)."""
    out, inside = [], False
    for line in body.split("\n"):
        if line.startswith("#"):
            inside = bool(_TIMELINE.match(line))
        elif inside and line.strip():
            out.append(line.strip())
    return out


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


def _kind(value) -> str:
    key = str(value or "").strip().lower().replace(" ", "_").replace("-", "_")
    key = {"next_steps": "next_step", "todo": "next_step", "task": "next_step", "plan": "next_step"}.get(key, key)
    return key.rstrip("s") if key.rstrip("s") in SECTIONS else "fact"


def statements(data: dict) -> dict[str, list[str]]:
    """Section -> its "- " lines, from "items" and from per-section lists; cleaned, deduplicated."""
    pairs: list[tuple[str, object]] = []
    raw = data.get("items")
    for it in raw if isinstance(raw, list) else []:
        if isinstance(it, dict):
            pairs.append((_kind(it.get("kind") or it.get("type")), it.get("text") or it.get("statement")))
        else:
            pairs.append(("fact", it))
    for key, value in data.items():  # {"facts": [...], "next_steps": [...]}
        kind = LISTS.get(key.strip().lower().replace(" ", "_"))
        if kind and isinstance(value, list):
            pairs += [(kind, x) for x in value]
    out: dict[str, list[str]] = {s: [] for s in SECTIONS.values()}
    seen: set[str] = set()
    for kind, text in pairs[:MAX_ITEMS]:
        if not isinstance(text, str):
            continue
        text = unloop(" ".join(_BULLET.sub("", line) for line in text.split("\n")))
        text = shorten(text.replace("\x00", "").replace(AUTO_OPEN, "").replace(AUTO_CLOSE, ""), MAX_ITEM)
        if _norm(text) and _norm(text) not in seen:
            seen.add(_norm(text))
            out[SECTIONS[kind]].append(f"- {text}")
    return out


def render(name: str, found: dict[str, list[str]], summary: str = "") -> str:
    title = name.replace("-", " ")
    parts = [f"# {title[:1].upper()}{title[1:]}"] + (["", summary] if summary else [])
    for section, lines in found.items():
        if lines:
            parts += ["", f"## {section}", *lines]
    return "\n".join(parts) + "\n"


def merge(body: str, found: dict[str, list[str]]) -> str:
    """The new statements added to their sections of an existing body; everything there stays."""
    return merge_body(body, found, tuple(found), _norm)


def repair_name(name, description: str, body: str) -> str:
    """A usable note name: the model's, slugified; else from the description or title; else a fallback."""
    title = next((x[2:] for x in body.split("\n") if x.startswith("# ")), "")
    for source in (name if isinstance(name, str) else "", title, description):
        cand = "-".join(kebab(source).split("-")[:MAX_NAME_WORDS])
        if cand and name_problem(cand) is None:
            return cand
    return FALLBACK_NAME


def _description(data: dict, body: str) -> str:
    desc = data.get("description")
    desc = unloop(desc) if isinstance(desc, str) else ""
    if len(desc) >= 200 and not desc.endswith((".", "!", "?", "。", "！", "？")):
        end = max(desc.rfind(x) for x in (". ", "! ", "? ", "。"))  # a schema's maxLength cut it
        desc = desc[: end + 1] if end > 40 else desc
    return shorten(desc, MAX_DESCRIPTION) if desc else first_sentence(body)


def parse_reply(content: str, finish_reason: str | None, existing: Existing | None) -> Draft | None:
    """The validated (and repaired) draft, None for "nothing worth remembering", or Invalid."""
    data = salvage(content) if finish_reason == "length" else decode_object(content)
    if data is None or (
        finish_reason == "length" and (isinstance(data.get("body"), str) or not any(statements(data).values()))
    ):
        raise Invalid("the reply was cut off (finish_reason=length); answer more briefly")
    if isinstance(data.get("body"), str) and data["body"].strip():
        return _body_reply(data, existing)
    if data.get("body") not in (None, "") and not isinstance(data.get("body"), str):
        raise Invalid('"body" must be a string')
    found = statements(data)
    if not any(found.values()):
        # a topic and a description but no statements: the description is what the model kept
        desc, name = data.get("description"), data.get("name")
        if not (isinstance(desc, str) and desc.strip() and isinstance(name, str) and name.strip()):
            return None
        found["Facts"].append(f"- {shorten(desc, MAX_ITEM)}")
    if existing is not None:
        body = merge(existing.body, found)
        return Draft(existing.name, existing.description or _description(data, body), body)
    desc = _description(data, "\n".join(x[2:] for lines in found.values() for x in lines))
    name = repair_name(data.get("name"), desc, "")
    return Draft(name, desc, render(name, found, desc))


def _body_reply(data: dict, existing: Existing | None) -> Draft:
    body = data["body"].replace("\r\n", "\n")
    if len(body) > MAX_BODY:
        raise Invalid(f'"body" is longer than {MAX_BODY} characters')
    if body.lstrip().startswith("---"):
        raise Invalid('"body" starts with a frontmatter block (---); send the body only, frontmatter is ours')
    if "\x00" in body or AUTO_OPEN in body or AUTO_CLOSE in body:
        raise Invalid('"body" contains reserved text (NUL or a notes:auto marker)')
    body = body if body.endswith("\n") else body + "\n"
    desc = _description(data, body)
    if existing is not None:
        old, new = timeline(existing.body), timeline(body)
        if new[: len(old)] != old:
            missing = next((x for x, y in zip(old + [""], new + [""]) if x != y), old[-1])
            raise Invalid(
                f"a timeline entry was removed or changed ({missing[:80]!r}); keep every existing "
                "timeline line as it is and only append"
            )
        given = data.get("description")
        return Draft(existing.name, desc if isinstance(given, str) and given.strip() else existing.description, body)
    return Draft(repair_name(data.get("name"), desc, body), desc, body)
