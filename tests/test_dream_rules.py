"""The offline dream rules piece by piece: facts, buckets, grouping, contradictions, additive node edits."""

from __future__ import annotations

import numpy as np
import pytest

from memcli.extraction.dream import group as dream_group
from memcli.extraction.dream import match as dream_match
from memcli.extraction.dream import node as dream_node
from memcli.extraction.dream import rules as dream_rules
from memcli.extraction.dream.evidence import Evidence, plain
from memcli.extraction.dream.schema import Fact, Unit


@pytest.mark.parametrize(
    "text,bucket",
    [
        ("I prefer dark mode in every editor.", "personal"),
        ("My name is Ada and I work at Lumen.", "personal"),
        ("Run the migration with pgloader before the cut-over.", "procedure"),
        ("How to roll back: redeploy the previous image tag.", "procedure"),
        ("Check out my painting for the art show!", "wiki"),
        ("PostgreSQL 16 replaced MySQL 8 for the API.", "wiki"),
        ("我喜欢用深色主题。", "personal"),
    ],
)
def test_bucket_cues(text, bucket):
    assert dream_rules.bucket_of(Fact(text, "memory/2026-06-01/a.md")) == bucket


def place(facts, nodes=(), vectors=None, contexts=None):
    texts = [f.line() for f in facts] + [s for n in nodes for s in dream_node.statements(n.body)]
    vectors = {plain(k): v for k, v in vectors.items()} if vectors else vectors  # embedded as the job does
    ev = Evidence(vectors, dream_rules.speaker_words(facts), None, texts)
    return dream_group.place(list(facts), list(nodes), ev, contexts)


def test_numbered_steps_are_procedure_and_one_unit():
    body = "# Deploy\n\n## Release steps\n1. Merge to main.\n2. Deploy the image to staging.\n3. Promote the canary.\n"
    placement = place(dream_rules.facts_of("memory/2026-06-01/d.md", body, {}))
    [p] = placement.placed
    assert (p.unit.name, p.unit.bucket, len(p.unit.facts), p.target) == ("release-steps", "procedure", 3, None)
    topic = dream_rules.topic(p.unit)
    assert topic.title == "Release steps" and topic.paths == ["memory/2026-06-01/d.md"]


def test_a_resource_notes_structural_lines_are_no_facts():
    body = (
        "# key.json\n\nSource: [[resource/key.json]] (JSON, 86 B; object with 4 key(s))\n\n## Structure\n"
        "- (root): object, 4 key(s)\n  - `port`: number 8080\n\n## Opening\n"
        "> The gateway restarts at midnight.\n>\n> Lines of the file quoted here count.\n\n"
        "(3 more paragraph(s) in the file)\n"
    )
    facts = dream_rules.facts_of("memory/2026-06-01/key.md", body, {"source_resource": "[[resource/key.json]]"})
    assert [f.text for f in facts] == ["The gateway restarts at midnight.", "Lines of the file quoted here count."]
    # the same lines in an ordinary note are facts
    assert len(dream_rules.facts_of("memory/2026-06-01/n.md", body, {})) > 2


def fact(text, day="2026-06-02", note="n", speaker=""):
    return Fact(text, f"memory/{day}/{note}.md", speaker)


COMMUTE = (
    "# Commute\n\n- The user commutes to the office on a Brompton folding bike. ([[memory/2026-06-01/c.md]])\n"
    "- The ride takes about 25 minutes along the river path. ([[memory/2026-06-01/c.md]])\n\n"
    "## Sources\n- Stated on 2026-06-01 in [[memory/2026-06-01/c.md]].\n"
)
TEA = (
    "# Tea\n\n- The user prefers oolong tea over coffee. ([[memory/2026-06-01/t.md]])\n\n"
    "## Sources\n- Stated on 2026-06-01 in [[memory/2026-06-01/t.md]].\n"
)


