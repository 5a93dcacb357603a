"""The attribute of a fact's key, read off the parse of one sentence (pure: spaCy, no database)."""

from __future__ import annotations

import pytest

from apps.language.facts import (
    FactReading,
    PetIntroduction,
    accepted_offer,
    adds_a_value,
    clause_facts,
    ended_name,
    exclaims_own_news,
    introduced_pet,
    is_addressed,
    named_relatives,
    normalize_attribute,
    owned_by_pronoun,
    owned_statement,
    pays_rent,
    pronoun_subject,
    read_fact,
    speaker_fact,
    stated_name,
    with_ended_referent,
)
from apps.language.pipeline import spacy_pipeline


def _reading(sentence: str) -> FactReading:
    return read_fact(next(iter(spacy_pipeline()(sentence).sents)))


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        # home
        ("I live in Porto.", "home city"),
        ("We moved from Porto to Lyon last week.", "home city"),
        ("I moved to Lyon.", "home city"),
        ("I relocated to Berlin for work.", "home city"),
        # job: employer and title are one fact
        ("I'm a nurse.", "job"),
        ("I work as a nurse at the children's hospital.", "job"),
        ("I work at Google.", "job"),
        ("I quit the bakery life for good and joined a startup!", "job"),
        ("I started at Loomwork last Monday as a junior product designer.", "job"),
        ("I'm the design lead at Loomwork now, with two designers on my team.", "job"),
        # diet and drink
        ("I'm vegetarian.", "diet"),
        ("I don't eat meat anymore.", "diet"),
        ("I've gone fully vegan.", "diet"),
        ("And I quit coffee.", "drink"),
        ("I drink rooibos in the morning now.", "drink"),
        ("I switched from coffee to tea.", "drink"),
        # schedules of recurring events
        ("I still have my video call with my mentor Tom every Thursday at 6pm.", "schedule: call"),
        ("Yes, but the call moved to Mondays, same time, 6pm.", "schedule: call"),
        ("We have a team standup every Tuesday at 9:30.", "schedule: standup"),
        ("Also our standup moved to Wednesdays, so my Tuesdays are finally free of meetings.", "schedule: standup"),
        ("Also the book club moved to the last Sunday of the month.", "schedule: club"),
        # a slot given to an activity is the activity's schedule; a level or format is not one (ADR 0132)
        ("My salsa class is on Tuesdays at 8pm.", "schedule: salsa"),
        ("my pottery class got moved to saturdays", "schedule: pottery"),
        ("Choir practice is on Thursday evenings.", "schedule: choir"),
        ("I go to an online group class every Tuesday.", "schedule: class"),
        ("My evening class moved to Fridays.", "schedule: class"),
        # several at once: the value is part of the key
        ("I'm allergic to peanuts, properly allergic, EpiPen and everything.", "allergy: peanut"),
        ("I'm allergic to shellfish.", "allergy: shellfish"),
        ("We adopted a retired racing greyhound from a rescue in Villeurbanne on Saturday.", "pet: greyhound"),
        ("I have two cats.", "pet: cat"),
        # one value at a time
        ("We leased a car!", "car"),
        ("We're engaged!", "relationship"),
        ("I'm single.", "relationship"),
        ("My birthday is 14 September.", "birthday"),
        ("I was born in Braga.", "birthplace"),
        ("I'm 34 years old.", "age"),
        ("My name is Lena.", "name"),
        ("I'm from Seattle.", "origin"),
        ("I get up at 7:30 now and it feels like a luxury.", "wake-up time"),
        ("I ride my bike to the office every day now.", "commute"),
        ("I take the metro line C down the hill to the office in Part-Dieu.", "commute"),
        ("I swapped bouldering for a pottery class in the Presqu'île.", "hobby: pottery"),
        ("I'm volunteering at the food bank on Saturdays.", "volunteering"),
        ("My new GP is Dr. Marchand, near Hôtel de Ville.", "doctor"),
        # the speaker's relations and possessions: the owned noun names the attribute
        ("My manager is Claire, she used to be a designer at a big bank.", "manager"),
        ("Rafael, our head of product, is my manager now.", "manager"),
        ("My favourite film is Amélie.", "favourite film"),
        ("Beatriz is my best friend.", "best friend"),
        # no family: the predicate and the object's head, so unrelated facts never collide
        ("I love hiking.", "love hiking"),
        ("I love painting.", "love painting"),
        ("I used to eat a francesinha every Friday.", "eat francesinha"),
    ],
)
def test_the_attribute_of_a_first_person_fact(sentence: str, attribute: str) -> None:
    assert _reading(sentence).attribute == attribute


@pytest.mark.parametrize(
    ("sentence", "previous"),
    [
        ("We moved from Porto to Lyon last week.", "Porto"),
        ("I don't eat meat anymore.", "meat"),
        ("I quit the bakery life for good and joined a startup!", "bakery life"),
        ("I swapped bouldering for a pottery class in the Presqu'île.", "bouldering"),
        ("I switched from coffee to tea.", "coffee"),
        ("Yes, but the call moved to Mondays, same time, 6pm.", None),
        ("I've gone fully vegan.", None),
    ],
)
def test_a_change_stated_as_one_is_recognised_with_its_old_value(sentence: str, previous: str | None) -> None:
    reading = _reading(sentence)
    assert reading.changed and reading.previous == previous


@pytest.mark.parametrize(
    "sentence", ["I live in Porto.", "I'm a nurse.", "We have a team standup every Tuesday at 9:30.", "I love hiking."]
)
def test_a_plain_statement_is_not_a_change(sentence: str) -> None:
    assert not _reading(sentence).changed


