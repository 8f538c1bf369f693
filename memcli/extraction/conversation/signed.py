"""The names the memory's owner goes by, as a conversation shows them.

Agents ask about their user by name ("What camera does Ha-eun shoot film with?") while the notes
say "the user". Where the name is in the vault at all, it is mostly in what the assistant
wrote for the user to send: a letter signed "Mit freundlichen Grüßen / Xu Qing", an email
signed "Thanks, / Ha-eun", a summary "Prepared by: Ha-eun", or where the user introduces
themself ("我叫Njeri", "my name is ..."). Those few notes then match every question that
names the user, on a word found nowhere else: on two recall sets whose questions name the
user, their notes came first for questions about a camera, a mother's city or a tutor
(bench/recall_set/README.md). Search reads the owner's names as "the user" (memcli.retrieval.framing).

Only those shapes count, and a name the user speaks of in their own turns is someone else's
(the friend whose email the user asked to have rewritten): a user rarely names themself. A
line signed by several people ("하은, Daniel, 준 올림") names no one owner.
"""

from __future__ import annotations

import re

# closing words of a letter or a message, on a line of their own before the signer's name
_CLOSING = "|".join(
    (
        "thanks/thank you/many thanks/thanks again/best/best wishes/best regards/kind regards/warm regards/"
        "warmest regards/regards/cheers/sincerely/yours sincerely/yours truly/yours faithfully/yours/"
        "all the best/love/lots of love/warmly/with thanks/respectfully/take care/"
        "mit freundlichen grüßen/viele grüße/liebe grüße/beste grüße/herzliche grüße/"
        "cordialement/bien à vous/amitiés/atenciosamente/um abraço/abraços/saludos/atentamente/"
        "un abrazo/cordiali saluti/met vriendelijke groet/groetjes/"
        "敬上/谢谢/謝謝/您的学生/你的学生/よろしくお願いいたします/よろしくお願いします/감사합니다"
    ).split("/")
)
_MARKUP = re.compile(r"^[\s>*_\"“”'‘’`-]+|[\s*_\"“”'‘’`]+$")
_CLOSING_LINE = re.compile(rf"(?:今後とも|引き続き)?(?:{_CLOSING})\s*[,.!。！、]?", re.IGNORECASE)
# "... é só nos chamar. Um abraço, Dra. Beatriz."
_INLINE = re.compile(rf"(?:^|(?<=[.!?]) )(?:{_CLOSING}),\s+(?P<name>[^,.!?]+(?:\.[^,.!?]+)?)[.!]?$", re.IGNORECASE)
# a form's field: "Prepared by: Ha-eun" (not "a novel written by Haruki Murakami", nor "sent by DHL")
_FIELD = re.compile(r"\b(?:prepared|signed) by:\s*(?P<name>[^|/\n*_]+)", re.IGNORECASE)
_INTRO = re.compile(
    r"\bmy name is (?P<en>[A-Z][A-Za-zÀ-ÿ'’-]+(?: [A-Z][A-Za-zÀ-ÿ'’-]+)?)"
    # "我叫Njeri，": a name and then a pause ("我叫Daniel去接Joon" is "I'll have Daniel pick Joon up")
    r"|我叫(?P<zh>[A-Za-z][A-Za-zÀ-ÿ'’-]+|[\u4e00-\u9fff]{2,3})(?=[，,。.！!\s]|$)"
    r"|제 이름은 (?P<ko>[\uac00-\ud7af]{2,5}?)(?:입니다|이에요|예요|이고|라고)"
    r"|(?P<ja>[\u30a0-\u30ff\u4e00-\u9fff]{2,10})と申します"
)
_ITEM = re.compile(r"\s*(?:[-*•+]|\d+[.)])\s")
_TITLE = re.compile(r"^(?:dr|dra|mr|mrs|ms|mx|prof|sr|sra)\.?\s+", re.IGNORECASE)
_LATIN_NAME = re.compile(r"[A-Z][^\W\d_]*(?:['’-][^\W\d_]+)*")
_CJK_NAME = re.compile(r"[\u4e00-\u9fff\uac00-\ud7af\u30a0-\u30ff]{2,4}")
_KO_SIGN = re.compile(r"^(?P<name>[\uac00-\ud7af]{2,3}) (?:올림|드림)$")  # "하은 올림"
# what stands where a name goes, or signs for a group
_NOT_NAMES = frozenset(
    "your name team everyone all management family the staff admin support me you us we "
    "thanks thank regards best love cheers sincerely".split()
)


def names_in(records: list[tuple[str, str]]) -> list[str]:
    """The owner's names in one conversation, in order of appearance: `records` are (role,
    text). A sign-off or a "prepared by" in the assistant's messages, an introduction in
    anyone's; none the user speaks of in their own turns."""
    found: list[str] = []
    for role, text in records:
        for name in (*_signed(text), *_introduced(text)) if role == "assistant" else _introduced(text):
            if name not in found:
                found.append(name)
    users = " ".join(text for role, text in records if role == "user")
    return [n for n in found if not _spoken_of(n, users)]


def _signed(text: str) -> list[str]:
    out = []
    raw = text.split("\n")
    lines = [_MARKUP.sub("", line) for line in raw]
    for i, line in enumerate(lines):
        name = None
        if _CLOSING_LINE.fullmatch(line) and not _ITEM.match(raw[i]):  # "- Best" of a list closes nothing
            after = next((x for x in lines[i + 1 : i + 3] if x), "")
            name = _name(after)
        elif (m := _INLINE.search(line)) or (m := _FIELD.search(line)):
            name = _name(m.group("name"))
        elif m := _KO_SIGN.match(line):
            name = m.group("name")
        if name:
            out.append(name)
    return out


def _introduced(text: str) -> list[str]:
    out = []
    for m in _INTRO.finditer(text):
        name = next(g for g in m.groups() if g)
        if name.casefold() not in _NOT_NAMES:
            out.append(name)
    return out


def _name(line: str) -> str | None:
    """A signer's name on its own line ("Xu Qing", "Dra. Beatriz Okada – Ortodontia", "Hemi
    Walker"), else None: a placeholder, a sentence, a list of several people."""
    line = re.split(r"\s+[–—-]\s+|\s*[|(]", line.strip())[0].strip(" .,!")
    line = _TITLE.sub("", line)
    if not line or "," in line or "&" in line or " and " in line or "[" in line or "<" in line:
        return None
    if _CJK_NAME.fullmatch(line):
        return line
    words = line.split()
    if not 1 <= len(words) <= 3 or not all(_LATIN_NAME.fullmatch(w) for w in words):
        return None
    if any(w.casefold() in _NOT_NAMES for w in words):
        return None
    return line


def _spoken_of(name: str, user_text: str) -> bool:
    """The user names `name` in their own words (not introducing themself): someone else."""
    rest = _INTRO.sub(" ", user_text)
    return bool(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", rest, re.IGNORECASE))
