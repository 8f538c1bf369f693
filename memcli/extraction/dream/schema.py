"""What dream passes around (units, topics, receipts) and the checks an LLM reply must pass.

Two replies are validated before anything is written: the extraction reply
(`{"units": [...], "topics": [...]}`) and the integration reply (a receipt
`{action, target_path, note}` plus the node's `description` and complete `body`).
A failed check raises Invalid; its text is fed back to the model once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memcli.extraction.dream import node as nodes
from memcli.extraction.ask import Invalid, decode_object

ACTIONS = ("CREATE", "CORROBORATE", "REFINE", "CORRECT")
MAX_SUMMARY = 1200
MAX_NOTE = 300
MAX_DESCRIPTION = 300
MAX_BODY = 16_000
# the prompt asks for 50-200 words; counting differs between tokenizers, so a margin
MIN_WORDS, MAX_WORDS = 40, 240

EXTRACT_SCHEMA = {
    "type": "object", "required": ["units"],
    "properties": {
        "units": {"type": "array", "items": {
            "type": "object", "required": ["name", "bucket", "summary", "paths"],
            "properties": {"name": {"type": "string"}, "bucket": {"enum": list(nodes.BUCKETS)},
                           "summary": {"type": "string"}, "paths": {"type": "array", "items": {"type": "string"}}}}},
        "topics": {"type": "array", "items": {
            "type": "object", "required": ["title", "reason"],
            "properties": {"title": {"type": "string"}, "reason": {"type": "string"}, "evidence": {"type": "string"},
                           "keywords": {"type": "array", "items": {"type": "string"}},
                           "paths": {"type": "array", "items": {"type": "string"}}}}},
    },
}
INTEGRATE_SCHEMA = {
    "type": "object", "required": ["action", "target_path", "note", "body"],
    "properties": {"action": {"enum": list(ACTIONS)}, "target_path": {"type": "string"}, "note": {"type": "string"},
                   "description": {"type": "string"}, "body": {"type": "string"}},
}


@dataclass
class Fact:
    """One statement of a daily note (offline extraction), with where it came from."""

    text: str
    path: str
    speaker: str = ""
    section: str = ""
    numbered: bool = False

    def line(self) -> str:
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


@dataclass
class Unit:
    name: str
    bucket: str
    summary: str
    paths: list[str]
    facts: list[Fact] = field(default_factory=list)  # offline only: the statements it holds

    def to_json(self) -> dict:
        return {"name": self.name, "bucket": self.bucket, "summary": self.summary, "paths": self.paths}


@dataclass
class Topic:
    title: str
    reason: str
    evidence: str = ""
    keywords: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"title": self.title, "reason": self.reason, "evidence": self.evidence,
                "keywords": self.keywords, "paths": self.paths}


@dataclass
class Receipt:
    action: str
    target_path: str
    note: str
    description: str = ""
    body: str = ""


def _text(data: dict, key: str, limit: int, where: str, required: bool = True) -> str:
    value = data.get(key, None if required else "")
    if not isinstance(value, str):
        raise Invalid(f'{where}"{key}" must be a string')
    value = " ".join(value.split())
    if required and not value:
        raise Invalid(f'{where}"{key}" is empty')
    if len(value) > limit:
        raise Invalid(f'{where}"{key}" is longer than {limit} characters')
    return value


def _strings(value, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise Invalid(f"{where} must be a list of strings")
    return list(dict.fromkeys(x.strip() for x in value if x.strip()))


def parse_units(content: str, finish: str | None, changed: list[str], max_units: int
                ) -> tuple[list[Unit], list[Topic]]:
    """Units (at most max_units; unknown bucket -> wiki) and topic candidates, or Invalid."""
    if finish == "length":
        raise Invalid("the reply was cut off (finish_reason=length); answer more briefly")
    data = decode_object(content)
    raw_units = data.get("units")
    if not isinstance(raw_units, list):
        raise Invalid('"units" must be a list (it may be empty)')
    allowed = set(changed)
    units: list[Unit] = []
    for i, raw in enumerate(raw_units):
        where = f"units[{i}]."
        if not isinstance(raw, dict):
            raise Invalid(f"units[{i}] must be an object")
        name = nodes.slugify(_text(raw, "name", 120, where))
        summary = _text(raw, "summary", MAX_SUMMARY, where)
        bucket = raw.get("bucket")
        bucket = bucket.strip().lower() if isinstance(bucket, str) else ""
        paths = _strings(raw.get("paths"), f"{where}paths")
        unknown = [p for p in paths if p not in allowed]
        if unknown:
            raise Invalid(f"{where}paths has {unknown[0]!r}, which is not a changed input; use only: "
                          + ", ".join(changed[:40]))
        if not paths:
            raise Invalid(f"{where}paths is empty; cite the changed inputs the unit comes from")
        if name in {u.name for u in units}:
            raise Invalid(f'{where}"name" {name!r} is used twice; merge the two units or rename one')
        units.append(Unit(name, bucket if bucket in nodes.BUCKETS else "wiki", summary, paths))
    topics = []
    for raw in data.get("topics") or []:
        # topics are proposals for proactive use: a malformed one is dropped, never worth a retry
        if isinstance(raw, dict) and isinstance(raw.get("title"), str) and isinstance(raw.get("reason"), str):
            try:
                keywords, paths = _strings(raw.get("keywords"), "k"), _strings(raw.get("paths"), "p")
            except Invalid:
                continue
            title, reason = " ".join(raw["title"].split())[:200], " ".join(raw["reason"].split())[:500]
            evidence = raw.get("evidence") if isinstance(raw.get("evidence"), str) else ""
            if title and reason:
                topics.append(Topic(title, reason, " ".join(evidence.split())[:500], keywords[:12],
                                    [p for p in paths if p in allowed]))
    return units[:max_units], topics


def parse_receipt(content: str, finish: str | None, unit: Unit, digest_dir: str,
                  exists: Callable[[str], bool], old_body: Callable[[str], str | None]) -> Receipt:
    """The integration reply, checked against the workspace; Invalid on any problem.

    `exists(path)` says whether a workspace file exists (or is being written in this
    run); `old_body(path)` gives the current body of a digest node, None if there is none.
    """
    if finish == "length":
        raise Invalid("the reply was cut off (finish_reason=length); answer more briefly")
    data = decode_object(content)
    action = data.get("action")
    action = action.strip().upper() if isinstance(action, str) else action
    if action not in ACTIONS:
        raise Invalid(f'"action" must be one of {", ".join(ACTIONS)}, got {action!r}')
    target = _text(data, "target_path", 300, "").strip("/")
    note = _text(data, "note", MAX_NOTE, "")
    description = _text(data, "description", MAX_DESCRIPTION, "", required=action == "CREATE")
    body = data.get("body")
    if not isinstance(body, str) or not body.strip():
        raise Invalid('"body" must be the complete Markdown body of the node')
    body = body.replace("\r\n", "\n").strip("\n") + "\n"
    m = re.fullmatch(rf"{re.escape(digest_dir.strip('/'))}/({'|'.join(nodes.BUCKETS)})/([^/]+)\.md", target)
    if not m or nodes.slugify(m.group(2)) != m.group(2):
        raise Invalid(f'"target_path" must look like {digest_dir}/<bucket>/<kebab-slug>.md, got {target!r}')
    current = old_body(target)
    if action == "CREATE":
        if current is not None or exists(target):
            raise Invalid(f"CREATE names {target}, which already exists; choose CORROBORATE, REFINE or CORRECT "
                          "for it, or a new slug")
        if m.group(1) != unit.bucket:
            raise Invalid(f"CREATE must write into {digest_dir}/{unit.bucket}/, the unit's bucket")
    elif current is None:
        raise Invalid(f"{action} names {target}, which is not an existing digest node; use CREATE for a new "
                      "node or name one of the recalled nodes")
    check_body(body, target, exists, current)
    return Receipt(action, target, note, description, body)


def check_body(body: str, target: str, exists: Callable[[str], bool], old: str | None) -> None:
    if len(body) > MAX_BODY:
        raise Invalid(f'"body" is longer than {MAX_BODY} characters')
    if body.lstrip().startswith("---"):
        raise Invalid('"body" starts with a frontmatter block (---); send the body only, frontmatter is ours')
    if "\x00" in body:
        raise Invalid('"body" contains a NUL character')
    words = nodes.abstract_words(body)
    if old is None and not MIN_WORDS <= words <= MAX_WORDS:
        raise Invalid(f"the body above ## Sources has {words} words; write 50-200")
    if old is not None and words > max(MAX_WORDS, nodes.abstract_words(old) + 80):
        raise Invalid(f"the body above ## Sources grew to {words} words; keep the node abstract (50-200 words)")
    for link in nodes.links(body):
        if link != target and not exists(link):
            raise Invalid(f"[[{link}]] does not point at an existing file; link only workspace-relative paths "
                          "of existing notes and digest nodes")
    if old is not None:
        lost = [x for x in nodes.links(old) if x not in set(nodes.links(body))]
        if lost:
            raise Invalid(f"the update drops [[{lost[0]}]]; updates are additive: keep every existing link "
                          "and source")
