"""First and second person into third: "I no longer like oolong" -> "the user no longer likes oolong".

A note is read later, by someone who was not in the chat, so a statement names who it is
about. The conversion is word by word, with English's few rules: a subject pronoun
("I", "we", "you") becomes the subject's name and the verb after it takes the third
person's -s only in the simple present ("I prefer" -> "prefers", "I moved" -> "moved",
"I can" -> "can", "I don't" -> "doesn't", "I have" -> "has"); possessives and objects
follow ("my" -> "the user's", then "their" once the subject has been named). Adverbs
between a subject and its verb ("I no longer like") are skipped over. Nothing else in the
sentence changes: what is not a pronoun is the user's own words.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*|\s+|[^A-Za-z\s]+")

# words that may stand between a subject and its verb: "I no longer like", "we still use"
ADVERBS = frozenset(
    """no longer really also still usually always never just already only finally actually even
mostly often sometimes rarely definitely probably honestly kinda totally generally normally mainly now currently
basically seriously literally barely hardly recently both all then last first once later soon together
officially""".split()
)
MODALS = frozenset(
    """can could will would shall should may might must can't cannot couldn't won't wouldn't
shouldn't mustn't didn't did was wasn't had hadn't used ought""".split()
)
# present forms with their own third person
IRREGULAR = {
    "am": "is",
    "are": "is",
    "have": "has",
    "haven't": "hasn't",
    "do": "does",
    "don't": "doesn't",
    "dont": "doesn't",
    "were": "was",
    "weren't": "wasn't",
    "aren't": "isn't",
    "be": "is",
}
# past forms that are not -ed (the commonest); ambiguous ones (put, set, read, cut) count as past,
# which reads right either way ("the user put")
PAST = frozenset(
    """went got took bought did made had was were saw ran swam came gave left felt found told said
thought knew kept lost met paid sold sent spent stood understood wrote drove rode broke chose spoke began ate
drank slept woke wore won forgot fell flew grew held heard hurt led lent meant brought caught taught fought built
dealt dug fed fled hung laid lit slid stuck struck swore threw tore sang sank shook shot shut sat spun stole bit
hid became forgave put set read cut let hit quit cost spread bet beat bent bound burnt dreamt dwelt fit learnt
leant leapt mislaid overtook rang rose sought shone shrank slung sped split spat stank strode strove sunk sweat
swept swore tread undid upset withdrew wound""".split()
)
_WORK = re.compile(
    r"\b(?:team|company|colleague|manager|boss|office|work|job|project|client|customer|pipeline|"
    r"database|db|server|cluster|deploy|release|sprint|standup|repo|prod|production|staging|"
    r"migration|service|backend|frontend|api|infra|code|pr|ci|incident|index|partition|table|query|backfill|"
    r"schema|dashboard|data|pool|cluster|vendor|contract|meeting|review|onboarding|ticket|"
    # where people work: "I'm a technician at the depot; we run 40 buses" is the depot's fleet
    r"depot|factory|warehouse|workshop|fleet|crew|staff|clinic|hospital|ward|"
    r"restaurant|lab|firm|agency|technician|engineer|nurse|mechanic)s?\b",
    re.IGNORECASE,
)


def about_work(text: str) -> bool:
    return bool(_WORK.search(text))


def _key(word: str) -> str:
    return word.lower().replace("’", "'")


def third_singular(verb: str) -> str:
    """The simple present's third person of `verb` (a base form): prefer -> prefers, go -> goes."""
    low = _key(verb)
    if low in IRREGULAR:
        out = IRREGULAR[low]
    elif re.search(r"(?:s|sh|ch|x|z|o)$", low):
        out = low + "es"
    elif re.search(r"[^aeiou]y$", low):
        out = low[:-1] + "ies"
    else:
        out = low + "s"
    return out.capitalize() if verb[:1].isupper() else out


def _is_past(low: str) -> bool:
    if low in PAST:
        return True
    return low.endswith("ed") and len(low) > 4 and not low.endswith("eed")


def _aux(low: str, plural: bool, nxt: str) -> str:
    """The auxiliary a contracted subject carries: I'm -> is, I've -> has, I'd -> would (had + past)."""
    if low in ("i'd", "we'd"):
        return " had" if _is_past(nxt) and nxt != "used" else " would"
    if low in ("i'll", "we'll"):
        return " will"
    if low in ("i've", "ive", "we've"):
        return " have" if plural else " has"
    return " are" if plural else " is"  # I'm, im, we're


def _next_word(tokens: list[str], i: int) -> str:
    return next((_key(t) for t in tokens[i + 1 :] if t.strip()), "")


