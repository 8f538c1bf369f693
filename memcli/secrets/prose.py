"""Secrets as people write them in a sentence (memcli.secrets.redact runs these after the config rules).

- a password, passphrase, passcode or API token named in prose, with what it is for between the
  noun and the verb: "my password for the staging admin is X", "the root password on logs-02 is X",
  "the passphrase for the GPG key is 'correct horse battery staple'" (quoted: several words too),
  "I changed my Gmail password to X", "user admin, password X"; in English, German, French, Spanish,
  Portuguese, Italian, Dutch and Russian ("Das Passwort für den Server ist X", "le mot de passe du
  routeur est X", "la contraseña es X", "пароль от сервера: X")
- a PIN or door code: 4-12 digits after the noun and a verb or colon ("my PIN is 4821")
- a login: "login admin / X", "login: admin:X", "Zugangsdaten: admin / X", "ログイン: admin / X"
- Chinese, Japanese and Korean: 密码是 X, 密码我改成 X 了, パスワードは「X」です, 暗証番号は 4721, 비밀번호는 X입니다
What stands between the noun and the verb must start with a preposition ("for", "on", "für", "du",
"del"…), so "the password policy is …" and "the token limit is …" give no value; the value must
look like a credential (memcli.secrets.shapes), or be quoted after a password noun, or be one
lowercase word that is no adjective after "is", "was" or ":" in English.

Cost: every Latin noun is found with str.find, shared with the other rules (memcli.secrets.shapes
.Lowered), and the rest is matched where it stands: an alternation of words would make the regex
engine try every position. The nouns of other scripts are found by one regex pass, only in a text
that is not all ASCII.
"""

from __future__ import annotations

import re

from memcli.secrets.shapes import (
    Spans,
    credential_like,
    literal,
    memo,
    password_manager,
    placeholder,
    positions,
    trim,
    word_password,
)

__all__ = ["PROSE_RULES"]

