"""Team memory's pure parts (no database): DSN masking, settings, tokens as tsvectors."""

from __future__ import annotations

import pytest

from memcli.config import settings
from memcli.errors import ConfigError
from memcli.secrets import dsn


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("postgresql://mem:s3cr%40t@db:5432/x?sslmode=require", "postgresql://mem:***@db:5432/x?sslmode=require"),
        ("postgres://mem@db/x", "postgres://mem@db/x"),
        (
            "postgresql:///x?host=/run/pg&password=p1x&sslpassword=p2y",
            "postgresql:///x?host=/run/pg&password=***&sslpassword=***",
        ),
        ("host=db user=mem password=secret dbname=x", "host=db user=mem password=*** dbname=x"),
        ("host=db password = 'a b\\'c' user=u", "host=db password = *** user=u"),
        ("", ""),
    ],
)
def test_dsn_passwords_are_masked(raw, shown):
    assert dsn.masked(raw) == shown
    for secret in dsn.passwords(raw):
        assert secret not in dsn.masked(raw)
        assert secret not in dsn.scrub(f"error near {raw!r} ({secret})", raw)


def test_url_encoded_password_is_scrubbed_decoded_too():
    raw = "postgresql://mem:s3cr%40t@db/x"
    assert dsn.scrub("bad password s3cr@t", raw) == "bad password ***"
    assert dsn.public(raw) == "postgresql://mem:@db/x"


def test_config_masks_the_dsn():
    from memcli.config.layers import masked

    cfg = {"shared": {"dsn": "postgresql://u:pw123@h/db", "namespace": "t"}, "embedding_model_config": {"api_key": "k"}}
    assert masked(cfg) == {
        "shared": {"dsn": "postgresql://u:***@h/db", "namespace": "t"},
        "embedding_model_config": {"api_key": "***"},
    }


def test_backups_keep_the_dsn_with_the_secrets():
    from memcli.jobs.backup.credentials import is_secret_key

    assert is_secret_key("dsn") and not is_secret_key("namespace")


def build(**shared):
    cfg = settings.defaults()
    cfg["shared"].update(shared)
    return settings.build(cfg)


def test_shared_is_off_by_default_and_on_with_a_dsn():
    assert not build().shared.enabled
    assert build(dsn="postgresql:///x").shared.enabled
    assert not build(dsn="postgresql:///x", backend="none").shared.enabled


@pytest.mark.parametrize(
    "over, words",
    [
        ({"backend": "mysql"}, "shared.backend"),
        ({"backend": "postgres"}, "shared.dsn is empty"),
        ({"dsn": "x", "namespace": ""}, "shared.namespace"),
        ({"dsn": "x", "agent_id": "a/b"}, "shared.agent_id"),
        ({"dsn": "x", "search_timeout": 0.0}, "shared.search_timeout"),
    ],
)
def test_shared_settings_are_checked(over, words):
    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        build(**over)


def test_agent_refs_and_default_agent_id(tmp_path):
    from memcli import team
    from memcli.vault.workspace import open_workspace

    assert team.parse_ref("@bob/memory/x.md") == ("bob", "memory/x.md")
    assert team.parse_ref("memory/x.md") is None and team.parse_ref("@bob") is None
    root = tmp_path / "Ünïcode notes!"
    root.mkdir()
    ws = open_workspace(root, {}, {"shared.dsn": "postgresql:///x"})
    assert team.agent_of(ws) == "n-code-notes"
    assert team.target(ws).namespace == "default"


def test_tsvector_holds_mems_tokens_with_their_frequency():
    from memcli.index.keyword import tokenizer
    from memcli.team import lexemes

    text = "部署流程 部署 handleWebSocketReconnect INV-20931-QX billing billing"
    vec = lexemes.full_text(text)[0]
    for token in set(tokenizer.tokenize(text)):
        assert lexemes.quote(token) + ":" in vec
    assert "'部署':1,2" in vec and "'bill':1,2 " in vec  # stemmed as mem stems it
    assert lexemes.quote("it's\\x") == "'it''s\\\\x'"
    assert lexemes.weighted("billing Billing 部署", [("invoice", 0.3), ("bill", 0.5)]) == [
        ("bill", 1.0, True),
        ("部", 1.0, False),
        ("署", 1.0, False),
        ("部署", 1.0, True),
        ("invoice", 0.3, False),
    ]