def test_unrelated_first_person_facts_have_four_keys() -> None:
    sentences = ["I'm allergic to shellfish.", "I'm a nurse.", "I run 5 km every morning.", "I live in Lisbon."]
    assert len({_reading(sentence).attribute for sentence in sentences}) == 4


def test_a_fact_about_a_named_relative_is_keyed_on_them_not_the_speaker() -> None:
    sentence = next(iter(spacy_pipeline()("My brother Omar lives in Toronto.").sents))
    omar = next(entity for entity in sentence.ents if entity.text == "Omar")
    assert read_fact(sentence, about=omar.root).attribute == "home city"
    assert speaker_fact(sentence) is None  # his home, not the speaker's


@pytest.mark.parametrize(
    "sentence",
    [
        "My notes from the trip are at the library.",  # owned, but no attribute of the speaker
        "Last Saturday I ran 10 km in the Riverside Half Marathon.",  # an event, not a lasting fact
        "I'm going to the book club next Tuesday.",  # a one-off plan, not a schedule
        "It was a lovely evening.",
        # a search for a thing is not the thing
        "I'm job hunting, I've got two interviews with startups next week.",
        # the age of what the speaker has, or of someone else, is not the speaker's (ADR 0153)
        "My car is 10 years old.",
        "My boss is 60.",
    ],
)
def test_sentences_that_state_no_attribute_of_the_speaker(sentence: str) -> None:
    assert speaker_fact(next(iter(spacy_pipeline()(sentence).sents))) is None


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("I'll have to leave the bakery.", "plan: job"),
        ("We're moving in March if the paperwork goes through.", "plan: home"),
        ("I'm going to move to Berlin.", "plan: home city"),
        ("I want to move to Berlin.", "plan: home city"),
        ("I might adopt a cat.", "plan: pet: cat"),
        ("The rent will be 1,100 euros, which hurts.", "plan: rent"),
    ],
)
def test_what_may_should_or_will_be_is_a_plan_not_the_current_value(sentence: str, attribute: str) -> None:
    reading = speaker_fact(_sentence(sentence))
    assert reading is not None and reading.attribute == attribute and not reading.changed


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("Home_City", "home city"),
        ("  Employer ", "job"),
        ("occupation", "job"),
        ("City", "home city"),
        ("Schedule:  Weekly Call", "schedule: weekly call"),
        ("Allergies", "allergy"),
        ("favourite film", "favourite film"),
    ],
)
def test_writers_attribute_names_are_normalized_to_one_spelling(written: str, stored: str) -> None:
    assert normalize_attribute(written) == stored


def test_a_present_habit_is_a_fact_of_the_speaker() -> None:
    reading = speaker_fact(next(iter(spacy_pipeline()("I run 5 km every morning.").sents)))
    assert reading is not None and reading.attribute == "run" and not reading.from_family


# --- predicates beyond the first-person patterns (sentences of other scenarios) -------------


def _sentence(text: str):  # type: ignore[no-untyped-def]
    return next(iter(spacy_pipeline()(text).sents))


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        # routines and own things stated through the thing itself
        ("My alarm goes off at 5:15 on weekdays.", "wake-up time"),
        ("The rent is 1,450 dollars a month, utilities included.", "rent"),
        ("The rent is 600 pounds now.", "rent"),
        ("My commute is forty minutes by bus.", "commute"),
        ("my bike ride to work is 20 mins now", "commute"),  # the way to work, not the bike
        ("bike ride to work is 20 mins now, over the harbourside", "commute"),  # chat drops the "my"
        # home as a place, a lasting stay
        ("Denver is home.", "home city"),
        ("Marco and I have a small apartment in Ostiense.", "home"),
        ("We're in Seattle now, near the university.", "home city"),
        # a workplace after a verb of working
        ("I started at Mercy General hospital last week.", "job"),
        ("I teach at a primary school in Leeds.", "job"),
        # values after "for" of paying and signing up
        ("I pay for a yoga studio membership that I never use.", "gym"),
        ("I'm signed up for the Berlin marathon in September.", "race"),
        ("I registered for the city 10k.", "race"),
        # a tutor, and a recurring conversation
        ("Now I have a piano tutor on Thursday afternoons.", "tutor"),
        ("Now we talk every second Friday over lunch.", "schedule: call"),
        # a home with its company is the home: the partner or the pet beside it is not the fact
        ("I live in Lyon with my partner Theo.", "home city"),
        ("I've been living in Lyon for five years with my girlfriend.", "home city"),
        ("I moved to Porto with my husband last spring.", "home city"),
        ("I live in the Croix-Rousse with my partner.", "home city"),
        ("We live in a small flat in Lyon with our cat.", "home city"),  # the flat's city
        # without a place, the company is what is said
        ("I live with my partner Theo.", "relationship"),
        # chat drops the speaker
        ("Moved to Porto last month.", "home city"),
        ("Just moved to Porto!", "home city"),
        ("packed up and moved to bristol last weekend.", "home city"),
        ("Living in Porto now, loving it.", "home city"),
        ("Been living in Porto since May.", "home city"),
        ("Now working at Stripe.", "job"),
        # settling in a place
        ("We've settled in Porto.", "home city"),
        # working stated by where, as what, or in the present
        ("I work nights.", "job"),
        ("I worked at Google for years.", "job"),
        # occupations beyond the common ones
        ("I'm now a principal.", "job"),
        ("I became a midwife.", "job"),
        ("I'm a bartender now.", "job"),
        ("I was hired by Globex.", "job"),
        # a pastime begun or given up, named by its gerund
        ("I stopped climbing after my injury.", "hobby: climbing"),
        ("I took up knitting last year.", "hobby: knitting"),
        # a commute parsed as a purpose
        ("I cycle to work now.", "commute"),
        # a job given by someone else
        ("they made me senior analytics engineer this month.", "job"),
        ("They promoted me to senior engineer.", "job"),
        ("Globex hired me as a designer.", "job"),
        # a relationship made official
        ("tariq and i are official now.", "relationship"),
        # terse chat: a break-up, dating without "I", a lasting state, an occupation where held
        ("ended things with callum on sunday.", "relationship"),
        ("I ended things with my boyfriend last night.", "relationship"),
        ("seeing someone.", "relationship"),
        ("vegan since 2019", "diet"),
        ("nurse at st marys, mostly nights", "job"),
    ],
)
def test_further_predicates_of_a_speakers_fact(sentence: str, attribute: str) -> None:
    reading = speaker_fact(_sentence(sentence))
    assert reading is not None and reading.attribute == attribute


