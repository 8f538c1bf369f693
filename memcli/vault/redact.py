"""Secret-shaped values replaced by `[REDACTED:<kind>]` before anything reaches memory.

Format rules know a provider's shape (sk-proj-…, sk-ant-…, AKIA…, ghp_…, xoxb-…, AIza…,
sk_live_…, eyJ….eyJ….…, PEM private keys) and fire anywhere. Assignment rules ("password")
need a secret-named key beside the value (password=, "db_password": , token: , --api-key ,
-u user:pass, 密码：, <password>) and replace only a literal value. Placeholders stay ($VAR,
${{…}}, <token>, ***, ENV_NAME, os.environ[…], get_token(), sk-…, changeme, your-key-here):
redacting them only costs precision. In config layout (`=`, quotes, `key: value` alone on its
line, XML, flags) any literal of 4+ characters counts, words too (POSTGRES_PASSWORD: postgres).
In prose ("the password is X", "Token: expired") and under a bare `token` key (LLM logprobs:
{"token": "Hello"}) it needs 6+ characters and must not be a word, kebab-case words, a path,
URL, version or date: "my password is hunter2!" goes, "the password is stored in vault" stays,
"the wifi password is swordfish" is an accepted miss. Unquoted values end at whitespace.

Kept on purpose: hashes, UUIDs, digests, error codes, versions; SSH public keys, PUBLIC KEY and
CERTIFICATE blocks; Stripe pk_live_ (publishable); IAM ids AIDA…/AROA…; "password123" without
a key. Idempotent: markers never match. Bounded quantifiers that never split one run: linear.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memcli.errors import ConfigError

MARKER = re.compile(r"\[REDACTED:[A-Za-z0-9_-]{1,40}\]")
_KIND_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int


Spans = Iterator[tuple[int, int]]
Finder = Callable[[str, str], Spans]  # (text, text lowercased with the same offsets) -> spans

# ---------------------------------------------------------------- value shapes
_PLACEHOLDER_WORDS = frozenset("""changeme changethis changeit password passwd pass secret token apikey key
    example placeholder redacted replaceme todo tbd none null nil undefined true false yes no on off empty
    dummy test xxx hidden masked required optional notset unset na string str int bool value foo bar foobar
    secretkey accesstoken sample""".split())
_MASKED = re.compile(r"[*xX•·.#?_\-]+|0+")
_MASK_RUN = re.compile(r"([xX*•#])\1{3}")
_TEMPLATE = re.compile(r"\$|\{\{|\{%|%\(|%\w+%|<|\[REDACTED:|!(?:secret|vault|env|ref|sub)\b", re.I)
_YOUR = re.compile(r"(?:^|[^a-z])your(?:[-_ ]|[a-z]{0,12}(?:key|token|secret|pass))|(?:^|[-_ ])here$", re.I)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_CODE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[^(\[]*[(\[].*|[A-Z][a-z]+(?:[A-Z][a-z]+)+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORDY = re.compile(r"[A-Za-z]+(?:[-_'][A-Za-z]+)*")
_PATH = re.compile(r"(?:~|\.{1,2})?/|[A-Za-z]:\\")
_URL = re.compile(r"[A-Za-z][\w+.-]*://")
_VERSION_OR_DATE = re.compile(r"v?\d+(?:\.\d+)+(?:[-+.][A-Za-z][\w.+-]*)?|\d{4}-\d{2}-\d{2}\S*")
_RUN = re.compile(r"(.)\1{4}")
_NON_ALNUM = re.compile(r"[^a-z0-9]")


def _placeholder(value: str, words: bool = True) -> bool:
    """A mask, reference, template, elision or your-key-here; with `words`, changeme, null, test…"""
    if not value or "..." in value or "…" in value or _MASKED.fullmatch(value) or _MASK_RUN.search(value) \
            or _TEMPLATE.match(value) or _YOUR.search(value) or _ENV_NAME.fullmatch(value):
        return True
    squashed = _NON_ALNUM.sub("", value.lower())
    return words and (squashed in _PLACEHOLDER_WORDS or squashed.startswith("redacted"))


def _literal(value: str) -> bool:
    """A config value that is itself the secret (loose: words allowed). A path names a file, but
    /VpflvLk/DR3s… is base64 that starts with a slash."""
    path = _PATH.match(value) and not any(len(s) >= 8 and _random(s, 3) for s in re.split(r"[/\\]", value))
    return (len(value) >= 4 and not path and not _placeholder(value) and not _CODE.fullmatch(value)
            and not _URL.match(value) and not _VERSION_OR_DATE.fullmatch(value)
            and not (_IDENT.fullmatch(value) and is_secret_key(value)))  # password=db_password names one


def _credential_like(value: str) -> bool:
    """A value in prose that looks like a credential rather than a word (strict)."""
    return len(value) >= 6 and _literal(value) and not _WORDY.fullmatch(value)


def _random(body: str, classes: int = 2) -> bool:
    """Drawn from a key alphabet: mixed classes, no words (but 1 in 28 AWS ids has no digit), no masks."""
    kinds = any(c.islower() for c in body) + any(c.isupper() for c in body) + any(c.isdigit() for c in body)
    return kinds >= classes and not _RUN.search(body) and not _placeholder(body) \
        and (classes == 1 or not _WORDY.fullmatch(body))


# ---------------------------------------------------------------- secret-named keys
_SECRET_ENDINGS = ("password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "accesskey",
                   "secretkey", "privatekey", "encryptionkey", "signingkey", "masterkey", "credential",
                   "credentials")
_NOT_SECRET = ("pagetoken", "nexttoken", "continuationtoken", "synctoken", "cursortoken")  # pagination
_STRICT_KEYS = frozenset({"token", "credential", "credentials"})
_DICT_ONLY_KEYS = frozenset({"auth", "authorization"})  # docker config "auth"; too vague in prose


def _norm(key: str) -> str:
    return _NON_ALNUM.sub("", key.lower())


@lru_cache(maxsize=4096)  # the same few keys come back on every line of a config
def is_secret_key(key: str) -> bool:
    """password, db_password, apiKey, X-Api-Key, client_secret, AWS_SECRET_ACCESS_KEY, DB_PASS, pw..."""
    norm = _norm(key)
    if norm.endswith(_NOT_SECRET):
        return False
    return norm.endswith(_SECRET_ENDINGS) or bool(re.search(r"(?:^|[-_. ])(?:pass|pw)$", key.lower()))


# ---------------------------------------------------------------- format rules
# Regexes start with a literal (a leading lookbehind or re.I makes the engine try every
# position, 15-60 ms per MiB each): boundaries are checked in Python, re.I means `lower`.
_KEYCH = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"  # none may come right before


def _regex_finder(pattern: str | re.Pattern, group: int | str = 0, accept: Callable[..., bool] | None = None,
                  hints: tuple[str, ...] = (), before: str = "", lower: bool = False) -> Finder:
    """Spans of `group` in matches kept by accept(value, text, start, end), with no `before`
    character right ahead; `lower` matches the lowercased copy."""
    regex = re.compile(pattern)

    def find(text: str, low: str) -> Spans:
        haystack = low if lower else text
        if hints and not any(h in haystack for h in hints):
            return
        for m in regex.finditer(haystack):
            start, end = m.span(group)
            if end > start and not (m.start() and haystack[m.start() - 1] in before) \
                    and (accept is None or accept(text[start:end], text, start, end)):
                yield start, end
    return find


def _basic(value: str, *_) -> bool:
    """HTTP Basic credentials are base64 of user:password; "Basic realm" and the like are not."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


