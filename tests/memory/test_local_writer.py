"""The deterministic local provider on a small two-session conversation."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

import pytest

from apps.language.words import count_tokens
from apps.memory.writing.local import LocalMemoryLLM
from apps.providers.interfaces import MeteringContext
from apps.providers.local_usage import MEMORY_WRITER
from apps.providers.schemas import EpisodicDraft, InputMessage, SemanticDraft, WriterInput
from tests.metering import RecordingMeter
from tests.providers.conversation import MESSAGES, SESSION_1, SESSION_2, conversation

pytestmark = pytest.mark.unit

llm = LocalMemoryLLM()


def _episodes(metering: MeteringContext, *message_ids: str) -> list[EpisodicDraft]:
    return llm.write_episodic(conversation(*message_ids), metering=metering)


def _said(text: str, *, name: str, message_id: str = "m1", role: Literal["user", "assistant"] = "user") -> InputMessage:
    return InputMessage(
        message_id=message_id, role=role, name=name, content=text, timestamp=datetime(2025, 3, 1, tzinfo=UTC)
    )


def _facts(metering: MeteringContext, *messages: InputMessage) -> list[SemanticDraft]:
    return llm.write_semantic(WriterInput(messages=list(messages)), metering=metering)


@pytest.mark.parametrize(
    ("message_id", "memory_types"),
    [
        ("s1-1", []),  # small talk
        ("s1-2", ["episodic"]),  # a done and a planned event
        ("s1-3", ["core", "episodic", "semantic"]),  # identity and preference, then an event
        ("s1-4", ["episodic", "semantic"]),  # knowledge about a named entity, told in the conversation
        ("s1-5", []),
        ("s2-2", ["episodic", "procedural"]),  # a numbered how-to
        ("s2-3", ["episodic", "procedural"]),  # first ... then ... finally
        ("s2-4", ["episodic"]),  # first ... then ... as a story, not a procedure
        ("s2-5", ["core", "episodic", "semantic"]),
        ("s2-6", ["episodic", "resource"]),  # a link to a file
        ("s2-7", ["core", "episodic", "semantic"]),  # the agent's own persona
    ],
)
def test_routing(message_id: str, memory_types: list[str], metering: MeteringContext) -> None:
    decision = llm.route(conversation(message_id), metering=metering)
    assert decision.memory_types == memory_types
    assert decision.reason


def test_routing_reasons_tell_events_from_what_was_said(metering: MeteringContext) -> None:
    assert llm.route(conversation("s1-2"), metering=metering).reason == "events with a date, a plan or an action"
    assert llm.route(conversation("s1-4"), metering=metering).reason == (
        "what was said in the conversation; statements about named entities"
    )
    assert llm.route(conversation("s1-1", "s1-5"), metering=metering).reason == "nothing worth remembering"


def test_system_prompts_are_not_memories(metering: MeteringContext) -> None:
    prompt = InputMessage(
        message_id="sys-1",
        role="system",
        content="You are a friendly running coach. I prefer answers under 50 words.",
        timestamp=SESSION_2,
    )
    only_prompt = WriterInput(messages=[prompt])
    assert llm.route(only_prompt, metering=metering).memory_types == []
    assert llm.write_episodic(only_prompt, metering=metering) == []
    assert llm.write_core(only_prompt, metering=metering) == []


def test_routing_a_whole_input_is_the_union(metering: MeteringContext) -> None:
    decision = llm.route(conversation(), metering=metering)
    assert decision.memory_types == ["core", "episodic", "semantic", "procedural", "resource"]


def test_episodic_keeps_event_time_apart_from_mention_time(metering: MeteringContext) -> None:
    museum, paris = _episodes(metering, "s1-2")

    # Said on 2023-05-08: the museum was the day before; the flight is planned for next month.
    assert MESSAGES["s1-2"].timestamp == SESSION_1
    assert (museum.event_time, museum.status) == ("2023-05-07", "done")
    assert (paris.event_time, paris.status) == ("2023-06", "planned")
    assert museum.actor == paris.actor == "Nadia"
    assert museum.source_message_ids == paris.source_message_ids == ["s1-2"]
    assert museum.summary == (
        "Nadia: I went to the Louvre museum yesterday with my 2 kids and we spent $45 on tickets."
    )
    assert paris.summary == "Nadia: We will fly to Paris next month to see my sister Amelie."
    assert "Said by Nadia on 2023-05-08 (message s1-2)." in museum.details


def test_episodic_details_keep_every_name_number_and_date(metering: MeteringContext) -> None:
    museum, paris = _episodes(metering, "s1-2")
    for kept in ("Louvre", "yesterday", "2 kids", "$45", "yesterday = 2023-05-07"):
        assert kept in museum.details
    for kept in ("Paris", "Amelie", "next month = 2023-06"):
        assert kept in paris.details

    [puppy] = _episodes(metering, "s2-1")
    assert (puppy.event_time, puppy.status) == ("2023-05-14", "done")  # "last Sunday", said on Saturday 20 May
    for kept in ("Biscuit", "9 weeks old", "$1,200", "last Sunday = 2023-05-14"):
        assert kept in puppy.details


def test_episodic_resolves_each_session_against_its_own_mention_time(metering: MeteringContext) -> None:
    [marathon] = _episodes(metering, "s1-3")
    [cinema] = _episodes(metering, "s2-4")
    [book_club] = _episodes(metering, "s2-5")

    assert (marathon.event_time, marathon.status) == ("2023-05-06", "done")  # last Saturday before 8 May
    assert (cinema.event_time, cinema.status) == ("2023-05-18", "done")  # the Thursday before 20 May
    assert (book_club.event_time, book_club.status) == ("2023-05-23", "planned")  # next Tuesday after 20 May
    # The turn's other sentence stays in the details (nothing of the turn is lost).
    assert "I'm a nurse at St. Mary's Hospital" in marathon.details and "10 km" in marathon.details
    assert '"The Overstory" by Richard Powers' in book_club.details


def test_a_future_date_alone_makes_a_planned_event(metering: MeteringContext) -> None:
    message = InputMessage(
        message_id="x-1",
        role="user",
        name="Tomas",
        content="Next Friday my band plays at the Blue Note.",
        timestamp=SESSION_2,
    )
    [gig] = llm.write_episodic(WriterInput(messages=[message]), metering=metering)
    assert (gig.event_time, gig.status) == ("2023-05-26", "planned")


def test_episodic_skips_small_talk_and_writes_one_draft_per_turn(metering: MeteringContext) -> None:
    drafts = _episodes(metering)
    cited = [draft.source_message_ids[0] for draft in drafts]
    assert "s1-1" not in cited and "s1-5" not in cited
    assert cited.count("s1-2") == 2  # split only between its done and its planned event
    assert all(cited.count(message_id) == 1 for message_id in set(cited) - {"s1-2"})
    undated = next(draft for draft in drafts if draft.source_message_ids == ["s1-4"])
    assert (undated.event_time, undated.status) == (None, "done")


def test_semantic_drafts_for_named_entities_and_people(metering: MeteringContext) -> None:
    drafts = llm.write_semantic(conversation(), metering=metering)
    by_name = {draft.name: draft for draft in drafts}

    lake = by_name["Lake Tahoe"]
    assert lake.summary == (
        "Lake Tahoe is a freshwater lake in the Sierra Nevada, on the border of California and Nevada."
    )
    assert "Places: Lake Tahoe; the Sierra Nevada; California; Nevada" in lake.details
    assert (lake.source, lake.source_message_ids) == ("Tomas", ["s1-4"])
    assert by_name["Tomas"].summary == "Tomas: I'm a nurse at St. Mary's Hospital and I love hiking."
    assert "Richard Powers" in by_name["Nadia"].details
    assert "Paris" not in by_name  # an event's place is not a description of the place


def test_core_drafts_per_block_without_repeating_stored_memory(metering: MeteringContext) -> None:
    human, persona = llm.write_core(conversation(), metering=metering)

    assert human.label == "human"
    assert human.text.splitlines() == [
        "Tomas: I'm a nurse at St. Mary's Hospital and I love hiking.",
        "Nadia: I adopted a puppy named Biscuit last Sunday.",  # a pet: a lasting fact, told as an event
        'Nadia: My favorite book is "The Overstory" by Richard Powers.',
    ]
    assert human.source_message_ids == ["s1-3", "s2-1", "s2-5"]
    assert persona.label == "persona"
    assert persona.text == "Coach: I'm a running coach assistant and I prefer short, direct answers."

    stored = ["Tomas: I'm a nurse at St. Mary's Hospital and I love hiking."]
    [only_new] = llm.write_core(conversation("s1-3", "s2-5", related_memories=stored), metering=metering)
    assert only_new.text == 'Nadia: My favorite book is "The Overstory" by Richard Powers.'
    assert llm.write_core(conversation("s1-3", related_memories=stored), metering=metering) == []


def test_procedural_drafts_keep_every_step(metering: MeteringContext) -> None:
    cactus, cold_brew = llm.write_procedural(conversation(), metering=metering)

    assert cactus.title == "How to repot a cactus"
    assert cactus.steps == [
        "Water the cactus a day before.",
        "Wear thick gloves.",
        "Loosen the soil and lift the plant out.",
        "Place it in a pot with 2 inches of gravel.",
    ]
    assert (cactus.domain, cactus.source_message_ids) == ("gardening", ["s2-2"])
    assert cold_brew.title == "How to make cold brew"
    assert cold_brew.steps == ["grind 100 g of coffee coarsely", "add 1 liter of water", "let it steep for 12 hours."]
    assert cold_brew.domain == "cooking"


def test_a_document_goes_to_the_resource_store_not_to_the_conversation_writers(metering: MeteringContext) -> None:
    chapter = "Yesterday I went to the Louvre and I love painting. " * 800  # 41,600 characters
    document = WriterInput(
        messages=[InputMessage(message_id="doc-1", role="user", name="Nadia", content=chapter, timestamp=SESSION_2)]
    )
    assert llm.route(document, metering=metering).memory_types == ["resource"]
    assert llm.write_episodic(document, metering=metering) == []
    assert llm.write_core(document, metering=metering) == []
    assert llm.write_semantic(document, metering=metering) == []


def test_a_sequence_introduced_by_a_colon(metering: MeteringContext) -> None:
    message = InputMessage(
        message_id="x-2",
        role="user",
        name="Nadia",
        content="How we bake sourdough: first feed the starter 50 g of flour, then mix 500 g of flour with "
        "350 ml of water, then bake it at 250 C for 40 minutes.",
        timestamp=SESSION_2,
    )
    [sourdough] = llm.write_procedural(WriterInput(messages=[message]), metering=metering)
    assert sourdough.title == "How to bake sourdough"
    assert sourdough.steps == [
        "feed the starter 50 g of flour",
        "mix 500 g of flour with 350 ml of water",
        "bake it at 250 C for 40 minutes.",
    ]
    assert sourdough.domain == "cooking"


def test_the_local_provider_is_deterministic_and_meters_the_tokens_it_reads(
    meter: RecordingMeter, metering: MeteringContext
) -> None:
    whole = conversation()
    first = [llm.route(whole, metering=metering), llm.write_episodic(whole, metering=metering)]
    again = [
        LocalMemoryLLM().route(whole, metering=metering),
        LocalMemoryLLM().write_episodic(whole, metering=metering),
    ]
    assert first == again
    # Each call reads every message once (ADR 0049): the same count for each, no completion.
    read = sum(count_tokens(message.content) for message in whole.messages)
    assert read > 0
    assert [(r["purpose"], r["model"], r["prompt_tokens"], r["completion_tokens"]) for r in meter.records] == [
        ("route", MEMORY_WRITER, read, 0),
        ("write.episodic", MEMORY_WRITER, read, 0),
    ] * 2


def test_a_sentence_of_two_facts_is_two_semantic_drafts_each_of_its_own_clause(metering: MeteringContext) -> None:
    said = "We're in the Croix-Rousse now, on the fourth floor, and the rent is 1,100 euros a month."
    drafts = _facts(metering, _said(said, name="Nadia"))
    mine = [(d.attribute, d.summary) for d in drafts if d.name == "Nadia"]
    assert mine == [
        ("home", "Nadia: We're in the Croix-Rousse now, on the fourth floor."),
        ("rent", "Nadia: The rent is 1,100 euros a month."),
    ]
    assert all(said in d.details for d in drafts)  # the whole sentence stays in the details


def test_a_change_said_of_someone_else_is_not_the_speakers_fact(metering: MeteringContext) -> None:
    said = (
        "My sister Efua packed up and moved to Calgary last weekend. "
        "She's a clinical instructor at a nursing college there now, teaching students instead of working the ER."
    )
    drafts = _facts(metering, _said(said, name="Kwame"))
    assert [(d.name, d.attribute) for d in drafts] == [
        ("Efua", "home city"),
        ("Kwame's sister", "name: efua"),  # who his sister is, a fact of her relation to him
        ("Efua", "job"),
    ]
    # what Kwame said of her reads as his words, not as hers
    assert drafts[0].summary == "Kwame, about Efua: My sister Efua packed up and moved to Calgary last weekend."


def test_it_moved_to_a_recurring_time_is_the_schedule_the_message_before_names(metering: MeteringContext) -> None:
    first = _said("Sundays at 8 am I video call my mum, Abena, back home.", name="Kwame")
    asked = _said(
        "Does your Sunday call still work with her new routine?", name="Wren", message_id="m2", role="assistant"
    )
    moved = _said("We moved it to Saturdays at 7 am my time.", name="Kwame", message_id="m3")
    drafts = _facts(metering, first, asked, moved)
    assert [(d.name, d.attribute) for d in drafts] == [
        ("Kwame", "schedule: call"),
        ("Kwame's mother", "name"),
        ("Kwame", "schedule: call"),
    ]
    assert drafts[2].summary == "Kwame: We moved it to Saturdays at 7 am my time."  # the words as said
    assert drafts[1].summary == "Kwame, about Kwame's mother: Sundays at 8 am I video call my mum, Abena, back home."
    # Without the message that names the call, "it" is nothing known: no schedule.
    alone = _facts(metering, moved)
    assert all(d.attribute != "schedule: call" for d in alone)


def test_it_moved_after_a_question_on_a_named_class_is_that_activitys_schedule(metering: MeteringContext) -> None:
    asked = _said("Is your salsa class still on Tuesdays?", name="Wren", message_id="m1", role="assistant")
    moved = _said("We moved it to Thursdays.", name="Noor", message_id="m2")
    drafts = _facts(metering, asked, moved)
    assert [(d.name, d.attribute) for d in drafts] == [("Noor", "schedule: salsa")]  # ADR 0132
    assert drafts[0].summary == "Noor: We moved it to Thursdays."


def test_a_class_after_the_activity_taken_up_is_that_activitys_schedule(metering: MeteringContext) -> None:
    said = _said(
        "other news, started salsa!! beginners class on tuesdays, 8pm in a church hall in montpelier, "
        "dan's gf teaches it, i have two left feet",
        name="Noor",
    )
    assert [(d.name, d.attribute) for d in _facts(metering, said)] == [("Noor", "schedule: salsa")]  # ADR 0132
    pottery = _said("I started pottery! The class is every Wednesday evening.", name="Noor")
    assert ("Noor", "schedule: pottery") in [(d.name, d.attribute) for d in _facts(metering, pottery)]
    # Crying is no activity, and a class named with nothing taken up before it is a class.
    cried = _said("I started crying. The class is every Wednesday evening.", name="Noor")
    assert [(d.name, d.attribute) for d in _facts(metering, cried)] == [("Noor", "schedule: class")]


def test_what_moved_to_another_day_is_the_speakers_schedule_not_a_home(metering: MeteringContext) -> None:
    # A move to a day or time of the week is a recurring event's new day, the speaker's own:
    # one statement keyed by the event, none of a home and none about "salsa" (ADR 0131).
    moved = _facts(metering, _said("salsa's moved to thursdays btw", name="Noor"))
    assert [(d.name, d.attribute) for d in moved] == [("Noor", "schedule: salsa")]
    assert moved[0].summary == "Noor: salsa's moved to thursdays btw"
    football = _facts(metering, _said("football's been moved to sunday mornings", name="Noor"))
    assert [(d.name, d.attribute) for d in football] == [("Noor", "schedule: football")]
    # Capitalized, the event may be a name: no home of anyone's either way.
    assert all(d.attribute != "home" for d in _facts(metering, _said("Salsa moved to Thursdays.", name="Noor")))
    # A move to a place is still a home.
    assert [(d.name, d.attribute) for d in _facts(metering, _said("Tiago moved to Berlin.", name="Noor"))] == [
        ("Tiago", "home city")
    ]


def test_a_relative_named_only_by_relation_has_facts_of_their_own(metering: MeteringContext) -> None:
    said = "Family update: my mum moved in with Kofi in Accra last month. My mum made me a blanket."
    drafts = _facts(metering, _said(said, name="Kwame"))
    mother = [(d.attribute, d.summary) for d in drafts if d.name == "Kwame's mother"]
    # a fact of a family (home), not every sentence she is the subject of
    assert mother == [
        ("home city", "Kwame, about Kwame's mother: Family update: my mum moved in with Kofi in Accra last month.")
    ]
    assert all(d.name != "Kwame" or d.attribute != "home city" for d in drafts)  # not Kwame's own home


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        # the verb after a lead-in, which the parser hangs off "news"
        ("Big news: Tiago moved to Berlin.", [("Tiago", "home city")]),
        # a name the tagger does not know, then "she" for her
        (
            "Family news too: Efua packed up and moved to Calgary last weekend. "
            "She's a clinical instructor at a nursing college there now.",
            [("Efua", "home city"), ("Efua", "job")],
        ),
        ("Update: Work is crazy this week.", []),  # a capitalized word that states no fact is no one
    ],
)
def test_a_name_after_a_lead_in_or_unknown_to_the_tagger_has_its_facts(
    said: str, facts: list[tuple[str, str]], metering: MeteringContext
) -> None:
    drafts = _facts(metering, _said(said, name="Kwame"))
    assert [(d.name, d.attribute) for d in drafts if d.name != "Kwame"] == facts


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        ("Ravi lives in Glasgow.", [("Ravi", "home city")]),  # "Ravi" read as a common noun
        ("Layla lives in Glasgow.", [("Layla", "home city")]),  # "Layla" read as a verb (ADR 0138)
        ("Sven is a nurse.", [("Sven", "job")]),  # "Sven" read as an adverb
        ("Ayla works at Tesco now.", [("Ayla", "job")]),
        ("Chidi lives in Glasgow.", [("Chidi", "home city")]),
        ("Ingrid lives in Glasgow.", [("Ingrid", "home city")]),  # ... or as an adjective
        ("Thursdays clash with our design reviews.", []),  # an English word, in the plural
        ("Rent went up to 1,100 this month.", []),
        ("Coffee is life.", []),
    ],
)
def test_a_name_that_opens_a_sentence_is_one_when_no_english_word_is_spelled_so(
    said: str, facts: list[tuple[str, str]], metering: MeteringContext
) -> None:
    """ADRs 0134 and 0138: the tagger reads these names as common nouns, adjectives or verbs."""
    drafts = _facts(metering, _said(said, name="Kwame"))
    assert [(d.name, d.attribute) for d in drafts if d.name != "Kwame"] == facts


def test_a_sentence_of_two_facts_of_someone_else_is_two_rows_each_of_its_own_clause(
    metering: MeteringContext,
) -> None:
    """As the speaker's own (ADR 0140): each fact of a relative or a named person is superseded
    on its own, so a new job does not replace the city."""
    said = "My sister moved to Leeds and works at the hospital. Efua moved to Calgary and works as a nurse there."
    drafts = _facts(metering, _said(said, name="Kwame"))
    assert [(d.name, d.attribute, d.summary) for d in drafts if d.name != "Kwame"] == [
        ("Kwame's sister", "home city", "Kwame, about Kwame's sister: My sister moved to Leeds."),
        ("Kwame's sister", "job", "Kwame, about Kwame's sister: Works at the hospital."),
        ("Efua", "home city", "Kwame, about Efua: Efua moved to Calgary."),
        ("Efua", "job", "Kwame, about Efua: Works as a nurse there."),
    ]


def test_what_happened_to_someone_is_an_event_not_a_fact_of_theirs(metering: MeteringContext) -> None:
    """A described name's event that states no family's fact stays an episode: as a statement
    keyed by its verb, the last call would mark every earlier one as replaced."""
    said = "Ines called me on Monday. Ines called me again yesterday. Ines moved to Lisbon last month."
    drafts = _facts(metering, _said(said, name="Kwame"))
    assert [(d.name, d.attribute) for d in drafts if d.name != "Kwame"] == [("Ines", "home city")]
    log = "\n".join(f"2026-03-05 1{n}:0{n} deploy #{1040 + n} of billing-api to eu-west succeeded" for n in range(6))
    assert _facts(metering, _said(log, name="deploy-bot", role="assistant")) == []
    # a lasting description of a place is a fact of the place
    assert [d.name for d in _facts(metering, _said("Lyon is two hours from Geneva.", name="Nadia"))] == ["Lyon"]


def test_what_the_speaker_says_of_a_relative_is_the_relatives_fact_not_the_speakers(metering: MeteringContext) -> None:
    said = "I'm a pharmacist. My sister is a nurse. My brother Omar is a teacher now."
    drafts = _facts(metering, _said(said, name="Alex"))
    jobs = [(d.name, d.summary) for d in drafts if d.attribute == "job"]
    assert jobs == [
        ("Alex", "Alex: I'm a pharmacist."),  # the speaker's one job: no relative's replaces it
        ("Alex's sister", "Alex, about Alex's sister: My sister is a nurse."),
        ("Omar", "Alex, about Omar: My brother Omar is a teacher now."),
    ]


@pytest.mark.parametrize(
    ("said", "relative", "attribute"),
    [
        ("My brother is a teacher.", "Alex's brother", "job"),
        ("my dad is retired", "Alex's father", "job"),
        ("My son is allergic to peanuts.", "Alex's son", "allergy: peanut"),
        ("My daughter is 12.", "Alex's daughter", "age"),
        ("My sister is in Berlin now.", "Alex's sister", "home city"),
        ("My brother's name is Omar.", "Alex's brother", "name: omar"),
        ("my mum's name is Abena", "Alex's mother", "name"),
    ],
)
def test_a_sentence_about_a_relative_keys_no_fact_of_the_speakers(
    said: str, relative: str, attribute: str, metering: MeteringContext
) -> None:
    """ADR 0135: the relative's fact, and no statement of the speaker's keyed by the sentence's
    verb ("be teacher", "retire", "be 12"), which would read as a current fact of hers."""
    drafts = _facts(metering, _said(said, name="Alex"))
    assert [(d.name, d.attribute) for d in drafts] == [(relative, attribute)]


def test_the_speaker_beside_a_relative_keeps_the_fact(metering: MeteringContext) -> None:
    drafts = _facts(metering, _said("My sister and I went hiking.", name="Alex"))
    assert ("Alex", "hobby: hiking") in [(d.name, d.attribute) for d in drafts]


@pytest.mark.parametrize(
    "said",
    [
        "Thanks, Gina - really appreciate your words and encouragement!",
        "Hey Gina, hope you're doing great!",
        "Your support, Gina, means a lot too.",
        "Yep Gina, staying resilient and focused is key for any entrepreneur.",
        "Sounds awesome, Gina!",
    ],
)
def test_someone_spoken_to_is_not_someone_spoken_of(metering: MeteringContext, said: str) -> None:
    assert _facts(metering, _said(said, name="Jon")) == []


def test_someone_named_beside_who_they_are_is_still_spoken_of(metering: MeteringContext) -> None:
    drafts = _facts(metering, _said("My sister, Gina, moved to Paris.", name="Jon"))
    assert ("Gina", "home city") in [(d.name, d.attribute) for d in drafts]


def test_a_thing_ended_as_it_is_the_one_the_message_before_names(metering: MeteringContext) -> None:
    had = _said("I drive a little Renault Zoe to the mountains.", name="Nadia")
    asked = _said("Do you still have the car?", name="Sam", message_id="m2", role="assistant")
    sold = _said("I sold it last month.", name="Nadia", message_id="m3")
    drafts = _facts(metering, had, asked, sold)
    assert [(d.name, d.attribute, d.summary) for d in drafts if d.source_message_ids == ["m3"]] == [
        ("Nadia", "car", "Nadia: I sold it last month.")  # the words as said, the key of the car
    ]


def test_a_picture_shared_is_never_all_a_group_tells(metering: MeteringContext) -> None:
    """ADR 0145: a group whose only event is a picture shared is told whole; a group with
    another event keeps its picture; a picture beside a plan is still a row of its own."""
    plans = "Long time no talk! The new neighbourhood is so green and quiet. [shared an image: a park with a pond]"
    news = "I signed up for a pottery class yesterday. It's so calming. [shared an image: a photo of a bowl]"
    recipe = "Roast chicken is my favourite, I'll send you the recipe. [shared an image: a pan of chicken]"
    drafts = llm.write_episodic(
        WriterInput(
            messages=[
                _said(plans, name="Andrew"),
                _said(news, name="Andrew", message_id="m2"),
                _said(recipe, name="Andrew", message_id="m3"),
            ]
        ),
        metering=metering,
    )
    assert [draft.summary for draft in drafts] == [
        f"Andrew: {plans}",  # the picture was its only event: every sentence
        "Andrew: I signed up for a pottery class yesterday. [shared an image: a photo of a bowl]",
        "Andrew: Roast chicken is my favourite, I'll send you the recipe.",
        "Andrew: [shared an image: a pan of chicken]",
    ]


def test_going_and_a_gerund_is_a_plan(metering: MeteringContext) -> None:
    """ADR 0146: "we're going kayaking" is an event to come, told in its own row, not a sentence
    of a row whose only event is the picture beside it."""
    said = "Can't wait! My partner and I are going kayaking on the lake. [shared an image: two kayaks on a beach]"
    drafts = llm.write_episodic(WriterInput(messages=[_said(said, name="Ana")]), metering=metering)
    assert [(draft.status, draft.summary) for draft in drafts] == [
        ("planned", "Ana: My partner and I are going kayaking on the lake."),
        ("done", "Ana: [shared an image: two kayaks on a beach]"),
    ]
    crazy = llm.write_episodic(
        WriterInput(messages=[_said("I'm going crazy with this project.", name="Ana")]), metering=metering
    )
    assert [draft.status for draft in crazy] == ["done"]  # no gerund: nothing planned


def test_a_gerund_after_a_past_verb_is_a_past_event(metering: MeteringContext) -> None:
    """ADR 0148: "I went hiking on Monday" (said on Saturday 1 March) is the Monday before, done;
    it was the Monday after, planned. Going hiking is still a plan."""
    went = llm.write_episodic(WriterInput(messages=[_said("I went hiking on Monday.", name="Ana")]), metering=metering)
    assert [(draft.status, draft.event_time) for draft in went] == [("done", "2025-02-24")]
    going = llm.write_episodic(
        WriterInput(messages=[_said("I'm going hiking on Monday.", name="Ana")]), metering=metering
    )
    assert [(draft.status, draft.event_time) for draft in going] == [("planned", "2025-03-03")]


def test_a_sentence_the_parser_cut_before_and_is_told_whole(metering: MeteringContext) -> None:
    """ADR 0147: the parser cut "My GF | and I just had …", and the event was told without
    who did it."""
    said = "Hey Audrey! How are you? My GF and I just had a great time volunteering at a pet shelter on Monday."
    drafts = llm.write_episodic(WriterInput(messages=[_said(said, name="Andrew")]), metering=metering)
    assert [draft.summary for draft in drafts] == [
        "Andrew: My GF and I just had a great time volunteering at a pet shelter on Monday."
    ]


def test_a_list_after_a_name_beside_a_relation_keeps_the_speaker_and_names_no_partner(
    metering: MeteringContext,
) -> None:
    """ADR 0149: "My girlfriend, Toby and I" lists three (ADR 0141); Toby is no girlfriend's name,
    and the camping is the speaker's as much as in "My girlfriend and I"."""
    drafts = _facts(metering, _said("My girlfriend, Toby and I are going camping.", name="Andrew"))
    keys = [(d.name, d.attribute) for d in drafts]
    assert ("Andrew", "hobby: camping") in keys
    assert not any(attribute == "relationship" for _, attribute in keys)


@pytest.mark.parametrize(
    ("said", "status", "event_time"),
    [
        ("I can't wait for Thursday!", "planned", "2025-03-06"),  # it was the Thursday before, done
        ("Looking forward to Thursday.", "planned", "2025-03-06"),  # planned, on the Thursday before
        ("I was looking forward to Thursday.", "done", "2025-02-27"),  # a plan of a day gone by
        ("We'll go on Thursday.", "planned", "2025-03-06"),
    ],
)
def test_a_day_looked_forward_to_is_to_come(metering: MeteringContext, said: str, status: str, event_time: str) -> None:
    """ADR 0148 (said on Saturday 1 March 2025)."""
    drafts = llm.write_episodic(WriterInput(messages=[_said(said, name="Ana")]), metering=metering)
    assert [(draft.status, draft.event_time) for draft in drafts] == [(status, event_time)]


def test_a_past_verb_that_opens_a_sentence_states_the_speakers_fact(metering: MeteringContext) -> None:
    """ADR 0157: "Got" read as a base form made an imperative of "Got a new job at Pfizer"."""
    drafts = _facts(metering, _said("Got a new job at Pfizer.", name="Ana"))
    assert [(d.name, d.attribute) for d in drafts] == [("Ana", "job")]
