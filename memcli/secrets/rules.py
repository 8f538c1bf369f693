"""Where a value is a secret because of what stands around it (memcli.secrets.redact runs these).

Two judgements. In config layout (`=`, quotes, `key: value` alone on its line, XML, a tool's own
flag, .netrc) `literal` takes any value of 4+ characters, words too (POSTGRES_PASSWORD: postgres).
In prose ("the password is X", "Token: expired", a bare `token` key: LLM logprobs {"token": "Hello"})
`credential_like` needs 6+ characters and no word, kebab-case words, path, URL, version or date.
Both leave placeholders ($VAR, ${{…}}, <token>, ***, ENV_NAME, get_token(), changeme). Families:
- a secret-named key and its value: password=, "db_password": , pw: , --api-key X, -u user:pass, 密码：,
  <password>, ENV DB_PASSWORD x; after a bare space a quoted literal (password `x`), a verb (use token X)
  or a change (password changed, it is now X); "… password is swordfish." (no adjective's suffix)
- command lines: a tool's own flag (memcli.secrets.commands: docker login -p, mysql -pX, redis-cli -a,
  sshpass -p, htpasswd -b), lftp -u user,X
- config files: .netrc, .npmrc _auth= and docker "auth": (basic_auth), _authToken=, .pypirc, AWS
  credentials, kubeconfig token: and client-key-data: (taken whole), Terraform variable defaults,
  .NET appSettings (<add key="ApiToken" value="X"/>)
- connection strings (Password=…; up to the `;`), Markdown tables (a cell under a password header
  or right of a secret-named cell), "Credentials: admin / X", auth=("admin", "X")
Kept: hashes, UUIDs, digests, error codes, versions; "password123" without a key. Linear: bounded
quantifiers never split one run; a finder that reads ahead (arguments, a table) never rereads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from memcli.secrets.commands import command_flags
from memcli.secrets.shapes import (
    DICT_ONLY_KEYS,
    KEYCH,
    SECRET_ENDINGS,
    STRICT_KEYS,
    WORDY,
    Finder,
    Spans,
    basic_credentials,
    credential_like,
    is_secret_key,
    literal,
    norm_key,
    positions,
    regex_finder,
    trim,
    word_password,
)

__all__ = ["ASSIGNMENT_RULES", "DICT_ONLY_KEYS", "STRICT_KEYS", "is_secret_key"]

# ---------------------------------------------------------------- assignment rules ("password")
_KV = re.compile(  # on the lowercased copy; after a bare space the value is only looked at, no key is swallowed
    r"(?P<key>(?:pass|pwd|pw|secret|token|key|credential)[a-z0-9_.-]{0,30})(?P<kq>\\?[\"'`]|\*\*)?(?:"
    r"(?P<sep>[ \t]{0,8}(?:::|:=|=>|==|->|→|[:=])[ \t]{0,8}(?:\*\*[ \t]?)?|[ \t]{1,8}(?:is|was|to)[ \t]{1,8}(?:now[ \t])?)"
    r"(?:(?P<q>\\?[\"'`])(?P<qv>[^\"'`\\\r\n]{1,4096})(?P=q)|(?P<uv>[^\s\"'`,;<>\\]{1,256}))"
    r"|[ \t]{1,8}(?=(?P<bq>[\"'`])(?P<bqv>[^\s\"'`\\]{1,256})(?P=bq)|(?P<bv>[^\s\"'`,;<>\\]{1,256})))"
)
_KV_WORDS = ("pass", "pw", "secret", "token", "key", "cred")  # every _KV match starts with one
_RUN_ON = re.compile(r"[^\s\"'`,;<>\\]{1,16384}")  # the rest of a long unquoted value (client-key-data: …)
_VERB = re.compile(
    r"\b(?:use|using|try|with|enter|paste|type|here's|here is|gave me|got)[ \t]+(?:[a-z0-9-]{1,12}[ \t]+){0,3}$"
)
_CHANGED = re.compile(
    r"[^.!?\n]{0,30}?(?:chang|rotat|reset|updat|regenerat|renew)(?:ed)?[^.!?\n:]{0,20}?(?:[ \t](?:is|now|to)(?:[ \t]{1,8}now)?|:)"
    r"[ \t]{1,8}(?:is[ \t]{1,8})?(?P<uv>[^\s\"'`,;<>\\]{1,256})"
)  # "password changed, it is now X"
_FLAG = re.compile(
    r"--(?P<key>[A-Za-z][A-Za-z0-9_-]{0,40})[ \t]{1,8}"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{1,256})(?P=q)|(?P<uv>[^\s\"'`,;&<>\\-][^\s\"'`,;&<>\\]{0,255}))"
)
_USER_FLAG = re.compile(
    r"(?:-u|--user|--proxy-user)(?:[ \t]{1,8}|=)?[\"']?(?P<user>[^\s:\"'@=]{1,64}):(?P<uv>[^\s\"']{1,128})"
)
_LFTP = re.compile(r"lftp\b[^\n]{0,200}?[ \t]-u[ \t]+[^\s,]{1,64},(?P<uv>[^\s\"']{1,128})")  # lftp -u user,X
_APP_SETTING = re.compile(
    r"<add[ \t]+key=\"(?P<key>[^\"\n]{1,64})\"[ \t]+value=\"(?P<qv>[^\"\n]{1,256})\""
)  # web.config
_XML = re.compile(r"<(?P<key>[A-Za-z_][\w.:-]{0,40})>(?P<qv>[^<>\s]{1,256})</(?P=key)>")
_KEY_CHARS = frozenset(KEYCH + ".$")
_KV_ENDINGS = (*SECRET_ENDINGS, "key", "pass", "pw")  # "key" may still become api_key
_PASSWORDS = ("password", "passwd", "passphrase", "pwd", "pw")
_LABEL = re.compile(r"(?:api|access|secret|auth|refresh|private|bearer|session|bot|app)[ ]$")
_LINE_PREFIX = re.compile(r"[ \t]*(?:(?:[-*+>]|\d+[.)])[ \t]+)*(?:\*\*|__)?(?:export[ \t]+)?[\"']?")


def _value(m: re.Match, text: str, strict: bool, q: str = "qv", u: str = "uv") -> tuple[int, str]:
    """Start and original text of the value; unquoted, it loses closing punctuation unless elided."""
    if m.groupdict().get(q) is not None:
        return m.start(q), text[m.start(q) : m.end(q)]
    return m.start(u), trim(text[m.start(u) : m.end(u)], strict)


def _is_strict(m: re.Match, text: str, start: int, key: str, label: bool) -> bool:
    """Prose rules unless the layout says config: `=`, quotes, or `key: value` alone on its line."""
    sep = m["sep"].strip(" \t*")
    if label or sep[:2] in ("is", "wa", "to", "->", "→") or norm_key(key) in STRICT_KEYS:
        return True
    if "=" in sep or m["q"] or (m["kq"] and m["kq"] != "**"):
        return False
    head = text[max(0, start - 120) : start].rpartition("\n")  # bounded: one line may be a whole MiB
    tail = text[m.end() : m.end() + 240].partition("\n")
    alone = (
        bool((head[1] or start <= 120) and _LINE_PREFIX.fullmatch(head[2]))
        and bool(tail[1] or m.end() + 240 >= len(text))
        and tail[0].strip()[:1] in ("", "#")
    )
    return not (alone and ("_" in key or key.islower() or key.isupper()))  # Title-case "Token:" is a label


def _bare(m: re.Match, low: str) -> tuple[re.Match | None, bool]:
    """After a bare space: the match holding the value (quoted, after a verb, after a change) and if it is prose."""
    if m["bq"] and norm_key(m["key"]).endswith(_PASSWORDS):  # not a flag, not kebab-case words (a secret's name)
        return (
            (m, False)
            if m["bqv"][:1] != "-" and (m["bqv"].isalpha() or not WORDY.fullmatch(m["bqv"]))
            else (None, False)
        )
    verb = len(m["bv"] or m["bqv"]) >= 6 and _VERB.search(
        low, max(0, m.start() - 48), m.start()
    )  # 6+: a prose value's least
    return (m, True) if verb else (_CHANGED.match(low, m.end("key")), True)


def _word_password(m: re.Match, text: str, key: str, value: str, end: int) -> bool:
    """`the wifi password is swordfish.`: after "is" or "was", a lowercase word ending the clause."""
    return (
        m["sep"] is not None
        and m["sep"].strip()[:2] in ("is", "wa")
        and norm_key(key).endswith(_PASSWORDS[:3])
        and word_password(value, text[end : end + 1])
    )


def _kv_matches(low: str) -> Iterator[re.Match]:
    """_KV.finditer(low), tried only where one of its key words stands (shared with the prose rules)."""
    last = 0
    for i in positions(low, _KV_WORDS):
        if i >= last and (m := _KV.match(low, i)) is not None:
            amp = low.find("&", i, m.end())  # ?key=…&token=…: a query's next parameter is tried too
            last = max(amp if amp > 0 else m.end(), i + 1)
            yield m


def _key_values(text: str, low: str) -> Spans:
    covered = 0  # the end of the last long value run on: no match inside it is tried again
    for m in _kv_matches(low):
        if m.start() < covered or not norm_key(m["key"]).endswith(_KV_ENDINGS):  # what precedes can not change
            continue  # how the key ends
        held, strict = (m, False) if m["sep"] is not None else (None, True) if m["key"] == "pass" else _bare(m, low)
        if held is None:  # after a bare space; "pass" alone is a verb
            continue
        start = m.start()  # the match starts at the secret word; the key may start earlier: db_password
        while start > 0 and m.start() - start < 48 and text[start - 1] in _KEY_CHARS:
            start -= 1
        label = _LABEL.search(low, max(0, start - 9), start)  # "API key: …", "access token is …"
        if not is_secret_key(key := (label[0] if label else "") + text[start : m.end("key")].lstrip("$-")):
            continue
        strict = strict if m["sep"] is None else _is_strict(m, text, start, key, bool(label))
        at, value = _value(held, text, strict, *(("bqv", "bv") if held is m and m["sep"] is None else ()))
        if m["uv"] is not None and len(m["uv"]) == 256 and (more := _RUN_ON.match(text, m.end("uv"))):
            value, covered = text[at : more.end()], more.end()
        value = value.split("&")[0] if start and text[start - 1] in "?&" else value  # ?token=…&page=2
        ok = (credential_like if strict else literal)(value) or (
            strict and _word_password(m, text, key, value, at + len(value))
        )
        if not ok and strict and m["sep"] is not None and (changed := _CHANGED.match(low, m.end("key"))):
            at, value = _value(changed, text, True)  # "the token was rotated, the new one is X"
            ok = credential_like(value)
        if ok:
            yield at, at + len(value)


def _one_value(
    regex: re.Pattern,
    strict: bool,
    keyed: bool,
    hints: tuple[str, ...] = (),
    lower: bool = False,
    accept: Callable[[re.Match, str], bool] | None = None,
    before: str = KEYCH,
) -> Finder:
    """One regex: a key (group `key`, if keyed), a value (qv or uv), no `before` ahead, accept(match, haystack)."""

    def find(text: str, low: str) -> Spans:
        haystack = low if lower else text
        if hints and not any(h in haystack for h in hints):
            return
        for m in regex.finditer(haystack):
            if m.start() and haystack[m.start() - 1] in before:
                continue
            at, value = _value(m, text, strict)
            if (
                (not keyed or is_secret_key(m["key"]))
                and (accept is None or accept(m, haystack))
                and (credential_like if strict else literal)(value)
            ):
                yield at, at + len(value)

    return find


# ---------------------------------------------------------------- config files, connection strings
_NETRC = re.compile(
    r"machine[ \t]+(?:[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}|localhost)(?:\s{1,40}(?:login|account|port)[ \t]+\S{1,256}){0,3}"
    r"\s{1,40}password[ \t]+(?P<uv>\S{1,256})"
)  # .netrc, on one line or several
_NPM_AUTH = r"auth[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[A-Za-z0-9+/]{8,1024}={0,2})(?![A-Za-z0-9+/=])"  # base64 user:pass
_DOCKERFILE = (
    r"[ \t]+(?P<key>[A-Za-z_]\w{0,63})[ \t]+(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{1,256})(?P=q)|(?P<uv>[^\s\"']{1,256}))"
)
_HCL_DEFAULT = re.compile(r"default[ \t]*=[ \t]*\"(?P<qv>[^\"\\\r\n]{1,256})\"")
_HCL_VARIABLE = re.compile(r"variable[ \t]+\"(?P<key>[^\"\s]{1,64})\"[ \t]*\{")
_CONN = re.compile(
    r"(?:password|pwd)[ \t]*=[ \t]*(?P<uv>\{[^}\r\n]{1,128}\}|[^;={}\"'\r\n]{1,128}?)[ \t]*(?=;|[\"']|$)"
)
_CONN_KEY = re.compile(r"(?:server|data source|user id|uid|database|initial catalog|host|dsn|driver)[ \t]*=")


def _hcl_defaults(text: str, low: str) -> Spans:
    """variable "db_password" { … default = "…" … }: the block's name says what the default is."""
    for m in _HCL_DEFAULT.finditer(text) if "variable" in text else ():
        head = text[max(0, m.start() - 600) : m.start()]
        var = _HCL_VARIABLE.match(head, head.rfind("variable")) if "variable" in head else None
        if var and "\n}" not in head[var.end() :] and is_secret_key(var["key"]) and literal(m["qv"]):
            yield m.span("qv")


