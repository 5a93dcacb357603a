"""BM25 and reciprocal rank fusion: the flat mode's two lanes and how they combine."""

from __future__ import annotations

import math

import pytest

from apps.retrieval.lexical import (
    BM25_B,
    BM25_K1,
    RRF_K,
    best_matches,
    bm25_scores,
    ranked,
    rrf,
    specificity,
    terms,
)

pytestmark = pytest.mark.unit


def test_terms_are_content_stems_with_repeats() -> None:
    assert terms("The painting, and she painted paints!") == ["paint", "paint", "paint"]
    assert terms("What is it?") == []
    # one term for the words of the same relative or role, on both sides of the match
    assert terms("my mum's boss") == terms("my mother's manager") == ["mother", "manager"]
    assert terms("I'm off, we've gone") == ["off", "go"]


def test_chat_short_forms_are_the_words_they_stand_for() -> None:
    assert terms("my gf and my fam") == terms("my girlfriend and my family") == ["girlfriend", "family"]
    assert terms("my fave comp") == terms("my favourite competition") == terms("my favorite competition")
    # a short form is never another word's stem
    assert terms("gift fame comply") == ["gift", "fam", "comply"]


def test_bm25_matches_the_okapi_formula() -> None:
    documents = [["paint", "sunset"], ["paint", "paint", "lake", "boat", "dog"], ["dog"]]
    scores = bm25_scores(["paint", "dog"], documents)
    average = 8 / 3

    def idf(df: int) -> float:
        return math.log(1 + (3 - df + 0.5) / (df + 0.5))

    def part(tf: int, length: int, df: int) -> float:
        return idf(df) * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))

    assert scores == pytest.approx([part(1, 2, 2), part(2, 5, 2) + part(1, 5, 2), part(1, 1, 2)])


def test_rarer_terms_and_shorter_documents_score_higher() -> None:
    rare_first = bm25_scores(["kayak", "lake"], [["kayak"], ["lake"], ["lake"], ["lake", "kayak", "x", "y", "z"]])
    assert rare_first[0] > rare_first[1] and rare_first[0] > rare_first[3] - rare_first[1]
    assert bm25_scores(["x"], []) == []


def test_ranked_drops_non_matches_orders_by_score_then_id() -> None:
    assert ranked(["b", "a", "c", "d"], [1.0, 1.0, 0.0, 2.0], depth=2) == ["d", "a"]


def test_rrf_fuses_two_rankings_deterministically() -> None:
    fused = rrf([["x", "y", "z"], ["y", "w"]])
    assert [item for item, _ in fused] == ["y", "x", "w", "z"]
    assert fused[0][1] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert rrf([["b"], ["a"]]) == [("a", 1 / (RRF_K + 1)), ("b", 1 / (RRF_K + 1))]
    assert rrf([["b"], ["a"]], k=60) == [("a", 1 / 61), ("b", 1 / 61)]


def test_best_matches_weigh_a_rare_word_over_a_common_one_in_the_whole_collection() -> None:
    texts: dict[str, str | None] = {
        "dogs-1": "my dogs love the park",
        "dogs-2": "the dogs had a bath",
        "names": "their names are Pepper, Precious and Panda",
        "both": "my dogs and their names",
        "other": None,  # a text of the collection with none of the words
    }
    assert best_matches("names or dogs", texts, limit=2) == ["both", "names"]
    # the common word alone: the shorter text first
    assert best_matches("names or dogs", texts, limit=10) == ["both", "names", "dogs-2", "dogs-1"]
    assert best_matches("violin", texts, limit=2) == []


def test_specificity_is_the_mean_idf_of_a_texts_rarest_terms() -> None:
    texts = {"a": "painting museum", "b": "painting lake", "c": "painting", "d": "the"}
    got = specificity(texts, top=2)
    # painting in 3 of 4 texts, museum and lake in 1; a missing term counts zero
    assert got["a"] == pytest.approx((math.log(4) + math.log(4 / 3)) / 2)
    assert got["b"] == got["a"]
    assert got["c"] == pytest.approx(math.log(4 / 3) / 2)
    assert got["d"] == 0.0
