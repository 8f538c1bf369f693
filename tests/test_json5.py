"""memcli.config.json5: the JSON5 reader used for OpenClaw's openclaw.json.

Every feature of the spec (https://spec.json5.org) the reader claims, the spec's own
examples, where errors point, the nesting guard, linear time on large input, and
agreement with json.loads on ordinary JSON.
"""

from __future__ import annotations

import json
import math
import random
import time

import pytest

from memcli.config.json5 import MAX_DEPTH, JSON5Error, loads

# --- the spec's and json5.org's examples -------------------------------------------


def test_json5_org_kitchen_sink():
    text = """{
  // comments
  unquoted: 'and you can quote me on that',
  singleQuotes: 'I can use "double quotes" here',
  lineBreaks: "Look, Mom! \\
No \\\\n's!",
  hexadecimal: 0xdecaf,
  leadingDecimalPoint: .8675309, andTrailing: 8675309.,
  positiveSign: +1,
  trailingComma: 'in objects', andIn: ['arrays',],
  "backwardsCompatible": "with JSON",
}"""
    assert loads(text) == {
        "unquoted": "and you can quote me on that",
        "singleQuotes": 'I can use "double quotes" here',
        "lineBreaks": "Look, Mom! No \\n's!",
        "hexadecimal": 0xDECAF,
        "leadingDecimalPoint": 0.8675309,
        "andTrailing": 8675309.0,
        "positiveSign": 1,
        "trailingComma": "in objects",
        "andIn": ["arrays"],
        "backwardsCompatible": "with JSON",
    }


def test_spec_objects_example():
    text = """{
    image: {
        width: 800,
        height: 600,
        'title': 'View from 15th Floor',
        thumbnail: {
            url: 'http://www.example.com/image/481989943',
            height: 125,
            width: 100,
        },
        animated: false,
        ids: [116, 943, 234, 38793],
    },
}"""
    assert loads(text) == {
        "image": {
            "width": 800,
            "height": 600,
            "title": "View from 15th Floor",
            "thumbnail": {"url": "http://www.example.com/image/481989943", "height": 125, "width": 100},
            "animated": False,
            "ids": [116, 943, 234, 38793],
        }
    }


def test_spec_arrays_example():
    text = """[
    {
        name: 'Joe',
        age: 27
    },
    {
        name: 'Jane',
        age: 32
    },
]"""
    assert loads(text) == [{"name": "Joe", "age": 27}, {"name": "Jane", "age": 32}]


def test_spec_strings_examples():
    assert (
        loads("'Lorem ipsum dolor sit amet, \\\nconsectetur adipiscing elit.'")
        == "Lorem ipsum dolor sit amet, consectetur adipiscing elit."
    )
    assert loads(r"'\A\C\/\D\C'") == "AC/DC"  # spec 5.1: non-escape characters stand for themselves


def test_spec_numbers_examples():
    assert loads("{integer: 123, withFractionPart: 123.456, onlyFractionPart: .456, withExponent: 123e-456}") == {
        "integer": 123,
        "withFractionPart": 123.456,
        "onlyFractionPart": 0.456,
        "withExponent": 0.0,
    }
    value = loads("{positiveInfinity: Infinity, negativeInfinity: -Infinity, notANumber: NaN}")
    assert value["positiveInfinity"] == math.inf and value["negativeInfinity"] == -math.inf
    assert math.isnan(value["notANumber"])
    assert loads("{positiveHex: 0xdecaf, negativeHex: -0xC0FFEE}") == {"positiveHex": 0xDECAF, "negativeHex": -0xC0FFEE}


def test_spec_comments_example():
    assert loads("// This is a single line comment.\n\n/* This is a multi-\n   line comment. */\n42") == 42


def test_openclaw_style_config():
    text = """// ~/.openclaw/openclaw.json
{
  agents: {
    defaults: {
      workspace: "~/.openclaw/workspace",
      memorySearch: {
        provider: "openai",            // or "gemini", "local"
        remote: { apiKey: "${OPENAI_API_KEY}", headers: { 'X-Org': 'acme', }, },
        extraPaths: ["../team-docs", "/srv/shared-notes",],
        query: { maxResults: 6, minScore: .35, hybrid: { vectorWeight: 0.7, textWeight: 0.3 } },
      },
    },
    list: [ { id: "main", default: true }, { id: "work", workspace: '~/work-ws' }, ],
  },
  broadcast: { "$include": "./clients.json5" },
}
"""
    cfg = loads(text)
    search = cfg["agents"]["defaults"]["memorySearch"]
    assert search["remote"] == {"apiKey": "${OPENAI_API_KEY}", "headers": {"X-Org": "acme"}}  # left for the caller
    assert search["extraPaths"] == ["../team-docs", "/srv/shared-notes"]
    assert search["query"]["minScore"] == 0.35
    assert cfg["agents"]["list"][1] == {"id": "work", "workspace": "~/work-ws"}
    assert cfg["broadcast"] == {"$include": "./clients.json5"}


