"""Query embeddings of repeated questions, kept per process and per organization (ADR 0053).

Agents ask the same questions again and again (the answer loop's follow-up searches, a chat
that re-asks, a dashboard that refreshes), and embedding a query is the largest single phase
of a search after the database. :class:`QueryEmbeddingCache` keeps the most recently used
vectors, bounded by count; the key is the organization, the model and a hash of the text, so
a vector one organization's question produced is never served to another (not even for the
same text: a hit would tell it, by its speed, what another tenant asked), and a change of
model never serves an old vector.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from array import array
from collections import OrderedDict
from collections.abc import Sequence

from apps.platform.timing import phase
from apps.providers.interfaces import Embedder, MeteringContext

CacheKey = tuple[uuid.UUID, str, bytes]


class QueryEmbeddingCache:
    """A bounded, thread-safe LRU map from (organization, model, text hash) to a vector."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._vectors: OrderedDict[CacheKey, array[float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(organization_id: uuid.UUID, model: str, text: str) -> CacheKey:
        return organization_id, model, hashlib.sha256(text.encode()).digest()

    def get(self, key: CacheKey) -> list[float] | None:
        with self._lock:
            vector = self._vectors.get(key)
            if vector is None:
                self.misses += 1
                return None
            self._vectors.move_to_end(key)
            self.hits += 1
            return vector.tolist()

    def put(self, key: CacheKey, vector: Sequence[float]) -> None:
        if self.capacity <= 0:
            return
        with self._lock:
            # Packed doubles: exactly the vector, a third of the memory of a list of floats.
            self._vectors[key] = array("d", vector)
            self._vectors.move_to_end(key)
            while len(self._vectors) > self.capacity:
                self._vectors.popitem(last=False)

    def __len__(self) -> int:
        return len(self._vectors)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()
            self.hits = self.misses = 0


class CachedQueryEmbedder:
    """The deployment's embedder for one organization's queries, through the cache."""

    def __init__(self, embedder: Embedder, organization_id: uuid.UUID, cache: QueryEmbeddingCache) -> None:
        self._embedder = embedder
        self._organization_id = organization_id
        self._cache = cache

    @property
    def model_name(self) -> str:
        return self._embedder.model_name

    @property
    def dimension(self) -> int:
        return self._embedder.dimension

    def embed(self, texts: Sequence[str], *, metering: MeteringContext | None = None) -> list[list[float]]:
        with phase("embedding"):
            keys = [QueryEmbeddingCache.key(self._organization_id, self.model_name, text) for text in texts]
            vectors = {key: self._cache.get(key) for key in dict.fromkeys(keys)}
            missing = {key: text for key, text in zip(keys, texts, strict=True) if vectors[key] is None}
            if missing:
                computed = self._embedder.embed(list(missing.values()), metering=metering)
                for key, vector in zip(missing, computed, strict=True):
                    self._cache.put(key, vector)
                    vectors[key] = vector
            return [list(vectors[key] or ()) for key in keys]
