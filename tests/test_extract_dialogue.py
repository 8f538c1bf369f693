"""The offline extractor reads a chat as a dialogue: accepted and refused suggestions, requests
to the assistant, context carried over, CJK statements, procedures; and through `mem ingest`."""

from __future__ import annotations

import json

import pytest

from memcli.extraction.conversation import Request, chatter, dialogue, rules
from memcli.extraction.conversation.glossary import gloss


def chat(*turns: str) -> list[dict]:
    """Alternating turns, the user first ("" skips a turn)."""
    out = []
    for i, text in enumerate(turns):
        role = "user" if i % 2 == 0 else "assistant"
        if text:
            out.append(
                {
                    "id": f"m{i}",
                    "name": role,
                    "role": role,
                    "timestamp": None,
                    "content": [{"type": "text", "text": text}],
                }
            )
    return out


def chat_file(path, day: str, talk: list[tuple[str, str]]):
    """`talk` ((role, text) pairs) as an OpenAI-style chat file of `day`, a minute apart."""
    msgs = [{"role": r, "content": t, "timestamp": f"{day}T10:0{i}:00Z"} for i, (r, t) in enumerate(talk)]
    path.write_text(json.dumps(msgs), encoding="utf-8")
    return path


def bullets(found: dict) -> list[str]:
    return [b for section in found.values() for b in section]


def test_an_accepted_suggestion_is_the_users_decision():
    found = rules.findings(
        chat(
            "I signed up for the Leiden half marathon, it's on May 17.",
            "Congratulations! A tempo run once a week helps. Shall I lock in the tempo on Tuesdays?",
            "yes let's do that. but make it 20 min at 5:05, i want it a bit harder",
        )
    )
    assert found["Decisions"] == [
        "- The user agreed to the assistant's suggestion: Lock in the tempo on Tuesdays.",
        "- The user asked to make it 20 min at 5:05, the user wants it a bit harder.",
    ]
    assert "- The user signed up for the Leiden half marathon, it's on May 17." in found["Facts"]


def test_a_refused_suggestion_is_not_kept():
    found = rules.findings(
        chat(
            "the dedupe job holds connections too long",
            "A common pattern is a Redis set of seen ids with a TTL. I'd suggest Redis for the dedupe.",
            "No, I'd rather not use Redis for that. we'll put a unique index on event_id instead",
            "Fair enough. A dog walker once a day can also help the dog. I recommend a dog walker.",
            "nah no dog walker",
        )
    )
    text = "\n".join(bullets(found))
    assert "agreed" not in text and "Redis set" not in text
    assert found["Preferences"][0].startswith("- The user would rather not use Redis for that")
    assert "- The user does not want a dog walker." in found["Preferences"]
    assert "- The user's team will put a unique index on event_id instead." in bullets(found)


def test_a_thing_turned_down_keeps_its_no():
    found = rules.findings(
        chat(
            "rode to work along the river pathway today, 7 km",
            "Nice! For the hill home, an e-bike would make it easy.",
            "no ebike, i want the exercise",
        )
    )
    assert found["Preferences"] == ["- The user does not want an ebike.", "- The user wants the exercise."]


def test_a_suggestion_turned_down_mid_turn_keeps_its_no():
    found = rules.findings(
        chat(
            "our helles takes 12-14 days to hit final gravity at 9 degrees",
            "An iSpindel in the tank would log gravity for you every 15 minutes.",
            "lagering is 4 weeks. and nah to the ispindel, konrad hates gadgets in his tanks",
        )
    )
    assert "- The user does not want the ispindel." in found["Preferences"]
    assert not any(b.startswith("- To the ispindel") for bs in found.values() for b in bs)


def test_a_sentence_leaning_on_the_turn_before_carries_its_subject():
    found = rules.findings(
        chat(
            "did a 10k time trial this morning for the half marathon, 51:40",
            "Great result! For the half marathon that predicts about 1:55; 1:52 is a stretch goal for the half marathon.",
            "I'm changing my goal to 1:52 then.",
        )
    )
    [line] = [b for b in bullets(found) if "1:52" in b]
    assert line.startswith("- The user's goal is now 1:52 (about: ")
    assert "half" in line or "marathon" in line
    assert "- The user did a 10k time trial this morning for the half marathon, 51:40." in bullets(found)


