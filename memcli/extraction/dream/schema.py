"""What dream passes around (units, topics, receipts) and the checks an LLM reply must pass.

Two replies are validated before anything is written: the extraction reply
(`{"units": [...], "topics": [...]}`) and the integration reply (a receipt
`{action, target_path, note}` plus the node's `description` and complete `body`).
What is mechanical is repaired first: names slugified, units of the same name merged,
a path the model shortened matched to its changed input, over-long texts cut, a missing
description or note derived, action synonyms, a target path without its folder, bucket
or `.md`, frontmatter stripped from a body, links to missing files unlinked, links an
update dropped put back into `## Sources`. A failed check raises Invalid; its text is
fed back to the model once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memcli.extraction.dream import node as nodes, voice
from memcli.extraction.ask import Invalid, decode_object, first_sentence, kebab, salvage, shorten
from memcli.extraction.dream.repair import repair_body

ACTIONS = ("CREATE", "CORROBORATE", "REFINE", "CORRECT")
MAX_SUMMARY = 1200
MAX_NOTE = 300
MAX_DESCRIPTION = 300
MAX_BODY = 16_000
# the prompt asks for 50-200 words; counting differs between tokenizers, so a margin
MIN_WORDS, MAX_WORDS = 40, 240
MIN_REPAIRED = 5  # words a new node needs once a too-short body got the unit's summary
MAX_NAME_WORDS = 5
PROMPT_LINES = ("integrate the unit", "extract merged memory units")  # a description copied from the prompt

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
SYNONYMS = {"NEW": "CREATE", "ADD": "CREATE", "UPDATE": "REFINE", "EXTEND": "REFINE", "CONFIRM": "CORROBORATE",
            "SAME": "CORROBORATE", "FIX": "CORRECT", "CONTRADICT": "CORRECT"}


def extract_schema(changed: list[str], max_units: int) -> dict:
    """EXTRACT_SCHEMA for one request: paths only from `changed`, at most max_units units, short fields."""
    unit = {"type": "object", "required": ["name", "bucket", "summary", "paths"],
            "properties": {"name": {"type": "string", "maxLength": 60}, "bucket": {"enum": list(nodes.BUCKETS)},
                           "summary": {"type": "string", "maxLength": 600},
                           "paths": {"type": "array", "minItems": 1, "items": {"enum": list(changed)}}}}
    topic = EXTRACT_SCHEMA["properties"]["topics"]["items"]
    return {"type": "object", "required": ["units"],
            "properties": {"units": {"type": "array", "maxItems": max_units, "items": unit},
                           "topics": {"type": "array", "maxItems": 3, "items": topic}}}


def integrate_schema(targets: list[str]) -> dict:
    """INTEGRATE_SCHEMA for one unit: target_path one of `targets` (the new node's path, then the
    recalled nodes), short receipt fields."""
    props = dict(INTEGRATE_SCHEMA["properties"], note={"type": "string", "maxLength": MAX_NOTE},
                 description={"type": "string", "maxLength": 240}, target_path={"enum": list(dict.fromkeys(targets))})
    return {**INTEGRATE_SCHEMA, "required": ["action", "target_path", "note", "description", "body"],
            "properties": props}


@dataclass
class Fact:
    """One statement of a daily note (offline extraction), with where it came from."""

    text: str
    path: str
    speaker: str = ""
    section: str = ""
    numbered: bool = False
    errand: bool = False  # said in a conversation where the user asked the assistant for a task

    def line(self) -> str:
        """The statement as a node holds it: self-contained, the user in the third person
        (extraction/dream/voice.py); another speaker keeps the "Name: " prefix."""
        return voice.statement(self.text, self.speaker)

    def source(self) -> str:
        """The line as the note wrote it ("User: I prefer tea."): what reports quote and checkpoints key."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


@dataclass
class Unit:
    name: str
    bucket: str
    summary: str
    paths: list[str]
    facts: list[Fact] = field(default_factory=list)  # offline only: the statements it holds
    title: str = ""  # offline only: the subject a new node is named for ("Leiden half marathon")

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
    """The field on one line, cut at a word to `limit` characters (a repair, not a rejection)."""
    value = data.get(key, None if required else "")
    if value is None and not required:
        value = ""
    if not isinstance(value, str):
        raise Invalid(f'{where}"{key}" must be a string')
    value = shorten(value, limit)
    if required and not value:
        raise Invalid(f'{where}"{key}" is empty')
    return value