def test_a_word_every_statement_has_makes_no_subject():
    """The commute node must not take a tea fact because both say "user"."""
    nodes = [node("digest/wiki/commute.md", COMMUTE)]
    [p] = place([fact("The user drinks oolong tea without sugar.")], nodes).placed
    assert p.target is None  # a node of its own


def test_a_replacement_updates_the_node_holding_the_old_value():
    nodes = [node("digest/wiki/commute.md", COMMUTE), node("digest/personal/tea.md", TEA)]
    new = fact("The user replaced the Brompton with an e-bike.")
    [p] = place([new], nodes).placed
    assert p.target.path == "digest/wiki/commute.md"
    d = dream_match.decide(p.unit, p.target)
    assert d.action == "CORRECT"
    assert d.contradictions == [(new, "The user commutes to the office on a Brompton folding bike.")]


def test_a_change_of_mind_corrects_the_preference():
    nodes = [node("digest/wiki/commute.md", COMMUTE), node("digest/personal/tea.md", TEA)]
    new = fact("The user no longer likes oolong tea and now prefers green tea over coffee.")
    [p] = place([new], nodes).placed
    d = dream_match.decide(p.unit, p.target)
    assert (p.target.path, d.action, d.contradictions) == (
        "digest/personal/tea.md",
        "CORRECT",
        [(new, "The user prefers oolong tea over coffee.")],
    )


def test_a_fact_that_links_to_two_nodes_alike_stays_in_its_note():
    a = node("digest/wiki/a.md", "# A\n\n- The Lumen billing export runs nightly. ([[memory/2026-06-01/a.md]])\n")
    b = node("digest/wiki/b.md", "# B\n\n- The Lumen billing dashboard is slow. ([[memory/2026-06-01/b.md]])\n")
    placement = place([fact("Lumen billing moves to a new region.")], [a, b])
    assert placement.placed == [] and "links about equally" in placement.kept[0][1]


def test_a_fact_that_links_to_two_waiting_statements_alike_founds_one_node_with_both():
    """Two lone statements of earlier nights wait for a second about their subject; a new one that
    links to both about equally is that second for each (no node to mix up yet): one node of three."""
    export = fact("The Lumen billing export runs nightly.", "2026-06-01", "a")
    dashboard = fact("The Lumen billing dashboard is slow.", "2026-06-01", "b")
    new = fact("Lumen billing moves to a new region.")
    facts = [export, dashboard, new]
    ev = Evidence(None, dream_rules.speaker_words(facts), None, [f.line() for f in facts])
    placement = dream_group.place(facts, [], ev, None, frozenset({id(export), id(dashboard)}))
    assert placement.kept == []
    [p] = placement.placed
    assert p.target is None and p.unit.facts == [export, dashboard, new]


def test_meaning_groups_what_words_do_not():
    """With vectors (here made up), a close meaning links facts that share no word; a far one does not."""
    facts = [
        fact("The user commutes on a Brompton folding bike."),
        fact("On rainy days the user takes the tram to work."),
        fact("Invoices go out on the first working day of each month."),
    ]
    vec = {
        "The user commutes on a Brompton folding bike.": [1.0, 0.0, 0.0],
        "On rainy days the user takes the tram to work.": [0.8, 0.6, 0.0],
        "Invoices go out on the first working day of each month.": [0.0, 0.0, 1.0],
    }
    assert len(place(facts).placed) == 3  # words alone: three subjects
    placed = place(facts, vectors=vec).placed
    assert [len(p.unit.facts) for p in placed] == [2, 1]


