"""Chinese, Japanese and Korean turns: kept as the user's quoted words, framed in English.

A statement is kept whole, verbatim, inside quotation marks: 'The user said: 「私はダークモード
が好きです。」'. Why quoted rather than rewritten: a third-person rewrite (私 -> ユーザー,
나 -> 사용자) has to conjugate Korean and Japanese verbs and would get some wrong, and every
word the user wrote (names, dates such as 5月9日 or 4월 18일, places) stays as written, so a
search in that language finds it by its own words while the English frame tells a reader,
and the embedding model, who said it. The sentences of one turn stay together
("엄마 생신은 4월 18일이야. 부산에 사셔."): the second leans on the first for its subject.
Questions, greetings, thanks and requests to the assistant ("直してください") are dropped.
"""

from __future__ import annotations

import re

from memcli.extraction.conversation import glossary

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff]")
KANA = re.compile(r"[\u3040-\u30ff]")
HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")
_LATIN = re.compile(r"[A-Za-z]+")
_SPLIT = re.compile(r"(?<=[。！？!?])\s*|(?<=[.;])\s+|\n+")
QUESTION = re.compile(r"[?？]\s*$|[吗呢]\s*[。!！]?$|(?:ですか|ますか|でしょうか|かな|까|니|나요|가요|죠)\s*[.。!！]?$")
# greetings, thanks, short reactions and sign-offs (whole sentence)
SMALL = re.compile(
    r"^(?:안녕|고마워|감사|ㅇㅋ|ㅋ+|ㅎ+|좋다|응|네|아니|ありがとう|こんにちは|こんばんは|おはよう|そうですね|"
    r"はい|いいえ|今日はここまで|お疲れ|你好|您好|谢谢|多谢|好的|好吧|嗯|哈哈|再见|拜拜|没问题|不客气|收到|明白|"
    r"周末愉快|晚安|加油|良い週末|おやすみ|잘 자|좋은 주말)"
    r"[^。！？!?]{0,12}[。！？!?~\s]*$"
)
# requests to the assistant: correct, help, teach, translate, "may I"
REQUEST = re.compile(
    r"(?:直して|教えて|お願いします|ください|練習|도와|해\s?줘|알려\s?줘|고쳐|얘기해도|연습|帮我|帮忙|改一下|"
    r"翻译|可以吗|练习|请你)"
)
PREFERS = re.compile(r"好き|嫌い|好む|좋아|싫어|喜欢|偏好|讨厌|最爱|更愿意")
DECIDES = re.compile(r"決め|にします|할게|하기로|决定|选定|改用|换成|就用|敲定")
PLANS = re.compile(r"予定|つもり|します。?$|갈까|예정|할 거|打算|计划|准备|下周|明天")


def is_cjk(text: str) -> bool:
    """Mostly written in Chinese, Japanese or Korean characters."""
    cjk = len(CJK.findall(text))
    return cjk >= 2 and cjk >= len(_LATIN.findall(text))


def _keep(sentence: str) -> bool:
    s = sentence.strip()
    return bool(s) and not QUESTION.search(s) and not SMALL.match(s) and not REQUEST.search(s)


def statement(text: str) -> tuple[str, str] | None:
    """(section, the kept words) of one CJK turn, or None when it holds nothing to keep."""
    if REQUEST.search(text):  # what the user asks to correct or translate is not their statement
        text = re.sub(r'"[^"]*"|“[^”]*”', "", text)
    kept = [s.strip() for s in _SPLIT.split(text) if s and _keep(s)]
    words = "".join(s if s[-1:] in "。！？" else s + " " for s in kept).strip()
    if len(CJK.findall(words)) < 4 and not re.search(r"\d", words):
        return None
    section = (
        "Preferences"
        if PREFERS.search(words)
        else "Decisions"
        if DECIDES.search(words)
        else "Next steps"
        if PLANS.search(words) and not re.search(r"\d", words)
        else "Facts"
    )
    return section, words


def render(words: str, subject: str = "The user", verb: str = "said") -> str:
    """The quoted statement (「」 for Japanese and Chinese, “” for Korean) and the English
    keywords of its everyday words and dates (glossary.py)."""
    quoted = f"“{words}”" if HANGUL.search(words) and not KANA.search(words) else f"「{words}」"
    keys = glossary.gloss(words)
    return f"{subject} {verb}: {quoted}" + (f" (keywords: {', '.join(keys)})" if keys else "")