# ---------------------------------------------------------------- Latin-script sentences
_NOUN = re.compile(  # matched where str.find put one of _WORDS; the group is the noun's class
    r"(?P<pw>pass(?:word|wort|phrase|code|wd)|passe(?<=mot de passe)|pwd?|kennwort|wachtwoord|mdp|contrase[ñn]a|clave|senha)"
    r"|(?P<pin>pin(?:[ -]?(?:code|nummer|number))?|puk|code)"
    r"|(?P<tok>key|token|secret)"
    r"|(?P<pass>pass)"
)
_WORDS = {
    "pw": ("pass", "pw", "key", "token", "secret", "kennwort", "wachtwoord", "mdp", "contrase", "clave", "senha"),
    "pin": ("pin", "puk", "code"),
}
_CODE_BEFORE = re.compile(r"(?:door|gate|alarm|keypad|safe|garage|entry|lock|building|entrance|tür|porte|puerta)[ -]$")
_KEY_BEFORE = re.compile(
    r"(?:api|access|secret|license|licence|product|recovery|encryption|master|wifi|wi-fi|wlan|private"
    r"|activation|signing|app|client|webhook|bot|auth|personal access)[ -]$"
)
_PREPOSITIONS = frozenset(
    """for on of to at in from with into used für fur auf von vom zum zur bei beim des der
    de du pour sur à d'accès del para en por do da dos das no na di della dello per su voor van op от для на к в
    (for (on""".split()
)
_COPULA = (
    r"(?:(?:will|would|should|must|is going to)[ \t]+be|wird(?:[ \t]+jetzt)?|is|was|are|ist|war|lautet|lautete"
    r"|est|était|sera|es|era|será|é|è|sono|это|был|будет)"
    r"(?:[ \t]+(?:now|still|currently|jetzt|nun|immer noch|maintenant|désormais|ahora|agora|ora|adesso|nu|теперь))?"
)
_CHANGE = r"(?:(?:is|was|has been|have been|got|wurde|ist)[ \t]+)?(?:changed|set|reset|updated|rotated|switched|geändert|gesetzt)"
_VALUE = (
    r"(?:(?P<q>[\"'`«“„「『‘])[ \t]?(?P<qv>[^\"'`«»“”„「」『』‘’\r\n]{1,128}?)[ \t]?[\"'`»”“」』’]"
    r"|(?P<uv>[^\s\"'`<>«»“”「」]{1,128}))"
)
_SEP = (
    r"(?P<sep>[ \t]*(?::|=|->|→|—|–|：)[ \t]*|[ \t]+"
    + _CHANGE
    + r"[ \t]+(?:to|auf|zu)[ \t]+|[ \t]+"
    + _COPULA
    + r"[ \t]+)"
)
_NEXT = re.compile(r"[ \t]+([^\s,;:!?。，、()\"`«»“”„「」=]{1,40})")  # the word after the noun
_TAIL = re.compile(r"(?P<qual>)" + _SEP + _VALUE)  # a colon or a verb right after the noun, then the value
_QUALIFIED = re.compile(  # what it is for (lazily, at most 8 words), a colon or a verb, the value
    r"(?P<qual>(?:[ \t]+[^\s,;:!?。，、()\"`«»“”„「」=]{1,40}){1,8}?)" + _SEP + _VALUE
)
_TAIL_TO = re.compile(r"(?P<qual>)(?P<sep>[ \t]+(?:to|auf|zu|à)[ \t]+)" + _VALUE)  # "set the router password to X"
_BARE = re.compile(
    r"(?P<qual>)(?P<sep>[ \t]+)(?:(?P<q>[\"'`«“„「『‘])(?P<qv>[^\"'`«»“”„「」『』‘’\r\n]{1,128}?)[\"'`»”“」』’]"
    r"|(?P<uv>[^\s\"'`<>]{6,128}))"
)  # "user admin, password X"; "use the passphrase 'a b c'"
_VERB = re.compile(
    r"\b(?:use|using|try|enter|type|paste|with|gib|utilise[rz]?|usa|use[sz]?)[ \t]+(?:[^\s]{1,12}[ \t]+){0,3}$"
)
_SET_VERB = re.compile(
    r"(?:set|change|changed|changing|reset|update|updated|switch|switched|ändere|geändert|setze)\b[^.!?\n]{0,40}$"
)
_CRED_WORDS = ("user", "login", "account", "benutzer", "utilisateur", "usuario")
_CRED_CONTEXT = re.compile(r"(?:user(?:name)?|login|account|benutzer|utilisateur|usuario)\b[^!?\n]{0,40}$")
_UNIT = re.compile(
    r"[ \t]*(?:digits?|characters?|chars?|numbers?|stellen|stellig|ziffern|chiffres|caractères|dígitos"
    r"|cifras|caracteres|символ|цифр|位|자|桁|文字)"
)
_PIN_VALUE = re.compile(r"\d{4,12}[#*]?")
_NOT_BEFORE = "_:/.\"'`$"  # a noun right after one of these is part of a name: api_key, secret:, "token", $PASS
_DIGIT, _LETTER = re.compile(r"\d").search, re.compile(r"[^\W\d_]").search
_GATE_WORDS = sorted(
    {
        *_PREPOSITIONS,
        "is",
        "was",
        "are",
        "ist",
        "war",
        "lautet",
        "lautete",
        "est",
        "était",
        "sera",
        "es",
        "era",
        "será",
        "é",
        "è",
        "sono",
        "это",
        "был",
        "будет",
        "changed",
        "set",
        "reset",
        "updated",
        "rotated",
        "switched",
        "has",
        "have",
        "got",
        "wurde",
        "geändert",
        "gesetzt",
        "auf",
        "zu",
        "will",
        "would",
        "should",
        "must",
        "wird",
    },
    key=len,
    reverse=True,
)


def _trie(words) -> str:
    """A regex of words as a trie: the engine tries one branch per character instead of every word."""
    heads: dict[str, list[str]] = {}
    for w in words:
        heads.setdefault(w[:1], []).append(w[1:])
    parts = []
    for head, tails in sorted(heads.items()):
        rest = [t for t in tails if t]
        inner = _trie(rest) if rest else ""
        parts.append(re.escape(head) + (f"(?:{inner})" + ("?" if "" in tails else "") if rest else ""))
    return "|".join(parts)


_NOUN_AT = re.compile(  # the noun, bounded, and something a value may follow: a colon, a verb, a preposition, a
    r"(?:" + _NOUN.pattern + r")(?:s|e)?(?![\w\"'`=])"  # quote, a value with a digit; else no call is made
    r"(?=[ \t]*(?::|->|→|—|–|：)|[ \t]+(?:" + _trie(_GATE_WORDS) + r")[ \t]"
    r"|[ \t]+[\"'`«“„「『‘]|[ \t]+(?=[^\s]{0,127}\d)[^\s]{6})"
)
_ENGLISH = frozenset({"password", "passphrase", "passcode", "passwd"})


def _pin(value: str, low: str, end: int) -> bool:
    """4-12 digits (a # or * may end a door code) that are not a count of something or a version."""
    return (
        bool(_PIN_VALUE.fullmatch(value))
        and not _UNIT.match(low, end)
        and low[end : end + 1] not in ("-", "/")
        and not (low[end : end + 1] in ".," and low[end + 1 : end + 2].isdigit())
    )