def convert(text: str, subject: str = "the user", group: str | None = None) -> str:
    """`text` with its first-person pronouns rewritten for `subject`; `group` stands for "we"
    (default: the subject's team when the sentence is about work, else their household)."""
    if subject == "The user":  # a sentence's subject, written mid-sentence
        subject = "the user"
    if group is None:
        group = f"{subject}'s team" if about_work(text) else f"{subject}'s household"
    tokens = _TOKEN.findall(text)
    out: list[str] = []
    named = pending = plural = False
    for i, tok in enumerate(tokens):
        low = _key(tok)
        if pending:  # the verb after a bare "I"/"we": third person in the simple present only
            if tok.strip() and tok[0].isalpha():
                if low in ADVERBS or (low == "no" and _next_word(tokens, i) == "longer"):
                    out.append(tok)
                    continue
                pending = False
                keep = plural or low in MODALS or _is_past(low) or (low.endswith("n't") and low not in IRREGULAR)
                out.append(("are" if plural else "is") if low == "am" else tok if keep else third_singular(tok))
                continue
            if tok.strip():
                pending = False
            out.append(tok)
            continue
        if low in SUBJECTS and tok != "US" and not re.match(r"[/&-]\w", "".join(tokens[i + 1 : i + 3])):
            if low == "im" and not re.match(r"[a-z]", _next_word(tokens, i)):
                out.append(tok)
                continue
            plural = _compound(tokens[:i])
            again = low.startswith("we") and group in "".join(out)  # a second "we" is "they"
            plural = plural or again
            out.append(subject if low.startswith("i") else "they" if again else group)
            if low in ("i", "we"):
                pending = True
            else:
                out.append(_aux(low, plural, _next_word(tokens, i)))
            named = True
            continue
        out.append(_pronoun(tok, low, subject, group, named))
    return "".join(out)


def _compound(before: list[str]) -> bool:
    """Whether "I" ends a compound subject: "Wei and I", "my sister and I" (not ", and I")."""
    words = [_key(t) for t in before if t.strip()]
    if len(words) < 2 or words[-1] not in ("and", "&"):
        return False
    clause: list[str] = []
    for w in reversed(words[:-1]):
        # "at 10am and I present", "the 24th and I'm": a time or a date, not a person
        if not w[0].isalpha() or w in ("am", "pm", "st", "nd", "rd", "th"):
            break
        clause.append(w)
    return 1 <= len(clause) <= 3 and not SUBJECTS & set(clause)


def _pronoun(tok: str, low: str, subject: str, group: str, named: bool) -> str:
    if tok == "US":
        return tok
    if low in ("my", "our"):
        return "their" if named else f"{subject}'s"
    if low in ("mine", "ours"):
        return "theirs" if named else f"{subject}'s"
    if low in ("me", "us"):
        return "them" if named else (subject if low == "me" else group)
    if low in ("myself", "ourselves"):
        return "themselves"
    return tok


SUBJECTS = frozenset(("i", "i'm", "im", "i've", "ive", "i'll", "i'd", "we", "we're", "we've", "we'll", "we'd"))


_YOU = {
    "you": "I",
    "you're": "I'm",
    "youre": "I'm",
    "you've": "I've",
    "you'll": "I'll",
    "you'd": "I'd",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
}
_ASSISTANT = {
    "i": "the assistant",
    "me": "the assistant",
    "my": "the assistant's",
    "i'd": "the assistant would",
    "i'll": "the assistant will",
    "i'm": "the assistant is",
    "i've": "the assistant has",
}
_AFTER_OBJECT = frozenset("for to of in on at with and or from by about too as".split())
_CLAUSE_START = frozenset("and but so because if when that then or while since as".split())


def second_person(text: str, subject: str = "the user") -> str:
    """An assistant's "you" statement about the user in the third person: "Got it, you prefer
    tea" -> "the user prefers tea". A "you" that starts a clause is the subject; elsewhere it is
    an object ("we'll remind you"). The text is put in the first person, then converted."""
    tokens = _TOKEN.findall(text)
    out: list[str] = []
    for i, tok in enumerate(tokens):
        low = _key(tok)
        if low == "you":
            prev = next((_key(t) for t in reversed(tokens[:i]) if t.strip()), "")
            nxt = _next_word(tokens, i)
            subj = (
                (not prev or not prev[0].isalpha() or prev in _CLAUSE_START)
                and nxt[:1].isalpha()
                and nxt not in _AFTER_OBJECT
            )
            out.append("I" if subj else "me")
        elif low in _ASSISTANT:
            out.append(_ASSISTANT[low])  # the assistant's own "I'd fix…" stays the assistant's
        else:
            out.append(_YOU.get(low, tok))
    return convert("".join(out), subject, f"{subject}'s team")