# --- features one by one ---------------------------------------------------------


def test_comments_anywhere():
    text = "/*a*/{/*b*/k/*c*/:/*d*/[/*e*/1/*f*/,/*g*/2/*h*/]/*i*/}/*j*/ // end, no newline"
    assert loads(text) == {"k": [1, 2]}
    assert loads("[1, // one\r\n 2, // two\r 3\u2028// three\u2029]") == [1, 2, 3]
    assert loads("/* a // inside */ 7") == 7
    assert loads("/** stars ***/ 8") == 8
    assert loads("'// not a comment /* nor this */'") == "// not a comment /* nor this */"


def test_trailing_commas():
    assert loads("[1, 2, ]") == [1, 2]
    assert loads("{a: 1, b: [2, {c: 3,},],}") == {"a": 1, "b": [2, {"c": 3}]}
    assert loads("[[],{},]") == [[], {}]


@pytest.mark.parametrize("text", ["[,]", "{,}", "[1,,]", "[1,,2]", "{a: 1,,}", "[1, 2,, ]"])
def test_only_one_trailing_comma(text):
    with pytest.raises(JSON5Error):
        loads(text)


def test_identifier_keys():
    value = loads(
        "{$: 1, _: 2, a1: 3, $_x9: 4, ümlåût: 5, ключ: 6, 名前: 7, Ⅻ: 8,"
        " a\u0301b: 9, x\u200cy: 10, snake_case: 11, \\u0061bc: 12, d\\u00e9f: 13}"
    )
    assert value == {
        "$": 1,
        "_": 2,
        "a1": 3,
        "$_x9": 4,
        "ümlåût": 5,
        "ключ": 6,
        "名前": 7,
        "Ⅻ": 8,
        "a\u0301b": 9,
        "x\u200cy": 10,
        "snake_case": 11,
        "abc": 12,
        "déf": 13,
    }


def test_reserved_words_are_plain_keys():
    assert loads("{null: 1, true: 2, false: 3, Infinity: 4, NaN: 5, if: 6}") == {
        "null": 1,
        "true": 2,
        "false": 3,
        "Infinity": 4,
        "NaN": 5,
        "if": 6,
    }


@pytest.mark.parametrize(
    "text",
    [
        "{1a: 1}",
        "{-a: 1}",
        "{a-b: 1}",
        "{\u0301a: 1}",
        "{\\u0031: 1}",
        "{a\\u002db: 1}",
        "{: 1}",
        "{a b: 1}",
        "{'a' 'b': 1}",
    ],
)
def test_bad_keys(text):
    with pytest.raises(JSON5Error):
        loads(text)


def test_quotes():
    assert loads("""'I can use "double quotes" here'""") == 'I can use "double quotes" here'
    assert loads('''"and 'single' ones here"''') == "and 'single' ones here"
    assert loads(r"'it\'s'") == "it's"
    assert loads(r'"say \"hi\""') == 'say "hi"'
    assert loads("''") == "" and loads('""') == ""


def test_escapes():
    assert loads(r"'\b\f\n\r\t\v\0'") == "\b\f\n\r\t\v\0"
    assert loads(r"'\x41\x7e\xE9'") == "A~é"
    assert loads(r"'\u0041\u00e9\u20AC'") == "Aé€"
    assert loads(r"'\ud83d\ude00'") == "😀"  # a surrogate pair joins
    assert loads(r"'\ud83d'") == "\ud83d" and loads(r"'\ude00x'") == "\ude00x"  # lone ones are kept
    assert loads(r"'\ud83d\u0041'") == "\ud83dA"
    assert loads(r"'\\ \/ \' \"'") == "\\ / ' \""
    assert loads(r"'\a\q\z\ü'") == "aqzü"  # any other character stands for itself
    assert loads(r"'\0x'") == "\0x"


def test_line_continuations():
    for brk in ("\n", "\r\n", "\r", "\u2028", "\u2029"):
        assert loads(f"'one \\{brk}two'") == "one two", repr(brk)
    assert loads("'a\\\n\\\nb'") == "ab"
    assert loads("'\u2028\u2029'") == "\u2028\u2029"  # JSON5 allows these two raw in strings
    assert loads("'tab\there'") == "tab\there"