_AWS_CONTEXT = re.compile(r"aws|akia|asia|secret.?access")
_B64_40 = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")  # "=" pads the end only


def _aws_secrets(text: str, low: str) -> Spans:
    """40 base64 characters are everywhere (hashes, ids): only from 240 before to 181 after an
    AWS word or key id, overlapping windows merged so that each character is scanned once."""
    windows: list[list[int]] = []
    for c in _AWS_CONTEXT.finditer(low):
        if windows and c.start() - 240 <= windows[-1][1]:
            windows[-1][1] = c.end() + 181
        else:
            windows.append([max(0, c.start() - 240), c.end() + 181])
    for lo, hi in windows:
        for m in _B64_40.finditer(text, lo, min(len(text), hi + 41)):  # +41: the lookahead sees past hi
            if m.start() < hi and _random(m[0], 3):
                yield m.span()


_PEM_BEGIN = re.compile(r"-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----")


def _private_keys(text: str, low: str) -> Spans:
    """BEGIN … END, whole; a block cut before END runs to a blank line, a quote or 8 KiB.
    The next END of each label is remembered, so a pile of BEGIN lines costs one scan."""
    next_end: dict[str, int] = {}  # END marker -> its next position (-1: none left)
    covered = 0
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < covered:  # a BEGIN line inside a block already taken
            continue
        marker = f"-----END {m[1]}-----"
        if marker not in next_end or -1 < next_end[marker] < m.end():
            next_end[marker] = text.find(marker, m.end())
        end = next_end[marker]
        if 0 <= end - m.end() <= 65536:
            covered = end + len(marker)
        else:
            cut = m.end() + 8192
            stops = [i for i in (text.find("\n\n", m.end(), cut), text.find('"', m.end(), cut)) if i >= 0]
            covered = min([len(text), cut, *stops])
        yield m.start(), covered