def test_a_name_neither_statement_is_about_links_nothing():
    """ "Utawala" is where the commute starts and part of a football team's name: the model puts the
    two close for that one rare name (made-up vectors: 0.8 with it, 0.2 without). A name a
    statement starts with is what it is about: "Miso" links Miso's walks and check-ups as before."""
    commute = fact("The user takes the matatu from Utawala to the depot.")
    football = fact("The user plays keeper for Utawala Queens on Wednesdays.")
    walk = fact("Miso needs a walk at 07:00.")
    vet = fact("The vet check-up for Miso is on June 19.")
    texts = [f.line() for f in (commute, football, walk, vet)]
    ev = Evidence(None, frozenset(), None, texts)
    assert ev.nameless(commute.line()) == "Takes the matatu from to the depot."
    assert ev.nameless(football.line()) == "Plays keeper for on Wednesdays."
    assert ev.shares_name(commute.line(), football.line()) and not ev.shares_name(walk.line(), vet.line())
    vectors = {
        plain(commute.line()): [1.0, 0.0, 0.0],
        plain(football.line()): [0.8, 0.6, 0.0],
        ev.nameless(commute.line()): [1.0, 0.0, 0.0],
        ev.nameless(football.line()): [0.2, 0.98, 0.0],
        plain(walk.line()): [0.0, 0.0, 1.0],
        plain(vet.line()): [0.0, 0.6, 0.8],
        ev.nameless(walk.line()): [0.0, 0.0, 1.0],
        ev.nameless(vet.line()): [0.0, 1.0, 0.0],
    }
    vectors = {k: np.asarray(v, dtype=np.float32) for k, v in vectors.items()}
    ev = Evidence(vectors, frozenset(), None, texts)
    assert ev.cosine(commute.line(), football.line()) == pytest.approx(0.8)
    assert ev.meaning(commute.line(), football.line()) == pytest.approx(0.2)
    assert ev.meaning(walk.line(), vet.line()) == pytest.approx(0.8)
    placed = dream_group.place([commute, football, walk, vet], [], ev).placed
    assert sorted(len(p.unit.facts) for p in placed) == [1, 1, 2]


def test_a_statement_leaning_on_the_one_before_moves_with_it():
    """ "They eat layers mash" says nothing of what eats it: the hens of the statement before, in the
    same note section; it is placed with that one (as the steps of one list are)."""
    hens = Fact("I keep 10 hens and a rooster in the backyard.", "memory/2026-06-01/a.md", "User", "Facts")
    feed = Fact("They eat layers mash plus kitchen scraps.", "memory/2026-06-01/a.md", "User", "Facts")
    elsewhere = Fact("They eat layers mash plus kitchen scraps.", "memory/2026-06-01/b.md", "User", "Facts")
    assert dream_group.items([hens, feed]) == [[hens, feed]]
    assert dream_group.items([hens, elsewhere]) == [[hens], [elsewhere]]
    assert [len(p.unit.facts) for p in place([hens, feed]).placed] == [2]


def test_a_possessive_name_leads_its_statement():
    """ "Greg's dad is also called Frank" is about Greg's dad, not Frank the dog, even before "Greg" is
    seen inside a sentence: under one heading with Frank's statements it is named apart."""
    ev = Evidence(None, frozenset(), None, ["Frank is on carprofen twice a day.", "Greg's dad is also called Frank."])
    assert ev.leading_name("Greg's dad is also called Frank.") == "greg"
    assert ev.named_apart("Greg's dad is also called Frank.", "Frank is on carprofen twice a day.")


def test_a_name_beside_the_user_or_acting_for_someone_leads_nothing():
    """ "Wei and I fly to Osaka" is the user's trip and "Kenji takes her to the pool" is about whom
    "her" names: neither is about Wei or Kenji alone, so neither is named apart from the statement
    beside it ("We stay five nights at the Hanaikada ryokan in Kyoto")."""
    said = ["Wei and the user fly to Osaka on May 9.", "The user stays five nights at the Hanaikada ryokan in Kyoto."]
    ev = Evidence(
        None,
        frozenset(),
        None,
        [*said, "Wei is a nurse.", "The user lives with Wei and Kenji.", "Kenji takes her to the pool on Saturdays."],
    )
    assert ev.leading_name("Wei is a nurse.") == "wei"
    assert ev.leading_name(said[0]) == ""
    assert ev.leading_name("User: Wei and I fly to Osaka on May 9.") == ""
    assert ev.leading_name("Kenji takes her to the pool on Saturdays.") == ""
    assert not ev.named_apart(*said)
    assert ev.named_apart("Wei is a nurse.", said[1].replace("Kyoto", "Kyoto with Joost"))


