"""The part of a chat line that holds no knowledge: fillers, requests, acknowledgements, small talk.

A user talks to an assistant in lines that say nothing about the user or the world: a
leading filler ("ok so", "Right, wal_level needs a restart"), a request to the assistant
("write me a limerick", "can you rephrase this"), an acknowledgement ("perfect, that's what
I needed"), a greeting or small talk (the weather, a joke). Offline ingest (dialogue.py, turns.py) and
offline dream (extraction/dream) both leave them out, with these same rules.

A filler that is also an adjective or a noun ("good", "great", "nice", "morning") is one only
when punctuation follows it: "Good, the canary is healthy" opens with a filler, "good coffee
matters" does not.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
# interjections and connectives: a filler with or without punctuation after them
_INTERJECTIONS = (
    r"ok(?:ay)?|so|well|yeah|yep|yup|yes|also|and|but|oh|ah|ugh|hmm|btw|honestly|actually|anyway|"
    r"alright|right|haha+|lol|hey|hi|big news|bad news|good news|news|confession|fyi|wow|welp|sure|"
    r"deal|nah|nope|one more(?: thing| question)?(?=\s*[,:])"
)
# words that are fillers only when punctuation closes them: "Perfect, ..." but "perfect timing"
_CLOSED = (
    r"perfect|great|cool|nice|got it|all right|good|awesome|fair enough|makes sense|i see|thanks|"
    r"thank you|morning|update"
)
LEAD = re.compile(rf"^(?:(?:(?:{_CLOSED})\s*[,!.:;]+|(?:{_INTERJECTIONS})\b[\s,:.!-]*)\s*)+", _I)

_VERBS = (
    r"write|rewrite|rephrase|reword|translate|tell|give|show|draft|compose|generate|summari[sz]e|explain|"
    r"describe|convert|calculate|brainstorm|suggest|recommend|proofread|polish|teach|make up|come up with"
)
# what a user asks the assistant to do: an imperative, or "can you"/"I need you to"/"help me" before one
REQUEST = re.compile(
    rf"^(?:(?:hey|ok(?:ay)?|so|now|and|also)[, ]+)*(?:please |pls |plz )?(?:(?:can|could|would|will) (?:you|u)|"
    # a game the assistant runs: "quiz me on capitals, africa only"
    r"(?:quiz|test) (?:me|us)|"
    rf"(?:i )?(?:need|want|would like) you to|help me|make (?:me|us)|{_VERBS}|"
    # "make this sound less passive aggressive", "make it shorter"
    r"make (?:this|it|that) (?:sound|read|look|more|less|shorter|longer|nicer|friendlier|politer|clearer|simpler|better)|"
    r"another|one more|more|again|stop|continue|go on|keep going|(?:need|want) help|"
    # asking for a list: "name ideas for our trivia team", "any recs", "anything else like it"
    r"(?:[a-z]+ )?(?:ideas|suggestions|recommendations|recs|tips) (?:for|on)|"
    r"any(?:thing)? (?:else |more )?(?:like (?:it|this|that)|recs|recommendations|suggestions|ideas))\b",
    _I,
)
_MORE = re.compile(r"(?:another|one more|more|again)\b", _I)
_PIECES = r"limerick|poem|haiku|joke|pun|riddle|song|story|rap|sonnet|tongue twister"  # what an assistant writes
_CREATIVE = re.compile(rf"\b(?:{_PIECES})s?\b", _I)
# a creative piece asked for mid-line: "for the team chat, write a haiku", "give us a pun"
_CREATIVE_ASK = re.compile(
    r"(?:^|[,:;.!]\s*)(?:write|tell|give|make|compose|come up with)\b|"
    r"\b(?:write|tell|give|make|compose) (?:me|us)\b|"
    # "need some riddles for a long car trip": the pieces wanted, without a verb for the assistant
    r"^(?:i )?(?:need|want|would like|looking for)\s+(?:some|a|an|a few|more|\d+)?\s*(?:[\w'-]+\s+){0,2}"
    rf"(?:{_PIECES})s?\b",
    _I,
)
WORDS = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,:/-]\d+)*")

# a whole line of thanks and agreement
_ACKNOWLEDGEMENT = re.compile(
    r"^(?:(?:ok(?:ay)?|right|sure|yes|yeah|yep|perfect|great|cool|nice|got it|alright|awesome|fair enough|"
    r"makes sense|sounds (?:good|great|right)|thanks?(?: you)?|cheers|lol|haha|ha|wow|love it|that works|"
    r"that'?s (?:it|all|what i needed|helpful|perfect|great|exactly it)|this is (?:perfect|great|helpful)|"
    r"will do|noted|good (?:call|point|idea)|you'?re (?:right|the best)|i see|ah|oh)\b[\s,.!:;]*)+"
    r"(?:that'?s (?:what i needed|helpful|perfect|great|exactly (?:it|right))|thank you|thanks)?[\s.!]*$",
    _I,
)
# the first word of a short reaction: "great, printing it", "makes sense now"
ACK_START = re.compile(
    r"^(?:great|perfect|thanks|thank you|thx|cool|nice|awesome|good|fine|fair|true|exactly|"
    r"sounds|makes sense|got it|noted)\b",
    _I,
)
# greetings, thanks and exclamations; in a short line they are all the line says
GREETING = re.compile(
    "|".join(
        (
            r"^(?:hi|hey|hello|thanks|thank you|thx|bye|goodbye|good (?:morning|night|evening|afternoon)|"
            r"lol|haha|wow|congrats|congratulations|sounds good|see you|take care|no problem|"
            r"you're welcome|of course|absolutely|definitely|totally|exactly)\b",
            r"^(?:that'?s|that is|this is|it'?s|it is|what an?|so|how) (?:so |really |very |such |just |)(?:a |an |)"
            r"(?:great|awesome|amazing|cool|nice|wonderful|inspiring|beautiful|lovely|sweet|fun|good|sad|"
            r"bad|true|right|exciting|impressive|incredible)\b",
            r"^(?:你好|您好|谢谢|多谢|好的|好吧|嗯|哈哈|再见|拜拜|没问题|不客气|收到|明白)[！!。，,~\s]*$",
        )
    ),
    _I,
)
_SMALL_TALK = re.compile(
    r"\b(?:weather|forecast|sunny|rains?|rainy day|raining|snowing|so hot|so cold|heatwave|how are you|how'?s it going|"
    r"dusty|the dust|so dry|humid|muggy|windy|chilly|drizzl\w*|foggy|"
    r"bored(?! of| with)|"  # "bored waiting in the ute": how the user feels this minute
    # "had one at a cafe and now im curious": why a question was asked, not something to keep
    r"(?:i'?m |now |just |so )curious(?! (?:about|whether|if|to|how|what)\b)|just wondering|out of curiosity|"
    r"good (?:morning|night|evening)|happy (?:friday|monday|weekend|birthday|new year)|tgif|"
    r"you'?re (?:funny|hilarious|the best)|made me laugh|that'?s (?:funny|hilarious))\b",
    _I,
)


# a verdict on what was just said, and nothing else: "that's the cutest thing I've heard all week",
# "this is so wild", "that's fascinating" (a note may say "the user has heard", with its keywords)
_VERDICT = re.compile(
    r"^(?:that|this|it)(?:['’]s| is| was) (?:(?:so|really|such|pretty|kinda|just|honestly|actually|literally|"
    r"the|a|an) )*(?:cute|cutest|adorable|amazing|awesome|cool|coolest|wild|wildest|crazy|craziest|insane|nuts|"
    r"bonkers|weird|weirdest|funny|funniest|hilarious|wholesome|lovely|beautiful|fascinating|interesting|"
    r"incredible|mind-?blowing|terrifying|creepy|gross|sweet|sweetest|nice|nicest|great|greatest|strange|strangest|"
    r"brilliant|neat|mad|sad|saddest|best|worst)"
    r"(?: (?:thing|news|story|fact|idea|one|stuff))?"
    r"(?: (?:i['’]ve|i have|i|the user has|the user)(?: ever)? (?:heard|seen|read|learned|learnt))?"
    r"(?: (?:all (?:day|week|month|year)|today|this week|in ages|in years|ever|lol|haha))*"
    r"\W*(?:\((?:about|keywords):[^)]*\)\W*)?$",
    _I,
)


def is_verdict(text: str) -> bool:
    """A verdict on what was just said, nothing else: "that's the cutest thing I've heard all week"."""
    return bool(_VERDICT.match(text.strip()))


def strip_lead(text: str) -> str:
    """`text` without the fillers it opens with ("ok so", "Right,"); "" when it is all filler."""
    return LEAD.sub("", text.strip())


# a piece of content named without a verb: "pun about the periodic table pls", "5 general
# knowledge questions for a quiz night, medium hard", "a haiku for mum's card"
_CONTENT_ASK = re.compile(
    r"^(?:(?:a|an|some|\d+|one|two|three|four|five|six|ten)\s+)?(?:[\w'-]+\s+){0,3}"
    rf"(?:{_PIECES}|fun facts?|facts|trivia|quiz|questions|captions?|slogans?|toast)s?\s+(?:about|for|on)\b",
    _I,
)
# ...but a sentence with a verb of its own states something: "questions for the parents' evening are ready"
_FINITE = re.compile(r"\b(?:is|are|was|were|have|has|had|will|would|did|does|do|got|went)\b|'s\b|n't\b", _I)


# a request after a clause setting the scene: "rainy evening, give me 3 films, nothing sad"
_ASK_AFTER = re.compile(
    r"[,:;]\s*(?:(?:please|pls|plz|now|so)\s+)?(?:give|tell|show|find|recommend|suggest|pick) (?:me|us)\b", _I
)


def is_request(text: str) -> bool:
    """A request to the assistant (write, rephrase, translate, tell a joke), not a statement."""
    head = text.strip()
    if re.match(r"(?:make sure|list of|let'?s say)\b", head, _I):
        return False
    if _CREATIVE.search(head) and _CREATIVE_ASK.search(head):
        return True
    if _CONTENT_ASK.match(head) and not _FINITE.search(head) and ":" not in head and len(WORDS.findall(head)) <= 14:
        return True
    if _ASK_AFTER.search(head):
        return True
    m = REQUEST.match(head)
    if m and _MORE.match(head):
        return len(WORDS.findall(head)) <= 4  # "another one" asks; "one more thing to run" states
    return bool(m)


# asking for work on a text or for entertainment: what follows is the text or the game, not the user's own
_TEXT_OR_GAME = re.compile(
    r"\b(?:translate|rephrase|reword|proofread|polish|check|correct|fix|edit|shorten|summari[sz]e|"
    r"fun facts?|trivia|quiz|riddles?|another|one more)\b",
    _I,
)


def own_task(request: str) -> bool:
    """A request for the user's own task ("can u write a closing checklist for the kitchen"): the
    user's first-person lines after it say how things are for them ("i close with gus tue to
    thu"). After a request to work on a text, a creative piece or a game they are the material."""
    return not _CREATIVE.search(request) and not _TEXT_OR_GAME.search(request)


def is_acknowledgement(text: str) -> bool:
    """A line of thanks or agreement only: "Perfect, that's what I needed."."""
    return bool(_ACKNOWLEDGEMENT.match(text.strip()))


def chit_chat(text: str) -> bool:
    """An acknowledgement, a short greeting or small talk (the weather, a joke): nothing to remember."""
    head = text.strip()
    if GREETING.search(head) and len(re.findall(r"\w+", head)) < 8:
        return True
    return is_acknowledgement(head) or is_verdict(head) or (bool(_SMALL_TALK.search(head)) and len(head.split()) < 16)