_PREFIXED = (  # kind, regex, hints, length of the prefix left out of the randomness check
    ("openai_key", r"sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,400}", ("sk-",), 3),
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{24,400}", ("sk-ant-",), 7),
    ("github_token", r"(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{50,255})(?![A-Za-z0-9_])",
     ("gh", "github_pat_"), 4),
    ("slack_token", r"x(?:oxe\.xox[a-z]|ox[a-z]|app)-\d{1,20}-[A-Za-z0-9-]{10,255}", ("xox", "xapp-"), 5),
    ("google_api_key", r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])", ("AIza",), 4),
    ("google_oauth", r"(?:GOCSPX-[A-Za-z0-9_-]{24,64}|ya29\.[A-Za-z0-9_-]{20,2048})", ("GOCSPX-", "ya29."), 7),
    ("stripe_key", r"[sr]k_(?:live|test)_[0-9A-Za-z]{16,255}(?![A-Za-z0-9_])", ("_live_", "_test_"), 8),
    ("stripe_key", r"whsec_[A-Za-z0-9]{24,255}(?![A-Za-z0-9_])", ("whsec_",), 6),
    ("gitlab_token", r"gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20,64}", ("gl",), 6),
    ("npm_token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])", ("npm_",), 4),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,64}(?![A-Za-z0-9_])", ("hf_",), 3),
    ("sendgrid_key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}", ("SG.",), 3),
    ("aws_access_key_id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])", ("AKIA", "ASIA", "ABIA", "ACCA"), 4),
)
FORMAT_RULES: tuple[tuple[str, Finder], ...] = (
    ("private_key", _private_keys),
    *((kind, _regex_finder(rx, accept=lambda v, *_, s=skip, c=1 if kind.startswith("aws") else 2: _random(v[s:], c),
                           hints=hints, before=_KEYCH))  # an AWS key id has no lower case: one class is enough
      for kind, rx, hints, skip in _PREFIXED),
    ("slack_webhook", _regex_finder(r"hooks\.slack\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/(?P<v>[A-Za-z0-9]{16,48})",
                                    group="v", hints=("hooks.slack.com",))),
    # the lookbehind after the literal keeps the fast prefix scan and stops eyJeyJeyJ… rescans
    ("jwt", _regex_finder(r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,1024}",
                          hints=("eyJ",))),
    ("aws_secret_key", _aws_secrets),
    # in a URL the place says it is a password: user:pass@ goes, only templates (${PASS}, <pw>, ***) stay
    ("url_password", _regex_finder(r"://(?<=[A-Za-z0-9]://)[^\s:/@\"'<>]{0,64}:(?P<v>[^\s@/\"'<>]{1,128})@(?=[\w\[.-])",
                                   group="v", accept=lambda v, *_: not _placeholder(v, words=False), hints=("://",))),
    ("bearer_token", _regex_finder(r"(?:bearer|authorization[\"']?[ \t]?[:=][ \t]?[\"']?token)[ \t]{1,8}"
                                   r"(?P<v>[a-z0-9._~+/-]{12,4096}=*)", group="v", accept=lambda v, *_: _random(v),
                                   hints=("bearer", "authorization"), before=_KEYCH, lower=True)),
    ("basic_auth", _regex_finder(r"basic[ \t]{1,8}(?P<v>[a-z0-9+/]{8,1024}={0,2})(?![a-z0-9+/=])", group="v",
                                 accept=_basic, hints=("basic",), before=_KEYCH, lower=True)),
)