def _connection_strings(text: str, low: str) -> Spans:
    """Password=…; in an ADO/ODBC string (a server, database or user key before): up to the `;`."""
    for m in _CONN.finditer(low):
        head = low[max(0, m.start() - 200) : m.start()]
        if not (m.start() and low[m.start() - 1] in KEYCH) and ";" in head and _CONN_KEY.search(head):
            at, value = m.start("uv"), text[m.start("uv") : m.end("uv")].strip()
            at, value = (at + 1, value[1:-1]) if value[:1] == "{" else (at, value)  # ODBC {braced}
            if literal(value):
                yield at, at + len(value)


# ---------------------------------------------------------------- Markdown tables, prose
_TABLE_RULE = re.compile(r"\|[ \t]*:?-")
_SEPARATOR = re.compile(r"[ \t]*\|?[ \t]*:?-[ \t|:-]*")
_TABLE_BODY = re.compile(r"(?:\n[^\n|]{0,4096}\|[^\n]{0,4096}){0,1000}")  # the rows after the separator
_CELL_KEY = re.compile(
    f"(?:{'|'.join(sorted(set(_KV_ENDINGS), key=len, reverse=True))})" + r"[`*]{0,2}[ \t]*\|"
)  # a key |


def _eol(text: str, at: int) -> int:
    return (text.find("\n", at) + 1 or len(text) + 1) - 1


