"""The offline extractor: keep what a speaker states, drop small talk. No model, no guessing.

Each message is cut into sentences; a sentence is kept verbatim (prefixed by its
speaker) when it states a decision, a preference, a plan, or a fact: identity,
first-person statements, numbers, names. Questions, greetings, thanks and short
reactions are dropped. The assistant is kept only when it confirms something
("Got it, we'll use PostgreSQL 16"), because what it says alone may be wrong.
Nothing is paraphrased, so nothing is invented; the same input always gives the
same note. English and Chinese are handled; other languages fall back to the
number/name rules.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from memcli.extraction.conversation import Draft, Request, chatter, cjk, dialogue, person, procedures
from memcli.extraction.conversation.messages import text_of
from memcli.extraction.conversation.turns import Turn, user_turn

SECTIONS = ("Facts", "Decisions", "Preferences", "Next steps", "Procedures", "Code")
MAX_SENTENCE = 400
FALLBACK_NAME = "conversation-notes"

_SPLIT = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
# "INSERT ... ON CONFLICT" is one sentence; "switched to ezyvet and honestly... its fine?" two
_TURN_SPLIT = re.compile(r"(?<=[.!?;])(?<!\.\.\.)\s+|(?<=\.\.\.)\s+(?=[a-z])|(?<=[。！？；])|\n+")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+(?:[.,:]\d+)*")


def _rx(*alts: str) -> re.Pattern:
    return re.compile("|".join(alts), re.IGNORECASE)


_I = r"\b(?:i|we)(?:['’](?:m|re|ve|ll|d))?\b"
CUES = {
    "Decisions": _rx(
        r"\b(?:i|we)(?:'ve| have)? (?:finally |just |already )?(?:decided|chose|chosen|picked|agreed|"
        r"settled on|went with|opted|switched|replaced|moved to)\b",
        r"\b(?:we|i)(?:'re| are| will|'ll) (?:go(?:ing)? with|use|switch|stick with)\b",
        r"\blet'?s (?:go with|use|switch|stick with|do)\b",
        r"\bdecision\b",
        r"\binstead of\b",
        r"决定|决策|选定|选了|选择了|采用|改用|换成|改成|就用|敲定|定下",
    ),
    "Preferences": _rx(
        r"\b(?:i|we) (?:really |also |still |much |usually |always |)(?:prefer|like|love|enjoy|"
        r"hate|dislike|avoid|can't stand|don't like|do not like|'d rather|would rather)\b",
        r"\bmy (?:favou?rite|preferred)\b",
        r"\bplease (?:always|never|don't|do not)\b",
        r"\byou (?:prefer|like|love|want|don't like|hate)\b",
        r"喜欢|偏好|最爱|讨厌|习惯用|倾向于|更愿意|请不要|请总是",
    ),
    "Next steps": _rx(
        r"\b(?:i|we)(?:'ll| will| am going to|'m going to| are going to|'re going to| plan to|"
        r"'m planning to| need to| have to| must| intend to)\b",
        r"\b(?:next step|todo|to-do|remind me|deadline|tomorrow|next week|next month)\b",
        r"打算|计划|准备|下一步|明天|下周|后天|待办|需要|提醒我|截止|之前要|要在",
    ),
}
IDENTITY = _rx(
    r"\bmy name is\b",
    r"\bi(?:'m| am) (?:a|an|the) \w+",
    r"\bi work (?:as|at|for|on)\b",
    r"\bi live in\b",
    r"\bi(?:'m| am) from\b",
    r"\bi(?:'m| am) \d+\b",
    r"我是|我叫|我的名字|我住在|我来自|我在.{1,12}(?:工作|上班|读书|上学)",
)
FIRST_PERSON = _rx(_I, r"\b(?:my|our|me|us|mine)\b", r"我")
SECOND_PERSON = _rx(r"\byou(?:r|'re|'ve|'ll|rs)?\b", r"你|您")
CONFIRM = _rx(
    r"^(?:noted|got it|understood|confirmed|done|okay|ok|sure|perfect|great|i'll remember|"
    r"i will remember|i(?:'ve| have) (?:noted|saved|recorded)|saved|recorded)\b",
    r"^(?:好的|明白|收到|已记录|记住了|已确认|了解)",
)
STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just let like me more most my
myself no nor not now of off on once only or other our ours out over own really same she should so some such
than that the their theirs them then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself also been going got get gets
one thing things lot lots much many well yes yeah okay ok sure still even ever maybe kind sort way make made
said say says tell told know think thought feel felt want wanted need needed use used going gonna really always
never something anything everything someone today yesterday tomorrow week weeks day days time times year years
new good great nice last next first back see seen look looking come came take took give gave around since though
decided decide chose chosen picked agreed prefer preferred love loved enjoy enjoyed hate plan planned planning
replace replaced switch switched instead because every draft will shall must please remind remember
""".split()
) | frozenset(  # chat words name no topic: "lol" was a note's topic and a gloss's "(about: starter, lol)"
    "lol haha hmm ugh btw tho thx ty pls plz idk imo lmao yep yup nah nope ya yea wanna gotta thats whats dont cant "
    "im ive".split()
)
HAN_STOP = frozenset("我你您他她它们的了是在和就都也还这那有个把被给对吗呢吧啊呀哦嗯要会能可以很太更最不没")