def test_facts_under_one_heading_of_an_agents_note_go_together():
    a = Fact("The home router is a Fritz!Box in the hallway.", "memory/2026-06-01/net.md", section="setup")
    b = Fact("The fibre line from Init7 gives 1 Gbit/s.", "memory/2026-06-01/net.md", section="setup")
    vec = {a.text: [1.0, 0.0], b.text: [0.2, 0.98]}  # far apart in meaning: cosine 0.2
    assert len(place([a, b], vectors=vec).placed) == 2
    assert len(place([a, b], vectors=vec, contexts={a.path: "note"}).placed) == 1


def test_the_title_of_a_list_is_no_statement_of_its_own():
    body = (
        "## Procedures\n- Updated plan (in order):\n  1. Walk the blocks with the new crew boss.\n"
        "  2. Share the harvest-morning checklist.\n- The user keeps the spray diary in the shed:\n"
    )
    facts = dream_rules.facts_of("memory/2026-06-01/p.md", body, {"session_id": "s1"})
    assert [f.text for f in facts] == [
        "Walk the blocks with the new crew boss.",
        "Share the harvest-morning checklist.",
        "The user keeps the spray diary in the shed:",  # no steps follow: a statement
    ]


def test_a_cjk_statement_under_one_heading_of_an_agents_note_goes_with_the_rest():
    """The model gives a Chinese statement no vector to compare: under one heading of an agent's
    note it goes with the English statements beside it, as a far cosine would; elsewhere words decide."""
    a = Fact("我爸爸7月5日滿80歲，壽宴在台中的福園餐廳。", "memory/2027-04-08/taiwan.md", section="trip")
    b = Fact("The user flies EVA from Vancouver to Taipei on June 28.", "memory/2027-04-08/taiwan.md", section="trip")
    c = Fact("She always wants an aisle seat on long flights.", "memory/2027-04-08/taiwan.md", section="trip")
    vec = {b.text: [1.0, 0.0], c.text: [0.6, 0.8]}
    assert sorted(len(p.unit.facts) for p in place([a, b, c], vectors=vec).placed) == [1, 2]
    assert [len(p.unit.facts) for p in place([a, b, c], vectors=vec, contexts={a.path: "note"}).placed] == [3]


def test_facts_skip_links_questions_small_talk_and_images():
    body = (
        "## Facts\n- User: Thanks!\n- User: Can you check the logs?\n- User: [image: a cat]\n"
        "- User: See [[memory/2026-06-01/x.md]] for the plan.\n- User: The cat is called Miso. [image: a cat]\n"
        "\n## Topics\ncat, logs, plan, miso, image, vet, food, name\n"  # ingest's keywords of the chat
    )
    facts = dream_rules.facts_of("memory/2026-06-01/a.md", body, {"session_id": "s1"})
    assert [(f.speaker, f.text, f.section) for f in facts] == [("User", "The cat is called Miso.", "facts")]
    # without a session, "Name: text" is not a speaker
    [fact] = dream_rules.facts_of("memory/2026-06-01/b.md", "- Decision: PostgreSQL 16 it is.\n", {})
    assert (fact.speaker, fact.text) == ("", "Decision: PostgreSQL 16 it is.")