def _cells(text: str, lo: int, hi: int) -> list[tuple[int, str]]:
    """(offset, content) of each cell of the row text[lo:hi], trimmed of spaces, ** and `."""
    row, out, at = text[lo:hi], [], lo
    for part in row.split("|"):
        cell = part.strip().strip("*`").strip()
        out.append((at + part.find(cell) if cell else at, cell))
        at += len(part) + 1
    return out[row.lstrip()[:1] == "|" : len(out) - (row.rstrip()[-1:] == "|")]


def _tables(text: str, low: str) -> Spans:
    """A one-word cell under a password/secret/token header, or right of a secret-named cell (prose rules)."""
    done = 0
    for m in _TABLE_RULE.finditer(text):
        if m.start() < done:
            continue
        sol, eol = text.rfind("\n", 0, m.start()) + 1, _eol(text, m.start())
        done = eol
        if not sol or not _SEPARATOR.fullmatch(text, sol, eol):
            continue
        head = (text.rfind("\n", 0, sol - 1) + 1, sol - 1)
        header = (
            [is_secret_key(c) for _, c in _cells(text, *head)] if _CELL_KEY.search(low[head[0] : head[1]] + "|") else []
        )
        body = _TABLE_BODY.match(text, eol)  # never None: the pattern matches "" too
        at, done, hit = eol, body.end() if body else eol, None  # at: the "\n" before a row
        while at < done and (any(header) or (hit := _CELL_KEY.search(low, at, done))):
            at = at if hit is None else text.rfind("\n", at, hit.start())  # no header: from the keyed cell
            cells = _cells(text, at + 1, end := _eol(text, at + 1))
            for i, (start, cell) in enumerate(cells):
                if (
                    ((i < len(header) and header[i]) or (i and is_secret_key(cells[i - 1][1])))
                    and not any(c.isspace() for c in cell)
                    and credential_like(cell)
                ):
                    yield start, start + len(cell)
            at = end