# a fenced code block is no sentences ("Import pandas as pd." made knowledge of transcript): the
# user's own blocks are kept whole under `## Code` (a run command, a config: identifiers worth
# finding), the assistant's are left in the source conversation
_FENCE = re.compile(r"^[ \t]*```[^\n]*\n.*?(?:^[ \t]*```[^\n]*$|\Z)", re.S | re.M)


# an emoji between two clauses of a chat message ends the first ("that arsenal chelsea game 😤 how
# was that not a penalty"); around a short part it does not: a short lead names what the rest is
# about ("Orchestra again 😩 the parish rented thursdays"), a short tail leans on the lead ("a
# mongoose got two hens last night 😭 down to 12")
_EMOJI_END = re.compile(r"(?<=\w)\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\uFE0F?\s+(?=\w)")
EMOJI_LEAD = 4  # words on each side of an emoji that make two clauses


def _emoji_clauses(part: str) -> list[str]:
    out, start = [], 0
    for m in _EMOJI_END.finditer(part):
        lead, rest = part[start : m.start()], part[m.end() :]
        if len(lead.split()) >= EMOJI_LEAD and len(rest.split()) >= EMOJI_LEAD:
            out.append(lead)
            start = m.end()
    return [*out, part[start:]]


def sentences(text: str) -> list[str]:
    return _tidy(_SPLIT.split(_unfenced(text)))


def turn_sentences(text: str) -> list[str]:
    """The sentences of a user's chat message: a line, a sentence ending, or an emoji between
    two clauses ends one (an ellipsis before a lowercase word ends one too, not "INSERT ... ON")."""
    return _tidy(c for p in _TURN_SPLIT.split(_unfenced(text)) for c in _emoji_clauses(p or ""))


def _unfenced(text: str) -> str:
    return _FENCE.sub("\n", text) if "```" in text else text


def _tidy(parts) -> list[str]:
    out = []
    for part in parts:
        part = _BULLET.sub("", part or "").strip()
        if part:
            out.append(part if len(part) <= MAX_SENTENCE else part[: MAX_SENTENCE - 1].rstrip() + "…")
    return out


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of a message, each closed (a block left open ends the message)."""
    if "```" not in text:
        return []
    out = []
    for m in _FENCE.finditer(text):
        block = m.group(0).strip("\n").rstrip()
        if not re.search(r"\n[ \t]*```[^\n]*$", block):
            block += "\n```"
        if block.count("\n") >= 2:  # an opening line, some code, a closing line
            out.append(block.strip())
    return out


def _size(s: str) -> int:
    """Words in `s`, counting two Han characters as one word."""
    return len(_WORD.findall(s)) + len(_HAN.findall(s)) // 2


def _has_name(s: str, skip: set[str]) -> bool:
    """A capitalised word not at the start (a name, a product), an identifier, or a number."""
    if re.search(r"\d", s):
        return True
    words = re.findall(r"[A-Za-z][\w'’.-]*", s)
    for i, w in enumerate(words):
        if i and w[0].isupper() and w.lower() not in skip and w not in ("I", "I'm", "I've", "I'll", "I'd"):
            return True
        if re.search(r"[a-z][A-Z]|_[a-z]|\w\.\w+\(", w):
            return True
    return False


def classify(s: str, role: str, names: set[str]) -> str | None:
    """The section a sentence belongs to, or None for small talk and questions."""
    if s.rstrip().endswith(("?", "？")) or re.search(r"[吗呢]$", s.rstrip()):
        return None
    size = _size(s)
    if role == "assistant":
        if not CONFIRM.search(s) or size < 4:
            return None
        rest = CONFIRM.sub("", s, count=1)
        for section, cue in CUES.items():
            if cue.search(rest):
                return section
        return "Facts" if _has_name(rest, names) else None
    if role != "user" or size < 3 or (chatter.GREETING.search(s) and size < 8):
        return None
    for section, cue in CUES.items():
        if cue.search(s):
            return section
    if IDENTITY.search(s):
        return "Facts"
    if size < 5:
        return None
    first, second = FIRST_PERSON.search(s), SECOND_PERSON.search(s)
    if second and not first and not _has_name(s, names):
        return None  # about the listener ("you did great"): a reaction, not a fact
    if first or _has_name(s, names) or size >= 7:
        return "Facts"
    return None


def _speaker(rec: dict) -> str:
    """Who a statement is about: "The user", or the speaker's name in a group chat."""
    name = rec.get("name") or rec["role"]
    return "The user" if name == rec["role"] else name


