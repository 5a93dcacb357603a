from __future__ import annotations

from mirix_saas.settings.env import env_str

CACHES = {
    "default": {
        "BACKEND": "apps.platform.redis_cache.PooledRedisCache",
        "LOCATION": env_str("CACHE_URL"),
        "KEY_PREFIX": "mirix",
    }
}
