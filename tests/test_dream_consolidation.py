"""Offline consolidation that is right: node format, subject titles, actions, decoys, through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.extraction.conversation.chatter import chit_chat, is_request
from memcli.extraction.dream import change as dream_change
from memcli.extraction.dream import group as dream_group
from memcli.extraction.dream import match as dream_match
from memcli.extraction.dream import node as dream_node
from memcli.extraction.dream import write as dream_write
from memcli.extraction.dream.evidence import Evidence
from memcli.extraction.dream.schema import Fact, Unit
from memcli.extraction.dream.subject import subject_title
from memcli.extraction.dream.voice import statement

D1, D2, D3 = "2026-09-01", "2026-09-14", "2026-09-15"


# ------------------------------------------------------------------ voice
@pytest.mark.parametrize(
    "said,expected",
    [
        ("I'm changing my goal to 1:52 then.", "The user is changing their goal to 1:52 then."),
        ("I still prefer oolong tea over coffee.", "The user still prefers oolong tea over coffee."),
        ("I no longer like oolong tea.", "The user no longer likes oolong tea."),
        ("Sanne de Vries is my manager.", "Sanne de Vries is the user's manager."),
        ("Wei and I live in a flat in Rotterdam.", "Wei and the user live in a flat in Rotterdam."),
        ("Right, wal_level needs a restart.", "wal_level needs a restart."),
        ("I do my long runs on Sundays.", "The user does their long runs on Sundays."),
        # the same conversion as offline ingest (extraction/conversation/person.py)
        ("I need a new laptop.", "The user needs a new laptop."),
        ("I'd decided already.", "The user had decided already."),
        ("We moved the pipelines to Dagster.", "The user's team moved the pipelines to Dagster."),
        # a "we" of no known company is the user, not the household: the taiko group rehearses
        ("We rehearse taiko on Wednesdays.", "The user rehearses taiko on Wednesdays."),
        ("We got Tofu a slow feeder for the dog.", "The user's household got Tofu a slow feeder for the dog."),
        ("I/O is the bottleneck on my box.", "I/O is the bottleneck on the user's box."),
        # a filler word that is also an adjective is one only when punctuation closes it
        ("Perfect, the build passes now.", "The build passes now."),
        ("Good coffee matters to me.", "Good coffee matters to the user."),
        ("Morning runs are my favourite.", "Morning runs are the user's favourite."),
    ],
)
def test_a_users_line_becomes_a_self_contained_third_person_statement(said, expected):
    assert statement(said, "User") == expected


def test_other_speakers_keep_their_name_and_third_person_text_stays():
    assert statement("I love painting.", "Caroline") == "Caroline: I love painting."
    assert statement("The user's half-marathon goal is now 1:52.") == "The user's half-marathon goal is now 1:52."


@pytest.mark.parametrize(
    "text,request_,chat",
    [
        ("Write me a limerick about Kafka consumer groups", True, False),
        ("Can you rephrase this paragraph for the release notes.", True, False),
        ("Translate the alert text into German please", True, False),
        ("Tell me a joke about Postgres", True, False),
        ("Perfect, that's what I needed.", False, True),
        ("Thanks!", False, True),
        ("It's raining all day here, typical weather.", False, True),
        ("Make sure the canary is healthy before promoting.", False, False),
        ("The deploy checklist has seven steps.", False, False),
        ("Can you check the backup logs", True, False),
        ("help me plan the offsite", True, False),
        ("Describe the rollout plan in two lines", True, False),
        ("For the team chat, write a haiku about deploys", True, False),
        ("another one", True, False),
        # a decision, a standing preference and a story about the user are no requests
        ("Let's use Postgres for the queue", False, False),
        ("Please keep answers short and in British English", False, False),
        ("I always tell my kids a story at bedtime", False, False),
        ("one more thing to run before the release", False, False),
        ("name ideas for our trivia team", True, False),
        ("anything else like it", True, False),
        ("I have some ideas for the release", False, False),
    ],
)
def test_requests_and_chit_chat_are_recognised(text, request_, chat):
    assert (is_request(text), chit_chat(text)) == (request_, chat)


# ------------------------------------------------------------------ subject titles
@pytest.mark.parametrize(
    "texts,title",
    [
        (
            [
                "The user is training for the Leiden half marathon on May 17.",
                "The user's goal for the Leiden half marathon is 1:55.",
            ],
            "Leiden half marathon",
        ),
        (
            [
                "The pgbouncer pool of the events database is 20 connections.",
                "Metabase has its own pgbouncer pool of 5 connections.",
            ],
            "Pgbouncer pool",
        ),
        (["The user writes code in VS Code on a Dell XPS 13.", "The user switched from VS Code to Neovim."], "VS Code"),
        # what someone has is a noun ("the user's rota"), and a plain verb after a plural subject is none
        (
            [
                "The user's rota starts at 7:00 and the user is off at 3.",
                "From next week the rota starts at 6:30, so the trams go out earlier on the new line.",
            ],
            "Rota",
        ),
    ],
)
def test_a_node_is_named_for_the_noun_phrase_its_statements_share(texts, title):
    assert subject_title(texts) == title


def test_a_title_is_no_statements_first_words_and_no_bare_adjective():
    title = subject_title(["The user is changing their goal to 1:52 then."])
    assert not title.lower().startswith(("changing", "the user")) and title == "Goal"
    assert subject_title(["The small garden gets morning sun."]) == "Small garden"
    # a plural after a number or a code is a noun, not the verb of a subject
    assert subject_title(["The 10B parents' evening is on Thursday 15 October at 18:30."]) == "Parents"


def test_chat_words_glosses_and_superlatives_title_nothing():
    assert subject_title(["yea thats the hardest"]) == ""
    assert subject_title(["Nobody in a kitchen uses cups."]) == "Kitchen"
    assert subject_title(["The user always takes the aisle, im 1m91."]) == "Aisle"
    assert subject_title(["Costing for every dish by jan 29."]) == "Costing"
    assert subject_title(["oh wow"]) == ""
    assert subject_title(["Shaping is a nightmare tho, it just spreads."]) == "Shaping"
    assert subject_title(["The user said: 「我妈的航班改了」 (keywords: flight, July 12)"]) == "Flight"


@pytest.mark.parametrize(
    "texts,title",
    [
        (["User: クラスが変わりました。土曜日じゃなくて日曜日の10時半になりました。"], "クラス"),
        (["User: 店の改装で、研修は4月12日から25日までになりました。", "User: 研修はまだ4月12日からです。"], "研修"),
        (["林先生的公司每个星期二送货，最低订货是三百块。"], "林先生"),
        (["사료를 아카나로 바꿨어요"], "사료"),
        (["User: 7月6日にサンパウロを出発して、家族4人で日本に行きます。"], "サンパウロ"),  # a date is no topic
    ],
)
def test_a_cjk_subject_is_titled_by_its_topic_not_by_the_whole_sentence(texts, title):
    assert subject_title(texts) == title


# ------------------------------------------------------------------ actions
OLD_LOCK = "On a cache miss, reload a missing key under a per-key lock (`SET NX PX`)."


@pytest.mark.parametrize(
    "new,said,action",
    [
        ("`getOrLoad()` now takes a per-key lock (`SET NX PX 5000`).", OLD_LOCK, "REFINE"),  # agrees, adds detail
        ("The user's half-marathon goal is now 1:52.", "The user's goal for the half marathon is 1:55.", "CORRECT"),
        (
            "The user's goal for the half marathon is still 1:55.",
            "The user's goal for the half marathon is 1:55.",
            "CORROBORATE",
        ),
        (
            "The billing pool was increased from 25 to 50 connections.",
            "The billing pool has 25 connections.",
            "CORRECT",
        ),
        (
            "The user drinks green tea in the afternoon instead of coffee.",
            "The user no longer likes oolong tea and now prefers green tea over coffee.",
            "REFINE",
        ),
        (
            "The user's guitar is a Yamaha FG830 acoustic.",
            "The user is learning fingerstyle arrangements from Justin Sandercoe's guitar course.",
            "REFINE",
        ),
        ("Long runs are on Saturdays from now on.", "The user does their long runs on Sundays.", "CORRECT"),
        (
            "The user's long runs moved to Saturdays because Wei works Sunday shifts now.",
            "The user does their long runs on Sundays.",
            "CORRECT",
        ),  # the value it moves to is new
        ("Koen Bakker is the user's new manager since Sanne left.", "Sanne de Vries is the user's manager.", "CORRECT"),
        (
            "After a 51:40 10K the user is changing their Leiden goal to 1:52.",
            "The user's goal for the Leiden half marathon is 1:55.",
            "CORRECT",
        ),  # "after a 10K" is no side clause
        # a change told by "now <verb>", "moves to", "X it is"
        (
            "12 hours left the middle bland, so the karaage now marinates for 24 hours.",
            "The karaage thighs marinate in shio koji for 12 hours.",
            "CORRECT",
        ),
        ("Staff meal moves to 16:30 during the launch.", "Staff meal is at 16:00 every day.", "CORRECT"),
        ("The karaage came out mushy, 18 hours it is.", "The karaage marinates for 24 hours.", "CORRECT"),
        # "bumping ... to", "went up to", "it's now"; numbers written in words are values too
        (
            "I'm bumping the reading goal to 40 books this year.",
            "The user's reading goal is 30 books this year.",
            "CORRECT",
        ),
        (
            "The dentist called, it's now March 3 at 9:00.",
            "The dentist appointment is on February 24 at 10:30.",
            "CORRECT",
        ),
        ("Cut the scales warm-up to five minutes.", "Ten minutes of scales as a warm-up.", "CORRECT"),
        (
            "Two new people joined, so the user hosts every 4th dinner now instead of every 3rd.",
            "Three of us rotate, so the user hosts every third dinner.",
            "CORRECT",
        ),
        ("Ten minutes of scales as a warm-up, as always.", "Ten minutes of scales as a warm-up.", "CORROBORATE"),
        ("The user also stretches for five minutes after the scales.", "Ten minutes of scales as a warm-up.", "REFINE"),
        # a thing given up by its object, or one that ended by its subject, replaces what held it
        (
            "Dropped the Spanish class, the evenings were too long.",
            "The user takes a Spanish class at the Instituto Cervantes on Mondays at 19:00.",
            "CORRECT",
        ),
        (
            "We finally sold the Passat and got a 2021 Skoda Octavia.",
            "The family car is a 2012 VW Passat estate.",
            "CORRECT",
        ),
        (
            "The Thursday group at Ostbad closed, so Mila swims on Saturdays at 9:00 at the same pool.",
            "Mila has swimming lessons on Thursdays at 17:30 at the Ostbad pool.",
            "CORRECT",
        ),
        # Chinese, Japanese and Korean cues (改到, 変わ, 바꿨) and weekdays (星期五, 水曜日, 토요일)
        ("王老师说瑜伽课从下个月开始改到星期五，星期三没有了。", "瑜伽课每个星期三晚上七点，在社区中心。", "CORRECT"),
        ("ジムは水曜日に変わりました。", "ジムは月曜日の夜に行きます。", "CORRECT"),
        ("수영 강습을 토요일 아침으로 바꿨어요.", "수영 강습은 화요일 저녁이에요.", "CORRECT"),
        # a thing stopped, given up ("done with"), a switch told as advice, a change from next week,
        # "make it ...", 〜になりました, a value set aside ("instead of") that the old statement held
        (
            "The beta blocker was stopped after the dizzy spells.",
            "The user takes a beta blocker, 5 mg a day.",
            "CORRECT",
        ),
        (
            "Done with the ferry till spring, the user drives the long way.",
            "The user takes the ferry to Vashon.",
            "CORRECT",
        ),
        ("The trainer says switch Juno to a grain-free kibble.", "Juno eats Orijen puppy kibble.", "CORRECT"),
        (
            "The book club meets on Sundays from next month.",
            "The book club meets on Thursdays at Café Lune.",
            "CORRECT",
        ),
        ("Make it 7 days of retention for the staging logs.", "Staging logs keep 30 days of retention.", "CORRECT"),
        ("ピアノのレッスンは金曜日になりました。", "ピアノのレッスンは火曜日です。", "CORRECT"),
        (
            "The thesis goes to the Utrecht committee instead of Leiden, due in May.",
            "The user submits the thesis to the Leiden committee.",
            "CORRECT",
        ),
        # the clause telling the change names another day; a count "down to"; someone new in a role
        # named after a comma; a clause without its subject ("Postponed again, ...")
        (
            "The hall got booked on Tuesdays, so the choir sings on Fridays at 19:00 now.",
            "The choir sings on Tuesdays at 19:00 in the church hall.",
            "CORRECT",
        ),
        ("A fox took three ducks, the user is down to 5.", "The user keeps 8 ducks by the pond.", "CORRECT"),
        (
            "Marta is retiring, and the new head nurse, Oliver Grant, starts on June 3.",
            "The user's head nurse is Marta Silva.",
            "CORRECT",
        ),
        (
            "Postponed again, the audit means the team now flies on March 9.",
            "The team flies to Shenzhen for the audit on March 2.",
            "CORRECT",
        ),
        (
            "The choir sings on Tuesdays at 19:00 now, as always.",
            "The choir sings on Tuesdays at 19:00.",
            "CORROBORATE",
        ),
        ("The new flat in Graz has a balcony for Nala.", "Nala sleeps on the sofa all day.", "REFINE"),
        # a change of one kind of value (a weekday, a time) replaces no other kind (a date, a place)
        (
            "The pool is shut on Mondays for repairs, so swim club is Wednesdays 6:15 from next week.",
            "The swim club gala is in Hamilton on 12 March.",
            "REFINE",
        ),
        (
            "The user cancelled Gousto over the plastic and cooks on Sundays instead.",
            "We get Gousto, 3 meals a week.",
            "CORRECT",
        ),
        (
            "The user dropped npm: every package is pnpm now.",
            "The user switched to npm workspaces last year.",
            "CORRECT",
        ),
        # ... but what a statement merely prefers to something else is no value it gives up
        (
            "The user drinks rooibos in the evening instead of coffee.",
            "The user no longer drinks coffee and now prefers rooibos.",
            "REFINE",
        ),
        # a body part replaced on a day is no value replaced
        (
            "The user's mother gets her knee replaced on Friday March 3.",
            "The user's mother plays bridge on Tuesdays.",
            "REFINE",
        ),
        (
            "The user dropped by the Ostbad pool to pick up a lost towel.",
            "Mila has swimming lessons on Thursdays at 17:30 at the Ostbad pool.",
            "REFINE",
        ),
    ],
)
def test_only_a_changed_value_is_a_correction(new, said, action):
    verdict = dream_match.judge(Fact(new, "memory/2026-09-14/b.md"), [said], [said])
    assert verdict.action == action, verdict
    assert verdict.reason


def test_a_changed_number_replaces_the_line_measuring_the_same_quantity():
    """ "the alert now fires below 15%" changes the line that sets 20%, not the one sharing more words."""
    threshold = "The threshold is now 20%, the vendor's warning line, because 25% paged every night."
    report = "The alert report also lists each disk's growth over four weeks; sdb grew 3 GB last month."
    new = Fact("Ops asked for fewer pages, so the alert report now fires below 15%.", "memory/2026-09-14/b.md")
    verdict = dream_match.judge(new, [threshold, report], [threshold, report])
    assert (verdict.action, verdict.statement) == ("CORRECT", threshold)


def test_facts_sharing_one_incidental_word_stay_apart():
    swim = Fact(
        "The user swims 1500 m in the 25 m pool at Sportcentrum Kralingen after an easy run.",
        "memory/2026-03-09/swim.md",
    )
    db = Fact(
        "The pgbouncer pool of the events database is 20 connections in transaction mode.", "memory/2026-03-09/db.md"
    )
    placed = dream_group.place([swim, db], [], Evidence(None, frozenset(), None, [swim.line(), db.line()])).placed
    assert [[f.text for f in p.unit.facts] for p in placed] == [[swim.text], [db.text]]


def test_the_same_cjk_day_again_is_no_correction():
    said = "瑜伽课每个星期三晚上七点，在社区中心。"
    again = Fact("瑜伽课还是每个星期三晚上七点。", "memory/2026-09-14/c.md")
    assert dream_match.judge(again, [said], [said]).action != "CORRECT"


def test_a_change_to_a_number_of_the_same_unit_joins_the_statement_it_changes():
    """One shared word is too little to group on, unless the fact changes a quantity the other
    measures in the same unit ("went up to 26 degrees" after "at 24 degrees"); a statement with the
    same numbers in other units stays apart."""
    old = Fact("The user keeps the aquarium water at 24 degrees.", "memory/2026-03-01/a.md")
    new = Fact("The user went up to 26 degrees for the new guppies.", "memory/2026-03-09/b.md")
    other = Fact("The user bikes 26 km to work at 24 km/h.", "memory/2026-03-09/c.md")
    ev = Evidence(None, frozenset(), None, [f.line() for f in (old, new, other)])
    placed = dream_group.place([old, new, other], [], ev).placed
    assert [[f.text for f in p.unit.facts] for p in placed] == [[old.text, new.text], [other.text]]
    assert dream_change.measures("at 70% hydration, 20 connections") == {("70", "%"), ("20", "connection")}


# ------------------------------------------------------------------ node format
def test_a_node_states_the_newest_statement_first():
    """New statements go above the older ones (a note's own in their order), so a later value the
    rules could not tell apart from a refinement still reads first; numbered steps keep their order."""

    def date_of(path: str) -> str:
        return path.split("/")[1]

    old = Fact("The user rides the Brompton to the office.", f"memory/{D1}/a.md")
    new = [
        Fact("The user takes the S-Bahn since the knee injury.", f"memory/{D2}/b.md"),
        Fact("The S-Bahn pass costs 86 euros a month.", f"memory/{D2}/b.md"),
    ]
    unit = Unit("commute", "wiki", "", [old.path], [old])
    made = dream_write.create(unit, dream_match.decide(unit, None), "digest/wiki/commute.md", date_of, [])
    later = Unit("commute", "wiki", "", [new[0].path], new)
    node = dream_write.update(made, later, dream_match.decide(later, made), date_of, [])
    assert node is not None
    assert [s.rstrip(".") for s in dream_node.current(node.body)] == [f.line().rstrip(".") for f in (*new, old)]
    steps = [
        Fact(t, f"memory/{d}/c.md", section="Steps", numbered=True) for d, t in ((D1, "Unplug it."), (D2, "Wait."))
    ]
    unit = Unit("reset", "procedure", "", [steps[0].path], steps[:1])
    made = dream_write.create(unit, dream_match.decide(unit, None), "digest/procedure/reset.md", date_of, [])
    more = Unit("reset", "procedure", "", [steps[1].path], steps[1:])
    node = dream_write.update(made, more, dream_match.decide(more, made), date_of, [])
    assert node is not None and node.body.index("1. Unplug it.") < node.body.index("2. Wait.")


def test_supersede_puts_the_current_value_first_and_the_old_one_in_history():
    body = (
        f"# Leiden half marathon\n\n- The user's goal for the half marathon is 1:55. ([[memory/{D1}/a.md]])\n"
        f"- The user runs long on Sundays. ([[memory/{D1}/a.md]])\n\n## Sources\n- Stated on {D1} in "
        f"[[memory/{D1}/a.md]].\n"
    )
    old = "The user's goal for the half marathon is 1:55."
    new = dream_node.supersede(body, old, f"- The user's half-marathon goal is now 1:52. ([[memory/{D2}/b.md]])", D2)
    assert new == (
        f"# Leiden half marathon\n\n- The user's half-marathon goal is now 1:52. ([[memory/{D2}/b.md]])\n"
        f"- The user runs long on Sundays. ([[memory/{D1}/a.md]])\n\n## History\n"
        f"- Previously: The user's goal for the half marathon is 1:55, until {D2} ([[memory/{D1}/a.md]])\n"
        f"\n## Sources\n- Stated on {D1} in [[memory/{D1}/a.md]].\n"
    )
    assert dream_node.current(new) == ["The user's half-marathon goal is now 1:52.", "The user runs long on Sundays."]
    assert dream_node.statements(new)[-1] == old.rstrip(".")  # still known: the old value stated again is nothing new
    # a new current line goes above the history, and a restated line cites the newest note first
    more = dream_node.add_lines(new, [f"- The user races in Asics shoes. ([[memory/{D3}/c.md]])"])
    assert more.index("Asics") < more.index("## History")
    cited = dream_node.add_source_to(more, "The user runs long on Sundays.", f"memory/{D3}/c.md")
    assert f"- The user runs long on Sundays. ([[memory/{D3}/c.md]], [[memory/{D1}/a.md]])" in cited


# ------------------------------------------------------------------ through the CLI
def _note(root: Path, day: str, name: str, sections: dict[str, list[str]], sid: str) -> None:
    body = "".join(f"\n## {t}\n" + "".join(f"- {x}\n" for x in lines) for t, lines in sections.items())
    path = root / "memory" / day / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\ndescription: {name}\nname: {name}\nsession_id: {sid}\n---\n# {name}\n{body}", encoding="utf-8"
    )


def _dream(root: Path, day: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    env.update({"HOME": str(root / "home"), "MEM_EMBEDDING_BACKEND": "none", "TZ": "UTC", "NO_COLOR": "1"})
    proc = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(root / "ws"), "dream", "--date", day, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_dream_keeps_the_current_value_first_skips_requests_and_says_why(tmp_path):
    ws = tmp_path / "ws"
    (tmp_path / "home").mkdir(exist_ok=True)
    _note(
        ws,
        D1,
        "half-marathon",
        {
            "Facts": [
                "User: My goal for the Leiden half marathon is 1:55.",
                "User: I do my long runs for the Leiden half marathon on Sundays.",
                "User: Write me a limerick about Kafka consumer groups",
                "User: Perfect, that's what I needed.",
            ]
        },
        "s1",
    )
    first = _dream(tmp_path, D1)
    assert [r["action"] for r in first["results"]] == ["CREATE"]
    [created] = first["results"]
    assert created["target_path"] == "digest/personal/leiden-half-marathon.md"
    assert created["reason"].startswith("no node is about 'Leiden half marathon' yet")
    # the new form an ingest note may hold: a third-person statement under ## Facts
    _note(ws, D2, "goal-change", {"Facts": ["The user's goal for the Leiden half marathon is now 1:52."]}, "s2")
    second = _dream(tmp_path, D2)
    [corrected] = second["results"]
    assert (corrected["action"], corrected["target_path"]) == ("CORRECT", "digest/personal/leiden-half-marathon.md")
    assert "CORRECT: gives a new value for" in corrected["reason"]
    nodes = sorted(p.relative_to(ws).as_posix() for p in (ws / "digest").rglob("*.md"))
    assert nodes == ["digest/personal/leiden-half-marathon.md"]  # nothing from the request or the thanks
    text = (ws / "digest/personal/leiden-half-marathon.md").read_text(encoding="utf-8")
    head = text.split("---\n", 2)[2]
    assert head.startswith(
        "# Leiden half marathon\n\n"
        f"- The user's goal for the Leiden half marathon is now 1:52. ([[memory/{D2}/goal-change.md]])\n"
        f"- The user does their long runs for the Leiden half marathon on Sundays. ([[memory/{D1}/half-marathon.md]])\n"
        "\n## History\n"
        f"- Previously: The user's goal for the Leiden half marathon is 1:55, until {D2} "
        f"([[memory/{D1}/half-marathon.md]])\n"
    )
    assert "User:" not in text and "limerick" not in text
    assert "description: The user's goal for the Leiden half marathon is now 1:52." in text
    # the same statement again: a skip, with its reason
    (ws / "mem_metadata/file_catalog/dream.jsonl.zst").unlink()
    again = _dream(tmp_path, D2)
    assert again["results"] == [] and all(s["reason"].startswith("already in the digest") for s in again["skipped"])


def test_what_follows_a_request_to_the_assistant_founds_no_node(tmp_path):
    ws = tmp_path / "ws"
    (tmp_path / "home").mkdir(exist_ok=True)
    _note(
        ws,
        D1,
        "translate",
        {
            "Facts": [
                'User: translate to dutch pls: "thank you so much for the lovely dinner',
                "User: next time it's at our place\"",
            ],
            "Next steps": ["User: ok one more then i have to pay attention"],
        },
        "s1",
    )
    rep = _dream(tmp_path, D1)
    assert rep["results"] == [] and rep["facts"]["kept"]
    assert not (ws / "digest").exists() or not list((ws / "digest").rglob("*.md"))
    assert {k["why"] for k in rep["facts"]["kept"]} <= {
        "said while asking the assistant for a task: joins a node, founds none",
        "names nothing a node could be about (no noun phrase)",
        "too few words to say what it is about",
    }


def test_chinese_and_japanese_statements_are_consolidated_by_the_characters_they_share():
    """A CJK statement has no spaces between its words: it reaches a node, joins the one its
    characters are about (林先生's deliveries), and founds its own when they are about another."""
    ev_texts = [
        "林先生的公司每个星期二送货。",
        "林先生说从下个星期开始改成星期四送货。",
        "店の改装で、研修は4月12日から25日までになりました。",
    ]
    facts = [Fact(t, f"memory/{D1}/n{i}.md", "User") for i, t in enumerate(ev_texts)]
    placed = dream_group.place(facts, [], Evidence(None, frozenset(), None, [f.line() for f in facts])).placed
    assert sorted(len(p.unit.facts) for p in placed) == [1, 2]
    [pair] = [p for p in placed if len(p.unit.facts) == 2]
    assert {f.text for f in pair.unit.facts} == set(ev_texts[:2])


def test_a_change_to_another_kind_of_value_corrects_nothing():
    """ "Switching fish to Pêcheries Lin" names a supplier: it does not change the day Lin
    delivers. A Korean change of day and hour ("수요일 저녁 7시로 바꿨어요") does change a day."""
    delivery = "林先生的公司每个星期二送货，最低订货是三百块。"
    switch = Fact("We're switching fish to Pêcheries Lin in Chinatown; the owner is 林先生.", "memory/2027-01-06/f.md")
    assert not dream_change.value_changed(switch, delivery)
    moved = Fact("금요일에 쉬게 돼서 지혜 씨하고 언어 교환을 수요일 저녁 7시로 바꿨어요.", "memory/2027-02-01/k.md")
    assert dream_change.value_changed(moved, "지혜 씨하고 금요일마다 점심에 언어 교환을 해요.")
    assert dream_change.kinds({"7시", "19:30", "7pm"}) == {"time"}


def test_a_node_is_titled_by_what_its_notes_titles_share():
    """A note's title names what it is about where a statement's words may not ("Still Mondays at
    9:15"); a weekday is when, not what; the statements' phrase wins when it says more ("Wheel
    class" over the titles' "Class"); a title in capitals is shouted, not an acronym."""
    from memcli.extraction.dream.naming import title

    goalie = Fact("The user is the goalie for Les Castors, 22:00 at aréna Marquette.", "memory/2027-01-05/hockey.md")
    moved = Fact("Sunday ice is gone, we play Mondays at 21:15 now, same arena.", "memory/2027-01-08/hockey-mondays.md")
    still = Fact("Still Mondays at 9:15, and the playoff game is March 8.", "memory/2027-01-11/sister-visit.md")
    assert title([moved, still]) != "Mondays"
    titles = {goalie.path: "Hockey", moved.path: "Hockey mondays", still.path: "Sister visit"}
    assert title([goalie, moved, still], titles) == "Hockey"
    wheel = Fact("Wheel class at Mudroom Studio is on Tuesdays.", "memory/2027-04-05/wheel-class.md")
    again = Fact("The studio moved wheel class to Thursdays.", "memory/2027-04-09/thursday-class.md")
    assert title([wheel, again], {wheel.path: "Wheel class", again.path: "Thursday class"}) == "Wheel class"
    trip = Fact("Flights booked.", "memory/2027-03-01/a.md")
    budget = Fact("Budget is 3000 EUR.", "memory/2027-03-02/b.md")
    assert title([trip, budget], {trip.path: "JAPAN TRIP", budget.path: "Japan trip budget"}) == "Japan trip"


def test_a_word_with_an_accent_is_the_word_without_it():
    from memcli.extraction.dream.evidence import words
    from memcli.extraction.dream.rules import stem_of

    assert "arena" in words("The user plays at aréna Marquette.") and "arena" in words("Same arena as before.")
    assert stem_of("pêcheries") == stem_of("pecheries")
    assert stem_of("が") == "が"  # a kana's voicing mark is part of the letter


def test_a_new_count_of_the_same_things_joins_the_statement_it_changes():
    """ "Got 4 more point-of-lay hens, so 14 now" counts the hens that "I keep 10 kienyeji hens"
    counts: one shared word, but the same quantity changed, so the two meet; buses counted in
    another statement stay apart from the hens."""
    keep = Fact("User: I keep 10 kienyeji hens and a rooster, Kanali, in the backyard.", "memory/2027-09-07/h.md")
    more = Fact("User: Got 4 more point-of-lay hens from a farmer in Kitengela, so 14 now.", "memory/2027-09-11/m.md")
    buses = Fact("User: The depot got 6 more electric buses, so 46 now.", "memory/2027-09-11/b.md")
    assert dream_change.counts(keep.text) == {("10", "hen")}
    assert dream_change.changes_measure(more.text, keep.text)
    assert not dream_change.changes_measure(buses.text, keep.text)
    ev = Evidence(None, frozenset(), None, [f.line() for f in (keep, more, buses)])
    placed = dream_group.place([keep, more, buses], [], ev).placed
    assert [[f.text for f in p.unit.facts] for p in placed] == [[keep.text, more.text], [buses.text]]
