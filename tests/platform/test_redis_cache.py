"""The shared cache reuses one Redis client per connection pool instead of building one per call."""

from __future__ import annotations

import uuid

import pytest
import redis
from django.core.cache import cache, caches

from apps.platform.redis_cache import PooledRedisCache


def test_cache_calls_share_one_client_per_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(caches["default"], PooledRedisCache)
    built: list[object] = []
    real_init = redis.Redis.__init__

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(redis.Redis, "__init__", counted)
    key = f"pooled-{uuid.uuid4().hex}"
    cache.get(key)  # the process's client for reads exists from here on
    cache.add(key, 1, 30)
    before = len(built)
    for number in range(5):
        assert cache.add(key, number, 30) is False  # set once above
        assert cache.get(key) == number + 1
        assert cache.incr(key) == number + 2
    assert len(built) == before  # 15 calls, no new client
    assert cache._cache.get_client(key, write=True) is cache._cache.get_client(key, write=True)
    cache.delete(key)
    assert cache.get(key) is None
