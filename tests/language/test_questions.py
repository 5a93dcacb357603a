"""The fact key a question asks for, read off its parse (pure: spaCy, no database)."""

from __future__ import annotations

import pytest

from apps.language.pipeline import spacy_pipeline
from apps.language.questions import (
    AskedAnchor,
    asked_anchor,
    asked_key,
    asked_prior,
    asks_an_amount,
    asks_prior,
    kinds_only,
    with_asked_attribute,
)


def _sentence(text: str):  # type: ignore[no-untyped-def]
    return next(iter(spacy_pipeline()(text).sents))


@pytest.mark.parametrize(
    ("question", "groups", "names"),
    [
        ("What does Priya eat these days?", (("diet",),), ("Priya",)),
        ("Where does Marco's sister Lucia live?", (("home", "home city"),), ("Lucia",)),
        ("What city is Omar based in?", (("home city",),), ("Omar",)),
        ("Who is Lena's manager?", (("manager",),), ("Lena",)),
        ("What pets does Lena have?", (("pet:",),), ("Lena",)),
        ("When is Lena's weekly call with Tom?", (("schedule: call",),), ("Lena", "Tom")),
        ("When is Noor's salsa class?", (("schedule: salsa",),), ("Noor",)),  # the activity's (ADR 0132)
        ("How does Omar get to work?", (("commute",),), ("Omar",)),
        ("What does Omar do for a living?", (("job",),), ("Omar",)),
        ("What is the name of Lena's dog?", (("pet: dog", "pet:"),), ("Lena",)),
        ("How was the weather?", (), ()),
        # a person the asked one names as theirs, by a role no family keys
        ("Who is Noor's best friend?", (("best friend",),), ("Noor",)),
        ("What did Mel and her friends do?", (), ("Mel",)),  # friends she was with: no key
        ("When did Andrew and his GF go fishing?", (("hobby: fishing", "hobby:"),), ("Andrew",)),  # not the partner
        ("What is Caroline's friend's name?", (), ("Caroline",)),
        # words that only qualify what is asked
        ("How much is the security deposit for Omar's apartment?", (), ("Omar",)),
        ("Within how many days must Omar send a home insurance certificate?", (), ("Omar",)),
        ("Which storage unit comes with Omar's apartment?", (), ("Omar",)),
        ("When was the inventory of Omar's flat done?", (), ("Omar",)),
        ("What is the notice period if Omar wants to leave his apartment?", (), ("Omar",)),
        # the question word's noun, not a verb that can state another key
        ("Which gym did Omar join when he started at Loomwork?", (("gym",),), ("Omar", "Loomwork")),
        ("What city does Omar live in?", (("home city",),), ("Omar",)),
        # a measure of something is not the value of a fact
        ("How big a dog may Omar keep in his apartment?", (), ("Omar",)),
        ("How long has Omar lived in Lyon?", (), ("Omar", "Lyon")),
        ("How much rent does Omar pay?", (("rent",),), ("Omar",)),
        # the words after "before" name the later value, not the asked key
        ("Where did Omar work before the nursing school?", (("job",),), ("Omar",)),
        # a pastime asked about by its verb (ADR 0107), not what is done in it
        ("Does Kwame still curl?", (("hobby: curling", "hobby:"),), ("Kwame",)),
        ("How often does Lena swim?", (("hobby: swimming", "hobby:"),), ("Lena",)),
        ("Which voice part does Kwame sing?", (), ("Kwame",)),
        ("Does Lena still run the bakery?", (("job",),), ("Lena",)),
        # the activities one does are one's pastimes (ADR 0109)
        ("What activities does Melanie partake in?", (("hobby:",),), ("Melanie",)),
        ("What outdoor activities has Andrew done?", (("hobby:",),), ("Andrew",)),
    ],
)
def test_the_fact_key_a_question_asks_for(
    question: str, groups: tuple[tuple[str, ...], ...], names: tuple[str, ...]
) -> None:
    asked = asked_key(_sentence(question))
    assert asked.groups == groups and asked.names == names


