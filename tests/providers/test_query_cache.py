"""Query embeddings cached per organization, model and text (ADR 0053): repeated queries are
not embedded again, and no organization is ever served another's entry."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest

from apps.providers.interfaces import MeteringContext
from apps.providers.query_cache import CachedQueryEmbedder, QueryEmbeddingCache
from apps.providers.registry import query_embedder, query_embedding_cache
from tests.factories import make_tenant

ORG_A, ORG_B = uuid.uuid4(), uuid.uuid4()


class CountingEmbedder:
    """A fake at the model boundary: a vector that says which call made it."""

    def __init__(self, model_name: str = "fake-model") -> None:
        self.model_name = model_name
        self.dimension = 2
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str], *, metering: MeteringContext | None = None) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(self.calls)), float(len(text))] for text in texts]


@pytest.mark.unit
def test_a_repeated_query_of_one_organization_is_embedded_once() -> None:
    model, cache = CountingEmbedder(), QueryEmbeddingCache(8)
    embedder = CachedQueryEmbedder(model, ORG_A, cache)
    first = embedder.embed(["where is biscuit"])
    assert embedder.embed(["where is biscuit"]) == first == [[1.0, 16.0]]
    assert model.calls == [["where is biscuit"]]
    assert (cache.hits, cache.misses) == (1, 1)


@pytest.mark.unit
def test_the_same_text_from_another_organization_is_embedded_for_it() -> None:
    model, cache = CountingEmbedder(), QueryEmbeddingCache(8)
    from_a = CachedQueryEmbedder(model, ORG_A, cache).embed(["where is biscuit"])
    from_b = CachedQueryEmbedder(model, ORG_B, cache).embed(["where is biscuit"])
    assert model.calls == [["where is biscuit"], ["where is biscuit"]]
    assert from_a == [[1.0, 16.0]] and from_b == [[2.0, 16.0]]  # B got its own call's vector
    assert CachedQueryEmbedder(model, ORG_A, cache).embed(["where is biscuit"]) == from_a
    assert len(cache) == 2


@pytest.mark.unit
def test_another_model_misses_and_a_batch_embeds_only_what_is_missing() -> None:
    cache = QueryEmbeddingCache(8)
    old, new = CountingEmbedder("old"), CountingEmbedder("new")
    CachedQueryEmbedder(old, ORG_A, cache).embed(["a"])
    vectors = CachedQueryEmbedder(new, ORG_A, cache).embed(["a", "bb", "a"])
    assert new.calls == [["a", "bb"]]  # "a" under the new model is new; the repeat in the batch too
    assert vectors[1] == [1.0, 2.0]
    assert len(vectors) == 3


@pytest.mark.unit
def test_the_cache_is_bounded_and_evicts_the_least_recently_used() -> None:
    model, cache = CountingEmbedder(), QueryEmbeddingCache(2)
    embedder = CachedQueryEmbedder(model, ORG_A, cache)
    embedder.embed(["one"])
    embedder.embed(["two"])
    embedder.embed(["one"])  # "two" is now the least recently used
    embedder.embed(["three"])
    assert len(cache) == 2
    embedder.embed(["one"])
    assert len(model.calls) == 3
    embedder.embed(["two"])
    assert len(model.calls) == 4


@pytest.mark.unit
def test_a_capacity_of_zero_caches_nothing() -> None:
    model = CountingEmbedder()
    embedder = CachedQueryEmbedder(model, ORG_A, QueryEmbeddingCache(0))
    embedder.embed(["one"])
    embedder.embed(["one"])
    assert len(model.calls) == 2


def test_searches_over_the_api_fill_one_entry_per_organization() -> None:
    owner, other = make_tenant(), make_tenant()
    question = f"Which dog did I adopt? {uuid.uuid4().hex}"
    model_name = query_embedder(owner.id).model_name
    cache = query_embedding_cache()
    for tenant in (owner, other):
        tenant.subject("maya")
    response = owner.client().post("/v1/subjects/maya/search", {"query": question}, format="json")
    assert response.status_code == 200
    assert cache.get(QueryEmbeddingCache.key(owner.id, model_name, question)) is not None
    assert cache.get(QueryEmbeddingCache.key(other.id, model_name, question)) is None
    misses = cache.misses
    response = other.client().post("/v1/subjects/maya/search", {"query": question}, format="json")
    assert response.status_code == 200
    assert cache.misses == misses + 1  # the other organization's search embedded its own
    assert cache.get(QueryEmbeddingCache.key(other.id, model_name, question)) is not None
