"""The staff console (ADR 0011): sign-in throttling and session lifetime.

``MIRIX_CONSOLE_LOGIN_MAX_FAILURES`` failed sign-ins for one username from one address within
``MIRIX_CONSOLE_LOGIN_WINDOW_SECONDS`` lock that pair out until the window has passed.
Production settings add the ``Secure`` flag to the session and CSRF cookies.
"""

from __future__ import annotations

from mirix_saas.settings.env import env_int

CONSOLE_LOGIN_MAX_FAILURES = env_int("MIRIX_CONSOLE_LOGIN_MAX_FAILURES", 5)
CONSOLE_LOGIN_WINDOW_SECONDS = env_int("MIRIX_CONSOLE_LOGIN_WINDOW_SECONDS", 15 * 60)
LOGIN_URL = "console:login"
SESSION_COOKIE_AGE = env_int("MIRIX_CONSOLE_SESSION_SECONDS", 8 * 3600)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
