"""API keys in mem.yaml / agent.json: left out of the config module, kept in the secrets module.

config_entries() gives both modules' copies of the two files; redact() and fill() do the work.

The config files are edited as text, not re-dumped, so comments and layout survive:
YAML's composer gives each value's position (JSON is YAML for this purpose; tabs,
legal JSON whitespace but not YAML's, are swapped for spaces of the same width),
and only the secret values are spliced. If a file cannot be composed, it is
rewritten from its parsed data instead (the keys matter more than the layout).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

CONFIG_FILES = ("mem.yaml", "agent.json")

# A key names a secret when, lowercased without - and _, it is one of these or ends so.
_SECRET_ENDINGS = ("apikey", "secret", "secretkey", "password", "passwd", "accesstoken", "authtoken")
_EMPTY = ("", "~", "null", "Null", "NULL")


def is_secret_key(key: str) -> bool:
    norm = re.sub(r"[-_ ]", "", key.lower())
    # a DSN (shared.dsn) may carry its password: the whole string is kept with the secrets
    return norm in ("token", "dsn") or norm.endswith(_SECRET_ENDINGS)


def _spans(text: str) -> list[tuple[tuple, int, int, str]] | None:
    """(path, start, end, value) of every secret scalar, or None when the text does not compose.

    Values under a `headers` mapping count as secrets: they carry Authorization and x-api-key.
    """
    import yaml

    try:
        root = yaml.compose(text.replace("\t", " "), Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    out: list[tuple[tuple, int, int, str]] = []

    def walk(node, path: tuple, secret: bool) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                if key is None:
                    continue
                walk(v, (*path, key), secret or is_secret_key(key) or key == "headers")
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, (*path, i), secret)
        elif isinstance(node, yaml.ScalarNode) and secret:
            out.append((path, node.start_mark.index, node.end_mark.index, node.value))

    if root is not None:
        walk(root, (), False)
    return out


def _splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, reverse=True):
        old = text[start:end]
        # a block scalar's span runs to the next line: keep the line break it ate
        text = text[:start] + new + ("\n" if old.endswith("\n") else "") + text[end:]
    return text


def _load(text: str, is_json: bool):
    import yaml

    return json.loads(text) if is_json else yaml.safe_load(text)


def _dump(data, is_json: bool) -> str:
    import yaml

    if is_json:
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def _get(data, path: tuple):
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _set_all(data, value_for) -> None:
    """Data-level fallback: replace every secret scalar in place."""

    def walk(node, path: tuple, secret: bool) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in list(items):
            sub = secret or (isinstance(k, str) and (is_secret_key(k) or k == "headers"))
            if isinstance(v, (dict, list)):
                walk(v, (*path, k), sub)
            elif sub:
                node[k] = value_for((*path, k), v)

    walk(data, (), False)


def redact(text: str, is_json: bool) -> tuple[str, int]:
    """The text with every non-empty secret value replaced by "" and how many there were."""
    spans = _spans(text)
    if spans is not None:
        edits = [(s, e, '""') for _, s, e, v in spans if v not in _EMPTY]
        out = _splice(text, edits)
        if not edits:
            return text, 0
        check = _spans(out)
        if check is not None and all(v in _EMPTY for *_, v in check):
            return out, len(edits)
    data = _load(text, is_json)  # ValueError/YAMLError: caller reports the file as unreadable
    count = [0]

    def blank(_path, value):
        if value not in (None, ""):
            count[0] += 1
        return ""

    _set_all(data, blank)
    return _dump(data, is_json), count[0]


def fill(redacted: str, current: str | None, is_json: bool) -> tuple[str, int]:
    """`redacted` with its empty secrets taken from `current` (the workspace's file now).

    A config restored without the secrets module keeps the keys the workspace has."""
    if not current:
        return redacted, 0
    try:
        now = _load(current, is_json)
    except Exception:  # noqa: BLE001 - an unreadable current file has no keys to keep
        return redacted, 0

    def wanted(path, value):
        cur = _get(now, path)
        return cur if isinstance(cur, (str, int, float)) and cur != "" and value in _EMPTY else None

    spans = _spans(redacted)
    if spans is not None:
        edits = [
            (s, e, json.dumps(cur, ensure_ascii=False))
            for path, s, e, v in spans
            if (cur := wanted(path, v)) is not None
        ]
        return _splice(redacted, edits), len(edits)
    data = _load(redacted, is_json)
    count = [0]

    def take(path, value):
        cur = wanted(path, "" if value is None else str(value))
        if cur is None:
            return value
        count[0] += 1
        return cur

    _set_all(data, take)
    return _dump(data, is_json), count[0]


def config_entries(root: Path, modules) -> tuple[list[tuple[str, str, bytes, os.stat_result, int]], list, list]:
    """(module, name, data, stat, secrets found) for mem.yaml/agent.json: redacted in config,
    verbatim in secrets (only files that hold a secret); then what was skipped and what could
    not be read (path, reason)."""
    out, skipped, unreadable = [], [], []
    if "config" not in modules:
        return out, skipped, unreadable
    for name in CONFIG_FILES:
        path = root / name
        try:
            if os.path.islink(path) or not path.is_file():
                continue
            st = path.stat()
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            unreadable.append((name, exc.strerror or "unreadable"))
            continue
        try:
            text, found = redact(raw.decode("utf-8"), name.endswith(".json"))
        except Exception:  # noqa: BLE001 - unparseable: its secrets cannot be told apart
            skipped.append((name, "cannot be parsed, so its API keys cannot be left out"))
            text, found = None, 1
        if text is not None:
            out.append(("config", name, text.encode("utf-8") if found else raw, st, found))
        if "secrets" in modules and found:
            out.append(("secrets", name, raw, st, found))
    return out, skipped, unreadable