@pytest.mark.parametrize(
    "turns",
    [
        (
            "write me a limerick about kafka consumer groups",
            "There once was a consumer named Lou…",
            "lol another one",
            "A partition rebalanced at noon…",
            "haha ok that one is going in the team channel",
        ),
        (
            "tell me a fun fact, im bored in a meeting",
            "Octopuses have three hearts.",
            "thats wild. another",
            "Honey never spoils.",
            "ok one more then i have to pay attention",
        ),
        (
            'translate to dutch pls: "thanks for the lovely dinner, next time it\'s at our place"',
            "Bedankt voor het heerlijke etentje!",
            "ok perfect, sending it",
        ),
        ("how many ml in a cup", "A US cup is about 240 ml.", "american recipe so 240. thanks"),
        ("Perfect, that's what I needed.", "", "thanks!! 👍"),
        ("help me plan a team offsite", "Here is a one-day plan…", "that's exactly what I needed, thank you"),
        (
            "name ideas for our pub quiz team. we're all nurses",
            "- Quiz Pro Quo\n- The Bedside Manners",
            "bedside manners lol. done",
        ),
        ("gift ideas for a 5 year old who likes dinosaurs", "A fossil dig kit, a dinosaur lamp…", "fossil kit it is"),
        # chat spelling, a game the assistant runs, the weather in other words
        (
            "can u translate this to english, a colleague got it on a box: \"Ne pas exposer à l'humidité. "
            'Conserver dans un endroit sec."',
            "Do not expose to moisture. Store in a cool, dry place.",
            "ok thx",
        ),
        ("quiz me on capitals, africa only, hard mode", "Burkina Faso?", "ouagadougou, mbabane, lilongwe"),
        ("the dust today is something else. is it always this dry before the short rains", "Yes, usually.", "lol true"),
        # a piece of content named without a verb, and a quiz the user accepts: no procedure
        ("riddle about a lighthouse pls", "What has a light but no switch? A lighthouse.", "haha ok"),
        (
            "4 trivia questions for the staff quiz, not too hard",
            "1. What gas do plants absorb? (CO2)\n2. How many legs has a spider? (8)\n"
            "3. What is the largest ocean? (Pacific)\n4. Who painted the Mona Lisa? (Da Vinci)",
            "perfect ty",
        ),
    ],
)
def test_chit_chat_and_requests_leave_no_note(turns):
    assert rules.extract(Request(chat(*turns), "2026-06-29", "s")) is None


def test_the_users_own_lines_after_a_request_for_their_own_task_are_kept():
    """After "can u write a closing checklist" the user's first-person lines say how things are
    for them; after a request to translate, tell a joke or run a game they are its material."""
    found = rules.read(
        chat(
            "we keep screwing up closing. can u write a closing checklist for the kitchen. i close with gus tue to thu"
        )
    )[0]
    assert any("closes with gus" in b for b in bullets(found)), found


def test_what_follows_the_users_own_question_is_context_they_give():
    """A question about the user's matter (asked in the first person, or after what they stated)
    is followed by context worth keeping; a rant's rhetorical question is not."""
    answer = "Good question."
    own = rules.findings(chat(answer, answer, "also should i mention the standup thing? standup at 9:30 is too early"))
    assert "- Standup at 9:30 is too early." in own["Facts"]
    stated = rules.findings(
        chat(answer, answer, "ezyvet went live yesterday. its fine? lab results pull in automatically")
    )
    assert "- Lab results pull in automatically." in stated["Facts"]
    rant = chat(
        "why is melbourne weather like this? sunny at 8, hail at 11", "Melbourne sits between hot and cold air."
    )
    assert rules.extract(Request(rant, "2026-06-29", "s")) is None


def test_what_a_question_states_first_is_kept_without_the_question():
    """Facts given as a question's context, in the same sentence, are the user's; the question
    is not, nor a question's head that is not the user's own ("the sun, is it a star?")."""
    answer = "Sure."
    found = rules.findings(
        chat(
            answer,
            answer,
            "quick one: my first patient is at 8 and i get there 7:20, is 40 min enough for the batch?",
            answer,
            "and the x-rays for new cases i send to imagem vila mariana, should i ask for dicom or pdf?",
        )
    )
    said = bullets(found)
    assert "- The user's first patient is at 8 and the user gets there 7:20." in said, said
    assert any(b.startswith("- The x-rays for new cases the user sends to imagem vila mariana") for b in said), said
    assert not any("?" in b or "dicom" in b or "40 min" in b for b in said), said
    trivia = chat("ok so the moon, is it moving away from earth?", "Yes, about 3.8 cm a year.")
    assert rules.extract(Request(trivia, "2026-06-29", "s")) is None