@pytest.mark.parametrize(
    "sentence",
    [
        "My brother was at the hospital on Monday.",  # someone else's stay, not the speaker's job
        "The weather is lovely now.",  # a definite subject that is no thing of the speaker's
        "My manager said the launch slipped.",  # a person's act, not who the manager is
        "I ran the Lisbon half marathon in May.",  # a race run, not a commitment
        "I'm in Paris.",  # a stay without "now" or "still" says nothing lasting
        "I worked late yesterday.",  # a day's work, not a job
        "Worked late yesterday.",
        "I worked out this morning.",  # exercise
        "Working from home today.",  # going on, but not said to last
        "We settled on a name.",  # a choice, not a home
        "I settled in fine.",
        "I hired a gardener.",  # whom the speaker employs
        "She made me a cake.",  # made for the speaker, not made the speaker something
        "They will make me team lead next year.",  # a plan
        "It's official: the launch is Monday.",
        "we ended things with the agency",  # a contract, not a partner
        "ended things with my landlord",
        "Seeing Tom tomorrow for lunch.",  # a meeting
        "dinner at luigi's, mostly pasta",  # no occupation
    ],
)
def test_sentences_the_extended_predicates_leave_alone(sentence: str) -> None:
    reading = speaker_fact(_sentence(sentence))
    assert reading is None or reading.attribute not in {"job", "rent", "manager", "race", "home", "home city"}


def test_a_stay_of_a_named_person_stated_as_lasting_is_their_home() -> None:
    sentence = _sentence("Priya is still in Nairobi, working at an NGO.")
    assert read_fact(sentence, about=sentence[0]).attribute == "home city"


def test_a_pronoun_subject_is_named_for_the_previous_sentence() -> None:
    doc = spacy_pipeline()("Ana finally did it. She moved to Oslo in spring.")
    first, second = list(doc.sents)
    assert pronoun_subject(first) is None
    pronoun = pronoun_subject(second)
    assert pronoun is not None and read_fact(second, about=pronoun).attribute == "home city"


def _clause_facts(sentence: str) -> list[tuple[str, str, str | None]]:
    span = next(iter(spacy_pipeline()(sentence).sents))
    return [(fact.reading.attribute, fact.text, fact.reading.previous) for fact in clause_facts(span)]


def test_a_sentence_of_two_facts_is_read_clause_by_clause() -> None:
    assert _clause_facts("We live in Leith now and the rent is 1,050 pounds instead of 900.") == [
        ("home city", "We live in Leith now.", None),  # the change belongs to the rent's clause alone
        ("rent", "The rent is 1,050 pounds instead of 900.", "900"),
    ]
    assert _clause_facts("My alarm goes off at 6 now and I cycle to the office.") == [
        ("wake-up time", "My alarm goes off at 6 now.", None),
        ("commute", "I cycle to the office.", None),
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "I live in Porto.",  # one fact
        "I quit the bakery and joined a startup.",  # one key, stated twice
        "I moved to Lyon and my brother moved to Berlin.",  # the second fact is his
    ],
)
def test_a_sentence_of_one_key_of_the_speaker_is_not_split(sentence: str) -> None:
    assert _clause_facts(sentence) == []


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("On Sundays I walk dogs at the shelter.", "walk dog"),  # a habit with animals, no pet
        ("We adopted a retired greyhound.", "pet: greyhound"),
        ("I'm not ready for another dog, but a cat might be good.", None),  # what one is ready for
        ("Halifax has great fish and chips, though.", None),  # a place has no pets
        ("I have two cats.", "pet: cat"),
        ("But we need restaurants that can keep shellfish off my plate.", None),  # a job word, no job
        ("We need a good lawyer for the lease.", None),
        ("I'm a paralegal.", "job"),
        ("I quit the bakery.", "job"),
        ("I live on Agricola Street now.", "home"),  # a street names no city
        ("I live in Halifax now.", "home city"),
    ],
)
def test_a_family_word_states_a_fact_only_in_the_role_that_states_it(sentence: str, attribute: str | None) -> None:
    reading = speaker_fact(next(iter(spacy_pipeline()(sentence).sents)))
    assert (reading.attribute if reading is not None else None) == attribute


