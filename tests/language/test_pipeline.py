"""The process's spaCy pipeline and parses (apps.language.pipeline)."""

from __future__ import annotations

import pytest

from apps.language.pipeline import PARSES, entity_words, spacy_pipeline

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
