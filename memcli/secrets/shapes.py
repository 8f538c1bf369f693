"""The shapes of secret values and of secret-named keys, shared by every rule (memcli.secrets.redact).

`literal`: a config value that is itself the secret (4+ characters, words too); `credential_like`:
a value in prose (6+ characters, not words, kebab-case words, a path, URL, version or date);
`random_like`: drawn from a key alphabet. All three leave placeholders ($VAR, ${{…}}, <token>, ***,
ENV_NAME, get_token(), changeme). `trim` decides which closing punctuation a value keeps.
`regex_finder` turns a regex into a rule; `is_secret_key` names the keys whose values are secrets.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from functools import lru_cache, partial
from itertools import chain, pairwise

Spans = Iterator[tuple[int, int]]
Finder = Callable[[str, str], Spans]  # (text, text lowercased with the same offsets) -> spans

# ---------------------------------------------------------------- value shapes
_PLACEHOLDER_WORDS = frozenset(
    """changeme changethis changeit password passwd pass secret token apikey key
    example placeholder redacted replaceme todo tbd none null nil undefined true false yes no on off empty
    dummy test xxx hidden masked required optional notset unset na string str int bool value foo bar foobar
    secretkey accesstoken sample""".split()
)
_MASKED = re.compile(r"[*xX•·.#?_\-]+|0+")
_MASK_RUN = re.compile(r"([xX*•#])\1{3}")
_TEMPLATE = re.compile(r"\$|\{\{|\{%|\{[\w.]*(?:\}|$)|%\(|%\w+%|<|\[REDACTED:|!(?:secret|vault|env|ref|sub)\b", re.I)
_YOUR = re.compile(r"(?:^|[^a-z])your(?:[-_ ]|[a-z]{0,12}(?:key|token|secret|pass))|(?:^|[-_ ])here$", re.I)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_CODE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[^(\[]*[(\[].*|[A-Z][a-z]+(?:[A-Z][a-z]+)+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
WORDY = re.compile(r"[^\W\d_]+(?:[-_'][^\W\d_]+)*")  # letters of any script
_PATH = re.compile(r"(?:~|\.{1,2})?/|[A-Za-z]:\\")
_URL = re.compile(r"[A-Za-z][\w+.-]*://")
_VERSION_OR_DATE = re.compile(r"v?\d+(?:\.\d+)+(?:[-+.][A-Za-z][\w.+-]*)?|\d{4}-\d{2}-\d{2}\S*")
_RUN = re.compile(r"(.)\1{4}")
_NON_ALNUM = re.compile(r"[^a-z0-9]")


def placeholder(value: str, words: bool = True) -> bool:
    """A mask, reference, template, elision or your-key-here; with `words`, changeme, null, test…"""
    if (
        not value
        or "..." in value
        or "…" in value
        or _MASKED.fullmatch(value)
        or _MASK_RUN.search(value)
        or _TEMPLATE.match(value)
        or _YOUR.search(value)
        or _ENV_NAME.fullmatch(value)
    ):
        return True
    squashed = _NON_ALNUM.sub("", value.lower())
    return words and (squashed in _PLACEHOLDER_WORDS or squashed.startswith("redacted"))


def literal(value: str) -> bool:
    """A config value that is itself the secret (loose: words allowed). A path names a file, but
    /VpflvLk/DR3s… is base64 that starts with a slash."""
    path = _PATH.match(value) and not any(len(s) >= 8 and random_like(s, 3) for s in re.split(r"[/\\]", value))
    return (
        len(value) >= 4
        and not path
        and not placeholder(value)
        and not _CODE.fullmatch(value)
        and not _URL.match(value)
        and not _VERSION_OR_DATE.fullmatch(value)
        and not (_IDENT.fullmatch(value) and is_secret_key(value))
    )  # password=db_password names one


def credential_like(value: str) -> bool:
    """A value in prose that looks like a credential rather than a word or words/in/a/path (strict)."""
    return (
        len(value) >= 6
        and literal(value)
        and not all(WORDY.fullmatch(p) and not _scrambled(p) for p in value.split("/"))
    )


def _scrambled(word: str) -> bool:
    """Letters a person would not type as a word: case switching 3+ times and few vowels (rrQeFkxPab…)."""
    switches = sum(a.islower() and b.isupper() for a, b in pairwise(word))
    return switches >= 3 and sum(c in "aeiouAEIOU" for c in word) < 0.3 * len(word)


def random_like(body: str, classes: int = 2) -> bool:
    """Drawn from a key alphabet: mixed classes, no words (but 1 in 28 AWS ids has no digit), no masks."""
    kinds = any(c.islower() for c in body) + any(c.isupper() for c in body) + any(c.isdigit() for c in body)
    return (
        kinds >= classes
        and not _RUN.search(body)
        and not placeholder(body)
        and (classes == 1 or not WORDY.fullmatch(body))
    )


_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def trim(value: str, strict: bool) -> str:
    """What an unquoted value keeps of its closing punctuation. `!` and `?` stay (BerlinGuest2026!:
    a password ends in one more often than a stated one ends a sentence), so does a closer it opened;
    a `.`, `,`, `:` (and in prose `;`) and a bracket opened before it are the sentence's."""
    if value.endswith(("..", "…")):
        return value  # elided: the caller judges it (sk-... is a placeholder)
    stops = ".,:;" if strict else ".,:"
    while value and (
        value[-1] in stops or (value[-1] in _CLOSERS and value.count(value[-1]) > value.count(_CLOSERS[value[-1]]))
    ):
        value = value[:-1]
    return value