def test_a_tutor_word_said_of_what_someone_is_is_their_job() -> None:
    assert _reading("I'm a yoga instructor now.").attribute == "job"
    assert _reading("My tutor is Hélène.").attribute == "tutor"


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("I'm a doctor now.", "job"),  # what one is (ADR 0133) ...
        ("I'm a dentist.", "job"),
        ("My doctor is Dr Patel.", "doctor"),  # ... not whom one sees
        ("I switched to a new GP last month.", "doctor"),
        ("I'm a health visitor now.", "job"),  # a title of two words
        ("I'm a personal assistant now.", "job"),
        ("I work as a teaching assistant.", "job"),
        ("I'm a hard worker.", "be worker"),  # a quality, no title
    ],
)
def test_a_doctor_or_a_title_of_two_words_said_of_what_someone_is_is_their_job(sentence: str, attribute: str) -> None:
    assert _reading(sentence).attribute == attribute


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("I got a new phone, a Pixel 8.", "phone"),  # ADR 0137
        ("I bought a new laptop, a MacBook Air.", "laptop"),
        ("My laptop is a ThinkPad from 2017.", "laptop"),  # a year it is from is no origin
        ("Work gave me a MacBook Pro.", "laptop"),  # given to the speaker
        ("My car is a Toyota Corolla.", "car"),
        ("We got a Toyota Prius.", "car"),  # a make that is no other word
        ("I sold the Honda and bought a BMW.", "car"),
        ("I'm officially car-free.", "car"),
        ("I washed my car today.", None),  # the same car, no new value of it
        ("The car is in the garage.", None),
        ("I'm on my phone all day.", None),
        ("My bike got stolen.", "bike"),  # ADR 0142: a thing one has no more
        ("My phone was stolen last night.", "phone"),
        ("My laptop died.", "laptop"),
        ("My bike is gone.", "bike"),
        ("My phone broke.", None),  # broken is still had
    ],
)
def test_a_things_value_is_stated_by_having_getting_or_giving_it_up(sentence: str, attribute: str | None) -> None:
    reading = speaker_fact(next(iter(spacy_pipeline()(sentence).sents)))
    assert (reading.attribute if reading is not None else None) == attribute


def test_a_title_of_two_words_is_a_named_persons_job() -> None:
    span = next(iter(spacy_pipeline()("Omar is a social worker.").sents))
    assert read_fact(span, about=span[0]).attribute == "job"


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("I report to Annika Lund now.", "manager"),
        ("We rehearse on Wednesday nights in a church hall.", "schedule: rehearsal"),
        ("Rehearsals moved from Wednesday to Thursday nights.", "schedule: rehearsal"),
        ("I also bought a used e-bike from a guy in Fairview.", "bike"),
        ("Sundays at 8 am I video call my mum, Abena, back home.", "schedule: call"),  # a call that recurs
        ("I take the bus to work now.", "commute"),  # not a job: how one gets there
        ("I got laid off from Acme last Friday.", "job"),  # the job ends
        ("We broke up last month.", "relationship"),
        ("I'm 35 now.", "age"),
        ("I went back to eating fish.", "diet"),  # the verb after "back to" says what changed
        ("I quit smoking.", "quit smoking"),  # quitting a habit is no job
        ("I called my mum on Sunday.", "call mum"),  # once: no schedule
        ("I cancelled Holmes Place and joined the Basic-Fit in Part-Dieu.", "cancel place"),  # "join" alone: no job
        ("I teach at Riverside High now.", "job"),  # a name the recognizer leaves unlabelled (ADR 0151)
        ("I switched to decaf.", "drink"),  # ADR 0151
        ("I freelance now.", "job"),  # ADR 0152
        ("I gave up on the guitar.", "hobby: guitar"),  # as "I gave up the guitar" (ADR 0152)
        ("I got promoted to team lead.", "job"),  # "lead" parsed as a verb with its own subject (ADR 0158)
        ("I'm on a keto diet now.", "diet"),  # ADR 0158
        ("I've gone freelance.", "job"),  # ADR 0152
        ("I was born on May 3rd, 1990.", "birthday"),  # when, not where (ADR 0159)
        ("I was born in Accra in 1990.", "birthplace"),
        ("Got promoted to design lead today!", "job"),  # "design" parsed as a verb (ADR 0158)
        ("I was born on May 3rd, 1990 if you need it for the form.", "birthday"),  # a fact (ADR 0160)
    ],
)
def test_more_ways_of_stating_a_fact(sentence: str, attribute: str) -> None:
    assert _reading(sentence).attribute == attribute


def test_getting_a_job_is_a_job() -> None:
    span = next(iter(spacy_pipeline()("My brother Dan got a job at NASA.").sents))
    dan = next(token for token in span if token.text == "Dan")
    assert read_fact(span, about=dan).attribute == "job"


