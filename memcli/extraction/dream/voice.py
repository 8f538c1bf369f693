"""How a statement reads in a digest node: self-contained, third person, no transcript voice.

A conversation note may quote the user ("User: I'm changing my goal to 1:52 then.") or state
the fact already ("The user's half-marathon goal is now 1:52."). A node says the second:
`statement` turns the user's first person into "the user" (verbs agree: "I prefer" -> "the
user prefers", "my" -> "the user's") and drops a leading acknowledgement ("Right, ..."). Other
named speakers keep their prefix ("Caroline: ..."): in a conversation between two people the
name is what says whose statement it is.

`addressed_to_assistant` and `chit_chat` say which lines hold no knowledge at all: requests
to the assistant ("Write me a limerick about Kafka consumer groups", "Can you rephrase this"),
acknowledgements ("Perfect, that's what I needed") and small talk (the weather, a joke).
"""

from __future__ import annotations

import re

USER_SPEAKERS = frozenset({"user", "me", "i"})
_ADVERBS = frozenset({"no longer", "not really"}) | frozenset("""still also just now always never usually really actually already finally only often mostly
sometimes even recently definitely probably generally normally currently typically rarely mainly basically""".split())
_MODALS = frozenset("can could will would should must might may shall can't cannot won't wouldn't shouldn't "
                    "couldn't didn't".split())
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "don't": "doesn't", "haven't": "hasn't",
              "was": "was", "were": "was"}
_PAST = frozenset("""was had did went got made took bought sold ran began came saw found gave kept left lost met paid
put read said sent set spent thought told understood wrote broke chose drove fell felt fought forgot grew heard hit
held hurt knew led let meant quit rode rose shut sang sat slept spoke stood stuck swam taught threw tore woke won wore
built caught drew ate flew hung lay lit shot sank struck swore swept""".split())
_CONTRACTIONS = [(r"\bI['’]m\b", "I am"), (r"\bI['’]ve\b", "I have"), (r"\bI['’]ll\b", "I will"),
                 (r"\bI['’]d\b", "I would")]
# a leading acknowledgement or filler word says nothing: "Right, wal_level needs a restart", "ok i'll ..."
_ACK = re.compile(r"^(?:(?:(?:ok(?:ay)?|right|sure|yes|yeah|yep|yup|nah|nope|perfect|great|cool|nice|got it|alright|"
                  r"all right|good|awesome|fair enough|makes sense|i see|ah|oh|hmm|well|anyway|thanks|lol|haha)"
                  r"[,!.:;]*|(?:so|and|also|btw|but)[,]?)\s+)+(?=\S)", re.IGNORECASE)
# what a user asks the assistant to do: nothing about the user or the world
_REQUEST = re.compile(
    r"^(?:(?:hey|ok(?:ay)?|so|now|and|also|please)[, ]+)*(?:(?:can|could|would|will) you|(?:i )?(?:need|want|would like) "
    r"you to|please|let'?s|help me|"
    r"(?:write|rewrite|rephrase|reword|translate|tell|give|show|draft|compose|generate|summari[sz]e|explain|"
    r"brainstorm|suggest|recommend|proofread|polish|come up with)\b|make (?:me|us)\b)", re.IGNORECASE)
_CREATIVE = re.compile(r"\b(?:limerick|poem|haiku|joke|pun|riddle|song|story|rap|sonnet|tongue twister)s?\b",
                       re.IGNORECASE)
_ACKNOWLEDGEMENT = re.compile(
    r"^(?:(?:ok(?:ay)?|right|sure|yes|yeah|yep|perfect|great|cool|nice|got it|alright|awesome|fair enough|"
    r"makes sense|sounds (?:good|great|right)|thanks?(?: you)?|cheers|lol|haha|ha|wow|love it|that works|"
    r"that'?s (?:it|all|what i needed|helpful|perfect|great|exactly it)|this is (?:perfect|great|helpful)|"
    r"will do|noted|good (?:call|point|idea)|you'?re (?:right|the best)|i see|ah|oh)\b[\s,.!:;]*)+"
    r"(?:that'?s (?:what i needed|helpful|perfect|great|exactly (?:it|right))|thank you|thanks)?[\s.!]*$",
    re.IGNORECASE)
