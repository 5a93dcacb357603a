"""Django's PostgreSQL backend, with one addition: no commit after the request's budget.

A request that ran past ``settings.REQUEST_BUDGET_SECONDS`` is answered 503; committing its
transaction anyway would store what the client was told failed (and a retry would store it
twice). The check runs just before COMMIT, so the atomic block rolls the transaction back.
"""

from __future__ import annotations

from django.db.backends.postgresql import base

from apps.platform.budget import check_budget


class DatabaseWrapper(base.DatabaseWrapper):
    def _commit(self) -> None:
        if self.connection is not None:
            check_budget()
        super()._commit()  # type: ignore[misc]
