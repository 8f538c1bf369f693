"""PostgreSQL connection strings (the shared index's `shared.dsn`): their passwords masked.

A DSN is a libpq URI (`postgresql://user:secret@host/db?sslmode=require`) or a key=value
string (`host=db user=mem password=secret`). mem never prints or writes its password:
`mem config` shows the DSN masked, errors are scrubbed of it (psycopg may echo a DSN it
cannot parse), and nothing under mem_metadata/ records a DSN at all (only a hash of its
password-free form, memcli.team.publish).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"
_URI = re.compile(r"^(postgres(?:ql)?://)([^@/?#]*)@", re.IGNORECASE)
_QUERY = re.compile(r"([?&](?:ssl)?password=)([^&#]*)", re.IGNORECASE)
_KEYVALUE = re.compile(r"(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']+)", re.IGNORECASE)


def masked(dsn: str) -> str:
    """The DSN with every password replaced by ***."""
    if not dsn:
        return dsn
    m = _URI.match(dsn)
    if m:
        user, colon, password = m.group(2).partition(":")
        head = m.group(1) + (f"{user}:{MASK}" if colon and password else m.group(2)) + "@"
        return _QUERY.sub(lambda q: q.group(1) + MASK, head + dsn[m.end() :])
    if "://" in dsn:
        return _QUERY.sub(lambda q: q.group(1) + MASK, dsn)
    return _KEYVALUE.sub(lambda k: k.group(1) + MASK, dsn)


def passwords(dsn: str) -> list[str]:
    """Every password in the DSN, as written and decoded (longest first, for scrubbing)."""
    found: list[str] = []
    m = _URI.match(dsn or "")
    if m and ":" in m.group(2):
        found.append(m.group(2).partition(":")[2])
    found += [q.group(2) for q in _QUERY.finditer(dsn or "")]
    if not m and "://" not in (dsn or ""):
        found += [k.group(2).strip("'") for k in _KEYVALUE.finditer(dsn or "")]
    out = {p for p in found if p} | {unquote(p) for p in found if p}
    return sorted(out, key=len, reverse=True)


def scrub(text: str, dsn: str) -> str:
    """`text` (an error message) with the DSN's passwords, and the DSN itself, masked."""
    if dsn and dsn in text:
        text = text.replace(dsn, masked(dsn))
    for secret in passwords(dsn):
        text = text.replace(secret, MASK)
    return text


def public(dsn: str) -> str:
    """The DSN without its password: what a marker may hash to tell databases apart."""
    return masked(dsn).replace(MASK, "")