@pytest.mark.parametrize(
    "said",
    [
        "is it true tempura is a portuguese word?? my grandma says so",
        "how long would it take to drive to the moon, lucas asked",
    ],
)
def test_a_saying_without_what_was_said_and_a_reported_question_are_no_statements(said):
    assert rules.extract(Request(chat(said, "A long answer."), "2026-06-29", "s")) is None
    kept = rules.findings(chat("my boss says we ship on friday", "Good luck."))
    assert any("boss says" in b and "friday" in b for b in bullets(kept)), kept  # what was said is there


@pytest.mark.parametrize(
    "said,core",
    [
        ("ok so we moved the standup", "we moved the standup"),
        ("Good, the canary is healthy", "the canary is healthy"),
        ("good coffee matters to me", "good coffee matters to me"),  # "good" closed by no comma is no filler
        ("morning runs are my favourite", "morning runs are my favourite"),
        ("Update: the pool is 40 now lol", "the pool is 40 now"),
    ],
)
def test_a_sentence_loses_the_chat_fillers_around_it(said, core):
    assert dialogue.clean(said) == (core, False)


def test_cjk_statements_are_kept_quoted_with_english_keywords():
    found = rules.findings(
        chat(
            "日本語の練習をしたいです。文を書きますから、直してください。",
            "もちろんです！",
            "私はダークモードが好きです。",
            "とても自然です！",
            "엄마 생신은 4월 18일이야. 부산에 사셔.",
            "좋네요!",
            "고마워!",
        )
    )
    assert found["Preferences"] == [
        "- The user said: 「私はダークモードが好きです。」 (keywords: dark mode, like likes prefer)"
    ]
    assert found["Facts"] == [
        "- The user said: “엄마 생신은 4월 18일이야. 부산에 사셔.” "
        "(keywords: mother, birthday, April 18, Busan, live lives home)"
    ]


def test_cjk_details_for_the_users_own_task_are_kept_and_a_text_to_check_is_not():
    """After "help me with the invitation stuff", the visit's details typed in Chinese are the
    user's facts; after "can u check this", the Chinese text is the material to check."""
    details = "爸妈6月5号到法兰克福，坐汉莎的飞机从青岛直飞。住三个星期，住我们家。"
    found = rules.findings(
        chat(
            f"my parents are coming in june!! help me with the invitation stuff pls. here are the details\n{details}",
            "Congratulations! Here is what the invitation letter needs.",
            "perfect",
        )
    )
    assert any("汉莎" in b for bs in found.values() for b in bs)
    found = rules.findings(chat(f"can u check this for my mum pls\n{details}", "It reads well; one small fix.", "thx"))
    assert not any("汉莎" in b for bs in found.values() for b in bs)


@pytest.mark.parametrize(
    "text,keys",
    [
        ("私たちのフライトは5月2日から5月9日に変わりました。", ["flight", "May 2", "May 9"]),
        ("지우 누나 출산 예정일이 6월 20일로 나왔대", ["sister", "birth pregnancy due", "June 20"]),
        ("她喜欢喝乌龙茶", ["like likes prefer", "drink", "oolong"]),
        ("大丈夫です", ["fine okay"]),  # the longer word wins: no "husband" (丈夫) inside it
        ("クラスが変わりました。日曜日の10時半になりました。", ["class lesson", "Sunday"]),
        ("从下个星期开始改成星期四送货", ["week", "Thursday", "delivery"]),
        ("林先生今天来了", ["today"]),  # 先生 is "Mr." in Chinese: no "teacher"
        ("我妈下个月从成都来，我爸不来", ["mother", "father"]),  # "my mum", "my dad" as people say it
        ("我舅妈来了", []),  # an aunt (舅妈) is no mother
    ],
)
def test_glossary(text, keys):
    assert gloss(text) == keys