def test_a_verb_joined_to_a_clause_states_a_fact_of_its_subject() -> None:
    span = next(iter(spacy_pipeline()("Family news: Efua packed up and moved to Calgary last weekend.").sents))
    efua = next(token for token in span if token.text == "Efua")
    assert read_fact(span, about=efua).attribute == "home city"


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("I live on takeout and I'm trying to do better.", "live takeout"),  # no home
        ("I live on Agricola Street now.", "home"),
        ("Ines and I called it off.", "call off it"),
        ("I'm called Kwame.", "name"),
        ("We moved it to Saturdays at 7 am my time.", "move it"),  # a move of something else
        ("I moved on Monday.", "home"),
        ("We moved to Lyon.", "home city"),  # the tagger's PERSON after "to" is a place
        ("I've lived in Winnipeg since 2009, when I came over from Ghana.", "home city"),
        ("We moved in March.", "home"),  # a month is no place
        ("I joined a community choir called Harbour Voices.", "hobby: choir"),  # no job: a pastime
        ("I joined the Granite Curling Club.", "hobby: curling"),  # the club's pastime, no job
        ("I joined Loomwork last week.", "job"),
        ("I joined Anchor Fitness by the ferry terminal.", "gym"),
        ("We can work on that gradually if you like.", "work that"),  # an effort, no job
        # a dwelling the speaker gets or is in, named by where it is (ADR 0110)
        ("We just got a new place in the North End.", "home"),  # a part of a city: no city
        ("I signed for the North End place this morning.", "home"),
        ("I signed a lease on a place in the North End.", "home"),
        ("My new place is in the North End.", "home"),
        ("I'm in a new flat in Leith.", "home city"),
        ("We found a new place to eat in Leith.", "find place"),  # a venue, no home
        ("I found a great place for brunch in Leith.", "find place"),
        ("We got a place for the summer in Leith.", "get place"),
        ("We got a new place!", "get place"),  # not named by where it is
        # an animal word that only describes something else, a name given to another (ADR 0111)
        ("There's a great dog park close to my place.", "be park"),
        ("I bought a new dog bed.", "buy bed"),
        ("I went to the pet store.", "go store"),
        ("We got a few fish and had a blast.", "get fish"),  # a catch
        ("I have a golden retriever.", "pet: retriever"),
        ("I named him Buddy because he's my buddy.", "name he"),  # the pup's name, not the speaker's
        ("Call me Sam.", "name"),
        # changes said the way chat says them (ADR 0113)
        ("I'm based out of Austin these days.", "home city"),
        ("I've started going by Alex.", "name"),
        ("I went by the bakery.", "go bakery"),
        ("Big news, I accepted an offer from Stripe!", "job"),
        ("I accepted an offer from Tom to help with the move.", "accept offer"),  # a person's offer
        ("I dropped out of the MBA program.", "studies"),
        ("I dropped out of the race.", "drop"),
        ("I've started a PhD at Oxford.", "studies"),  # a school, not a workplace
        ("I'm not with Tom anymore.", "relationship"),
        ("I'm no longer with Tom.", "relationship"),
        ("I'm not with the bank anymore.", "be bank"),
        ("Tom and I got back together.", "relationship"),
        ("We got together for lunch.", "get lunch"),
        ("We had to rehome our dog.", "pet: dog"),  # done, not a plan
        ("I have to move to Lyon.", "plan: home city"),
        ("I'm off caffeine now.", "drink"),
        ("I'm off to the gym.", "be"),
        ("I'm teetotal now.", "drink"),
        ("I'm fluent in Portuguese now.", "language: portuguese"),
        ("I'm fluent in spreadsheets.", "be fluent"),
        ("I just got engaged.", "relationship"),
        ("I turned 35 last week.", "age"),
        ("I turned 5 pages.", "turn page"),
        ("I was engaged in a big project.", "engage project"),
        ("My partner and I adopted a kitten.", "pet: kitten"),  # the kitten is the news, not the partner
    ],
)
def test_a_verb_alone_states_a_fact_only_in_the_form_that_states_it(sentence: str, attribute: str) -> None:
    assert _reading(sentence).attribute == attribute


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        # a pastime stated by its group, joined, left or taken part in now
        ("I quit the Granite league after twenty years.", "hobby: league"),
        ("Tuesday nights I leave him with the neighbour, because I curl in a league.", "hobby: league"),
        ("I sing in a choir.", "hobby: choir"),
        # a pastime one goes to do (ADR 0105)
        ("I go bouldering twice a week.", "hobby: bouldering"),
        ("I stopped going climbing.", "hobby: climbing"),
        # the common pastimes (ADR 0107)
        ("I go swimming every Sunday morning at the city pool.", "hobby: swimming"),
        ("I gave up swimming, the pool here is too far.", "hobby: swimming"),
        ("I started yoga last month.", "hobby: yoga"),
        # where one comes from, said without "I was born"
        ("I grew up in Kumasi.", "birthplace"),
        ("Kumasi, born and raised.", "birthplace"),
        # the vehicle one drives is one's car, whatever its make
        ("I drive there in my old 2012 Dodge Grand Caravan.", "car"),
        ("I now drive a Tesla.", "car"),
        ("We moved back to Toronto.", "home city"),  # the place hangs from "back"
        # a subject done at a school
        ("I did electrical engineering at the University of Manitoba.", "studies"),
        # a pet's death is the pet's new value: the speaker no longer has it
        ("Our cat died on Sunday.", "pet: cat"),
        ("My dog Rex passed away last week.", "pet: dog"),
        # chat drops the "I" of a past-tense statement
        ("Started a new job at Stripe last week.", "job"),
        ("Went vegan last month.", "diet"),
        ("I'm based in Denver these days.", "home city"),
        # what one is free of, or no longer does, ends that value
        ("I'm officially car-free.", "car"),
        ("I went meat-free in January.", "diet"),
        ("I don't drive anymore.", "car"),
        ("I stopped driving last year.", "car"),
        # what one still is, said without a verb; the team one is a fan of
        ("Still a Jets fan, even out here.", "team"),
        ("Still vegan, by the way.", "diet"),
        ("still a nurse at the royal infirmary", "job"),
        ("new job at pebblebox!", "job"),
        ("I'm a huge Leafs fan.", "team"),
        # the languages one speaks, one fact each
        ("She insists we speak Twi the whole call.", "language: twi"),
        ("I speak French at work.", "language: french"),
        # dating, said as seeing someone
        ("I've been seeing someone for about three weeks.", "relationship"),
        ("I started seeing Ines in March.", "relationship"),
        # a role the speaker owns is the speaker's, even when the tagger takes it for a name
        ("Yes, my new GP is Dr. Marchand, near Hôtel de Ville.", "doctor"),
    ],
)
def test_a_pastime_an_origin_and_a_car_said_without_their_family_word(sentence: str, attribute: str) -> None:
    reading = speaker_fact(_sentence(sentence))
    assert reading is not None and (reading.attribute, reading.from_family) == (attribute, True)