@pytest.mark.parametrize(
    "text",
    [
        r"'\1'",
        r"'\9'",
        r"'\08'",
        r"'\x4'",
        r"'\xg0'",
        r"'\u12'",
        r"'\u12g4'",
        "'a\nb'",
        "'a\rb'",
        "'abc",
        "'abc\\",
        "\"abc'",
    ],
)
def test_bad_strings(text):
    with pytest.raises(JSON5Error):
        loads(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", 0),
        ("-0", 0),
        ("+0", 0),
        ("42", 42),
        ("-42", -42),
        ("+42", 42),
        ("0x0", 0),
        ("0xFF", 255),
        ("0Xff", 255),
        ("-0x10", -16),
        ("+0x10", 16),
        (".5", 0.5),
        ("-.5", -0.5),
        ("+.5", 0.5),
        ("5.", 5.0),
        ("-5.", -5.0),
        ("0.", 0.0),
        ("1e3", 1000.0),
        ("1E+3", 1000.0),
        ("1e-3", 0.001),
        ("2.5e2", 250.0),
        (".5e1", 5.0),
        ("5.e1", 50.0),
        ("1e400", math.inf),
        ("Infinity", math.inf),
        ("+Infinity", math.inf),
        ("-Infinity", -math.inf),
    ],
)
def test_numbers(text, expected):
    value = loads(text)
    assert value == expected and type(value) is type(expected)


def test_nan_and_big_hex():
    assert all(math.isnan(loads(t)) for t in ("NaN", "+NaN", "-NaN"))
    assert loads("0x" + "f" * 40) == int("f" * 40, 16)


@pytest.mark.parametrize(
    "text",
    [
        "01",
        "-01",
        "00",
        "0x",
        "0xg",
        "1e",
        "1e+",
        "1.2.3",
        "5..",
        ".",
        "+",
        "-",
        "1_000",
        "1a",
        "0b1",
        "0o7",
        "Infinit",
        "Infinityx",
        "NaNa",
        "++1",
        "- 1",
        "1" * 5000,
    ],
)
def test_bad_numbers(text):
    with pytest.raises(JSON5Error, match="number"):
        loads(text)


def test_literals():
    assert loads("[true, false, null]") == [True, False, None]
    for text in ("tru", "nul", "True", "NULL", "truex", "[nullx]", "undefined"):
        with pytest.raises(JSON5Error):
            loads(text)


def test_duplicate_keys_last_wins():
    value = loads("{a: 1, b: 2, 'a': 3, \"a\": {x: 1}}")
    assert value == {"a": {"x": 1}, "b": 2}
    assert list(value) == ["a", "b"]  # the key keeps the place it first took, as in JavaScript


def test_white_space():
    text = "\ufeff\u00a0\t\v\f\r\n \u2028\u2029\u3000\u2003{\u1680a\u202f:\u205f1\u3000}\ufeff"
    assert loads(text) == {"a": 1}


def test_rejects_bytes():
    with pytest.raises(TypeError):
        loads(b"{}")  # type: ignore[arg-type]


# --- errors and where they point ---------------------------------------------------


@pytest.mark.parametrize(
    "text, line, col, what",
    [
        ("", 1, 1, "unexpected end of input"),
        ("   ", 1, 4, "unexpected end of input"),
        ("{a: 1,\n  b: }", 2, 6, "unexpected character '}'"),
        ('{\n  "a": 01\n}', 2, 8, "invalid number"),
        ('{"a" 1}', 1, 6, "expected ':' but found character '1'"),
        ("[1 2]", 1, 4, "expected ',' or ']' but found character '2'"),
        ("{a: 1 b: 2}", 1, 7, "expected ',' or '}' but found character 'b'"),
        ("{1: 2}", 1, 2, "expected a member name but found character '1'"),
        ("[1, 2", 1, 6, "expected ',' or ']' but found end of input"),
        ("{a: 'x',\r\n b: 'y\r\n'}", 2, 7, "line break inside a string"),
        ("[1]\n\n  x", 3, 3, "unexpected character 'x' after the value"),
        ("[1,\r2,\r\n3,\u2028@]", 4, 1, "unexpected character '@'"),
        ("{\n  k: 'abc", 2, 6, "unterminated string"),
        ("[1, /* never closed", 1, 5, "unterminated /* comment"),
        ("'\\1'", 1, 2, "invalid escape \\1"),
        ("'ab\\x4'", 1, 4, "\\x needs 2 hex digits"),
        ("'\\u12'", 1, 2, "\\u needs 4 hex digits"),
        ("{a\\u0020b: 1}", 1, 3, "escaped character ' ' cannot be in a member name"),
        ("[/]", 1, 2, "unexpected character '/'"),
    ],
)
def test_error_positions(text, line, col, what):
    with pytest.raises(JSON5Error) as info:
        loads(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.lineno, err.colno) == (line, col)
    assert str(err) == f"line {line} col {col}: {err.msg}"
    assert what in err.msg


