"""Frontmatter: split it off a note, parse it safely, render it with sorted keys.

The YAML is read by PyYAML's safe loader and written by python-frontmatter's YAML handler
(its SafeDumper settings); reading goes to PyYAML directly, as the handler would, because
importing python-frontmatter also imports its TOML and JSON handlers: 4 ms of a one-file
update. mem keeps its own split because it needs the number of
lines the block occupies (chunk line numbers count them), and its own guards. There is
no YAML-free fast path: measured with bench/bench_frontmatter.py on a 2,000-note vault it
saved 0.05 s of parsing (0.1 s, 4%, of a 2.6 s full build), not worth a second parser.

Parsing never raises: a broken or non-mapping frontmatter reads as {} with a
problem string, so one bad note cannot stop indexing of the others. Frontmatter
with YAML aliases is refused (an alias bomb expands exponentially); values are
flattened to JSON-safe scalars and short lists.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

MAX_FRONTMATTER_BYTES = 64 * 1024
_MAX_LIST = 50


def split(text: str) -> tuple[str | None, int]:
    """Return (frontmatter source or None, number of lines it occupies incl. fences)."""
    if not text.startswith("---"):
        return None, 0
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].rstrip() != "---":
        return None, 0
    pos = first_nl + 1
    line_no = 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl < 0 else text[pos:nl]
        line_no += 1
        if line.rstrip() in ("---", "..."):
            return text[first_nl + 1 : pos], line_no
        if nl < 0:
            break
        pos = nl + 1
    return None, 0  # no closing fence: treat the whole file as body


def _scalar(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()
    return str(v)


def _clean(v: Any) -> Any:
    if isinstance(v, list):
        return [_scalar(x) if not isinstance(x, (list, dict)) else str(x)[:200] for x in v[:_MAX_LIST]]
    if isinstance(v, dict):
        return {
            str(k): _scalar(x) if not isinstance(x, (list, dict)) else str(x)[:200]
            for k, x in list(v.items())[:_MAX_LIST]
        }
    return _scalar(v)


def parse(source: str | None) -> tuple[dict[str, Any], str | None]:
    """Parse frontmatter YAML; returns (mapping, problem or None)."""
    if source is None or not source.strip():
        return {}, None
    if len(source) > MAX_FRONTMATTER_BYTES:
        return {}, "frontmatter too large"
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        if "*" in source and any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(source, Loader=loader)):
            # aliases can make a few lines stand for an exponentially large value
            return {}, "frontmatter uses YAML aliases"
        data = yaml.load(source, Loader=loader)  # (what YAMLHandler().load does)
    except yaml.YAMLError as exc:
        return {}, _broken(exc)
    except RecursionError:
        return {}, "frontmatter nested too deeply"
    except (ValueError, TypeError, AttributeError, OverflowError):
        # an explicit tag on a value it cannot build (`!!int x`, `!!timestamp x`): PyYAML's
        # constructors raise these rather than a YAMLError
        return {}, "broken frontmatter (a tagged value that is not of its type)"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not a mapping"
    return {str(k): _clean(v) for k, v in data.items()}, None


def _broken(exc) -> str:
    """One line on a YAML error: where, what, and for the commonest slip by hand (an unquoted
    value holding ': ', `description: Note: about x`) how to fix it."""
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    line = f"broken frontmatter{f' at line {mark.line + 2}' if mark else ''}"
    if problem:
        line += f": {' '.join(str(problem).split())[:100]}"
    if str(problem).startswith("mapping values are not allowed"):
        line += " (quote a value that holds ': ')"
    return line


def render(meta: dict[str, Any]) -> str:
    """Frontmatter block with sorted keys, as ReMe writes it."""
    import yaml
    from frontmatter.default_handlers import YAMLHandler

    body = YAMLHandler().export(
        meta, Dumper=yaml.SafeDumper, allow_unicode=True, sort_keys=True, default_flow_style=False, width=100000
    )
    return f"---\n{body}\n---\n"
