"""The owner's names: learned from what the assistant signed for the user, read from the config
and USER.md, and searched as "the user" (memcli.extraction.conversation.signed,
memcli.vault.owner, memcli.retrieval.framing.as_owner), through the real CLI where it matters."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memcli.extraction.conversation.signed import names_in
from memcli.retrieval.framing import as_owner, first_person
from memcli.vault import owner
from memcli.vault.workspace import open_workspace as _open


def open_workspace(root: Path):
    return _open(Path(root).resolve(), dict(os.environ))


EMAIL = (
    "Sure, here's a short email:\n\nSubject: Use the D5 preset\n\nHi all,\n\nHarbourline approved the "
    "renders. Please use the punggol preset for presentation renders.\n\nThanks,\nHa-eun"
)


def test_a_letter_signed_for_the_user_names_them():
    assert names_in([("user", "can u write the team an email about the preset"), ("assistant", EMAIL)]) == ["Ha-eun"]
    german = "Einladungsschreiben\n\nHiermit lade ich ...\n\nMit freundlichen Grüßen\nXu Qing\n\n---"
    assert names_in([("assistant", german)]) == ["Xu Qing"]
    japanese = "写真を何枚か添付いたします。\n今後ともよろしくお願いいたします。\n\nHemi Walker\n\n(Thank you ...)"
    assert names_in([("assistant", japanese)]) == ["Hemi Walker"]
    assert names_in([("assistant", "... é só nos chamar. Um abraço, Dra. Beatriz.")]) == ["Beatriz"]
    assert names_in([("assistant", "**Weekly change summary**\n*Prepared by: Ha-eun*")]) == ["Ha-eun"]


def test_an_introduction_names_the_user_and_a_request_does_not():
    assert names_in([("user", "check my self intro: 大家好！我叫Njeri，我是肯尼亚人。")]) == ["Njeri"]
    assert names_in([("user", "星期三我叫Daniel去接Joon。")]) == []  # "I'll have Daniel pick Joon up"
    assert names_in([("assistant", "はじめまして。ディエゴ・サルセドと申します。")]) == ["ディエゴ・サルセド"]


def test_no_one_owner_in_a_placeholder_a_group_or_someone_the_user_names():
    assert names_in([("assistant", "Best regards,\n[Your name]")]) == []
    assert names_in([("assistant", "Kind regards,\nThe Team")]) == []
    assert names_in([("assistant", "Love,\nHa-eun, Daniel and Joon")]) == []
    assert names_in([("user", "사랑해요"), ("assistant", "하은, Daniel, 준 올림")]) == []
    friend = [("user", "my friend marta wants her deposit email to sound nicer"), ("assistant", "Best,\nMarta")]
    assert names_in(friend) == []  # the user speaks of Marta: she is someone else
    assert names_in([("assistant", "Thanks for asking! Here is the plan.")]) == []
    assert names_in([("assistant", "Norwegian Wood, written by Haruki Murakami, is a good start.")]) == []
    assert names_in([("assistant", "Rank them:\n- Best\n- Worst\n- Average")]) == []  # a list
    assert names_in([("assistant", "The parcel is sent by DHL Express:\nTracking: 123")]) == []


def test_a_query_naming_the_owner_asks_about_the_user():
    assert (
        as_owner("What camera does Ha-eun shoot film with?", ("Ha-eun",))
        == "What camera does the user shoot film with?"
    )
    assert first_person(as_owner("Which airline are Xu's parents flying with?", ("Xu Qing",))) == (
        "Which airline are my parents flying with?"
    )
    assert as_owner("What is Xu Qing's job?", ("Xu Qing",)) == "What is the user's job?"
    assert as_owner("where does ha-eun live", ("Ha-eun",)) == "where does the user live"
    # one word of the name beside another name is someone else: her father, a title
    assert as_owner("What does Xu Jianguo do?", ("Xu Qing",)) == "What does Xu Jianguo do?"
    assert as_owner("Did Mr Xu call?", ("Xu Qing",)) == "Did Mr Xu call?"
    assert as_owner("Does Xu like beer?", ("Xu Qing",)) == "Does the user like beer?"
    assert as_owner("What camera does Ha-eun use?", ()) == "What camera does Ha-eun use?"
    assert as_owner("Is Hanna's camera new?", ("Han",)) == "Is Hanna's camera new?"  # a word, not a part of one
    # a name that is also a word counts only capitalised, and not as the query's first word
    assert as_owner("Did Grace say where grace notes go?", ("Grace",)) == "Did the user say where grace notes go?"
    assert as_owner("Will the flight move in May?", ("Will", "May")) == "Will the flight move in May?"
    assert as_owner("What did Will order?", ("Will",)) == "What did the user order?"


def test_names_from_the_config_and_user_md(ws):
    (ws / "mem.yaml").write_text("owner_names: [Oh Ha-eun]\n", encoding="utf-8")
    (ws / "USER.md").write_text(
        "# USER.md\n\n- **Name:** Oh Ha-eun\n- **What to call them:** Ha-eun\n- **Timezone:** Asia/Singapore\n",
        encoding="utf-8",
    )
    assert owner.names(open_workspace(ws)) == ("Oh Ha-eun", "Ha-eun")
    (ws / "USER.md").write_text("- **Name:** <UserName>\n", encoding="utf-8")  # a template's placeholder
    assert owner.names(open_workspace(ws)) == ("Oh Ha-eun",)


def _ingest(run_mem, ws, tmp_path, sid, day, messages):
    path = tmp_path / f"{sid}.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    code, _, err = run_mem("-w", ws, "ingest", path, "--session-id", sid, "--date", day, "--force", "--json")
    assert code == 0, err


CHATS = {
    "camera": [
        {"role": "user", "content": "my dad gave me his old nikon fm2, i shoot portra 400 on it now"},
        {
            "role": "assistant",
            "content": "A lovely camera to shoot film with. Rate Portra at 200 for denser negatives.",
        },
    ],
    "email": [
        {
            "role": "user",
            "content": "wfh wednesday. harbourline approved the level 2 renders and priya wants the same look "
            "for the polyclinic. can u write a short email to the team about using our d5 preset",
        },
        {"role": "assistant", "content": EMAIL},
    ],
    "tea": [
        {"role": "user", "content": "i gave up coffee, barley tea every morning instead"},
        {"role": "assistant", "content": "Barley tea is caffeine free, a good swap."},
    ],
    "boat": [
        {"role": "user", "content": "dragon boat training moved to sundays 7:30am"},
        {"role": "assistant", "content": "Noted, Sunday mornings at 7:30."},
    ],
}


def test_search_reads_the_owners_name_as_the_user(ws, tmp_path, run_mem):
    for i, (sid, messages) in enumerate(CHATS.items()):
        _ingest(run_mem, ws, tmp_path, sid, f"2030-03-0{i + 1}", messages)
    assert owner.learned(open_workspace(ws)) == {"email": ["Ha-eun"]}

    def first_hit(query):
        code, out, err = run_mem("-w", ws, "search", "--json", "--limit", "3", "--", query)
        assert code == 0, err
        return json.loads(out)["results"][0]["path"]

    # the email is the only text holding "Ha-eun": without the owner's name read as the user it came first
    assert "/2030-03-01/" in first_hit("What camera does Ha-eun have?")
    # derived state: gone with mem_metadata/, back after `mem reindex`
    (ws / "mem_metadata" / owner.FILE).unlink()
    code, _, err = run_mem("-w", ws, "reindex")
    assert code == 0, err
    assert owner.learned(open_workspace(ws)) == {"email": ["Ha-eun"]}
