from __future__ import annotations

from typing import Any

from django.db import DEFAULT_DB_ALIAS
from django.db.models import Model

from apps.platform.replica import REPLICA_ALIAS, read_alias


class OwnerMigratesRouter:
    """Schema changes run as the owner role; the application role can never migrate."""

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool:
        return db == "owner"


class ReplicaReadsRouter:
    """ORM reads inside a replica scope go to the replica (``apps.platform.replica``); writes
    never do, not even of an instance read there. Outside a replica scope it has no opinion,
    so Django's defaults (and every explicit ``using``) apply as before."""

    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        alias = read_alias()
        return alias if alias == REPLICA_ALIAS else None

    def db_for_write(self, model: type[Model], **hints: Any) -> str | None:
        instance = hints.get("instance")
        if instance is not None and instance._state.db == REPLICA_ALIAS:
            return DEFAULT_DB_ALIAS
        return None

    def allow_relation(self, obj1: Model, obj2: Model, **hints: Any) -> bool | None:
        pair = {obj1._state.db, obj2._state.db}
        return True if pair <= {DEFAULT_DB_ALIAS, REPLICA_ALIAS} else None
