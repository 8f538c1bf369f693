"""Secret-shaped values replaced by `[REDACTED:<kind>]` before anything reaches memory.

Format rules (here) know a provider's shape (sk-proj-…, sk-ant-…, AKIA…, ghp_…, xoxb-…, AIza…,
sk_live_…, eyJ….eyJ….…, PEM private keys) and fire anywhere; assignment rules need what stands
around a value: a secret-named key, a tool's flag, a config file's layout (memcli.secrets.rules).
Kept on purpose: SSH public keys, PUBLIC KEY and CERTIFICATE blocks; Stripe pk_live_ (publishable);
IAM ids AIDA…/AROA…. The Redactor runs the format rules, the user's patterns, then the assignment
rules; a span an earlier rule or an existing marker holds is never taken again, so redacting twice
changes nothing. redact_value walks JSON-like data and replaces a string under a secret-named key whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memcli.errors import ConfigError
from memcli.secrets.links import LINK_RULES
from memcli.secrets.prose import PROSE_RULES
from memcli.secrets.rules import ASSIGNMENT_RULES
from memcli.secrets.shapes import (
    DICT_ONLY_KEYS,
    KEYCH,
    STRICT_KEYS,
    Finder,
    Lowered,
    Spans,
    basic_credentials,
    credential_like,
    is_secret_key,
    literal,
    norm_key,
    placeholder,
    positions,
    random_like,
    regex_finder,
)

__all__ = ["KINDS", "MARKER", "Finding", "Redactor", "default_redactor", "is_secret_key", "redact"]

MARKER = re.compile(r"\[REDACTED:[A-Za-z0-9_-]{1,40}\]")
_KIND_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int


# ---------------------------------------------------------------- format rules: a provider's shape, anywhere
_AWS_WORDS = ("aws", "akia", "asia", "secret")
_SECRET_ACCESS = re.compile(r"secret.?access")
_B64_40 = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")  # "=" pads the end only


def _aws_secrets(text: str, low: str) -> Spans:
    """40 base64 characters are everywhere (hashes, ids): only from 240 before to 181 after an
    AWS word or key id, overlapping windows merged so that each character is scanned once."""
    windows: list[list[int]] = []
    for at in positions(low, _AWS_WORDS):
        end = at + 4 if low[at] == "a" and low[at + 1] != "w" else at + 3
        if low[at] == "s":
            if (c := _SECRET_ACCESS.match(low, at)) is None:
                continue
            end = c.end()
        if windows and at - 240 <= windows[-1][1]:
            windows[-1][1] = end + 181
        else:
            windows.append([max(0, at - 240), end + 181])
    for lo, hi in windows:
        for m in _B64_40.finditer(text, lo, min(len(text), hi + 41)):  # +41: the lookahead sees past hi
            if m.start() < hi and random_like(m[0], 3):
                yield m.span()


_URL_WORDS = frozenset({"password", "passwd", "secret"})
# PEM (PKCS#1, PKCS#8, SEC1, encrypted), OpenSSH, PGP (PRIVATE or SECRET KEY BLOCK), SSH2 (---- BEGIN … ----)
_PEM_BEGIN = re.compile(r"----[- ]BEGIN ((?:[A-Z0-9]{2,12} ){0,3}(?:PRIVATE|SECRET) KEY(?: BLOCK)?)[ -]----")
_PUTTY = re.compile(
    r"PuTTY-User-Key-File-\d: [^\n]{1,64}\n(?:(?!PuTTY-|Private-MAC|Private-Hash)[A-Za-z0-9-]{1,32}: [^\n]{0,1024}\n"
    r"|[A-Za-z0-9+/=]{1,128}\n){0,400}Private-(?:MAC|Hash): [0-9a-fA-F]{20,128}"
)  # up to the next file's header


def _private_keys(text: str, low: str) -> Spans:
    """BEGIN … END, whole; a block cut before END runs to a blank line, a quote or 8 KiB.
    The next END of each label is remembered, so a pile of BEGIN lines costs one scan."""
    next_end: dict[str, int] = {}  # END marker -> its next position (-1: none left)
    covered = 0
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < covered:  # a BEGIN line inside a block already taken
            continue
        marker = f"END {m[1]}"
        if marker not in next_end or -1 < next_end[marker] < m.end():
            next_end[marker] = text.find(marker, m.end())
        end = next_end[marker]
        if 0 <= end - m.end() <= 65536:
            covered = end + len(marker)
            covered += len(text[covered : covered + 6]) - len(
                text[covered : covered + 6].lstrip(" -")
            )  # the closing dashes
        else:
            cut = m.end() + 8192
            stops = [i for i in (text.find("\n\n", m.end(), cut), text.find('"', m.end(), cut)) if i >= 0]
            covered = min([len(text), cut, *stops])
        yield m.start(), covered
    for m in _PUTTY.finditer(text) if "PuTTY-User-Key-File-" in text else ():  # a .ppk file, whole
        yield m.span()


_PREFIXED = (  # kind, regex, hints, length of the prefix left out of the randomness check
    ("openai_key", r"sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,400}", ("sk-",), 3),
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{24,400}", ("sk-ant-",), 7),
    (
        "github_token",
        r"(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{50,255})(?![A-Za-z0-9_])",
        ("gh", "github_pat_"),
        4,
    ),
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
    (
        "vault_token",
        r"hv[sbr]\.[A-Za-z0-9_-]{24,255}(?![A-Za-z0-9_-])",
        (),
        4,
    ),  # HashiCorp Vault: the literal is the hint
    (
        "private_key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        ("AGE-SECRET-KEY-1",),
        16,
    ),  # age identity
)
FORMAT_RULES: tuple[tuple[str, Finder], ...] = (
    ("private_key", _private_keys),
    *(
        (
            kind,
            regex_finder(
                rx,
                accept=lambda v, *_, s=skip, c=1 if kind.startswith("aws") else 2: random_like(v[s:], c),  # noqa: B008
                hints=hints,
                before=KEYCH,
            ),
        )  # an AWS key id has no lower case: one class is enough; c is bound per kind
        for kind, rx, hints, skip in _PREFIXED
    ),
    (
        "slack_webhook",
        regex_finder(
            r"hooks\.slack\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/(?P<v>[A-Za-z0-9]{16,48})",
            group="v",
            hints=("hooks.slack.com",),
        ),
    ),
    # the lookbehind after the literal keeps the fast prefix scan and stops eyJeyJeyJ… rescans
    (
        "jwt",
        regex_finder(
            r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,1024}",
            hints=("eyJ",),
        ),
    ),
    ("aws_secret_key", _aws_secrets),
    # in a URL the place says it is a password: user:pass@ goes, only templates (${PASS}, <pw>, ***) and the
    # word itself (user:password@, the form docs use) stay
    (
        "url_password",
        regex_finder(
            r"://(?<=[A-Za-z0-9]://)[^\s:/@\"'<>]{0,64}:(?P<v>[^\s@/\"'<>]{1,128})@(?=[\w\[.-])",
            group="v",
            accept=lambda v, *_: not placeholder(v, words=False) and norm_key(v) not in _URL_WORDS,
            hints=("://",),
        ),
    ),
    (
        "bearer_token",
        regex_finder(
            r"(?:bearer|authorization[\"']?[ \t]?[:=][ \t]?[\"']?token)[ \t]{1,8}"
            r"(?P<v>[a-z0-9._~+/-]{12,4096}=*)",
            group="v",
            accept=lambda v, *_: random_like(v),
            words=("bearer", "authorization"),
            before=KEYCH,
            lower=True,
        ),
    ),
    (
        "basic_auth",
        regex_finder(
            r"basic[ \t]{1,8}(?P<v>[a-z0-9+/]{8,1024}={0,2})(?![a-z0-9+/=])",
            group="v",
            accept=basic_credentials,
            hints=("basic",),
            before=KEYCH,
            lower=True,
        ),
    ),
    *LINK_RULES,
)
KINDS: tuple[str, ...] = tuple(dict.fromkeys(kind for kind, _ in FORMAT_RULES + ASSIGNMENT_RULES + PROSE_RULES))


# ---------------------------------------------------------------- the redactor
def _custom(kind: str, pattern: str) -> Finder:
    """A user rule: its named group `secret` is replaced when it has one, else the whole match."""
    if not isinstance(kind, str) or not _KIND_NAME.fullmatch(kind):
        raise ConfigError(f"redaction pattern name {kind!r} is not a kind name (a-z, 0-9 and _, 40 at most)")
    try:
        regex = re.compile(pattern)
    except (re.error, TypeError) as e:
        raise ConfigError(f"redaction pattern {kind!r} is not a valid regular expression: {e}") from None
    return regex_finder(regex, "secret" if "secret" in regex.groupindex else 0)


class Redactor:
    """Finds secret-shaped values and replaces them; build it once with from_config()."""

    def __init__(self, rules: list[tuple[str, Finder]], enabled: bool = True):
        self._rules = rules
        self.enabled = enabled
        self.kinds = tuple(dict.fromkeys(kind for kind, _ in rules))

    @classmethod
    def from_config(
        cls, enabled: bool = True, extra_patterns: dict[str, str] | None = None, disabled_kinds: list[str] | None = None
    ) -> Redactor:
        """Built-in rules minus disabled_kinds, plus user regexes by kind (after the format rules)."""
        custom = [(kind, _custom(kind, pattern)) for kind, pattern in (extra_patterns or {}).items()]
        disabled = set(disabled_kinds or ())
        unknown = sorted(disabled - set(KINDS) - {kind for kind, _ in custom})
        if unknown:
            raise ConfigError(
                f"redaction: unknown kind {unknown[0]!r} in disabled_kinds", hint=f"known kinds: {', '.join(KINDS)}"
            )
        rules = [*FORMAT_RULES, *custom, *ASSIGNMENT_RULES, *PROSE_RULES]
        return cls([(kind, find) for kind, find in rules if kind not in disabled], enabled)

    def find(self, text: str) -> list[Finding]:
        """Every secret in text, in order, none overlapping; existing markers are never matched."""
        if not self.enabled or not text:
            return []
        claimed = bytearray(len(text))  # 1 where a marker or an earlier (higher-priority) rule holds
        for m in MARKER.finditer(text):
            claimed[m.start() : m.end()] = b"\1" * (m.end() - m.start())
        low, found = Lowered(text.replace("\u0130", "I").lower()), []  # İ: the one lowercase that grows
        low.claimed = claimed  # a later rule may skip what an earlier one took (memcli.secrets.prose)
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
            parts += [text[at : f.start], f"[REDACTED:{f.kind}]"]
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
        norm = norm_key(key) if isinstance(key, str) else ""
        named = norm and self.enabled and "password" in self.kinds and (is_secret_key(key) or norm in DICT_ONLY_KEYS)
        if named and not kinds and (credential_like if norm in STRICT_KEYS | DICT_ONLY_KEYS else literal)(obj.strip()):
            text, kinds = "[REDACTED:password]", ["password"]
        found += kinds
        return text


@lru_cache(maxsize=1)
def default_redactor() -> Redactor:
    return Redactor.from_config()


def redact(text: str) -> tuple[str, list[str]]:
    """Redactor.redact with every built-in rule on."""
    return default_redactor().redact(text)