@pytest.mark.parametrize(
    "sentence",
    [
        "We played in a band in college.",  # a past pastime is no fact of now
        "My climbing partner Jo moved to Leeds.",  # a role, not a partner
        "Paris, what a city.",  # a place described, not one's origin
        "I did my shopping at the market.",  # no school
        "My dad passed away in 2019.",  # a relative, no pet
        "Meet me at the gym at noon.",  # an imperative is no statement of the speaker's
        "My sister is a nurse.",  # her job, not the speaker's
        "My brother Omar is a teacher now.",  # his
        "I drove Tom to the airport.",  # a person driven is no car
        "I don't drive on Sundays.",  # no change: a habit of driving
        "She corrects me like I'm six.",  # a comparison states no age
        "I'm seeing Tom tomorrow.",  # a meeting, no partner
        "I'm a big fan of jazz.",  # no team named
        "We spoke about the trip.",  # no language
        "Still a mess, honestly.",  # a fragment of no family
    ],
)
def test_no_pastime_partner_origin_studies_or_pet_where_the_words_only_resemble_one(sentence: str) -> None:
    reading = speaker_fact(_sentence(sentence))
    assert reading is None or reading.attribute.removeprefix("pet: ").partition(":")[0] not in (
        "language",
        "team",
        "hobby",
        "relationship",
        "birthplace",
        "studies",
        "dad",
        "gym",
        "job",
        "car",
    )


@pytest.mark.parametrize(
    ("sentence", "named"),
    [
        ("Sundays at 8 am I video call my mum, Abena, back home.", [("Kwame's mother", "name")]),
        # a brother is one of several: his name is a value of its own
        ("My big brother Kofi runs a print shop in Accra.", [("Kwame's brother", "name: kofi")]),
        ("My mum moved in with Kofi.", []),  # a relation without a name of its own
        ("Her brother Omar lives in Porto.", []),  # not the speaker's
    ],
)
def test_the_name_of_a_relative_the_speaker_names(sentence: str, named: list[tuple[str, str]]) -> None:
    assert named_relatives(_sentence(sentence), "Kwame") == named


@pytest.mark.parametrize(
    ("sentences", "statement"),
    [
        (["Meet Biscuit, our new puppy!"], PetIntroduction("I have a puppy named Biscuit", named_before=False)),
        (["Say hi to Luna, a rescue greyhound."], PetIntroduction("I have a greyhound named Luna", named_before=False)),
        (
            ["And meet Pickle!", "A three-legged grey tabby cat from the SPCA."],
            PetIntroduction("I have a cat named Pickle", named_before=True),
        ),
        (["Look at this!", "A cat on the roof."], None),  # no name introduced
        (["Moose is a fourteen-year-old beagle."], None),  # a sentence about the animal
        # the speaker's own pet named inside any sentence (ADR 0112)
        (
            ["So much has changed since last time we talked - meet Toby, my puppy."],
            PetIntroduction("I have a puppy named Toby", named_before=False),
        ),
        (
            ["I took Luna, our kitten, to the vet today."],
            PetIntroduction("I have a kitten named Luna", named_before=False),
        ),
        (["I walked Rex, my neighbour's dog."], None),  # someone else's
        (["Rex, my old dog, died last year."], None),  # an end, not an introduction
    ],
)
def test_a_pet_introduced_without_a_verb_of_having(sentences: list[str], statement: PetIntroduction | None) -> None:
    *before, last = [_sentence(text) for text in sentences]
    assert introduced_pet(last, before[-1] if before else None) == statement


@pytest.mark.parametrize(
    ("before", "said", "read"),
    [
        ("Do you still have the car?", "I sold it last month.", "I sold the car last month."),
        ("Are you still going to the gym?", "No, I cancelled it in March.", "No, I cancelled the gym in March."),
        ("Do you still go to Basic-Fit?", "I cancelled it.", "I cancelled Basic-Fit."),  # the stored fact says
        ("Did you call Tom?", "I left it.", None),  # a person is no thing one ends
        ("How was the party?", "I left it early.", None),  # no thing of the speaker's
        ("Do you still have the car?", "I washed it yesterday.", None),  # a verb that ends nothing
    ],
)
def test_an_ended_it_is_the_thing_the_turn_before_names(before: str, said: str, read: str | None) -> None:
    assert with_ended_referent(_sentence(said), before, _sentence(before)) == read


@pytest.mark.parametrize(
    ("sentence", "name"),
    [
        ("We lost Moose on Thursday.", "Moose"),
        ("Moose passed away last night.", "Moose"),
        ("We had to put Moose down.", "Moose"),
        ("We gave Rex away to a farm.", "Rex"),
        ("The Caravan is gone.", "Caravan"),
        ("The Caravan was stolen last night.", "Caravan"),
        ("I sold the Caravan last week.", "Caravan"),
        ("I cancelled Holmes Place and joined the Basic-Fit.", "Holmes Place"),
        ("I'll sell the Caravan before the move.", None),  # a plan ends nothing yet
        ("We visited Moose's old vet.", None),  # a verb that ends nothing
        ("Tom sold the Caravan.", None),  # someone else's act
        ("I lost my keys.", None),  # no name
    ],
)
def test_a_thing_the_speaker_calls_by_name_ended(sentence: str, name: str | None) -> None:
    assert ended_name(_sentence(sentence)) == name