def _confirmed(s: str, names: set[str]) -> tuple[str, str] | None:
    """An assistant sentence that confirms something about the user, in the third person."""
    section = classify(s, "assistant", names)
    if section is None:
        return None
    if cjk.is_cjk(s):
        return section, cjk.render(s, "The assistant", "confirmed")
    rest = CONFIRM.sub("", s, count=1).strip(" ,:;-!.")
    return section, dialogue.finish(person.second_person(rest))


def _cue(s: str) -> str | None:
    return next((section for section, cue in CUES.items() if cue.search(s)), None)


def findings(messages: list[dict]) -> dict[str, list[str]]:
    return read(messages)[0]


def read(messages: list[dict]) -> tuple[dict[str, list[str]], bool]:
    """What a chat states, by section, and whether it was an errand: the user opened by asking
    the assistant for something (a question, a request) and afterwards stated nothing of their
    own, only reacted to the answer ("lol ok thats much nicer"). An errand's note is kept, but
    what it says was the errand's context ("brownie recipe is for an 8x8 pan"), so consolidation
    lets it join a subject and found none (memcli.extraction.dream)."""
    names = {str(m.get("name", "")).lower() for m in messages} | {"user", "assistant"}
    found: dict[str, list[str]] = {s: [] for s in SECTIONS}
    seen: set[str] = set()

    def add(section: str, statement: str) -> None:
        item = f"- {statement}"
        if statement and _norm(item) not in seen:
            seen.add(_norm(item))
            found[section].append(item)

    texts = [text_of(m) for m in messages]
    counts = dialogue.session_counts(texts + [t for t, m in zip(texts, messages) if m["role"] == "user"], STOP)
    turn = Turn(
        counts=counts,
        split=turn_sentences,
        section=_cue,
        stop=STOP,
        with_assistant=any(m["role"] == "assistant" for m in messages),
    )
    opened, told_later, users = False, False, 0
    for rec, text in zip(messages, texts):
        if rec["role"] == "assistant":
            if turn.request_mode < 2:  # not while it writes limericks
                for s in sentences(text):
                    got = _confirmed(s, names)
                    if got:
                        add(*got)
            turn.assistant = text
        elif rec["role"] == "user" and text:
            found["Code"] += [b for b in code_blocks(text) if b not in found["Code"]]
            kept, asked = user_turn(procedures.without_list(text), _speaker(rec), turn)
            if users and opened and not told_later and dialogue.reacts(text, turn.assistant):
                kept = []  # "haha told u. a court case lol": about the answer, not the user
            for section, statement in kept:
                add(section, statement)
            opened = opened or (not users and asked > 0)
            # taking up what the answer offered ("seen minari. will do aftersun") is kept, and is
            # still the errand's: nothing of the user's own was told
            told_later = told_later or bool(users and kept and not (opened and dialogue.takes_up(text, turn.assistant)))
            users += 1
            turn.request_mode = 0 if kept else max(asked, turn.request_mode)
            turn.assistant = ""  # a proposal is answered once
            turn.user_before.append(text)
        turn.before = (turn.before + [text])[-2:]
    for title, steps in procedures.accepted(messages):
        found["Procedures"].append(procedures.render(title, steps))
    errand = opened and not told_later and not found["Procedures"] and not found["Code"]
    return found, errand


def _norm(line: str) -> str:
    return " ".join(line.strip().lstrip("-*").split()).lower()


# the words a statement is framed in ("The user's team…", "(about: …)"): not its topic
FRAME = re.compile(
    r"\bthe (?:user|assistant)(?:'s)?(?: team| household)?\b|\bagreed to the assistant's suggestion\b|"
    r"\b(?:asked to|asked for|does not want|said|confirmed|keywords)\b|\(about:[^)]*\)|"
    r"^- (?:User|Assistant): ",
    re.IGNORECASE,
)


