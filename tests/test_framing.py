"""memcli.retrieval.framing: a recall query searched without the words that frame it."""

from memcli.retrieval.framing import topic


def test_the_conversation_and_the_owner_are_framing():
    assert topic("Performance issue discussed last time") == "Performance issue"
    assert topic("What music does the user like?") == "What music does like?"
    assert topic("When did Gina mention Shia Labeouf?") == "When did Gina Shia Labeouf?"
    assert topic("What did we talk about the other day regarding the roof?") == "What did we regarding the roof?"


def test_a_query_without_framing_or_all_framing_is_unchanged():
    for q in ("handleWebSocketReconnect disconnection reconnect", "ECONNREFUSED", "Database choice for the project",
              "What did we discuss last time?", "the user", "Update the user manual"):
        assert topic(q) == q


def test_words_that_only_contain_framing_are_kept():
    assert topic("The discussion board of the user group") == "The discussion board of the user group"
    assert topic("lasting timer issue") == "lasting timer issue"
    assert topic("Who runs the user research for the user interface?") == "Who runs the user research for the user interface?"
