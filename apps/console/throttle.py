"""Sign-in throttling: failed attempts per username and client address, counted in the cache.

After ``CONSOLE_LOGIN_MAX_FAILURES`` failures within ``CONSOLE_LOGIN_WINDOW_SECONDS`` the pair
is locked out until the window (which starts at the first failure) has passed; a successful
sign-in clears the count. The key is a hash, so usernames do not sit in the cache in clear.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache


def _key(username: str, address: str) -> str:
    digest = hashlib.sha256(f"{username.strip().lower()}|{address}".encode()).hexdigest()
    return f"console:login-failures:{digest}"


def login_locked_out(*, username: str, address: str) -> bool:
    failures = cache.get(_key(username, address), 0)
    return int(failures) >= settings.CONSOLE_LOGIN_MAX_FAILURES


def login_failure_record(*, username: str, address: str) -> int:
    """Count one failure; returns the failures in the current window."""
    key = _key(username, address)
    if cache.add(key, 1, timeout=settings.CONSOLE_LOGIN_WINDOW_SECONDS):
        return 1
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=settings.CONSOLE_LOGIN_WINDOW_SECONDS)
        return 1


def login_failures_clear(*, username: str, address: str) -> None:
    cache.delete(_key(username, address))