STEPS = (
    "Here's the runbook:\n\n**Backfill runbook**\n1. Post in #data-incidents.\n2. Pause the schedule.\n"
    "3. Launch the backfill, max 4 partitions.\n4. Unpause the schedule."
)


def test_an_accepted_list_is_kept_as_ordered_steps_last_version_only():
    revised = STEPS.replace("4. Unpause", "4. If the diff is off, restore from your snapshot.\n5. Unpause")
    found = rules.findings(
        chat(
            "can you write down how we do backfills?",
            STEPS,
            "add a rollback between 3 and 4: restore from the snapshot",
            revised,
            "👌 putting it in the wiki",
        )
    )
    assert found["Procedures"] == [
        "- Backfill runbook (in order):\n  1. Post in #data-incidents.\n"
        "  2. Pause the schedule.\n  3. Launch the backfill, max 4 partitions.\n"
        "  4. If the diff is off, restore from the user's snapshot.\n  5. Unpause the schedule."
    ]


def test_a_list_of_options_the_user_questions_is_not_a_procedure():
    found = rules.findings(
        chat("my dog keeps scratching", "Could be:\n1. Allergies\n2. Food\n3. Fleas", "could it be the food though?")
    )
    assert found["Procedures"] == []


def test_cli_ingest_writes_third_person_knowledge_and_reports_a_filler_session(ws, tmp_path, mem):
    day = "2026-06-29"
    talk = [
        ("user", "switched to helix last week, vs code was too slow on my laptop"),
        ("assistant", "Helix is fast. For themes I'd suggest catppuccin_mocha. Want me to set it up?"),
        ("user", "yes let's do that. I no longer like light themes"),
        ("user", "Perfect, that's what I needed."),
    ]
    conv = chat_file(tmp_path / "c.json", day, talk)
    code, out, err = mem("-w", ws, "ingest", conv, "-s", "s1", "--force", "--json")
    assert code == 0, err
    [note] = list((ws / "memory" / day).glob("*.md"))
    text = note.read_text(encoding="utf-8")
    assert "- The user switched to helix last week, vs code was too slow on their laptop." in text
    assert "- The user no longer likes light themes." in text
    assert "- The user agreed to the assistant's suggestion: Set it up" not in text  # names the theme, not "it"
    assert "catppuccin_mocha" in text
    assert "User:" not in text and "Perfect" not in text and "noes" not in text

    filler = tmp_path / "f.json"
    filler.write_text(
        json.dumps(
            [
                {"role": "user", "content": "write me a haiku about moving boxes"},
                {"role": "assistant", "content": "Tape screams through the room…"},
                {"role": "user", "content": "lol accurate. one more"},
            ]
        ),
        encoding="utf-8",
    )
    code, out, err = mem("-w", ws, "ingest", filler, "-s", "s2", "--force", "--date", day, "--json")
    rep = json.loads(out)
    assert code == 0 and rep["extracted"] and rep["changes"] == []
    assert rep["reason"] == "Extracted with rules (force): nothing new worth remembering"
    assert len(list((ws / "memory" / day).glob("*.md"))) == 1


@pytest.mark.parametrize(
    "said,stated",
    [
        ("I'm changing my goal to 1:58", "The user's goal is now 1:58."),
        ("I switched the theme from light to dark", "The user's theme is now dark."),
        ("I moved my 1:1 to thursdays", "The user's 1:1 is now thursdays."),
        ("I moved to Utrecht", "The user moved to Utrecht."),  # no attribute: stated as said
    ],
)
def test_a_change_is_stated_as_the_current_value(said, stated):
    assert bullets(rules.findings(chat(said))) == [f"- {stated}"]


def test_a_group_chat_keeps_what_people_say_to_each_other():
    msgs = [
        {"id": str(i), "name": who, "role": "user", "timestamp": None, "content": [{"type": "text", "text": t}]}
        for i, (who, t) in enumerate(
            [
                ("Caroline", "What did you do this weekend?"),
                ("Melanie", "We last went camping with the kids at the lake."),
                ("Caroline", "You should try the trail at Bear Lake, I loved it."),
            ]
        )
    ]
    found = bullets(rules.findings(msgs))
    assert "- Melanie's household last went camping with the kids at the lake." in found
    assert any(b.startswith("- You should try the trail at Bear Lake, Caroline loved it") for b in found)