_USER_PASS = re.compile(
    r":[ \t]{0,8}[^\s/:]{1,64}(?:[ \t]{0,3}/[ \t]{0,3}|:)(?P<uv>[^\s\"'`,;<>\\/]{6,128})"
)  # admin / X
_CRED_LABEL = re.compile(
    r"\b(?:credentials?|creds|logins?|account|user(?:name)?[ \t]?/[ \t]?pass(?:word)?)\b[^\n:]{0,40}$"
)
_AUTH_PAIR = re.compile(
    r"\([ \t]*(?P<q1>[\"'])[^\"'\n]{1,64}(?P=q1)[ \t]*,[ \t]*(?P<q>[\"'])(?P<qv>[^\"'\\\n]{1,256})(?P=q)"
)
_AUTH_CALL = re.compile(r"(?:\bauth[ \t]*=[ \t]*|(?:Basic|Digest)Auth|\blogin|Credentials?)$")  # auth=("u", "X")

ASSIGNMENT_RULES: tuple[tuple[str, Finder], ...] = (
    ("password", _connection_strings),
    ("password", _key_values),
    ("password", _one_value(_FLAG, strict=False, keyed=True, hints=("--",))),
    (
        "password",
        _one_value(
            _USER_FLAG,
            strict=False,
            keyed=False,
            hints=("-u", "--user", "--proxy-user"),
            accept=lambda m, _: m["uv"] != m["user"] and not (m["user"] + m["uv"]).isdigit(),
        ),
    ),  # uid:gid
    ("password", _one_value(_XML, strict=False, keyed=True, hints=("</",))),
    ("password", _one_value(_LFTP, strict=False, keyed=False, hints=("lftp",))),
    ("password", _one_value(_APP_SETTING, strict=False, keyed=True, hints=("<add",))),
    ("password", command_flags),
    ("password", _one_value(_NETRC, strict=False, keyed=False, hints=("machine",))),
    (
        "basic_auth",
        regex_finder(_NPM_AUTH, group="v", accept=basic_credentials, hints=("auth",), before=KEYCH.replace("_", "")),
    ),
    *(
        ("password", _one_value(re.compile(word + _DOCKERFILE), strict=False, keyed=True, hints=(word,)))
        for word in ("ENV", "ARG")
    ),
    ("password", _hcl_defaults),
    ("password", _tables),
    (
        "password",
        _one_value(
            _USER_PASS,
            strict=True,
            keyed=False,
            lower=True,
            before="",
            accept=lambda m, low: bool(_CRED_LABEL.search(low, max(0, m.start() - 48), m.start())),
        ),
    ),
    (
        "password",
        _one_value(
            _AUTH_PAIR,
            strict=False,
            keyed=False,
            hints=("(",),
            before="",
            accept=lambda m, text: bool(_AUTH_CALL.search(text, max(0, m.start() - 24), m.start())),
        ),
    ),
)
