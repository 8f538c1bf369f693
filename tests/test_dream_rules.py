"""The offline dream rules piece by piece: facts, buckets, contradictions, and additive node edits."""

from __future__ import annotations

import pytest

from memcli.extraction.dream import match as dream_match, node as dream_node, rules as dream_rules
from memcli.extraction.dream.schema import Fact, Unit


@pytest.mark.parametrize("text,bucket", [
    ("I prefer dark mode in every editor.", "personal"),
    ("My name is Ada and I work at Lumen.", "personal"),
    ("Run the migration with pgloader before the cut-over.", "procedure"),
    ("How to roll back: redeploy the previous image tag.", "procedure"),
    ("Check out my painting for the art show!", "wiki"),
    ("PostgreSQL 16 replaced MySQL 8 for the API.", "wiki"),
    ("我喜欢用深色主题。", "personal"),
])
def test_bucket_cues(text, bucket):
    assert dream_rules.bucket_of(Fact(text, "memory/2026-06-01/a.md")) == bucket


def test_numbered_steps_are_procedure_and_one_unit():
    body = "# Deploy\n\n## Release steps\n1. Merge to main.\n2. Deploy the image to staging.\n3. Promote the canary.\n"
    units, topics = dream_rules.extract([("memory/2026-06-01/d.md", body, {})], 5)
    [unit] = units
    assert (unit.name, unit.bucket, len(unit.facts)) == ("release-steps", "procedure", 3)
    assert topics[0].title == "Release steps" and topics[0].paths == ["memory/2026-06-01/d.md"]


def test_facts_skip_links_questions_small_talk_and_images():
    body = ("## Facts\n- User: Thanks!\n- User: Can you check the logs?\n- User: [image: a cat]\n"
            "- User: See [[memory/2026-06-01/x.md]] for the plan.\n- User: The cat is called Miso. [image: a cat]\n")
    facts = dream_rules.facts_of("memory/2026-06-01/a.md", body, {"session_id": "s1"})
    assert [(f.speaker, f.text, f.section) for f in facts] == [("User", "The cat is called Miso.", "facts")]
    # without a session, "Name: text" is not a speaker
    [fact] = dream_rules.facts_of("memory/2026-06-01/b.md", "- Decision: PostgreSQL 16 it is.\n", {})
    assert (fact.speaker, fact.text) == ("", "Decision: PostgreSQL 16 it is.")


@pytest.mark.parametrize("new,old,expected", [
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
])
def test_contradictions(new, old, expected):
    assert dream_match.contradicts(Fact(new, "p"), old) is expected


def node(path, body, name=None):
    return dream_node.Node(path, {"name": name or path.rsplit("/", 1)[-1][:-3], "description": "d"}, body)


def unit(*facts, name="user-coffee", bucket="personal"):
    fs = [Fact(t, "memory/2026-06-02/n.md", "User") for t in facts]
    return Unit(name, bucket, " ".join(facts), ["memory/2026-06-02/n.md"], fs)


OLD = ("# Coffee\n\nRule: User: I prefer coffee in the morning.\n\nHow to apply:\n- Offer coffee.\n\n"
       "Related: [[digest/wiki/cafes.md]].\n\n## Sources\n- Stated on 2026-06-01 in [[memory/2026-06-01/a.md]].\n")


@pytest.mark.parametrize("facts,action", [
    (["I prefer coffee in the morning."], "CORROBORATE"),
    (["I prefer tea in the morning."], "CORRECT"),
    (["I drink my coffee black, without sugar."], "REFINE"),
])
def test_decide_picks_one_action(facts, action):
    c = node("digest/personal/user-coffee.md", OLD)
    assert dream_match.decide(unit(*facts), [c]).action == action


def test_unrelated_unit_creates():
    c = node("digest/personal/user-coffee.md", OLD)
    d = dream_match.decide(unit("The Berlin office opens on 2026-07-01.", name="user-office", bucket="wiki"), [c])
    assert (d.action, d.node) == ("CREATE", None)


def test_updates_only_add():
    from memcli.extraction.dream import write as dream_write

    c = node("digest/personal/user-coffee.md", OLD)
    for facts in (["I prefer tea in the morning."], ["I drink my coffee black, without sugar."],
                  ["I prefer coffee in the morning."]):
        u = unit(*facts)
        new = dream_write.update(c, u, dream_match.decide(u, [c]), lambda p: p.split("/")[1], ["digest/wiki/x.md"])
        assert new is not None
        for line in OLD.splitlines():  # every old line is still there, links and sources included
            assert line.rstrip(".") in new.body, line
        assert "[[digest/wiki/x.md]]" in new.body and "[[memory/2026-06-02/n.md]]" in new.body
    done = dream_write.update(new, u, dream_match.decide(u, [new]), lambda p: None, [])
    assert done is None  # the same news twice changes nothing


def test_node_helpers():
    body = dream_node.add_sources("# T\n\nText.\n", ["- From [[memory/2026-06-01/a.md]]."])
    assert body == "# T\n\nText.\n\n## Sources\n- From [[memory/2026-06-01/a.md]].\n"
    assert dream_node.add_sources(body, ["- From [[memory/2026-06-01/a.md]]."]) == body
    assert dream_node.cited(body) == {"memory/2026-06-01/a.md"}
    assert dream_node.links("[[a.md|A]] and [[b.md#h]]\n```\n[[c.md]]\n```\n") == ["a.md", "b.md"]
    linked = dream_node.add_related(body, ["digest/wiki/x.md"])
    assert "Text.\n\nRelated: [[digest/wiki/x.md]].\n\n## Sources" in linked
    assert "Related: [[digest/wiki/x.md]], [[digest/wiki/y.md]]." in dream_node.add_related(linked,
                                                                                           ["digest/wiki/y.md"])
    assert dream_node.slugify("User: Coffee & Tea 2026-06-01!") == "user-coffee-tea"
    assert dream_node.slugify("2026") == "node"
    assert dream_node.abstract_words(OLD) == 14


def test_a_rerun_changes_nothing_even_with_new_neighbours():
    from memcli.extraction.dream import write as dream_write

    cites_it = node("digest/personal/user-coffee.md",
                    OLD.replace("[[memory/2026-06-01/a.md]]", "[[memory/2026-06-02/n.md]]"))
    other = node("digest/personal/coffee-habits.md", OLD)  # states the same, cites another note
    u = unit("I prefer coffee in the morning.")
    d = dream_match.decide(u, [other, cites_it])
    assert (d.action, d.node.path, d.new_facts, d.uncited) == ("CORROBORATE", cites_it.path, [], [])
    # a node created since the first run is related now, but a link alone is no reason to write
    assert dream_write.update(cites_it, u, d, lambda p: None, ["digest/wiki/new.md"]) is None


def test_facts_stated_by_another_node_are_not_repeated():
    elsewhere = node("digest/wiki/coffee-facts.md", "# C\n\n- User: I drink my coffee black, without sugar.\n")
    c = node("digest/personal/user-coffee.md", OLD)
    d = dream_match.decide(unit("I drink my coffee black, without sugar.", "I prefer coffee in the morning."),
                           [c, elsewhere])
    assert (d.action, d.node.path, d.new_facts, d.uncited) == ("REFINE", c.path, [], [])  # nothing to write


@pytest.mark.parametrize("new,old", [
    ("I prefer my coffee black, with no sugar at all.", "I prefer coffee in the morning."),
    ("I prefer tea in the evening as well.", "I prefer tea in the morning."),
])
def test_a_value_that_starts_the_same_refines(new, old):
    assert dream_match.contradicts(Fact(new, "p"), old) is False