# --- nesting guard and linear time ---------------------------------------------------


def test_nesting_up_to_the_limit_is_fine():
    assert MAX_DEPTH == 1000
    value = loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == []
    assert loads("{a:" * 500 + "[" * 500 + "]" * 500 + "}" * 500)["a"]["a"]


@pytest.mark.parametrize(
    "text", ["[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[" * 200_000, "{a:" * 200_000, "[{a:" * 100_000]
)
def test_too_deep_is_a_clear_error_not_a_recursion_error(text):
    with pytest.raises(JSON5Error, match="nested too deeply") as info:
        loads(text)
    pos = info.value.pos  # it points at the first bracket past the limit
    assert text[pos] in "[{" and text[:pos].count("[") + text[:pos].count("{") == MAX_DEPTH
    assert (info.value.lineno, info.value.colno) == (1, pos + 1)


def test_max_depth_is_adjustable():
    assert loads("[[[]]]", max_depth=3) == [[[]]]
    with pytest.raises(JSON5Error, match="more than 2 levels"):
        loads("[[[]]]", max_depth=2)


def _seconds(text: str) -> float:
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        loads(text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(
    "unit",
    [
        "{key_%d: 'value \\u00e9 \\x41', n: [1, 2.5, 0xff, true, null], /* c */ },\n",  # mixed documents
        "'%d \\n\\t\\\\ \\'',",  # escape-heavy strings
        "// a comment line %d\n/* and a block */ %d,",  # comment-heavy
    ],
)
def test_time_is_linear_in_input_size(unit):
    def doc(n: int) -> str:
        return "[" + "".join(unit.replace("%d", str(i)) for i in range(n)) + "]"

    small, large = _seconds(doc(2_000)), _seconds(doc(16_000))
    assert large < 30 * max(small, 1e-4), (small, large)  # 8x the input; a quadratic parser would take 64x
    assert large < 10.0


def test_long_single_tokens_are_fast():
    start = time.perf_counter()
    assert len(loads("'" + "x" * 3_000_000 + "'")) == 3_000_000
    assert loads("/*" + "*" * 1_000_000 + "*/ 1") == 1
    assert len(loads("{" + "k" * 1_000_000 + ": 1}")) == 1
    with pytest.raises(JSON5Error, match="unterminated"):
        loads("[1, /*" + " /*" * 300_000)
    with pytest.raises(JSON5Error, match="unterminated string"):
        loads("'" + "\\n" * 300_000)
    assert time.perf_counter() - start < 20.0


# --- agreement with json.loads on ordinary JSON --------------------------------------


def _random_json(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 6 else 5)
    if kind == 0:
        return rng.choice([True, False, None])
    if kind == 1:
        return rng.randint(-(10**20), 10**20)
    if kind == 2:
        return rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-30, 30)
    if kind in (3, 4):
        alphabet = "abc XYZ 0189 \"'\\/\b\f\n\r\t\x00\x1f\x7f é€ 😀 \u2028\u2029 ключ"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if kind in (5, 6):
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(5))]
    keys = ("", "a", "b b", "é", "\n", "\\", "😀", "key_1", "$x")
    return {rng.choice(keys) + str(rng.randrange(9)): _random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


@pytest.mark.parametrize("seed", range(40))
def test_round_trip_matches_json_loads(seed):
    rng = random.Random(seed)
    doc = _random_json(rng, 0)
    for text in (
        json.dumps(doc),
        json.dumps(doc, ensure_ascii=False),
        json.dumps(doc, indent=2),
        json.dumps(doc, separators=(",", ":"), sort_keys=True),
    ):
        expected = json.loads(text)
        got = loads(text)
        assert got == expected
        assert json.dumps(got) == json.dumps(expected)  # same types too: int stays int, float float


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.0, -3e-2, 1E5, 0.1, -0.0, 12345678901234567890], "b": {"c": null, "d": [true, false]}}',
        r'"\u00e9\ud83d\ude00\/\b\f\n\r\t\\\" \u0000 \ud800"',
        '[[], {}, [[]], {"": ""}, "", 0, -0, 1.5e300, 5e-324]',
        ' \t\n\r {"spaced" \n : \r\n "out" } \n',
        '{"dup": 1, "dup": 2}',
    ],
)
def test_ordinary_json_matches_json_loads(text):
    got, expected = loads(text), json.loads(text)
    assert got == expected and json.dumps(got) == json.dumps(expected)
