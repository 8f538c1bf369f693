"""Check an LLM reply before any file is touched: JSON shape, sizes, name, body rules."""

from __future__ import annotations

import re

from memcli.extraction.ask import Invalid, decode_object  # noqa: F401 - Invalid is part of this API
from memcli.extraction.conversation import Draft, Existing
from memcli.vault.notes import AUTO_CLOSE, AUTO_OPEN, name_problem

MAX_BODY = 32_000  # characters
MAX_DESCRIPTION = 300
_TIMELINE = re.compile(r"^#{2,6}\s*(?:timeline|时间线)\b", re.IGNORECASE)


def timeline(body: str) -> list[str]:
    """The entries under a Timeline heading (they may only grow)."""
    out, inside = [], False
    for line in body.split("\n"):
        if line.startswith("#"):
            inside = bool(_TIMELINE.match(line))
        elif inside and line.strip():
            out.append(line.strip())
    return out


def parse_reply(content: str, finish_reason: str | None, existing: Existing | None) -> Draft | None:
    """The validated draft, None for "nothing worth remembering", or Invalid."""
    if finish_reason == "length":
        raise Invalid("the reply was cut off (finish_reason=length); answer more briefly")
    data = decode_object(content)
    for key in ("name", "description", "body"):
        if not isinstance(data.get(key, "" if existing else None), str):
            raise Invalid(f'"{key}" must be a string')
    body, desc = data["body"].replace("\r\n", "\n"), " ".join(data["description"].split())
    if not body.strip():
        return None
    if len(body) > MAX_BODY:
        raise Invalid(f'"body" is longer than {MAX_BODY} characters')
    if body.lstrip().startswith("---"):
        raise Invalid('"body" starts with a frontmatter block (---); send the body only, frontmatter is ours')
    if "\x00" in body or AUTO_OPEN in body or AUTO_CLOSE in body:
        raise Invalid('"body" contains reserved text (NUL or a notes:auto marker)')
    if len(desc) > MAX_DESCRIPTION:
        raise Invalid(f'"description" is longer than {MAX_DESCRIPTION} characters')
    if existing is not None:
        old, new = timeline(existing.body), timeline(body)
        if new[:len(old)] != old:
            missing = next((x for x, y in zip(old + [""], new + [""]) if x != y), old[-1])
            raise Invalid(f"a timeline entry was removed or changed ({missing[:80]!r}); keep every existing "
                          "timeline line as it is and only append")
        return Draft(existing.name, desc or existing.description, body if body.endswith("\n") else body + "\n")
    name = data["name"].strip()
    problem = name_problem(name)
    if problem:
        raise Invalid(f'"name": {problem}')
    if not desc:
        raise Invalid('"description" is empty')
    return Draft(name, desc, body if body.endswith("\n") else body + "\n")