@pytest.mark.parametrize(
    ("question", "later"),
    [
        ("Where did Lena live before she moved to Lyon?", ("lyon",)),
        ("Who was Lena's manager before Rafael?", ("rafael",)),
        ("Where did Omar work before the nursing school?", ("nursing", "school")),
        ("What did Omar used to eat every Friday?", ()),
        ("What was Lena's previous job?", ()),
        ("Where does Lena live?", None),
        ("When did Lena move to Lyon?", None),
    ],
)
def test_the_later_value_a_question_about_an_earlier_one_names(question: str, later: tuple[str, ...] | None) -> None:
    span = _sentence(question)
    assert asked_prior(span, asked_key(span)) == later


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Which city does Kwame's mother live in?", ("Kwame's mother",)),  # the mother, not Kwame
        ("What is Kwame's mum's name?", ("Kwame's mother",)),
        ("Where does Nadia's brother Tiago live?", ("Tiago",)),  # a relative with a name of their own
        ("Who is Nadia's manager?", ("Nadia",)),  # a manager is a fact of Nadia's own
    ],
)
def test_a_relative_named_only_by_relation_is_asked_about_by_that_relation(
    question: str, names: tuple[str, ...]
) -> None:
    assert asked_key(spacy_pipeline()(question)[:]).names == names


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Where does Layla work?", ("Layla",)),  # tagged as a verb
        ("Where does Sven live now?", ("Sven",)),  # tagged as an adverb
        ("Where did Layla live before Glasgow?", ("Layla", "Glasgow")),
        ("When did Maria Duarte confirm The Tempest?", ("Maria", "Duarte", "Tempest")),  # "The" is a word
    ],
)
def test_a_name_the_tagger_does_not_know_is_asked_about(question: str, names: tuple[str, ...]) -> None:
    """ADR 0134: a capitalized word inside a question that no English word is spelled as."""
    assert asked_key(spacy_pipeline()(question)[:]).names == names


@pytest.mark.parametrize(
    ("question", "groups"),
    [
        ("What is Kwame's relationship status?", (("relationship",),)),  # the attribute's own name
        ("What is Kwame's job title?", (("job",),)),  # a phrase that names the attribute
        ("Who does Kwame report to at work?", (("manager",),)),  # "at work" only sets the scene
        ("Which night does Kwame's choir rehearse?", (("schedule: rehearsal",),)),
        ("How long is Kwame's commute to the office?", (("commute",),)),  # the fact is what is measured
        ("How big a dog may Nadia keep?", ()),  # a measure of a dog, not the pet
        ("Which city does Kwame's mother live in?", (("home city",),)),
        ("What is Kofi's name?", (("name",),)),  # "What is my name?", planned (ADR 0095)
        ("What is Kofi's dog's name?", (("pet: dog", "pet:"),)),  # the pet's, not his
        ("What is Kwame's mother's name?", (("name", "name:"),)),  # a relative's
    ],
)
def test_questions_name_attributes_by_names_phrases_and_verbs(
    question: str, groups: tuple[tuple[str, ...], ...]
) -> None:
    assert asked_key(spacy_pipeline()(question)[:]).groups == groups


@pytest.mark.parametrize(
    ("question", "groups", "names"),
    [
        ("Who is Kwame's People Operations partner?", (), ("Kwame", "People", "Operations")),  # a role
        ("Who is Nadia's partner?", (("relationship",),), ("Nadia",)),
        ("How much does Saltline pay for a week on call?", (), ("Saltline",)),  # "on call" is no call
        ("When is her weekly call?", (("schedule: call",),), ()),
        ("Where did Kwame study?", (("studies",),), ("Kwame",)),  # the tagger's noun after "did"
        ("Which city is Kwame originally from?", (("origin", "birthplace"),), ("Kwame",)),
        ("Where did Nadia move from?", (("home", "home city"),), ("Nadia",)),  # the home before, no origin
        ("What is Kwame's mother's name?", (("name", "name:"),), ("Kwame's mother",)),
        ("What is the name of Kwame's brother?", (("name", "name:"),), ("Kwame's brother",)),
        ("What is the name of Kwame's pet?", (("pet:",),), ("Kwame",)),  # the pet, not a name
        ("What was Kwame's title before he was promoted?", (("job",),), ("Kwame",)),
        ("What is the title of Nadia's book?", (), ("Nadia",)),  # a book's title is no job
        ("What vehicle does Kwame own?", (("car", "bike"),), ("Kwame",)),  # a car or a bike
        ("Where does Nadia work out?", (("gym",),), ("Nadia",)),  # no job
        ("Which hockey team does Kwame support?", (("team",),), ("Kwame",)),
        ("What language does Kwame speak with his mother?", (("language:",),), ("Kwame",)),
        ("Which team does Kwame work on?", (("job",),), ("Kwame",)),  # a team at work is no team supported
    ],
)
def test_roles_states_origins_and_relatives_names_in_questions(
    question: str, groups: tuple[tuple[str, ...], ...], names: tuple[str, ...]
) -> None:
    asked = asked_key(_sentence(question))
    assert (asked.groups, asked.names) == (groups, names)