def _quoted(cls: str, m: re.Match, text: str, low: str) -> tuple[int, int] | None:
    at, value = m.start("qv"), text[m.start("qv") : m.end("qv")].strip()
    at += text[at : m.end("qv")].find(value[:1]) if value else 0
    if cls == "pw":  # a passphrase may be words: a quoted literal of at most 8 of them
        ok = literal(value) and len(value.split()) <= 8 and not password_manager(value)
    else:
        ok = _pin(value, low, at + len(value)) if cls == "pin" else credential_like(value)
    return (at, at + len(value)) if ok and value else None


def _accept(cls: str, noun: str, m: re.Match, text: str, low: str) -> tuple[int, int] | None:
    """The value's span when it is a secret for a noun of this class (pw, pin, tok)."""
    if m["qv"] is not None:
        return _quoted(cls, m, text, low)
    at = m.start("uv")
    value = trim(text[at : m.end("uv")], True)
    if value.endswith(("..", "…")):  # "the password is Gr33n-Tea-Time...": the dots are the sentence's
        value = value.rstrip(".…")
        if not (len(value) >= 8 and _DIGIT(value) and value[-1:].isalnum()):
            return None
    end = at + len(value)
    if cls == "pin" or (noun == "passcode" and value.isdigit()):
        return (at, end) if _pin(value, low, end) else None
    if password_manager(value) or (cls == "tok" and "*" in value):  # sk_live_* names a family of keys
        return None
    if not m["sep"].strip() and not (_DIGIT(value) and _LETTER(value)):
        return None  # after a bare space, only letters with digits
    if credential_like(value):
        return at, end
    english = cls == "pw" and noun in _ENGLISH and m["sep"].strip()[:2] in ("is", "wa", ":")
    return (at, end) if english and word_password(value, text[end : end + 1]) else None


def _noun_at(low: str, i: int) -> tuple[str, str, int] | None:
    """(class, noun, end) of the noun at i when a value may follow it (the word before is checked by the caller)."""
    m = _NOUN_AT.match(low, i)
    if m is None:
        return None
    cls = "pw" if m["pw"] else "pin" if m["pin"] else "tok" if m["tok"] else "pass"
    noun = m[cls]
    if (noun == "code" and not _CODE_BEFORE.search(low, max(0, i - 20), i)) or (
        noun == "key" and not _KEY_BEFORE.search(low, max(0, i - 20), i)
    ):
        return None
    return cls, noun, m.end()


def _sentence(text: str, low: str, cls: str, noun: str, end: int) -> tuple[int, int] | None:
    """The value after the noun that ends at `end`: after a colon or verb, "to" after a change, or bare."""
    if cls == "pass":
        before = low[max(0, end - 64) : end - 4]
        if not any(w in before for w in _CRED_WORDS) or not _CRED_CONTEXT.search(before):
            return None  # "pass" alone is a verb unless a user or login came before
        cls = "pw"
    m = _TAIL.match(low, end)
    if m is None:  # only a preposition starts what it is for; "to" after a change; a bare value
        nxt = _NEXT.match(low, end)
        word = nxt[1] if nxt else ""
        if word in _PREPOSITIONS:
            m = _QUALIFIED.match(low, end)
        if m is None and word in ("to", "auf", "zu", "à") and _SET_VERB.search(low, max(0, end - 60), end):
            m = _TAIL_TO.match(low, end)
        if m is None and cls == "pw" and noun != "clave" and word not in _PREPOSITIONS:
            m = _BARE.match(low, end)
            if m and m["qv"] is not None and not _VERB.search(low, max(0, end - 60), end - len(noun)):
                return None  # a quoted name after the noun ("the password "field"") is a value only after a verb
    return _accept(cls, noun, m, text, low) if m and "=" not in m["sep"] else None


def _latin(group: str):
    """The finder of one class of nouns: "pw" (passwords and tokens, kind password) or "pin"."""

    def find(text: str, low: str) -> Spans:
        done = -1  # the end of the last value: a noun inside it (a passphrase of words) is not read again
        claimed = getattr(low, "claimed", None)
        for i in positions(low, _WORDS[group]):
            if (
                i < done
                or (i and (low[i - 1].isalnum() or low[i - 1] in _NOT_BEFORE))
                or (claimed is not None and claimed.find(1, i, i + 24) >= 0)
            ):
                continue  # inside a word, an ARN, a path, a JSON key (api_key, secret:, "token"), the last value, or
            hit = _noun_at(low, i)  # before a value an earlier rule took (password: X in config form)
            span = _sentence(text, low, *hit) if hit else None
            if span:
                done = span[1]
                yield span
        yield from (span for cls, span in memo(low, "wide", lambda _: _wide(text, low)) if cls == group)

    return find


