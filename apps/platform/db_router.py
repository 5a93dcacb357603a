from __future__ import annotations

from typing import Any


class OwnerMigratesRouter:
    """Schema changes run as the owner role; the application role can never migrate."""

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool:
        return db == "owner"