def unaccented(w: str) -> str:
    """Latin letters without their accents ("aréna" is "arena", "Jéssica" "Jessica"); other scripts
    as they are (a kana's voicing mark is part of the letter)."""
    if w.isascii():
        return w
    return "".join(unicodedata.normalize("NFKD", c)[0] if "\u00c0" <= c <= "\u024f" else c for c in w)


def topic_name(found: dict[str, list[str]], skip: set[str]) -> str:
    """Kebab-case name from the words most sentences share; names (capitalised mid-sentence,
    identifiers) count double. Ties go to the word seen first, so the name is stable."""
    counts: Counter = Counter()
    first: dict[str, int] = {}
    for item in (i for s in SECTIONS for i in found[s]):
        text = unaccented(FRAME.sub(" ", item))  # "jéssica" is one word, not "j" and "ssica"
        # a possessive is its noun ("dong's": dong), a contraction no word ("didn't" is not "didn")
        bare = (re.sub(r"['’]s$", "", w) for w in re.findall(r"[a-z]+(?:['’][a-z]+)?", text.lower()))
        terms = dict.fromkeys(w for w in bare if len(w) > 2 and not {"'", "’"} & set(w) and w not in STOP | skip)
        names = {w.lower() for w in re.findall(r"(?<=[\w,;:] )[A-Z][A-Za-z]*[A-Z0-9]?[A-Za-z]*", text)}
        for run in re.findall(r"[\u3400-\u9fff]+", text):
            terms.update(
                dict.fromkeys(run[i : i + 2] for i in range(len(run) - 1) if not set(run[i : i + 2]) & HAN_STOP)
            )
        for t in terms:
            counts[t] += 2 if t in names else 1
            first.setdefault(t, len(first))
    picked: list[str] = []
    for term, _ in sorted(counts.items(), key=lambda kv: (-kv[1], first[kv[0]])):
        if any(set(term) & set(p) for p in picked if _HAN.match(term) and _HAN.match(p)):
            continue  # overlapping Han bigrams (部署, 署流) name the same thing
        picked.append(term)
        if len(picked) == 3:
            break
    return "-".join(picked)[:60].strip("-") or FALLBACK_NAME


def describe(found: dict[str, list[str]]) -> str:
    for section in ("Decisions", "Preferences", "Facts", "Next steps"):
        if found[section]:
            text = found[section][0][2:]
            text = text.split(": ", 1)[1] if text.startswith(("User: ", "Assistant: ")) else text
            return text if len(text) <= 160 else text[:159].rstrip() + "…"
    return ""


def render(name: str, found: dict[str, list[str]]) -> str:
    title = name.replace("-", " ")
    parts = [f"# {title[:1].upper()}{title[1:]}"]
    for section in SECTIONS:
        if found[section]:
            parts += ["", f"## {section}", *found[section]]
    return "\n".join(parts) + "\n"


def merge_body(body: str, found: dict[str, list[str]], sections=SECTIONS, norm=_norm) -> str:
    """Add the new items to their sections of an existing body; everything there stays.
    `sections` is the order new sections are added in; `norm` says when two lines are the same."""
    lines = body.rstrip("\n").split("\n") if body.strip() else []
    have = {norm(x) for x in lines if x.lstrip().startswith(("- ", "* "))}
    for section in sections:
        new = [i for i in found.get(section, []) if norm(i) not in have and (i.startswith("- ") or i not in body)]
        if not new:
            continue
        head = next((i for i, x in enumerate(lines) if x.strip().lower() == f"## {section.lower()}"), None)
        if head is None:
            lines += ["", f"## {section}", *new] if lines else [f"## {section}", *new]
            continue
        end = next((i for i in range(head + 1, len(lines)) if lines[i].startswith("#")), len(lines))
        while end > head + 1 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = new
    return "\n".join(lines) + "\n"


def extract(req: Request) -> Draft | None:
    found, errand = read(req.messages)
    if not any(found.values()):
        return None
    if req.existing is not None:
        ex = req.existing
        return Draft(ex.name, ex.description or describe(found), merge_body(ex.body, found))
    names = {str(m.get("name", "")).lower() for m in req.messages}
    name = topic_name(found, names)
    body = render(name, found)
    about = dialogue.topics([text_of(m) for m in req.messages if m["role"] in ("user", "assistant")], STOP | names)
    if about:  # what the whole chat was about, the assistant's words included: a search finds
        body += f"\n## Topics\n{', '.join(about)}\n"  # "editor" where the user only said "zed"
    return Draft(name, describe(found), body, errand)