# ---------------------------------------------------------------- assignment rules ("password")
_KV = re.compile(  # matched on the lowercased copy
    r"(?P<key>(?:pass|pwd|pw|secret|token|key|credential)[a-z0-9_.-]{0,30})(?P<kq>\\?[\"'`]|\*\*)?"
    r"(?P<sep>[ \t]{0,8}(?:::|:=|=>|==|->|→|[:=])[ \t]{0,8}(?:\*\*[ \t]?)?|[ \t]{1,8}(?:is|was|to)[ \t]{1,8}(?:now[ \t])?)"
    r"(?:(?P<q>\\?[\"'`])(?P<qv>[^\"'`\\\r\n]{1,256})(?P=q)|(?P<uv>[^\s\"'`,;<>\\]{1,256}))")
_FLAG = re.compile(r"--(?P<key>[A-Za-z][A-Za-z0-9_-]{0,40})[ \t]{1,8}"
                   r"(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{1,256})(?P=q)|(?P<uv>[^\s\"'`,;&<>\\-][^\s\"'`,;&<>\\]{0,255}))")
_USER_FLAG = re.compile(r"(?:-u|--user)[ \t]{1,8}[\"']?[^\s:\"'@]{1,64}:(?P<uv>[^\s\"']{1,128})")  # curl -u user:pw
_CJK = re.compile(r"(?:密码|密碼|口令|令牌|密钥|秘钥|密鑰|パスワード|トークン|비밀번호|토큰|암호)[ \t]{0,8}"
                  r"(?:是|为|為|は|는|은|：|:|=)[ \t]{0,8}(?P<uv>[!-~]{1,128})")
_XML = re.compile(r"<(?P<key>[A-Za-z_][\w.:-]{0,40})>(?P<qv>[^<>\s]{1,256})</(?P=key)>")
_KEY_CHARS = frozenset(_KEYCH + ".$")
_KV_ENDINGS = (*_SECRET_ENDINGS, "key", "pass", "pw")  # "key" may still become api_key
_LABEL = re.compile(r"(?:api|access|secret|auth|refresh|private|bearer|session|bot|app)[ ]$")
_LINE_PREFIX = re.compile(r"[ \t]*(?:(?:[-*+>]|\d+[.)])[ \t]+)*(?:\*\*|__)?(?:export[ \t]+)?[\"']?")
_TRAIL_LOOSE, _TRAIL_STRICT = ".,:)]}>", ".,:;!?)]}>"