@pytest.mark.parametrize(
    "line", ["questions for the parents' evening are ready", "facts about my commute: 40 min each way"]
)
def test_a_statement_about_content_is_no_request(line):
    assert not chatter.is_request(line)


def test_an_errand_keeps_nothing_of_the_reactions_and_says_it_was_an_errand():
    found, errand = rules.read(
        chat(
            "quick question: how long do you soft boil an egg",
            "Six and a half minutes from boiling water, then straight into cold water.",
            "haha ok six it is lol",
        )
    )
    assert errand and bullets(found) == []
    found, errand = rules.read(
        chat(
            "-12 this morning and the bus was late again. why is winter like this",
            "Sorry! Layers help: a thin wool base, then a fleece.",
            "lol ok. tea it is",
        )
    )
    assert errand  # what the first line said was the question's context
    assert not any("tea" in b for b in bullets(found))


def test_taking_up_an_item_of_the_answer_is_kept_and_still_the_errands():
    """A recommendation asked for and one taken up: what was taken up is kept, and the chat is still
    an errand (it founds no digest node); a reply about a line of advice tells something."""
    found, errand = rules.read(
        chat(
            "finished the three-body problem books last night. what should i read next",
            "If you liked it, try:\n- Project Hail Mary\n- Blindsight (dense, eerie)\n- The Dispossessed",
            "read the dispossessed already. blindsight it is",
        )
    )
    assert errand and any("blindsight" in b.lower() for b in bullets(found))
    found, errand = rules.read(
        chat(
            "soil test for the east bed came back at ph 5.2, too low for beans? what should i do",
            "A little low for beans. While you wait:\n- Work in garden lime at about 150 g per square metre.\n"
            "- Ask Tomasz whether the plot next door was limed last spring before you buy any.",
            "tomasz limed the plot in march, so no lime for me this year",
        )
    )
    assert not errand


def test_a_chat_that_opens_with_a_question_and_then_tells_something_is_no_errand():
    found, errand = rules.read(
        chat(
            "whats a good stretch for tight calves",
            "A wall calf stretch, 30 seconds each side, twice a day.",
            "thanks. im running the berlin marathon on sept 27, my goal is 3:30",
        )
    )
    assert not errand
    assert any("berlin marathon" in b for b in bullets(found))


@pytest.mark.parametrize(
    "line",
    [
        "whats a japanese tongue twister",  # typed without the apostrophe, still a question
        "settle a bet: is a peanut a nut",
        "settle this, was einstein bad at maths as a kid",
        "random question, how many ping pong balls would fit in a city bus",
        "rainy evening, give me 3 films, nothing sad",
        "question from lucas",
        "make this sound less rude: 'rent is late again'",
    ],
)
def test_an_ask_typed_loosely_states_nothing(line):
    found, errand = rules.read(chat(line, "Here you go.", "lol ok"))
    assert bullets(found) == [] and errand


def test_why_a_question_was_asked_and_what_its_answer_taught_state_nothing():
    found, errand = rules.read(
        chat(
            "random q how is tiramisu actually made? had one at a cafe and now im curious",
            "Classic tiramisu is a no-bake dessert: egg yolks and sugar, mascarpone, cream, ladyfingers in coffee.",
            "oh its not even baked. interesting",
        )
    )
    assert bullets(found) == [] and errand
    # curious about something of the user's own is no reason for a question: it is kept
    found, errand = rules.read(
        chat("im curious about the senior role at work, applications close friday", "Go for it.")
    )
    assert not errand and any("senior role" in b for b in bullets(found))


def test_cli_an_errands_note_founds_no_digest_node(ws, tmp_path, mem):
    day = "2026-06-30"
    talk = [
        ("user", "lazy question: my chili recipe serves 4 and i want to feed 10. how much do i scale it"),
        ("assistant", "Multiply everything by 2.5, but go easy on the chili powder."),
        ("user", "lol ok i'll just triple it"),
    ]
    conv = chat_file(tmp_path / "e.json", day, talk)
    code, out, err = mem("-w", ws, "ingest", conv, "-s", "e1", "--force", "--json")
    assert code == 0, err
    [note] = list((ws / "memory" / day).glob("*.md"))
    text = note.read_text(encoding="utf-8")
    assert "errand: true" in text and "chili recipe serves 4" in text and "triple" not in text
    code, out, err = mem("-w", ws, "dream", "--date", day, "--json")
    assert code == 0, err
    assert not list((ws / "digest").rglob("*.md"))
    assert "founds none" in out