@pytest.mark.parametrize(
    ("sentence", "statement"),
    [
        (
            "They offered me the senior test engineer job and I said yes!",
            "I took the senior test engineer job",
        ),
        ("They offered me the job but I said no.", None),  # declined
        ("They offered me a coffee and I said yes.", None),  # no job
        ("They offered Tom the lead role and he accepted.", None),  # not the speaker's
        ("pebblebox offered me the analytics engineer job, start 7th july.", "I took the analytics engineer job"),
        ("They offered me the job, starting Monday.", "I took the job"),  # a start with its time
        ("They offered me the job, not sure I'll start.", None),
    ],
)
def test_a_job_offered_and_accepted_is_taken(sentence: str, statement: str | None) -> None:
    assert accepted_offer(_sentence(sentence)) == statement


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("I'm Kwame.", "name"),
        ("Hey, I'm Priya!", "name"),
        ("I am Ana Silva.", "name"),
    ],
)
def test_a_speaker_who_introduces_themself_states_their_name(sentence: str, attribute: str) -> None:
    assert _reading(sentence).attribute == attribute
    assert speaker_fact(next(iter(spacy_pipeline()(sentence).sents))) is not None


@pytest.mark.parametrize("sentence", ["I'm Kwame's sister.", "I'm not Bob.", "I'm Canadian.", "I'm tired today."])
def test_being_someone_elses_or_not_a_name_is_no_introduction(sentence: str) -> None:
    assert _reading(sentence).attribute != "name"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("user: Hi! I'm Kwame, I test software for a living.", "Kwame"),
        ("user: Hi there, my name is Nadia Haddad", "Nadia Haddad"),
        ("user: Call me Sam.", "Sam"),
        ("user: I'm called Priya.", "Priya"),
        ("user: I am Ana Silva and I live in Porto.", "Ana Silva"),
        ("user: I'm O'Brien.", "O'Brien"),
        ("user: I'm tired", None),
        ("user: I'm Kwame's sister", None),
    ],
)
def test_the_name_a_name_statement_gives(text: str, name: str | None) -> None:
    assert stated_name(text) == name


@pytest.mark.parametrize(
    ("sentence", "stated"),
    [
        ("My best friend is Maria now.", True),
        ("My laptop is a MacBook.", True),
        ("My new phone number is 555-9876.", True),
        ("My weekend was a blast.", False),  # the past: an event
        ("My team is amazing.", False),  # a quality, no value
        ("My mom is a nurse.", False),  # a relative's fact, not the speaker's
        ("My notes from the trip are at the library.", False),  # where a thing is
        ("Is my laptop a MacBook?", False),
    ],
)
def test_what_one_of_the_speakers_own_things_is_in_the_present_is_a_fact(sentence: str, stated: bool) -> None:
    span = _sentence(sentence)
    assert owned_statement(span) is stated
    if stated:
        assert not read_fact(span).attribute.startswith("be ")  # keyed by the thing, not the verb


@pytest.mark.parametrize(
    ("sentence", "exclaimed"),
    [
        ("also i own a car again??", True),
        ("we're moving to Leeds?!", True),
        ("do i need a car??", False),  # asked, the auxiliary first
        ("why am i awake??", False),  # a question word
        ("you're coming??", False),  # about someone else
        ("i own a car again?", False),  # one mark: it may be asked
    ],
)
def test_chats_doubled_question_mark_on_the_speakers_own_news_states_it(sentence: str, exclaimed: bool) -> None:
    assert exclaims_own_news(_sentence(sentence)) is exclaimed


@pytest.mark.parametrize(
    "sentence",
    [
        "We live in Lyon and work for Airbus.",  # the tagger takes "work" for a noun
        "I live in Lisbon and work as a nurse at Santa Maria.",
        "I live in Leeds and work at the hospital.",
    ],
)
def test_a_home_and_work_joined_in_one_sentence_are_two_facts(sentence: str) -> None:
    facts = clause_facts(_sentence(sentence))
    assert sorted(fact.reading.attribute for fact in facts) == ["home city", "job"]


def test_work_as_a_noun_states_no_job() -> None:
    assert read_fact(_sentence("I love my work and my family.")).attribute != "job"


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("Priya is my best friend now.", "best friend"),
        ("pretty sure she's my best friend now tbh, don't tell hana", "best friend"),
        ("he's my manager now", "manager"),
        # run-on chat: of the verb's two subjects, the one right before it is its own
        ("work stuff, femi left on friday for some startup in london, so i report to gareth now", "manager"),
    ],
)
def test_someone_named_as_the_speakers_own_person_is_a_fact_of_the_speaker(sentence: str, attribute: str) -> None:
    span = _sentence(sentence)
    assert owned_statement(span) or speaker_fact(span) is not None
    assert read_fact(span).attribute == attribute


@pytest.mark.parametrize(
    "sentence",
    [
        "Dance is my stress fix too.",  # a thing, though the tagger may take it for a name
        "Garlic is my go-to ingredient.",
        "she's my sister",  # the relative's fact
        "Is she your best friend?",
    ],
)
def test_no_person_of_the_speakers_where_none_is_named_or_it_is_a_relative(sentence: str) -> None:
    span = _sentence(sentence)
    assert not owned_statement(span)
    assert not owned_by_pronoun(span)


def test_a_pronoun_named_as_the_speakers_own_person_is_told_apart_from_a_name() -> None:
    assert owned_by_pronoun(_sentence("pretty sure she's my best friend now"))
    assert not owned_by_pronoun(_sentence("Priya is my best friend now."))


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("so i went to cats protection and came home w/ a kitten.", "pet: kitten"),
        ("we brought home a rescue dog", "pet: dog"),
        ("I came home with a puppy", "pet: puppy"),
    ],
)
def test_a_pet_brought_home_is_had_and_chats_short_with_reads_as_with(sentence: str, attribute: str) -> None:
    assert read_fact(_sentence(sentence)).attribute == attribute