def _value(m: re.Match, text: str, strict: bool) -> tuple[int, str]:
    """Start and original text of the value; unquoted, it loses closing punctuation unless elided."""
    if m.groupdict().get("qv") is not None:
        return m.start("qv"), text[m.start("qv"):m.end("qv")]
    raw = text[m.start("uv"):m.end("uv")]
    return m.start("uv"), raw if raw.endswith(("..", "…")) else raw.rstrip(_TRAIL_STRICT if strict else _TRAIL_LOOSE)


def _is_strict(m: re.Match, text: str, start: int, key: str, label: bool) -> bool:
    """Prose rules unless the layout says config: `=`, quotes, or `key: value` alone on its line."""
    sep = m["sep"].strip(" \t*")
    if label or sep[:2] in ("is", "wa", "to", "->", "→") or _norm(key) in _STRICT_KEYS:
        return True
    if "=" in sep or m["q"] or (m["kq"] and m["kq"] != "**"):
        return False
    head = text[max(0, start - 120):start].rpartition("\n")  # bounded: one line may be a whole MiB
    tail = text[m.end():m.end() + 240].partition("\n")
    alone = bool((head[1] or start <= 120) and _LINE_PREFIX.fullmatch(head[2])) \
        and bool(tail[1] or m.end() + 240 >= len(text)) and tail[0].strip()[:1] in ("", "#")
    return not (alone and ("_" in key or key.islower() or key.isupper()))  # Title-case "Token:" is a label


def _key_values(text: str, low: str) -> Spans:
    for m in _KV.finditer(low):
        if not _norm(m["key"]).endswith(_KV_ENDINGS):  # what precedes can not change how the key ends
            continue
        start = m.start()  # the match starts at the secret word; the key may start earlier: db_password
        while start > 0 and m.start() - start < 48 and text[start - 1] in _KEY_CHARS:
            start -= 1
        label = _LABEL.search(low, max(0, start - 9), start)  # "API key: …", "access token is …"
        if not is_secret_key(key := (label[0] if label else "") + text[start:m.end("key")].lstrip("$-")):
            continue
        strict = _is_strict(m, text, start, key, bool(label))
        at, value = _value(m, text, strict)
        value = value.split("&")[0] if start and text[start - 1] in "?&" else value  # ?token=…&page=2
        if (_credential_like if strict else _literal)(value):
            yield at, at + len(value)


def _one_value(regex: re.Pattern, strict: bool, keyed: bool, hints: tuple[str, ...] = ()) -> Finder:
    """CLI flags, curl -u, CJK prose and XML elements: one key, one value, one strictness."""
    def find(text: str, low: str) -> Spans:
        if hints and not any(h in text for h in hints):
            return
        for m in regex.finditer(text):
            if m.start() and text[m.start() - 1] in _KEYCH:
                continue
            at, value = _value(m, text, strict)
            if (not keyed or is_secret_key(m["key"])) and (_credential_like if strict else _literal)(value):
                yield at, at + len(value)
    return find


ASSIGNMENT_RULES: tuple[tuple[str, Finder], ...] = (
    ("password", _key_values),
    ("password", _one_value(_FLAG, strict=False, keyed=True, hints=("--",))),
    ("password", _one_value(_USER_FLAG, strict=False, keyed=False, hints=("-u", "--user"))),
    ("password", _one_value(_CJK, strict=True, keyed=False)),
    ("password", _one_value(_XML, strict=False, keyed=True, hints=("</",))),
)
KINDS: tuple[str, ...] = tuple(dict.fromkeys(kind for kind, _ in FORMAT_RULES + ASSIGNMENT_RULES))

# ---------------------------------------------------------------- the redactor


def _custom(kind: str, pattern: str) -> Finder:
    """A user rule: its named group `secret` is replaced when it has one, else the whole match."""
    if not isinstance(kind, str) or not _KIND_NAME.fullmatch(kind):
        raise ConfigError(f"redaction pattern name {kind!r} is not a kind name (a-z, 0-9 and _, 40 at most)")
    try:
        regex = re.compile(pattern)
    except (re.error, TypeError) as e:
        raise ConfigError(f"redaction pattern {kind!r} is not a valid regular expression: {e}") from None
    return _regex_finder(regex, "secret" if "secret" in regex.groupindex else 0)