_SMALL_TALK = re.compile(
    r"\b(?:weather|forecast|sunny|rain|rainy day|raining|snowing|so hot|so cold|heatwave|how are you|how'?s it going|"
    r"good (?:morning|night|evening)|happy (?:friday|monday|weekend|birthday|new year)|tgif|"
    r"you'?re (?:funny|hilarious|the best)|made me laugh|that'?s (?:funny|hilarious))\b", re.IGNORECASE)


def is_user(speaker: str) -> bool:
    return speaker.strip().lower() in USER_SPEAKERS


def _verb(word: str) -> str:
    """The third person singular of a present-tense verb ("prefer" -> "prefers")."""
    low = word.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _MODALS or low in _PAST or low.endswith("ed") or not low.isalpha():
        return word
    if re.search(r"[^aeiou]y$", low):
        return word[:-1] + "ies"
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return word + "es"
    return word + "s"


def _third(text: str, who: str) -> str:
    """First person to `who` (first mention), then "their"/"them": "I do my long runs" ->
    "the user does their long runs"."""
    for rx, full in _CONTRACTIONS:
        text = re.sub(rx, full, text)
    adverbs = "|".join(sorted(_ADVERBS, key=len, reverse=True))
    out, named, at = [], False, 0
    pattern = re.compile(rf"\b(?P<i>I)(?P<adv>(?: (?:{adverbs}))*) (?P<verb>[A-Za-z][\w']*)|\b(?P<pos>[Mm]y|mine)\b|"
                         rf"\b(?P<obj>myself)\b|(?<=\s)(?P<me>me)\b")
    for m in pattern.finditer(text):
        out.append(text[at:m.start()])
        at = m.end()
        if m.group("i"):
            plural = re.search(r"\band\s*$", text[:m.start()])  # "Wei and I live": the verb stays
            verb = m.group("verb") if plural else _verb(m.group("verb"))
            out.append(f"{who}{m.group('adv') or ''} {verb}")
            named = True
        elif m.group("pos"):
            out.append("their" if named else f"{who}'s")
            named = True
        else:
            out.append("them" if named else who)
            named = True
    out.append(text[at:])
    return "".join(out)


def statement(text: str, speaker: str = "") -> str:
    """The self-contained statement a node holds for a line a speaker said."""
    text = _ACK.sub("", text.strip())
    if speaker and is_user(speaker):  # chat is often lowercase: "i'll", "im", "i think"
        text = re.sub(r"\bi(?=['’]|\s)", "I", re.sub(r"\bim\b", "I'm", text))
    if speaker and not is_user(speaker):
        return f"{speaker}: {text}" if speaker != "Assistant" else text
    if speaker and re.search(r"\b(?:I|[Mm]y|me|mine|myself)\b", text):
        text = _third(text, "the user")
    text = re.sub(r"\bthe user's's\b", "the user's", text)
    return text[:1].upper() + text[1:] if re.match(r"[a-z]+\b(?![_.-]\w)", text) else text


def addressed_to_assistant(text: str) -> bool:
    """A request to the assistant (write, rephrase, translate, tell a joke), not a statement."""
    head = text.strip()
    if _CREATIVE.search(head) and re.search(r"\b(?:write|tell|give|make|compose|come up with)\b", head, re.I):
        return True
    return bool(_REQUEST.match(head)) and not re.match(r"^(?:make sure|list of|let'?s say)\b", head, re.I)


def chit_chat(text: str) -> bool:
    """An acknowledgement or small talk: nothing to remember."""
    head = text.strip()
    return bool(_ACKNOWLEDGEMENT.match(head)) or (bool(_SMALL_TALK.search(head)) and len(head.split()) < 16)