_NOT_A_PASSWORD = frozenset(
    """correct incorrect strong simple unique random invalid default inside outside elsewhere unknown
    broken common enough itself plaintext cleartext lowercase uppercase nowhere somewhere written forgotten similar complex
    unsafe 1password bitwarden lastpass keepass keepassxc dashlane keychain vaultwarden""".split()
)  # no suffix gives these away
_ADJECTIVE = re.compile(r"[a-z]*(?:ed|ing|[aeio]ble|ive|ous|ful|less|ent|ant|al|ic|ure|ate|ary|ory|er|est|ty|ness)")


def word_password(value: str, follows: str) -> bool:
    """`the wifi password is swordfish.`: one lowercase word of 6-32 letters ending the clause, not an
    adjective (its suffix or a list) nor a password manager; `follows` is the character after it."""
    return (
        value.isalpha()
        and value.isascii()
        and value.islower()
        and 6 <= len(value) <= 32
        and follows in ("", *".!,;)\n")
        and value not in _NOT_A_PASSWORD
        and not _ADJECTIVE.fullmatch(value)
        and literal(value)
    )


def password_manager(value: str) -> bool:
    return value.lower() in _NOT_A_PASSWORD


# ---------------------------------------------------------------- secret-named keys
SECRET_ENDINGS = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "encryptionkey",
    "signingkey",
    "masterkey",
    "credential",
    "credentials",
    "keydata",
    "sshpass",
    "rediscliauth",
)  # client-key-data; SSHPASS=, REDISCLI_AUTH=
_NOT_SECRET = ("pagetoken", "nexttoken", "continuationtoken", "synctoken", "cursortoken", "publickeydata")
STRICT_KEYS = frozenset({"token", "credential", "credentials"})
DICT_ONLY_KEYS = frozenset({"auth", "authorization"})  # docker config "auth"; too vague in prose


def norm_key(key: str) -> str:
    return _NON_ALNUM.sub("", key.lower())


@lru_cache(maxsize=4096)  # the same few keys come back on every line of a config
def is_secret_key(key: str) -> bool:
    """password, db_password, apiKey, X-Api-Key, client_secret, AWS_SECRET_ACCESS_KEY, DB_PASS, pw..."""
    norm = norm_key(key)
    if norm.endswith(_NOT_SECRET):
        return False
    return norm.endswith(SECRET_ENDINGS) or bool(re.search(r"(?:^|[-_. ])(?:pass|pw)$", key.lower()))


# ---------------------------------------------------------------- finders
# Regexes start with a literal where they can (an alternation without a common first character, a lookbehind
# or re.I makes the engine try every position: 10-60 ms per MiB each); boundaries are checked in Python.
KEYCH = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"  # none may come right before


class Lowered(str):
    """A text lowercased with the same offsets, which remembers what rules computed from it: one
    str.find pass over a MiB costs ~0.4 ms, and several rules look for the same words (pass, key,
    token, secret), so each word is looked for once per text. The Redactor also sets `claimed`
    (1 where an earlier rule took a value), so a later rule can skip a value already taken."""

    claimed: bytearray

    def memo(self, key, compute: Callable[[str], object]):
        done = self.__dict__.setdefault("_memo", {})
        if key not in done:
            done[key] = compute(self)
        return done[key]


def memo(low: str, key, compute: Callable[[str], object]):
    """compute(low), once per Lowered text (every time for a plain str)."""
    return low.memo(key, compute) if isinstance(low, Lowered) else compute(low)


def _scan(low: str, word: str) -> list[int]:
    out, i = [], low.find(word)
    while i >= 0:
        out.append(i)
        i = low.find(word, i + 1)
    return out


def positions(low: str, words: tuple[str, ...]) -> list[int]:
    """Where any of `words` starts in `low`, in order (a position twice if two words start there)."""
    found = [memo(low, word, partial(_scan, word=word)) for word in words]
    return found[0] if len(found) == 1 else sorted(chain.from_iterable(found))  # sorted runs: a merge


def regex_finder(
    pattern: str | re.Pattern,
    group: int | str = 0,
    accept: Callable[..., bool] | None = None,
    hints: tuple[str, ...] = (),
    before: str = "",
    lower: bool = False,
    words: tuple[str, ...] = (),
) -> Finder:
    """Spans of `group` in matches kept by accept(value, text, start, end), no `before` character ahead.
    With `words` (lower only: every match starts with one of them) the regex is tried only where one
    stands, as finditer would: a match never starts inside the previous one."""
    regex = re.compile(pattern)

    def matches(haystack: str):
        if not words:
            yield from regex.finditer(haystack)
            return
        last = 0
        for i in positions(haystack, words):
            if i >= last and (m := regex.match(haystack, i)) is not None:
                last = max(m.end(), i + 1)
                yield m

    def find(text: str, low: str) -> Spans:
        haystack = low if lower else text
        if hints and not any(h in haystack for h in hints):
            return
        for m in matches(haystack):
            start, end = m.span(group)
            if (
                end > start
                and not (m.start() and haystack[m.start() - 1] in before)
                and (accept is None or accept(text[start:end], text, start, end))
            ):
                yield start, end

    return find


def basic_credentials(value: str, *_) -> bool:
    """HTTP Basic credentials are base64 of user:password; "Basic realm" and the like are not."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()