def _strings(value, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise Invalid(f"{where} must be a list of strings")
    return list(dict.fromkeys(x.strip() for x in value if x.strip()))


def _match_path(path: str, changed: list[str]) -> str | None:
    """`path` as one of the changed inputs: exact, or the only one it is a tail of (or that is its tail)."""
    p = path.strip().strip("[]").lstrip("./").strip()
    if p in changed:
        return p
    hits = [c for c in changed if c.endswith("/" + p) or p.endswith("/" + c) or c.endswith("/" + p + ".md")]
    return hits[0] if len(hits) == 1 else None


def merge_units(units: list[Unit]) -> list[Unit]:
    """Units of the same name as one: their paths joined, their summaries joined (first bucket wins)."""
    out: dict[str, Unit] = {}
    for u in units:
        if u.name not in out:
            out[u.name] = Unit(u.name, u.bucket, u.summary, list(u.paths), list(u.facts))
            continue
        m = out[u.name]
        m.paths += [p for p in u.paths if p not in m.paths]
        if u.summary not in m.summary:
            m.summary = shorten(f"{m.summary} {u.summary}", MAX_SUMMARY)
        m.facts += u.facts
    return list(out.values())


def _unit(raw: dict, where: str, changed: list[str]) -> Unit | None:
    summary = _text(raw, "summary", MAX_SUMMARY, where, required=False)
    if not summary:
        return None  # a unit that teaches nothing: dropped
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    name = nodes.slugify("-".join((kebab(name) or kebab(summary)).split("-")[:MAX_NAME_WORDS]))
    bucket = raw.get("bucket")
    bucket = bucket.strip().lower() if isinstance(bucket, str) else ""
    paths = _strings(raw.get("paths") if "paths" in raw else raw.get("path"), f"{where}paths") \
        if not isinstance(raw.get("paths", raw.get("path")), str) else [raw.get("paths", raw.get("path"))]
    matched = [_match_path(p, changed) for p in paths]
    unknown = [p for p, m in zip(paths, matched) if m is None]
    paths = list(dict.fromkeys(m for m in matched if m))
    if not paths and len(changed) == 1:
        paths = list(changed)  # one input: the unit can only come from it
    if not paths and unknown:
        raise Invalid(f"{where}paths has {unknown[0]!r}, which is not a changed input; use only: "
                      + ", ".join(changed[:40]))
    if not paths:
        raise Invalid(f"{where}paths is empty; cite the changed inputs the unit comes from")
    return Unit(name, bucket if bucket in nodes.BUCKETS else "wiki", summary, paths)


def _topics(data: dict, allowed: set[str]) -> list[Topic]:
    topics = []
    for raw in data.get("topics") or [] if isinstance(data.get("topics") or [], list) else []:
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
    return topics


def parse_units(content: str, finish: str | None, changed: list[str], max_units: int
                ) -> tuple[list[Unit], list[Topic]]:
    """Units (repaired, merged by name, at most max_units; unknown bucket -> wiki) and topic
    candidates, or Invalid. A reply cut off by the token limit keeps its complete units."""
    data = salvage(content) if finish == "length" else decode_object(content)
    if data is None:
        raise Invalid("the reply was cut off (finish_reason=length); answer more briefly")
    raw_units = data.get("units")
    if raw_units is None and isinstance(data.get("unit"), dict):
        raw_units = [data["unit"]]
    if raw_units is None and {"name", "summary"} <= set(data):
        raw_units = [data]  # one unit without its list
    if not isinstance(raw_units, list):
        raise Invalid('"units" must be a list (it may be empty)')
    units: list[Unit] = []
    for i, raw in enumerate(raw_units):
        if not isinstance(raw, dict):
            raise Invalid(f"units[{i}] must be an object")
        unit = _unit(raw, f"units[{i}].", changed)
        if unit is not None:
            units.append(unit)
    return merge_units(units)[:max_units], _topics(data, set(changed))


def new_path(unit: Unit, digest_dir: str, exists: Callable[[str], bool]) -> str:
    """Where a CREATE of `unit` goes: `<digest>/<bucket>/<name>.md`, numbered when taken."""
    base = f"{digest_dir.strip('/')}/{unit.bucket}/{unit.name}"
    path, n = f"{base}.md", 1
    while exists(path):
        n += 1
        path = f"{base}-{n}.md"
    return path


def _target(raw: str, action: str, unit: Unit, digest_dir: str, exists: Callable[[str], bool],
            new: str | None) -> str:
    """The target path, repaired: brackets and slashes, the digest folder, `.md`, the slug; a
    CREATE goes into the unit's bucket, at the new node's path when the model named no digest
    path (models copy a note's path)."""
    prefix = digest_dir.strip("/")
    t = raw.strip().strip("[]").strip().strip("/")
    if action == "CREATE" and (not t or (new and "/" in t and not t.startswith(prefix + "/"))):
        t = new or f"{prefix}/{unit.bucket}/{unit.name}.md"
    if t and not t.endswith(".md") and "." not in t.rsplit("/", 1)[-1]:
        t += ".md"
    parts = t.split("/")
    if len(parts) == 2 and parts[0] in nodes.BUCKETS:
        parts = [prefix, *parts]
    elif len(parts) == 1 and t:
        parts = [prefix, unit.bucket, parts[0]]
    if len(parts) == 3 and parts[0] == prefix and parts[1] in nodes.BUCKETS and parts[2].endswith(".md"):
        slug = parts[2][:-3]
        fixed = nodes.slugify(slug) if nodes.slugify(slug) != "node" or slug == "node" else slug
        if action == "CREATE":
            return f"{prefix}/{unit.bucket}/{fixed}.md"
        if f"{prefix}/{parts[1]}/{fixed}.md" != t and exists(f"{prefix}/{parts[1]}/{fixed}.md"):
            return f"{prefix}/{parts[1]}/{fixed}.md"
    return "/".join(parts)


def parse_receipt(content: str, finish: str | None, unit: Unit, digest_dir: str,
                  exists: Callable[[str], bool], old_body: Callable[[str], str | None],
                  new: str | None = None) -> Receipt:
    """The integration reply, repaired and checked against the workspace; Invalid on any problem.

    `exists(path)` says whether a workspace file exists (or is being written in this
    run); `old_body(path)` gives the current body of a digest node, None if there is none;
    `new` is the path offered for a CREATE.
    """
    if finish == "length":
        raise Invalid("the reply was cut off (finish_reason=length); answer more briefly")
    data = decode_object(content)
    action = data.get("action")
    action = action.strip().upper() if isinstance(action, str) else action
    action = SYNONYMS.get(action, action)
    if action not in ACTIONS:
        raise Invalid(f'"action" must be one of {", ".join(ACTIONS)}, got {action!r}')
    raw_target = data.get("target_path")
    raw_target = raw_target if isinstance(raw_target, str) else ""
    if action != "CREATE" and new and raw_target.strip().strip("[]/") == new:
        action = "CREATE"  # the path offered for a new node: nothing else can be meant
    target = _target(raw_target, action, unit, digest_dir, exists, new)
    body = data.get("body")
    if not isinstance(body, str) or not body.strip():
        raise Invalid('"body" must be the complete Markdown body of the node')
    m = re.fullmatch(rf"{re.escape(digest_dir.strip('/'))}/({'|'.join(nodes.BUCKETS)})/([^/]+)\.md", target)
    if not m or nodes.slugify(m.group(2)) != m.group(2):
        raise Invalid(f'"target_path" must look like {digest_dir}/<bucket>/<kebab-slug>.md, got {target!r}')
    current = old_body(target)
    if action == "CREATE":
        if current is not None or exists(target):
            raise Invalid(f"CREATE names {target}, which already exists; choose CORROBORATE, REFINE or CORRECT "
                          "for it, or a new slug")
    elif current is None:
        raise Invalid(f"{action} names {target}, which is not an existing digest node; use CREATE for a new "
                      "node or name one of the recalled nodes")
    body = repair_body(body, target, exists, current)
    if action == "CORROBORATE" and current is not None and \
            nodes.abstract_words(body) < nodes.abstract_words(current) // 2:
        body = current  # a corroboration adds only its source (mem adds it): the node as it was
    note = _text(data, "note", MAX_NOTE, "", required=False) or f"{action.lower()} {unit.name}"
    description = _text(data, "description", MAX_DESCRIPTION, "", required=False)
    # a description copied from the prompt, or its quoting ("<<<"), is none
    description = "" if description.lower().startswith(PROMPT_LINES) or not re.search(r"\w", description) \
        else description
    if action == "CREATE" and not description:
        description = first_sentence(body, MAX_DESCRIPTION) or shorten(unit.summary, MAX_DESCRIPTION)
    floor = MIN_WORDS
    if current is None and nodes.abstract_words(body) < MIN_WORDS:
        body, floor = _with_summary(body, unit), MIN_REPAIRED  # small models write a bare heading
    check_body(body, target, exists, current, floor)
    return Receipt(action, target, note, description, body)


def _with_summary(body: str, unit: Unit) -> str:
    """A new node's body with the unit's summary as its first paragraph (under the title)."""
    head, tail = nodes.split(body)
    if unit.summary in "\n".join(head):
        return body
    title = [head[0]] if head and head[0].startswith("# ") else [f"# {unit.name.replace('-', ' ').capitalize()}"]
    rest = "\n".join(head[1:] if head and head[0].startswith("# ") else head).strip("\n").split("\n")
    lines = [*title, "", unit.summary, *([""] + rest if any(x.strip() for x in rest) else [])]
    return "\n".join(lines + ([""] + tail if tail else [])).rstrip("\n") + "\n"


def check_body(body: str, target: str, exists: Callable[[str], bool], old: str | None,
               min_words: int = MIN_WORDS) -> None:
    if len(body) > MAX_BODY:
        raise Invalid(f'"body" is longer than {MAX_BODY} characters')
    if body.lstrip().startswith("---"):
        raise Invalid('"body" starts with a frontmatter block (---); send the body only, frontmatter is ours')
    if "\x00" in body:
        raise Invalid('"body" contains a NUL character')
    words = nodes.abstract_words(body)
    if old is None and not min_words <= words <= MAX_WORDS:
        raise Invalid(f"the body above ## Sources has {words} words; write 50-200")
    if old is not None and nodes.abstract_words(old) >= MIN_WORDS // 2 and words < nodes.abstract_words(old) // 2:
        raise Invalid(f"the update keeps {words} of the node's {nodes.abstract_words(old)} words; updates are "
                      "additive: keep what is still true and add the new")
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