def test_the_users_own_list_is_a_procedure_in_their_words():
    found = rules.findings(
        chat(
            "writing down my bread routine before i forget:\n1. feed the starter at 9\n2. mix at 1, rest 30 min\n"
            "3. four folds, 30 min apart\n4. shape and proof in the fridge overnight",
            "Nice routine. The overnight proof will give a tangier loaf.",
        )
    )
    assert found["Procedures"] == [
        "- Writing down the user's bread routine before the user forgets (in order):\n"
        "  1. feed the starter at 9\n  2. mix at 1, rest 30 min\n  3. four folds, 30 min apart\n"
        "  4. shape and proof in the fridge overnight"
    ]
    assert not any(b.startswith("- 1") for b in found["Facts"])  # the steps are not facts one by one


def test_a_list_the_user_asked_to_change_is_kept_when_they_turn_down_its_closing_question():
    found = rules.findings(
        chat(
            "need to update the opening checklist: move the till count to the very top",
            "**Opening checklist**\n1. Count the till.\n2. Lights and music on.\n3. Unlock the front door.\n\n"
            "Should the lights come before the till count?",
            "no, till first. keep it like that",
        )
    )
    assert found["Procedures"] == [
        "- Opening checklist (in order):\n  1. Count the till.\n  2. Lights and music on.\n  3. Unlock the front door."
    ]


def test_how_the_user_wants_to_be_answered_is_a_preference():
    found = rules.findings(
        chat(
            "nurse here so you can skip the basics. my dad's potassium is 5.9",
            "Understood. At 5.9 the usual first step is an ECG.",
            "no need to explain the ECG changes, just the drugs",
        )
    )
    assert "- The user wants the assistant to skip the basics." in found["Preferences"]
    assert "- The user does not want the assistant to explain the ECG changes, just the drugs." in found["Preferences"]


def test_an_order_on_the_answers_length_or_tone_is_a_preference():
    found = rules.findings(
        chat(
            "conda takes 20 min to solve my env. i use conda for everything. keep it short pls, no essays",
            "Use the libmamba solver and strict channel priority.",
            "here's my aims paragraph, be blunt i can take it",
        )
    )
    assert "- The user wants the assistant's answers short, no essays." in found["Preferences"]
    assert "- The user wants the assistant's answers and feedback blunt, the user can take it." in found["Preferences"]
    assert not any("keep it short" in b.lower() for b in bullets(found))
    found = rules.findings(
        chat("hosting 12 people tonight, keep it simple", "Mandazi and samosas.", "be honest, is it enough?")
    )
    assert not found.get("Preferences")  # a plan kept simple, a question asked honestly: no answer style


@pytest.mark.parametrize(
    "reply,kept",
    [
        ("serviceberry yes", "- The user chose serviceberry."),
        ("the blue one yes", "- The user chose the blue one."),
        ("tuesday is free yes", None),  # a statement that ends in "yes" chooses nothing
        ("oh yes", None),
    ],
)
def test_a_name_confirmed_with_yes_is_a_choice(reply, kept):
    found = rules.findings(chat("planting a bird bed.", "Serviceberry or chokecherry both feed birds.", reply))
    assert (kept in found["Decisions"]) if kept else not any("chose" in b for b in bullets(found))


def test_a_question_quoting_text_with_commas_is_still_a_question():
    found, errand = rules.read(
        chat(
            'how do you say "thanks for having us, everything was delicious" in french',
            '"Merci de nous avoir reçus, tout était délicieux !" or, warmer, "c\'était un vrai régal".',
            "the second one sounds fancier",
        )
    )
    assert errand and bullets(found) == []


@pytest.mark.parametrize(
    "turns",
    [
        # a mood of the minute before the request, and surprise at the answer
        (
            "so bored at the dentist. give me some weird facts about octopuses",
            "- An octopus has three hearts.\n- Its blood is blue.",
            "three hearts, crazy",
        ),
        # the pieces wanted without a verb for the assistant, and an item of the answer picked
        (
            "need a couple of jokes for my retirement speech on friday",
            "1. I'm not retiring, I'm going on permanent leave.\n2. The coffee machine will miss me most.",
            "the coffee one is perfect for the finance lot",
        ),
        # a greeting quoted in the question: its comma does not end the question
        ('how do you say "good evening, welcome to our home" in spanish', '"Buenas noches, bienvenidos."', "nice"),
    ],
)
def test_a_chat_of_moods_asks_and_reactions_is_an_errand_that_states_nothing(turns):
    found, errand = rules.read(chat(*turns))
    assert errand and bullets(found) == []


