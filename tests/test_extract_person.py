"""First and second person into third (memcli.extraction.conversation.person): table-driven."""

from __future__ import annotations

import pytest

from memcli.extraction.conversation.person import convert, second_person, third_singular


@pytest.mark.parametrize(
    "said,stated",
    [
        # the verb after "I" takes -s only in the simple present
        ("I prefer tea over coffee", "the user prefers tea over coffee"),
        ("I moved to Utrecht", "the user moved to Utrecht"),
        ("I can swim", "the user can swim"),
        ("I don't like meetings", "the user doesn't like meetings"),
        ("I dont like meetings", "the user doesn't like meetings"),
        ("I do not like meetings", "the user does not like meetings"),
        ("I was late", "the user was late"),
        ("I have a dog", "the user has a dog"),
        ("I haven't decided", "the user hasn't decided"),
        ("I went home", "the user went home"),
        ("I bought new shoes", "the user bought new shoes"),
        ("I go running", "the user goes running"),
        ("I watch films", "the user watches films"),
        ("I try hard", "the user tries hard"),
        ("I play chess", "the user plays chess"),
        ("I put it there", "the user put it there"),
        # adverbs between the subject and its verb are stepped over
        ("I no longer like oolong", "the user no longer likes oolong"),
        ("I really enjoy my job", "the user really enjoys their job"),
        ("I still use vim", "the user still uses vim"),
        ("I never drink coffee", "the user never drinks coffee"),
        # contractions and chat spellings
        ("I'm changing my goal to 1:52", "the user is changing their goal to 1:52"),
        ("im learning japanese", "the user is learning japanese"),
        ("I've worked with him", "the user has worked with him"),
        ("I'll draft it by Friday", "the user will draft it by Friday"),
        ("I'd rather not use Redis", "the user would rather not use Redis"),
        ("I'd decided already", "the user had decided already"),
        ("I’m on zed now", "the user is on zed now"),
        # possessives and objects: "the user's" until the subject is named, then "their"
        ("my laptop is dying", "the user's laptop is dying"),
        ("that one is mine", "that one is the user's"),
        ("tell me more", "tell the user more"),
        ("I hurt myself", "the user hurt themselves"),
        # every subject in the sentence, compound subjects stay plural
        ("I go running and I watch TV", "the user goes running and the user watches TV"),
        (
            "wei and I split the walks, I do 7:00 and wei does 19:00",
            "wei and the user split the walks, the user does 7:00 and wei does 19:00",
        ),
        ("my sister and I are close", "the user's sister and the user are close"),
        ("lab meeting is at 10am and I present next week", "lab meeting is at 10am and the user presents next week"),
        (
            "culture day is Friday the 24th and I'm making chapati",
            "culture day is Friday the 24th and the user is making chapati",
        ),
        ("I am tired", "the user is tired"),
        ("Wei and I am late", "Wei and the user are late"),
        ("we use dbt in production", "the user's team uses dbt in production"),
        ("we signed the lease for a flat", "the user's household signed the lease for a flat"),
        ("we're moving to Utrecht", "the user's household is moving to Utrecht"),
        ("our team is four people", "the user's team is four people"),
        ("we have movers booked", "the user's household has movers booked"),
        (
            "we moved our pipelines because we need lineage",
            "the user's team moved their pipelines because they need lineage",
        ),
        ("we're late and we're sorry", "the user's household is late and they are sorry"),
        (
            "I'm a technician at the depot; we run 40 electric buses",
            "the user is a technician at the depot; the user's team runs 40 electric buses",
        ),
        # what is not a pronoun is left alone
        ("The server has 64 GB of RAM", "The server has 64 GB of RAM"),
        ("He moved to the US", "He moved to the US"),
        ("Impala is a database", "Impala is a database"),
        ("I/O is the bottleneck on my box", "I/O is the bottleneck on the user's box"),  # a name, not "I"
        ("we drive the I-95 every summer", "the user's household drives the I-95 every summer"),
    ],
)
def test_first_person_to_third(said, stated):
    assert convert(said) == stated


def test_a_named_speaker_is_the_subject():
    assert convert("I moved to Leeds with my sister", "Melanie") == "Melanie moved to Leeds with their sister"


@pytest.mark.parametrize(
    "verb,third",
    [
        ("prefer", "prefers"),
        ("go", "goes"),
        ("fix", "fixes"),
        ("try", "tries"),
        ("play", "plays"),
        ("have", "has"),
        ("do", "does"),
        ("push", "pushes"),
        ("Like", "Likes"),
    ],
)
def test_third_singular(verb, third):
    assert third_singular(verb) == third


@pytest.mark.parametrize(
    "said,stated",
    [
        ("you prefer tea over coffee", "the user prefers tea over coffee"),
        (
            "you're moving to Utrecht and your flat is in Lombok",
            "the user is moving to Utrecht and their flat is in Lombok",
        ),
        ("Tuesdays are your tempo days", "Tuesdays are the user's tempo days"),
        ("review by Priyanka or you for dbt changes", "review by Priyanka or the user for dbt changes"),
        ("I'd start with a slow-feeder bowl", "the assistant would start with a slow-feeder bowl"),
    ],
)
def test_second_person_to_third(said, stated):
    assert second_person(said) == stated