def test_a_question_for_an_amount() -> None:
    assert asks_an_amount("How much does Kwame pay for his gym membership each month?")
    assert asks_an_amount("How many cats does Nadia have?")
    assert asks_an_amount("What is the price of Kwame's membership?")
    assert not asks_an_amount("Which gym does Kwame go to?")
    assert not asks_an_amount("How long is his commute?")


def test_where_someone_is_originally_from_is_not_a_past_value() -> None:
    assert not asks_prior("Which city is Kwame originally from?")
    assert asks_prior("Where did Kwame originally live?")


@pytest.mark.parametrize(
    ("question", "reply", "statement"),
    [
        (
            "When is your birthday again?",
            "14 September, same as always.",
            "My birthday is 14 September, same as always.",
        ),
        ("What do you eat these days?", "Mostly vegan now.", "My diet is Mostly vegan now."),
        ("How are you getting to the office?", "bike.", "My commute is bike."),  # a way to travel
        ("How do you get to work these days?", "the tram, 25 mins", "My commute is the tram, 25 mins"),
        ("Where do you live now?", "Great question!", None),  # no value in the reply
        ("How was your week?", "Long.", None),  # no fact asked
        ("When is your birthday?", "I forgot to tell you.", None),  # a sentence of its own
        ("When is Tom's birthday?", "14 September.", None),  # not the speaker's fact
    ],
)
def test_a_fragment_answers_the_attribute_the_question_asked(question: str, reply: str, statement: str | None) -> None:
    assert with_asked_attribute(_sentence(reply), _sentence(question)) == statement


@pytest.mark.parametrize(
    ("question", "anchor"),
    [
        ("What car did Nadia have in Porto?", AskedAnchor(("porto",), acquired=False)),
        ("How much rent did Nadia pay in Porto?", AskedAnchor(("porto",), acquired=False)),
        ("Which gym did Nadia join when she started at Loomwork?", AskedAnchor(("loomwork",), acquired=True)),
        ("What car did Kwame drive when he lived in Winnipeg?", AskedAnchor(("winnipeg",), acquired=False)),
        ("What car did Nadia have in 2019?", None),  # a date is the date constraint's
        ("What did Nadia eat in Porto?", AskedAnchor(("porto",), acquired=False)),
        ("Where did Nadia go in May?", None),  # no asked key, and a date
        ("Did Nadia like Porto?", None),  # no asked key
    ],
)
def test_a_value_asked_for_while_another_fact_held(question: str, anchor: AskedAnchor | None) -> None:
    span = _sentence(question)
    assert asked_anchor(span, asked_key(span)) == anchor


def test_a_named_kind_of_a_family_drops_its_other_values_from_a_question_about_the_past() -> None:
    """ADR 0107: "When did Melanie go camping?" asks about the camping alone."""
    camping = asked_key(_sentence("When did Melanie go camping?")).groups
    assert camping == (("hobby: camping", "hobby:"),)
    assert kinds_only(camping) == (("hobby: camping",),)
    assert kinds_only((("pet:",), ("home", "home city"))) == (("pet:",), ("home", "home city"))  # nothing named


@pytest.mark.parametrize(
    ("question", "every"),
    [
        ("How many dogs does Andrew have?", True),
        ("What are the names of Andrew's dogs?", True),
        ("Which dogs does she own?", True),
        ("What is the name of Lena's dog?", False),  # one of them
        ("How do her dogs react to snow?", False),  # about them, not asking for them
        ("What kind of experiences are Audrey's dogs the best companions for?", False),
        ("What activity do Audrey's dogs like to do in the dog park?", False),
    ],
)
def test_a_plural_kind_counted_had_or_named_asks_for_every_value_of_its_family(question: str, every: bool) -> None:
    assert asked_key(_sentence(question)).every is every


@pytest.mark.parametrize(
    ("question", "groups"),
    [
        ("What does Mia's brother do?", (("job",),)),
        ("What does Layla do up in Leeds?", (("job",),)),
        ("What does she do now?", (("job",),)),
        ("What does Mia do for fun?", ()),  # a pastime, not the work
        ("What does Mia do on weekends?", ()),
        ("What did Mia do yesterday?", ()),  # what happened
    ],
)
def test_what_one_does_in_the_present_asks_for_the_job(question: str, groups: tuple[tuple[str, ...], ...]) -> None:
    assert asked_key(spacy_pipeline()(question)[:]).groups == groups
