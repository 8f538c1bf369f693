"""memcli.retrieval.framing: a recall query searched without the words that frame it."""

from typing import ClassVar

from memcli.retrieval.framing import topic


def test_the_conversation_and_the_owner_are_framing():
    assert topic("Performance issue discussed last time") == "Performance issue"
    assert topic("What music does the user like?") == "What music does like?"
    assert topic("When did Gina mention Shia Labeouf?") == "When did Gina Shia Labeouf?"
    assert topic("What did we talk about the other day regarding the roof?") == "What did we regarding the roof?"


def test_words_asking_when_a_value_holds_are_framing():
    assert topic("How does the user get to work these days?") == "How does get to work?"
    assert topic("Who is the boss at present?") == "Who is the boss?"
    assert topic("What present did mum receive?") == "What present did mum receive?"  # a gift


def test_a_query_without_framing_or_all_framing_is_unchanged():
    for q in (
        "handleWebSocketReconnect disconnection reconnect",
        "ECONNREFUSED",
        "Database choice for the project",
        "What did we discuss last time?",
        "the user",
        "Update the user manual",
    ):
        assert topic(q) == q


def test_words_that_only_contain_framing_are_kept():
    assert topic("The discussion board of the user group") == "The discussion board of the user group"
    assert topic("lasting timer issue") == "lasting timer issue"
    assert (
        topic("Who runs the user research for the user interface?")
        == "Who runs the user research for the user interface?"
    )


def test_the_owner_asks_in_the_first_person():
    from memcli.retrieval.framing import first_person

    assert first_person("How does the user usually travel to work?") == "How do I usually travel to work?"
    assert first_person("What is the user allergic to?") == "What am I allergic to?"
    assert first_person("When is the user's mother's birthday?") == "When is my mother's birthday?"
    assert first_person("Does the user have a dog?") == "Do I have a dog?"
    assert first_person("The user is vegetarian?") == "I am vegetarian?"
    assert first_person("Who helped the user move?") == "Who helped me move?"
    assert first_person("Performance issue discussed last time") == "Performance issue"
    for q in ("the user", "Update the user manual", "What is the user's name?", "ECONNREFUSED"):
        assert first_person(q) == q


def test_a_query_about_the_owner_is_the_mean_of_both_phrasings():
    import numpy as np

    from memcli.jobs.searchers.query import query_vectors

    class Table:  # an embedder answering from a table of unit vectors
        rows: ClassVar = {
            "What music does like?": [1.0, 0.0, 0.0],
            "What music do I like?": [0.0, 1.0, 0.0],
            "jazz": [0.0, 0.0, 1.0],
        }

        def embed_batch(self, texts):
            return np.asarray([self.rows[t] for t in texts], dtype=np.float32)

    vecs = query_vectors(Table(), "What music does like?", "What music do I like?", ["jazz"])
    assert np.allclose(vecs[0], [2**-0.5, 2**-0.5, 0.0]) and np.allclose(vecs[1], [0, 0, 1]) and len(vecs) == 2
    same = query_vectors(Table(), "jazz", "jazz", [])
    assert np.allclose(same, [[0, 0, 1]])
