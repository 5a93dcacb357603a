"""How long one API request may take, and the limits nested inside that budget.

``MIRIX_REQUEST_BUDGET_SECONDS`` (60): a request whose transaction would commit after this many
seconds is rolled back and answered 503 ``request_timeout`` with ``Retry-After`` — nothing is
stored for a request the client is told failed. ``MIRIX_DATABASE_STATEMENT_TIMEOUT_SECONDS``
(half the budget, 0 for none): Postgres cancels one statement of the application role after this long (a
503 with ``Retry-After`` too). The API server (gunicorn) kills a worker only after the budget
plus ``SERVER_TIMEOUT_MARGIN_SECONDS``, when the request's transaction has already ended.

Plain Python on the environment: the gunicorn configuration reads it before Django starts.
"""

from __future__ import annotations

from mirix_saas.settings.env import MissingSetting, env_int

REQUEST_BUDGET_SECONDS = env_int("MIRIX_REQUEST_BUDGET_SECONDS", 60)
DATABASE_STATEMENT_TIMEOUT_SECONDS = env_int("MIRIX_DATABASE_STATEMENT_TIMEOUT_SECONDS", REQUEST_BUDGET_SECONDS // 2)
# What a request may still do after its commit (on-commit publishing, rendering the answer).
SERVER_TIMEOUT_MARGIN_SECONDS = 30
SERVER_TIMEOUT_SECONDS = REQUEST_BUDGET_SECONDS + SERVER_TIMEOUT_MARGIN_SECONDS

if REQUEST_BUDGET_SECONDS < 1:
    raise MissingSetting("MIRIX_REQUEST_BUDGET_SECONDS must be at least 1")
if not 0 <= DATABASE_STATEMENT_TIMEOUT_SECONDS <= REQUEST_BUDGET_SECONDS:
    raise MissingSetting("MIRIX_DATABASE_STATEMENT_TIMEOUT_SECONDS must be between 0 and MIRIX_REQUEST_BUDGET_SECONDS")