@pytest.mark.parametrize(
    "new,old,expected",
    [
        ("I prefer tea in the morning.", "I prefer coffee in the morning.", True),
        ("I prefer coffee in the morning!", "I prefer coffee in the morning.", False),
        ("The launch deadline moved to May 3.", "The launch deadline is April 20.", True),
        ("The deadline is now May 3.", "The launch deadline is April 20.", True),
        ("My favorite band is Muse.", "My favorite band is Radiohead.", True),
        ("My favorite food is ramen.", "My favorite band is Radiohead.", False),
        ("The staging database is db-staging-3.", "The staging database is db-staging-2.", True),
        ("I like swimming with the kids.", "I like painting with the kids.", False),
        ("Painting is a great way to relax.", "Painting is a fun way to express feelings.", False),
        ("I went swimming on Friday.", "I went painting on Friday.", False),
        ("I live in Porto now.", "I live in Lisbon.", True),
        # ingest writes the user in the third person: the same slot as "my editor is"
        ("The user's editor is Helix.", "The user's editor is Zed.", True),
        ("The user's new manager is Ines Duarte.", "My manager is Koen Bakker.", True),
        ("The user's editor is Zed.", "The user's editor is Zed.", False),
        # an attribute of the thing is another slot: which font the editor uses is not which editor
        ("My editor is Helix.", "My editor font is Iosevka.", False),
        ("The user's editor font is Fira Code.", "The user's editor is Zed.", False),
    ],
)
def test_contradictions(new, old, expected):
    assert dream_match.contradicts(Fact(new, "p"), old) is expected


def node(path, body, name=None):
    return dream_node.Node(path, {"name": name or path.rsplit("/", 1)[-1][:-3], "description": "d"}, body)


def unit(*facts, name="user-coffee", bucket="personal"):
    fs = [Fact(t, "memory/2026-06-02/n.md", "User") for t in facts]
    return Unit(name, bucket, " ".join(facts), ["memory/2026-06-02/n.md"], fs)


OLD = (
    "# Coffee\n\nRule: User: I prefer coffee in the morning.\n\nHow to apply:\n- Offer coffee.\n\n"
    "Related: [[digest/wiki/cafes.md]].\n\n## Sources\n- Stated on 2026-06-01 in [[memory/2026-06-01/a.md]].\n"
)


@pytest.mark.parametrize(
    "facts,action",
    [
        (["I prefer coffee in the morning."], "CORROBORATE"),
        (["I prefer tea in the morning."], "CORRECT"),
        (["I drink my coffee black, without sugar."], "REFINE"),
    ],
)
def test_decide_picks_one_action(facts, action):
    c = node("digest/personal/user-coffee.md", OLD)
    assert dream_match.decide(unit(*facts), c).action == action


def test_unrelated_fact_creates():
    c = node("digest/personal/user-coffee.md", OLD)
    [p] = place([fact("The Berlin office opens on 2026-07-01.")], [c]).placed
    d = dream_match.decide(p.unit, p.target)
    assert (d.action, d.node, p.target) == ("CREATE", None, None)


def test_the_old_template_prose_is_no_statement_and_goes_on_update():
    from memcli.extraction.dream import write as dream_write

    old = (
        "# Coffee\n\nThese lines are quoted as they were written in the daily notes; the sources below hold "
        "the context.\n\nRule: User: I prefer coffee in the morning.\n\n"
        "Why: the user said so directly; the sources below give the context.\n\nHow to apply:\n"
        "- Keep this in mind whenever coffee comes up with the user, and follow the newest source.\n\n"
        "## Sources\n- Stated on 2026-06-01 in [[memory/2026-06-01/a.md]].\n"
    )
    c = node("digest/personal/user-coffee.md", old)
    assert dream_node.statements(old) == ["The user prefers coffee in the morning."]  # read in a node's voice
    u = unit("I drink my coffee black, without sugar.")
    new = dream_write.update(c, u, dream_match.decide(u, c), lambda p: p.split("/")[1], [])
    assert "These lines are quoted" not in new.body and "said so directly" not in new.body
    assert "Keep this in mind" not in new.body
    assert "- The user drinks their coffee black, without sugar. ([[memory/2026-06-02/n.md]])" in new.body
    assert "[[memory/2026-06-01/a.md]]" in new.body and "Rule: User: I prefer coffee in the morning." in new.body