def test_a_short_form_keeps_its_text_and_parses_as_its_word() -> None:
    doc = spacy_pipeline()("came home w/ a kitten")
    with_token = next(token for token in doc if token.text == "w/")
    assert (with_token.norm_, with_token.dep_) == ("with", "prep")
    assert doc.text == "came home w/ a kitten"
    assert read_fact(_sentence("I came home with a headache")).attribute != "pet: headache"


@pytest.mark.parametrize(
    ("sentence", "paid"),
    [
        ("left the houseshare, got a one bed in bedminster just off north street, 1,050 a month", True),
        ("we rent a little terrace off stockport road w/ my bf callum, 850 a month", True),
        ("We found a two-bed flat in Leith for £950 a month", True),
        ("I lease a car for 300 a month", False),  # a car, not a home
        ("I pay 25 quid a month for the gym", False),
        ("We rent a flat in Leith.", False),  # no price by the month
        ("Tiago rents a flat for 900 a month", False),  # someone else's
    ],
)
def test_a_home_rented_or_taken_at_a_monthly_price_states_the_rent(sentence: str, paid: bool) -> None:
    assert pays_rent(_sentence(sentence)) is paid


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("i moved to porto", "home city"),  # parsed as "to" and a verb "porto"
        ("we live in são paulo now", "home city"),
        ("big news: moved to porto last week!!", "home city"),  # after a lead-in, without "I"
        ("we moved in march", "home"),  # a month, not the town of March
    ],
)
def test_a_place_chat_writes_in_lower_case_and_a_move_after_a_lead_in(sentence: str, attribute: str) -> None:
    span = _sentence(sentence)
    assert speaker_fact(span) is not None
    assert read_fact(span).attribute == attribute


def test_a_verb_after_a_lead_in_with_its_own_subject_is_not_the_speakers() -> None:
    assert speaker_fact(_sentence("Big news: Tiago moved to Berlin")) is None
    assert speaker_fact(_sentence("big news: moved to berlin")) is not None


@pytest.mark.parametrize(
    ("attribute", "text", "added"),
    [
        ("pet: pup", "I recently adopted another pup from a shelter.", True),
        ("pet: cat", "we got a second cat!", True),
        ("pet: dog", "One more rescue dog joined the family.", True),
        ("pet: dog", "I have a dog named Rex.", False),  # a dog, not one more
        ("pet: dog", "We got another cat.", False),  # one more of another kind
        ("hobby: pottery", "I signed up for another pottery class.", False),  # more of the same pastime
        ("job", "I got another job.", False),  # one value at a time
    ],
)
def test_one_more_of_a_kind_one_has_adds_a_value(attribute: str, text: str, added: bool) -> None:
    assert adds_a_value(attribute, text) is added


@pytest.mark.parametrize(
    ("sentence", "name", "addressed"),
    [
        ("Thanks, Gina - really appreciate it!", "Gina", True),
        ("Wow Melanie, that's awesome!", "Melanie", True),
        ("You got this, Jon!", "Jon", True),
        ("Your support, Gina, means a lot too.", "Gina", True),
        ("My sister, Gina, moved to Paris.", "Gina", False),  # who the sister is
        ("I went hiking with my friend, Jon.", "Jon", False),
        ("I had dinner with Gina, my old roommate.", "Gina", False),
        ("I met Jon, Gina and Priya at the cafe.", "Jon", False),
        ("Thanks to Gina, I found a flat.", "Gina", False),
    ],
)
def test_a_name_spoken_to_is_told_from_a_name_spoken_of(sentence: str, name: str, addressed: bool) -> None:
    span = _sentence(sentence)
    [token] = [t for t in span if t.text == name]
    assert is_addressed(span.doc[token.i : token.i + 1]) is addressed


def test_only_the_speakers_own_way_to_work_is_their_commute() -> None:
    assert speaker_fact(_sentence("His drive to work is long.")) is None  # his
    trip = speaker_fact(_sentence("I went on a bike ride to the lake."))  # a ride, not to work
    assert trip is None or trip.attribute != "commute"


@pytest.mark.parametrize(
    ("sentence", "attribute"),
    [
        ("I graduated from MIT in 2019.", "studies"),  # ADR 0144: a named school
        ("I studied at Stanford.", "studies"),
        ("I worked at Google.", "job"),  # an organization worked at is no school
        ("I started learning Spanish.", "language: spanish"),
        ("I'm learning Spanish.", "language: spanish"),
    ],
)
def test_a_school_by_its_name_and_a_language_one_learns(sentence: str, attribute: str) -> None:
    assert _reading(sentence).attribute == attribute


def test_what_the_copula_says_one_is_shares_its_subject_with_the_verb_after_it() -> None:
    """ADR 0143: "My mum is retired and lives in Accra" is two facts of the mother's."""
    for sentence, facts in [
        ("My mum is retired and lives in Accra.", [("job", "My mum is retired."), ("home city", "Lives in Accra.")]),
        (
            "My sister is married and lives in Leeds.",
            [("relationship", "My sister is married."), ("home city", "Lives in Leeds.")],
        ),
        ("I'm vegan and live in Lyon.", [("diet", "I'm vegan."), ("home city", "Live in Lyon.")]),
    ]:
        span = next(iter(spacy_pipeline()(sentence).sents))
        about = None if span[0].lower_ == "i" else span[1]
        assert [(fact.reading.attribute, fact.text) for fact in clause_facts(span, about=about)] == facts
