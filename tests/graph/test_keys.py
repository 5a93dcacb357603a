"""The anchor key κ (paper §2.3, A.2): a pure function, no database needed."""

from __future__ import annotations

import pytest

from apps.graph.keys import FUNCTION_WORDS, anchor_key, may_denote_same
from apps.language.words import singularize

pytestmark = pytest.mark.unit


def test_the_papers_examples() -> None:
    assert anchor_key("Mobile App") == anchor_key("Mobile Apps") == "app mobile"
    assert anchor_key("10 Gallons") != anchor_key("20 Gallons")
    assert anchor_key("10 Gallons") == anchor_key("10 gallon") == "10 gallon"
    assert anchor_key("Training") != anchor_key("Trains")
    assert (anchor_key("Training"), anchor_key("Trains")) == ("training", "train")


def test_eleven_function_words_are_dropped() -> None:
    assert len(FUNCTION_WORDS) == 11
    assert anchor_key("The Lord of the Rings") == "lord ring"
    assert anchor_key("Bank of America") == anchor_key("America Bank") == "america bank"
    assert anchor_key("a trip to Paris") == anchor_key("Paris Trip")
    assert anchor_key("the user") == anchor_key("Users") == anchor_key("USER") == "user"
    assert anchor_key("coffee with milk") != anchor_key("coffee milk")  # "with" changes the meaning: kept


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("LGBTQ support group", "support group, LGBTQ"),  # word order
        ("Self-Acceptance", "self acceptance"),  # punctuation
        ("Caroline's dog", "Carolines dog"),  # a possessive
        ("kids' toys", "kid toy"),
        ("Becoming Nicole", "becoming nicole"),  # case
        ("$1,200 budget", "1200 budget"),  # a thousands separator is not a word break
        ("7 May 2023", "May 7, 2023"),  # dates keep their numbers, in any order
    ],
)
def test_same_key(first: str, second: str) -> None:
    assert anchor_key(first) == anchor_key(second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("3.5 miles", "35 miles"),  # a decimal point is kept
        ("7 May 2023", "8 May 2023"),
        ("iPhone 14", "iPhone 15"),
        ("Form W-2", "Form W-4"),
        ("Plan A", "Plan B"),
        ("Sing Sing", "Sing"),  # repeated tokens are kept
    ],
)
def test_different_key(first: str, second: str) -> None:
    assert anchor_key(first) != anchor_key(second)


@pytest.mark.parametrize(
    ("plural", "singular"),
    [
        ("apps", "app"),
        ("gallons", "gallon"),
        ("trains", "train"),
        ("cities", "city"),
        ("puppies", "puppy"),
        ("movies", "movie"),  # an -ie noun, not "movy"
        ("classes", "class"),
        ("buses", "bus"),
        ("bonuses", "bonus"),
        ("houses", "house"),
        ("causes", "cause"),
        ("boxes", "box"),
        ("watches", "watch"),
        ("headaches", "headache"),
        ("dishes", "dish"),
        ("photos", "photo"),
        ("potatoes", "potato"),
        ("analyses", "analysis"),
        ("children", "child"),
        ("knives", "knife"),
    ],
)
def test_plurals_are_singularized(plural: str, singular: str) -> None:
    assert singularize(plural) == singular


@pytest.mark.parametrize(
    "word",
    ["training", "glass", "campus", "analysis", "tennis", "news", "series", "physics", "texas", "paris", "bus", "gas"],
)
def test_non_plurals_and_short_words_are_kept(word: str) -> None:
    assert singularize(word) == word


def test_empty_and_function_word_names_have_an_empty_key() -> None:
    assert anchor_key("") == ""
    assert anchor_key("  --  ") == ""
    assert anchor_key("The") == ""


def test_names_differing_in_numbers_dates_or_codes_never_denote_the_same() -> None:
    assert may_denote_same("Mobile App", "mobile apps")
    assert may_denote_same("Caroline", "Caroline Smith")  # no number, date or code: a decision may merge
    assert not may_denote_same("10 gallons", "20 gallons")
    assert not may_denote_same("trip in May", "trip in June")
    assert not may_denote_same("Form W-2", "Form W-4")
    assert not may_denote_same("Model S", "Model X")
    assert not may_denote_same("2023 marathon", "marathon")