def test_updates_only_add():
    from memcli.extraction.dream import write as dream_write

    c = node("digest/personal/user-coffee.md", OLD)
    for facts in (
        ["I prefer tea in the morning."],
        ["I drink my coffee black, without sugar."],
        ["I prefer coffee in the morning."],
    ):
        u = unit(*facts)
        new = dream_write.update(c, u, dream_match.decide(u, c), lambda p: p.split("/")[1], ["digest/wiki/x.md"])
        assert new is not None
        for line in OLD.splitlines():  # every old line is still there, links and sources included
            assert line.rstrip(".") in new.body, line
        assert "[[digest/wiki/x.md]]" in new.body and "[[memory/2026-06-02/n.md]]" in new.body
    d = dream_match.decide(u, new)
    assert d.action == ""  # the same news twice changes nothing


def test_node_helpers():
    body = dream_node.add_sources("# T\n\nText.\n", ["- From [[memory/2026-06-01/a.md]]."])
    assert body == "# T\n\nText.\n\n## Sources\n- From [[memory/2026-06-01/a.md]].\n"
    assert dream_node.add_sources(body, ["- From [[memory/2026-06-01/a.md]]."]) == body
    assert dream_node.cited(body) == {"memory/2026-06-01/a.md"}
    assert dream_node.links("[[a.md|A]] and [[b.md#h]]\n```\n[[c.md]]\n```\n") == ["a.md", "b.md"]
    linked = dream_node.add_related(body, ["digest/wiki/x.md"])
    assert "Text.\n\nRelated: [[digest/wiki/x.md]].\n\n## Sources" in linked
    assert "Related: [[digest/wiki/x.md]], [[digest/wiki/y.md]]." in dream_node.add_related(
        linked, ["digest/wiki/y.md"]
    )
    assert dream_node.slugify("User: Coffee & Tea 2026-06-01!") == "user-coffee-tea"
    assert dream_node.slugify("2026") == "node"
    assert dream_node.abstract_words(OLD) == 14


def test_a_rerun_changes_nothing_even_with_new_neighbours():
    from memcli.extraction.dream import write as dream_write

    cites_it = node(
        "digest/personal/user-coffee.md", OLD.replace("[[memory/2026-06-01/a.md]]", "[[memory/2026-06-02/n.md]]")
    )
    other = node("digest/personal/coffee-habits.md", OLD)  # states the same, cites another note
    f = Fact("I prefer coffee in the morning.", "memory/2026-06-02/n.md", "User")
    [p] = place([f], [other, cites_it]).placed
    assert p.target is cites_it  # the node that holds the fact with this source keeps it
    d = dream_match.decide(p.unit, p.target)
    assert (d.action, d.new_facts, d.uncited) == ("", [], [])
    # a node created since the first run is related now, but a link alone is no reason to write
    assert (
        dream_write.update(
            cites_it, p.unit, dream_match.Decision("CORROBORATE", cites_it), lambda p: None, ["digest/wiki/new.md"]
        )
        is None
    )


def test_a_fact_goes_to_the_node_that_states_it():
    elsewhere = node("digest/wiki/coffee-facts.md", "# C\n\n- User: I drink my coffee black, without sugar.\n")
    c = node("digest/personal/user-coffee.md", OLD)
    black = Fact("I drink my coffee black, without sugar.", "memory/2026-06-02/n.md", "User")
    placed = place([black], [c, elsewhere]).placed
    assert [p.target.path for p in placed] == ["digest/wiki/coffee-facts.md"]
    d = dream_match.decide(placed[0].unit, placed[0].target)
    assert (d.action, d.new_facts) == ("CORROBORATE", [])  # one place per statement: its source is added


@pytest.mark.parametrize(
    "new,old",
    [
        ("I prefer my coffee black, with no sugar at all.", "I prefer coffee in the morning."),
        ("I prefer tea in the evening as well.", "I prefer tea in the morning."),
    ],
)
def test_a_value_that_starts_the_same_refines(new, old):
    assert dream_match.contradicts(Fact(new, "p"), old) is False


