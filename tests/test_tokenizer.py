"""The search tokenizer: words, identifiers, CJK n-grams, a stable fingerprint."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memcli.index.keyword import tokenizer
from memcli.index.keyword.tokenizer import query_terms, tokenize


def test_english_words_lowercased_and_one_char_dropped():
    # stopwords ("the") dropped, plural/-ed/-ing stripped (measured choice, docs/evaluation.md)
    toks = tokenize("The Quick brown FOX a I x 7 jumps")
    assert toks == ["quick", "brown", "fox", "jump"]


def test_stopwords_and_light_stemming():
    assert tokenize("Running notes were updated") == ["run", "not", "updat"]
    assert tokenize("the and of") == []
    assert tokenize("queries") == tokenize("query") == ["query"]
    # identifiers and non-ASCII words are never stemmed
    assert "v2.3.4" in tokenize("v2.3.4") and tokenize("café's") == ["café"]


def test_punctuation_is_not_part_of_words():
    assert tokenize("Hello, world! (tea) 'coffee'?") == ["hello", "world", "tea", "coffee"]


@pytest.mark.parametrize(
    "text, whole, parts",
    [
        ("handleWebSocketReconnect", "handlewebsocketreconnect", ["handle", "web", "socket", "reconnect"]),
        ("ECONNREFUSED", "econnrefus", []),  # stemmed like any ASCII word, query and index alike
        ("INV-20931-QX", "inv-20931-qx", ["inv", "20931", "qx"]),
        ("7.4.119-beta", "7.4.119-beta", ["119", "beta"]),
        ("retry_backoff_seconds", "retry_backoff_seconds", ["retry", "backoff", "second"]),
        ("parseJSONResponse", "parsejsonresponse", ["parse", "json", "response"]),
    ],
)
def test_identifiers_give_whole_and_part_tokens(text, whole, parts):
    toks = tokenize(f"error in {text} today")
    assert whole in toks
    for p in parts:
        assert p in toks, (p, toks)
    assert "error" in toks and "today" in toks
    # no token is a single character
    assert all(len(t) > 1 for t in toks)


def test_identifier_query_matches_its_exact_form_and_parts():
    doc = set(tokenize("The client crashed in handleWebSocketReconnect with ECONNREFUSED."))
    assert set(query_terms("handleWebSocketReconnect")) <= doc
    assert "reconnect" in doc and "socket" in doc
    assert set(query_terms("econnrefused")) <= doc


def test_query_terms_are_deduplicated_in_first_seen_order():
    assert query_terms("fusion Rank fusion rank FUSION") == ["fusion", "rank"]
    assert len(query_terms("数据库 数据库")) == len(set(query_terms("数据库")))


def test_chinese_gives_unigrams_and_bigrams():
    toks = tokenize("向量数据库")
    for t in ["向量", "量数", "数据", "据库", "向", "量", "数", "据", "库"]:
        assert t in toks, (t, toks)
    # word order matters: the reversed pair is not produced
    assert "库据" not in toks


def test_chinese_query_terms_are_in_a_chinese_document():
    doc = set(tokenize("我们决定使用向量数据库来存储记忆。部署流程需要两步。"))
    for q in ("向量数据库", "部署流程", "记忆"):
        terms = query_terms(q)
        assert terms and set(terms) <= doc, (q, terms)


def test_korean_word_with_particle_matches_bare_word():
    doc = set(tokenize("에이전트는 메모리를 파일로 저장한다"))
    terms = query_terms("메모리")
    assert terms and set(terms) <= doc, (terms, doc)
    assert set(query_terms("저장")) <= doc


def test_japanese_query_terms_are_in_a_japanese_document():
    doc = set(tokenize("エージェントはメモリを検索する。東京で会議があった。"))
    for q in ("メモリ", "検索", "東京", "会議"):
        terms = query_terms(q)
        assert terms and set(terms) <= doc, (q, terms)


def test_mixed_script_text_keeps_both_parts():
    toks = tokenize("PostgreSQL部署在server上")
    assert "postgresql" in toks and "server" in toks
    assert "部署" in toks


def test_unrelated_cjk_does_not_match():
    assert not set(query_terms("天气")) & set(tokenize("向量数据库"))


def test_fingerprint_is_a_hash_of_the_spec():
    import hashlib

    assert hashlib.sha1(tokenizer.SPEC.encode()).hexdigest()[:10] == tokenizer.FINGERPRINT
    assert len(tokenizer.FINGERPRINT) == 10
    int(tokenizer.FINGERPRINT, 16)


def test_fingerprint_tokens_and_term_hashes_are_stable_across_processes():
    """Hash randomisation must not leak into anything the index stores."""
    code = (
        "import json; from memcli.index.keyword import tokenizer as t; "
        "toks = t.tokenize('handleWebSocketReconnect 向量数据库 메모리를 INV-20931-QX'); "
        "print(json.dumps([t.NAME, t.FINGERPRINT, toks, [t.term_hash(x) for x in toks]]))"
    )
    outs = []
    for seed in ("1", "2"):
        env = {**__import__("os").environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        outs.append(json.loads(proc.stdout))
    assert outs[0] == outs[1]
    name, fp, toks, hashes = outs[0]
    assert (name, fp) == (tokenizer.NAME, tokenizer.FINGERPRINT)
    assert toks == tokenize("handleWebSocketReconnect 向量数据库 메모리를 INV-20931-QX")
    assert hashes == [tokenizer.term_hash(x) for x in toks]
    assert all(0 <= h < 2**64 for h in hashes)
    assert len(set(hashes)) == len(set(toks))


def test_index_file_name_carries_tokenizer_name_and_fingerprint(ws, note, index):
    note(ws, "memory/2026-05-18/a.md", "some text\n")
    index(ws)
    names = [p.name for p in (ws / "mem_metadata" / "keyword_index").iterdir()]
    assert any(n.startswith(f"bm25_default_{tokenizer.NAME}_{tokenizer.FINGERPRINT}_v1.") for n in names), names


# End to end: a note in one language is found by a query in that language.


def _search_paths(run_mem, ws, query):
    code, out, err = run_mem("-w", ws, "search", query, "--json", "--no-links")
    assert code == 0, err
    return [r["path"] for r in json.loads(out)["results"]]


def test_cjk_notes_found_by_queries_in_their_language(ws, note, run_mem):
    note(ws, "memory/2026-05-18/zh.md", "我们决定使用向量数据库来存储长期记忆。\n", name="zh", description="中文笔记")
    note(ws, "memory/2026-05-18/ko.md", "에이전트는 메모리를 파일로 저장한다.\n", name="ko", description="한국어")
    note(
        ws,
        "memory/2026-05-18/ja.md",
        "エージェントはメモリを検索する。東京で会議があった。\n",
        name="ja",
        description="日本語",
    )
    note(
        ws,
        "memory/2026-05-18/en.md",
        "We decided to use a vector database for long-term memory.\n",
        name="en",
        description="English",
    )

    zh = _search_paths(run_mem, ws, "向量数据库")
    assert zh and zh[0] == "memory/2026-05-18/zh.md", zh
    assert "memory/2026-05-18/en.md" not in zh

    ko = _search_paths(run_mem, ws, "메모리")
    assert ko and ko[0] == "memory/2026-05-18/ko.md", ko

    ja = _search_paths(run_mem, ws, "会議")
    assert ja and ja[0] == "memory/2026-05-18/ja.md", ja
    ja2 = _search_paths(run_mem, ws, "メモリを検索")
    assert ja2 and ja2[0] == "memory/2026-05-18/ja.md", ja2


def _as_hashes(tokens) -> list[bytes]:
    return [tokenizer.term_hash(t).to_bytes(8, sys.byteorder) for t in tokens]


def test_hashed_counts_are_the_tokens_counted():
    """The index counts terms with tokenizer.hashed_counts (each distinct raw token hashed once);
    it must give exactly the multiset tokenize gives, in every script and identifier form."""
    from collections import Counter

    texts = [
        "Running notes were updated; the users' notes run on 7.4.119-beta",
        "handleWebSocketReconnect snake_case_name INV-20931-QX api.example.com/v2",
        "向量数据库 的 索引 메모리를 メモリ ア 한",
        "",
        "a the of",
        "x" * 300,
        "a b c 1 2 _ x-y I",
    ]
    for text in texts:
        assert tokenizer.hashed_counts(text) == Counter(_as_hashes(tokenize(text))), text


# The tokenizer as it was before the build's fast paths (the loose ASCII split, the one-scan
# CJK split, the Han class without HAN_STOP, the pairs run by run): the reference they must equal.
def _reference_raw(text: str) -> list[str]:
    import re

    t = tokenizer
    wide_re = re.compile(rf"[{t._CJK_CLASS}]+")
    wide = not text.isascii() and wide_re.search(text) is not None
    plain = wide_re.sub(" ", text) if wide else text
    low = plain.lower()
    out = re.findall(r"\w\w+", low)
    out += re.findall(r"\b\w++(?:[-.:/@+#]\w++)+", low)
    for tok in re.findall(r"\b\w*[a-z][A-Z]\w*", plain):
        out += [p.lower() for p in t._CAMEL_PART.findall(tok) if len(p) > 1]
    for tok in re.findall(r"\b\w*[^\W_]_[^\W_]\w*", low):
        out += [p for p in tok.split("_") if len(p) > 1]
    if wide:
        runs = wide_re.findall(text)
        joined = " ".join(runs)
        out += [c for c in t._HAN_CHAR.findall(joined) if c not in t.HAN_STOP]
        out += re.findall(r"(?=(\S\S))", joined)
        out += [r for r in runs if len(r) == 1 and not t._HAN_CHAR.match(r)]
    return out


def _reference_texts() -> list[str]:
    """Real notes (the repository's Markdown, chunked as the index chunks it) and a seeded
    scramble of the characters every rule turns on."""
    import random
    from pathlib import Path

    from memcli.index.notes.reader import read_note

    repo = Path(__file__).resolve().parents[1]
    texts = [
        c.text
        for p in sorted([*repo.glob("*.md"), *repo.glob("docs/**/*.md")])
        for c in read_note(p.name, p.read_bytes(), 400, 80).chunks
    ]
    texts += [
        "我们决定使用向量数据库来存储长期记忆。它的索引在 mem_metadata/ 下，INV-20931-QX 已修复。",
        "エージェントはメモリを検索する。東京で会議があった。handleWebSocketReconnect が呼ばれた",
        "에이전트는 메모리를 파일로 저장한다. retry_backoff_seconds=7.4.119-beta 한 ア",
        "Ünïcödé café naïve ΣΊΣΥΦΟΣ İstanbul straße ﬁle ＡＢＣ full-width 々〆〇 ãé-x x-é",
    ]
    rng = random.Random(18)
    alphabet = list("abcXYZ09_-.:/@+#'? \n\t。，、中文的了数据メモリア한메모ΣσςéÀİßﬁ\u3000\u30fc々〆\uff21\uff41\u0301")
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    return texts


def test_the_fast_paths_give_the_reference_tokens():
    """tokenize and hashed_counts equal the reference tokenizer on real and scrambled text:
    the same tokens in the same order, the same counts with their terms in first-seen order."""
    from collections import Counter

    for text in _reference_texts():
        want = [tokenizer._NORMAL[t] for t in _reference_raw(text)]
        want = [t for t in want if t]
        assert tokenize(text) == want, text
        got = tokenizer.hashed_counts(text)
        assert got == Counter(_as_hashes(want)), text
        assert list(got) == list(dict.fromkeys(_as_hashes(want))), text


def test_the_han_class_is_han_char_without_the_stop_characters():
    import re

    kept = re.compile(tokenizer._HAN_KEPT.pattern)
    for cp in [*range(0x3300, 0xA100), *range(0xF800, 0xFC00)]:
        ch = chr(cp)
        assert bool(kept.match(ch)) == (bool(tokenizer._HAN_CHAR.match(ch)) and ch not in tokenizer.HAN_STOP), hex(cp)


def test_the_fast_identifier_scans_find_what_the_regexes_define():
    """_snake_words, _compounds and _hints replace slow regex passes: the camelCase hint, the
    snake words and the compounds must agree with their regexes, the compound hint may only
    say yes more often."""
    from memcli.index.keyword import tokenizer as t

    samples = [
        "_a_b a__b ab_ _x x_ foo_bar_baz q_1 1_2 é_ü __init__ a_b_c_ x_y",
        "é_ü_ 中_文 __ a_ _b",
        "_",
        "a_",
        "_a",
        "a_b",
        "mem_session/dialog/qpsid_sha256_63d2.jsonl and users_table.",
        "handleWebSocket",
        "aB",
        "Ab",
        "ABc",
        "abC",
        "ünïcödeÄ",
        "plain prose. Next Sentence",
        "7.4.119-beta",
        "a-b",
        "a -b",
        "é-x",
        "x-é",
        "v2/api",
        "user@host",
        "c++",
        "a#b",
        "a. b",
        "aÀ",
        "éA",
        "a中A",
        "中-文",
        "?-?",
        "a?-b",
        "x:y",
        "-",
        ".a",
        "a.",
        "a-b-c.d e-f",
        "a-b.-c",
        "-a-b- --c--d-- x..y x.y. .x.y",
        "a-b c_d-e f@g.h:8080/i+j#k",
        "v1.2 1.2.3-rc1/x",
        "é-x a-é-b",
    ]
    for text in samples:
        low = text.lower()
        assert t._snake_words(low) == t._SNAKE_TOKEN.findall(low), text
        assert t._compounds(low) == t._COMPOUND.findall(low), text
        compound, camel = t._hints(text)
        assert camel == (t._CAMEL_HINT.search(text) is not None), text
        assert compound or t._COMPOUND_HINT.search(low) is None, text
        assert compound == (t._COMPOUND_HINT.search(low) is not None) or not text.isascii() or "?" in text, text


def test_hashed_counts_of_tokens_never_seen_before(monkeypatch):
    """hashed_counts() learns new tokens' forms on the way (stopwords, stems, repeats among
    them, one-letter words), and starts over past KEEP_HASHED tokens."""
    from collections import Counter

    text = "the zebras zebras ran, zebras running; the THE a I x 7 quokka quokka_x 7.4.1 7.4.1 中文中文"
    want = Counter(_as_hashes(tokenize(text)))
    monkeypatch.setattr(tokenizer, "_HASHED", tokenizer._Hashed())
    got = tokenizer.hashed_counts(text)
    assert got == want and got[_as_hashes(["zebra"])[0]] == 3 and _as_hashes(["the"])[0] not in got
    assert tokenizer.hashed_counts(text) == got  # (every token known now)
    monkeypatch.setattr(tokenizer, "KEEP_HASHED", 3)
    assert tokenizer.hashed_counts("brand new words here") == Counter(_as_hashes(tokenize("brand new words here")))
    assert len(tokenizer._HASHED) == 4