class Redactor:
    """Finds secret-shaped values and replaces them; build it once with from_config()."""

    def __init__(self, rules: list[tuple[str, Finder]], enabled: bool = True):
        self._rules = rules
        self.enabled = enabled
        self.kinds = tuple(dict.fromkeys(kind for kind, _ in rules))

    @classmethod
    def from_config(cls, enabled: bool = True, extra_patterns: dict[str, str] | None = None,
                    disabled_kinds: list[str] | None = None) -> Redactor:
        """Built-in rules minus disabled_kinds, plus user regexes by kind (after the format rules)."""
        custom = [(kind, _custom(kind, pattern)) for kind, pattern in (extra_patterns or {}).items()]
        disabled = set(disabled_kinds or ())
        unknown = sorted(disabled - set(KINDS) - {kind for kind, _ in custom})
        if unknown:
            raise ConfigError(f"redaction: unknown kind {unknown[0]!r} in disabled_kinds",
                              hint=f"known kinds: {', '.join(KINDS)}")
        rules = [*FORMAT_RULES, *custom, *ASSIGNMENT_RULES]
        return cls([(kind, find) for kind, find in rules if kind not in disabled], enabled)

    def find(self, text: str) -> list[Finding]:
        """Every secret in text, in order, none overlapping; existing markers are never matched."""
        if not self.enabled or not text:
            return []
        claimed = bytearray(len(text))  # 1 where a marker or an earlier (higher-priority) rule holds
        for m in MARKER.finditer(text):
            claimed[m.start():m.end()] = b"\1" * (m.end() - m.start())
        low, found = text.replace("\u0130", "I").lower(), []  # İ: the one lowercase that grows
        for kind, finder in self._rules:
            for start, end in finder(text, low):
                if claimed.find(1, start, end) < 0:
                    claimed[start:end] = b"\1" * (end - start)
                    found.append(Finding(kind, start, end))
        return sorted(found, key=lambda f: f.start)

    def redact(self, text: str) -> tuple[str, list[str]]:
        """(text with every secret replaced by [REDACTED:<kind>], the kinds, one per replacement)."""
        found, parts, at = self.find(text), [], 0
        for f in found:
            parts += [text[at:f.start], f"[REDACTED:{f.kind}]"]
            at = f.end
        return "".join(parts) + text[at:], [f.kind for f in found]

    def redact_value(self, obj: Any, found: list[str] | None = None) -> Any:
        """A copy of a JSON-like value with its strings redacted; kinds are appended to `found`.
        A string under a secret-named key goes whole, judged by config rules (prose ones for
        token, credentials, auth, authorization); numbers, booleans and the keys stay."""
        return self._walk(obj, [] if found is None else found, "")

    def _walk(self, obj: Any, found: list[str], key: Any) -> Any:
        if isinstance(obj, dict):
            return {k: self._walk(v, found, k) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            items = [self._walk(v, found, "") for v in obj]
            return items if isinstance(obj, list) else tuple(items)
        if not isinstance(obj, str):
            return obj
        text, kinds = self.redact(obj)
        norm = _norm(key) if isinstance(key, str) else ""
        named = norm and self.enabled and "password" in self.kinds and (is_secret_key(key) or norm in _DICT_ONLY_KEYS)
        if named and not kinds and (_credential_like if norm in _STRICT_KEYS | _DICT_ONLY_KEYS else _literal)(obj.strip()):
            text, kinds = "[REDACTED:password]", ["password"]
        found += kinds
        return text


@lru_cache(maxsize=1)
def default_redactor() -> Redactor:
    return Redactor.from_config()


def redact(text: str) -> tuple[str, list[str]]:
    """Redactor.redact with every built-in rule on."""
    return default_redactor().redact(text)