GRADES = (
    "# Grades\n\n- Final grades weigh tests 70%, lab work 20% and attitude 10%. ([[memory/2026-09-08/g.md]])\n\n"
    "## Sources\n- Stated on 2026-09-08 in [[memory/2026-09-08/g.md]].\n"
)
LIST = (
    "\n\n## Steps\n1. Pour the standardised NaOH into labelled bench bottles.\n"
    "2. Check nine burettes for leaks and rinse them.\n3. Zero the lab scales before weighing the indicator.\n"
)


def _list_placed(title: str):
    nodes = [node("digest/wiki/grades.md", GRADES)]
    path = "memory/2026-09-10/prep.md"
    body = f"# {title}{LIST}"
    facts = dream_rules.facts_of(path, body, {})
    said = dream_node.statements(GRADES)
    texts = [f.line() for f in facts] + said
    # meaning: the scales step is close to the grades statement, the other steps to nothing here
    axes = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.8, 0.6, 0.0]]
    vectors = {plain(f.line()): np.array(v, dtype=np.float32) for f, v in zip(facts, axes)}
    vectors[plain(said[0])] = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    ev = Evidence(vectors, dream_rules.speaker_words(facts), None, texts)
    ev.titles = dream_rules.titles([(path, body, {})])
    return dream_group.place(facts, nodes, ev).placed


def test_a_list_goes_where_most_of_its_steps_belong():
    """One step of a titration prep sharing "lab" with the grades node does not carry the list there."""
    [p] = _list_placed("Titration practical prep")
    assert p.target is None and len(p.unit.facts) == 3


def test_a_list_whose_title_names_the_nodes_subject_joins_it():
    [p] = _list_placed("Lab work grades prep")
    assert p.target is not None and p.target.path == "digest/wiki/grades.md"


def test_a_cjk_statement_without_ingests_gloss_is_read_with_it():
    """A note written by hand or by `mem remember` has no "(keywords: ...)": the words ingest would
    gloss it with are its English words all the same, and the gloss's label is no word of any."""
    from memcli.extraction.dream.evidence import words

    bare = words("User: 店の改装で、研修は4月12日から25日までになりました。")
    glossed = words("The user said: 「研修はまだ4月12日からです。」 (keywords: training internship, April 12)")
    assert {"train", "internship"} <= bare.keys() & glossed.keys()
    assert not {"keyword", "keywords"} & (bare.keys() | glossed.keys())
    ev = Evidence()
    assert ev.link(
        "User: 森大輔さんの店「いさり」で研修します。4月5日から2週間です。", "User: 研修はまだ4月12日からです。"
    )


def test_a_latin_name_written_against_cjk_is_a_word_of_its_own():
    """ "Wambui上一年级" names Wambui: a Latin word ends where CJK characters begin."""
    from memcli.extraction.dream.evidence import names, words

    assert "wambui" in words("Wambui上一年级，她的生日是11月9号。")
    assert "joost" in words("Tofuは旅行中、Joostさんの家に泊まります。")
    assert {"hsk"} <= names("我报名了明年1月15日的HSK三级考试。")


def test_a_person_named_with_a_title_in_chinese_or_japanese_is_a_name():
    """林先生 is one person (Mr Lin), not the pairs 林先 and 先生 that any 先生 shares: named in an
    English statement and in a Chinese one, the two link on that name."""
    from memcli.extraction.dream.evidence import cjk_names

    assert cjk_names("下个星期开始是周老师教我们") == {"周老师"}
    assert cjk_names("森大輔さんの店で研修します。田中先生に言われました。") == {"森大輔さん", "田中先生"}
    switch = "User: We're switching fish to Pêcheries Lin in Chinatown; the owner is 林先生."
    delivery = "User: 林先生的公司每个星期二送货，最低订货是三百块。"
    assert Evidence().link(switch, delivery) is not None
    assert Evidence().link("User: 王先生明天来修空调。", delivery) is None
