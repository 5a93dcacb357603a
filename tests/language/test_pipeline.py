"""The process's spaCy pipeline and parses (apps.language.pipeline)."""

from __future__ import annotations

import pytest

from apps.language.pipeline import PARSES, Parses, entity_words, spacy_pipeline, with_names_read

pytestmark = pytest.mark.unit


def _reference_words(entity) -> str:  # type: ignore[no-untyped-def]
    """What the writer and the extractor read before entity_words: the document's text."""
    text = entity.doc.text
    start = entity.start_char
    if entity.label_ == "MONEY" and start > 0 and text[start - 1] in "$\u20ac\u00a3\u00a5":
        start -= 1
    return " ".join(text[start : entity.end_char].split())


@pytest.mark.parametrize(
    "text",
    [
        "It cost $45 and then \u20ac12, later \u00a3 3 and \u00a5500 in Tokyo.",
        "$100 was paid to  Caroline Smith in\n New York on 3 June 2023.",
        "  Melanie spent $ 45.5 million on the LGBTQ center last Friday.",
        "Nothing named here.",
    ],
)
def test_entity_words_read_as_the_documents_text(text: str) -> None:
    doc = PARSES.get(text)
    assert [entity_words(e) for e in doc.ents] == [_reference_words(e) for e in doc.ents]


def test_a_money_amount_keeps_its_currency_sign() -> None:
    doc = spacy_pipeline()("She paid $45 for the tickets.")
    assert [entity_words(e) for e in doc.ents if e.label_ == "MONEY"] == ["$45"]


def test_a_batch_parses_each_distinct_text_once_and_as_a_single_parse_would() -> None:
    texts = [
        "Caroline went to the LGBTQ support group on 7 May.",
        "Melanie paints sunsets.",
        "Caroline went to the LGBTQ support group on 7 May.",
    ]
    PARSES.warm(texts)
    single = spacy_pipeline()(texts[0])
    kept = PARSES.get(texts[0])
    assert [(t.text, t.tag_, t.dep_, t.ent_type_) for t in kept] == [
        (t.text, t.tag_, t.dep_, t.ent_type_) for t in single
    ]


HELD_TEXTS = [
    "Priya Raman showed me the kiln at Oakwood Studio.",
    "My brother Luis moved to Porto in March, near the river.",
    "I adopted a grey cat named Miso from the shelter on Elm Street.",
    "Jonas swam 40 laps at the Wren pool after work.",
]


def test_a_held_block_reads_each_parse_it_made_whatever_the_bound_drops() -> None:
    parses = Parses(size=2)
    with parses.held():
        parses.warm(HELD_TEXTS)  # more texts than the bound keeps
        first = [parses.get(text) for text in HELD_TEXTS]
        again = [parses.get(text) for text in reversed(HELD_TEXTS)][::-1]
    assert all(a is b for a, b in zip(first, again, strict=True))  # none parsed again
    single = spacy_pipeline()(HELD_TEXTS[0])
    assert [(t.text, t.tag_, t.dep_, t.ent_type_) for t in first[0]] == [
        (t.text, t.tag_, t.dep_, t.ent_type_) for t in single
    ]
    # Once the block ends, only the bound keeps parses: the first text was dropped.
    assert parses.get(HELD_TEXTS[0]) is not first[0]


def test_a_held_block_keeps_what_it_read_from_the_recent_parses() -> None:
    parses = Parses(size=2)
    kept = parses.get(HELD_TEXTS[0])
    with parses.held():
        parses.warm(HELD_TEXTS)  # the first is read, the others parsed: the bound drops the first
        assert parses.get(HELD_TEXTS[0]) is kept


def test_a_block_inside_a_held_block_keeps_the_parses_until_the_outer_one_ends() -> None:
    parses = Parses(size=1)
    with parses.held():
        with parses.held():
            first = parses.get(HELD_TEXTS[0])
        parses.warm(HELD_TEXTS[1:])
        assert parses.get(HELD_TEXTS[0]) is first


@pytest.mark.parametrize(
    ("text", "name", "head", "verb"),
    [
        ("Layla lives in Glasgow.", "Layla", "lives", "lives"),  # read as a verb, "lives" as its object
        ("Sven lives in Glasgow now.", "Sven", "lives", "lives"),  # read as an adjective of "lives", a noun
        ("My friend Layla works at Tesco.", "Layla", "friend", "works"),  # the subject's name
        ("Where does Layla work?", "Layla", "work", "work"),
    ],
)
def test_a_name_the_model_does_not_know_is_parsed_as_the_subject_of_its_verb(
    text: str, name: str, head: str, verb: str
) -> None:
    """ADR 0138: the parse of the text with a name the model knows in its place, the words as
    written."""
    doc = PARSES.get(text)
    assert doc.text == text
    token = next(t for t in doc if t.text == name)
    assert (token.pos_, token.lemma_, token.head.text) == ("PROPN", name, head)
    assert next(t for t in doc if t.text == verb).pos_ == "VERB"
    assert [e.text for e in doc.ents] == [e.text for e in spacy_pipeline()(text).ents]  # entities as first read


@pytest.mark.parametrize(
    "text",
    [
        "Woah, Caroline, it sounds like you're doing some impressive work.",  # an interjection
        "Volunteering is a great way to meet people.",  # an English verb's gerund
        "Varies depending on the day.",  # an English verb, inflected
        "Maria lives in Glasgow.",  # a name the model knows
    ],
)
def test_a_text_without_misread_names_keeps_its_first_parse(text: str) -> None:
    doc = spacy_pipeline()(text)
    assert with_names_read(doc) is doc


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        # the parser alone cut "My GF | and I just had …" (ADR 0147)
        (
            "How are you? My GF and I just had a great time at the shelter on Monday.",
            ["How are you?", "My GF and I just had a great time at the shelter on Monday."],
        ),
        # after a full stop, "And" still opens a sentence
        (
            "We packed the car. And then we drove to the coast.",
            ["We packed the car.", "And then we drove to the coast."],
        ),
    ],
)
def test_a_lowercase_conjunction_after_a_word_opens_no_sentence(text: str, sentences: list[str]) -> None:
    assert [sentence.text for sentence in spacy_pipeline()(text).sents] == sentences


@pytest.mark.parametrize(
    ("text", "lemma"),
    [
        ("Went hiking with Gina last weekend.", "go"),  # read as a name
        ("Lost my job as a banker yesterday.", "lose"),  # read as a base form: an imperative's
        ("Got a new job at Pfizer.", "get"),
        ("Got engaged last weekend!!", "get"),  # read as a name the model does not know
    ],
)
def test_a_past_verb_that_opens_a_sentence_is_parsed_as_one(text: str, lemma: str) -> None:
    """ADR 0157: chat drops the "I"; the words stay as written."""
    doc = PARSES.get(text)
    assert doc.text == text
    assert (doc[0].tag_, doc[0].lemma_) == ("VBD", lemma)


@pytest.mark.parametrize("text", ["Read this book!", "Saw blades are sharp."])
def test_a_base_form_or_a_form_read_right_keeps_its_first_parse(text: str) -> None:
    doc = spacy_pipeline()(text)
    assert with_names_read(doc) is doc