def test_a_verdict_on_what_was_said_and_the_weather_are_no_statements():
    found = rules.findings(
        chat(
            "watched a doc last night, apparently puffins keep the same partner for life",
            "They do! Most pairs reunite at the same burrow every spring.",
            "that's the sweetest thing I've heard all day",
            "Isn't it? Anything else on your mind?",
            "ugh it's been snowing all week here",
        )
    )
    assert bullets(found) == ["- The user watched a doc last night, apparently puffins keep the same partner for life."]
    assert chatter.is_verdict("That's the sweetest thing the user has heard all day (about: puffins).")
    assert not chatter.is_verdict("that's the best ramen in Montreal, we go every friday")


def test_a_comment_on_what_was_said_is_no_statement():
    found = rules.findings(
        chat("bay harvest sent the rate sheet, $39 a bin now. bit of a jump", "That's up $3 a bin.", "yep")
    )
    assert bullets(found) == ["- Bay harvest sent the rate sheet, $39 a bin now."]


@pytest.mark.parametrize(
    "line", ["mad at our builder, my deck is three weeks late", "tired of my old tractor, selling it in may"]
)
def test_a_feeling_about_something_is_still_stated(line):
    found, errand = rules.read(chat("whats a fair price for a used deck", "Around $300 per m2.", line))
    assert not errand and bullets(found)


def test_a_statement_trailing_off_before_a_question_is_kept():
    found = rules.findings(
        chat("so officially switched from avimark to ezyvet and honestly... its fine? invoicing is slower", "ok")
    )
    assert "- The user officially switched from avimark to ezyvet." in found["Facts"]


def test_an_emoji_between_two_clauses_ends_the_first():
    found = rules.findings(
        chat(
            "the boiler guy cancelled again 😡 we moved the service to friday the 9th",
            "Annoying! Friday the 9th it is.",
            "did you see that match last night 🙄 how was that offside",
        )
    )
    assert bullets(found) == [
        "- The boiler guy cancelled again.",
        "- The user moved the service to friday the 9th.",
    ]
    # around a short part the emoji ends nothing: a short lead names what the rest is about, a
    # short tail leans on the lead
    assert rules.turn_sentences("Choir again 😩 the hall is booked on tuesdays") == [
        "Choir again 😩 the hall is booked on tuesdays"
    ]
    assert len(rules.turn_sentences("the fox took three of the ducks 😭 only 5 left")) == 1


def test_a_turn_in_two_scripts_reads_each_line_in_its_own():
    found = rules.findings(
        chat(
            "im taking japanese at the community centre on thursdays 7 to 9, level 3. "
            "my teacher wants a short diary entry, can you check it:\n"
            "今日は友達と公園で散歩しました。とても楽しかったです。",
            "Looks good! One small fix…",
            "thanks. 良い週末を",
            "",
            "the lease ends in march so we move then\n来月から大阪で働きます。",
        )
    )
    got = bullets(found)
    assert "- The user is taking japanese at the community centre on thursdays 7 to 9, level 3." in got
    assert not any("散歩" in b or "週末" in b for b in got)  # the text to check, a sign-off
    assert any(b.startswith("- The user said: 「来月から大阪で働きます。」") for b in got)
    assert any("lease ends in march" in b for b in got)


def test_a_question_asked_without_its_mark_after_a_statement_is_not_kept():
    found = rules.findings(
        chat(
            "i took leave 13th to 15th to be with her in othaya. what should i expect after, and what do i pack for her",
            "",
            "jammed my finger in goal on wednesday. its swollen a bit, can i play this week",
        )
    )
    kept = bullets(found)
    assert "- The user took leave 13th to 15th to be with her in othaya." in kept
    assert any(b.startswith("- Its swollen a bit") for b in kept)
    assert not any(w in b.lower() for b in kept for w in ("pack", "can the user", "play this week"))