# ---------------------------------------------------------------- logins: user / password
_LOGIN_LABELS = ("login", "cred", "zugangsdaten", "identifiant")  # cred: credentials, creds, credenciales
_LABEL_END = re.compile(r"(?:entials?|enciales|s)?(?![a-z])")
_LOGIN = re.compile(
    r"(?:[ \t]+(?:is|are|ist|sind|est|sont|es|son|=)|[ \t]*[:：=])?[ \t]*(?P<user>[^\s/:：,;\"'`()<>]{1,64})"
    r"(?:[ \t]*/[ \t]*|:)(?P<uv>[^\s\"'`<>]{6,128})"
)


def _login_at(text: str, low: str, at: int) -> tuple[int, int] | None:
    m = _LOGIN.match(low, at)
    if m is None or m["user"] in ("is", "are", "ist", "est", "es"):
        return None
    value = trim(text[m.start("uv") : m.end("uv")], True)
    ok = "/" not in value and credential_like(value) and not password_manager(value)
    return (m.start("uv"), m.start("uv") + len(value)) if ok else None


def _logins(text: str, low: str) -> Spans:
    for at in positions(low, _LOGIN_LABELS):
        if at and low[at - 1].isalnum():
            continue
        label = next(w for w in _LOGIN_LABELS if low.startswith(w, at))
        end = _LABEL_END.match(low, at + len(label))  # None: the label is part of a longer word
        if end and (span := _login_at(text, low, end.end())):
            yield span
    yield from (span for cls, span in memo(low, "wide", lambda _: _wide(text, low)) if cls == "login")


# ---------------------------------------------------------------- other scripts: CJK, Cyrillic
_WIDE_NOUN = re.compile(  # literal first and no group around the alternation: the engine skips to a first character
    r"暗証番号|暗码|핀 ?번호|密码|密碼|口令|令牌|密钥|秘钥|密鑰|パスワード|暗号|トークン|비밀번호|비번|암호|토큰"
    r"|ログイン|账号|帐号|账户|계정|пароль|логин"
)
_WIDE_CLASS = {
    "暗証番号": "pin",
    "暗码": "pin",
    "핀번호": "pin",
    "핀 번호": "pin",
    "ログイン": "login",
    "账号": "login",
    "帐号": "login",
    "账户": "login",
    "계정": "login",
    "логин": "login",
    "пароль": "latin",
}
_CJK = re.compile(
    r"(?P<qual>[^\x00-\x7f。，、！？：；\n]{0,8}?)"
    r"(?P<sep>(?:是|为|為|は|는|은|：|:|=|改成|改为|改為|换成|換成|设为|設為|设置为|を|를|을|が|이|가)[ \t]*|[ \t]+)"
    r"(?:(?P<q>[\"'「『“‘])(?P<qv>[^\"'」』”’\n]{1,128})[\"'」』”’]|(?P<uv>[!-~]{1,128}))"
)


def _cjk_at(text: str, low: str, end: int, pin: bool) -> tuple[int, int] | None:
    m = _CJK.match(low, end)
    if m is None:
        return None
    bare = not m["sep"].strip()
    if bare and m["qual"]:
        return None  # 密码见 1Password: only a noun right before the value may go without a verb
    if m["qv"] is not None:
        at, value = m.start("qv"), text[m.start("qv") : m.end("qv")]
        ok = literal(value) and not placeholder(value)
    else:
        at, value = m.start("uv"), trim(text[m.start("uv") : m.end("uv")], True)
        after = text[at + len(value) : at + len(value) + 1]
        ok = (
            _pin(value, low, at + len(value))
            if pin
            else credential_like(value) and not password_manager(value) and (not bare or _DIGIT(value) is not None)
        )
        ok = ok or (not pin and not bare and not m["qual"] and word_password(value, after))  # 密码是 sunshine
    return (at, at + len(value)) if ok and value else None


def _wide(text: str, low: str) -> list[tuple[str, tuple[int, int]]]:
    """(class, span) of every value after a noun of another script, in one regex pass."""
    out = []
    for m in _WIDE_NOUN.finditer(low) if not low.isascii() else ():
        cls = _WIDE_CLASS.get(m[0], "pw")
        if cls == "latin":
            span, cls = _sentence(text, low, "pw", m[0], m.end()), "pw"
        else:
            span = _login_at(text, low, m.end()) if cls == "login" else _cjk_at(text, low, m.end(), cls == "pin")
        if span:
            out.append((cls, span))
    return out


PROSE_RULES = (("password", _latin("pw")), ("pin", _latin("pin")), ("password", _logins))
