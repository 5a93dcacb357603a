"""The local MiniLM embedder: offline, 384-d, unit length, semantically ordered."""

from __future__ import annotations

import math

import pytest

from apps.providers.local_embedder import LocalEmbedder

pytestmark = pytest.mark.unit

embedder = LocalEmbedder()


def _cosine(a: list[float], b: list[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def test_dimension_and_unit_length() -> None:
    vectors = embedder.embed(["I adopted a puppy named Biscuit.", "Lake Tahoe is a freshwater lake."])
    assert (embedder.model_name, embedder.dimension) == ("all-MiniLM-L6-v2", 384)
    assert [len(vector) for vector in vectors] == [384, 384]
    assert all(math.isclose(math.sqrt(_cosine(v, v)), 1.0, abs_tol=1e-5) for v in vectors)


def test_semantically_closer_pairs_score_higher() -> None:
    query, close, far = embedder.embed(
        [
            "We are flying to Paris next month.",
            "Our trip to France is planned for June.",
            "Repot the cactus in gravel after watering it.",
        ]
    )
    assert _cosine(query, close) > _cosine(query, far) + 0.2


def test_batches_match_single_texts_in_input_order() -> None:
    texts = [f"Message number {index} about hiking near Lake Tahoe." for index in range(70)]  # > one batch
    batched = embedder.embed(texts)
    assert len(batched) == 70
    for index in (0, 64, 69):
        [single] = embedder.embed([texts[index]])
        assert _cosine(single, batched[index]) > 0.9999


def test_no_texts() -> None:
    assert embedder.embed([]) == []
