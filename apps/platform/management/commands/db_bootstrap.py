"""Prepare a production Postgres: roles, database, extensions, grants (idempotent).

Needs a superuser connection in ``DATABASE_ADMIN_URL``; the embedded server is bootstrapped
automatically and never needs this. Run once per cluster before ``migrate``.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from infra.embedded import postgres


class Command(BaseCommand):
    help = "Create the owner and application roles, the database, extensions and grants."

    def handle(self, *args: Any, **options: Any) -> None:
        admin_url = os.environ.get("DATABASE_ADMIN_URL")
        if not admin_url:
            raise CommandError("Set DATABASE_ADMIN_URL to a superuser connection of the target cluster.")
        passwords = {
            role: os.environ[variable]
            for role, variable in (
                (postgres.OWNER_ROLE, "MIRIX_DB_OWNER_PASSWORD"),
                (postgres.APP_ROLE, "MIRIX_DB_APP_PASSWORD"),
            )
            if os.environ.get(variable)
        }
        postgres.bootstrap_cluster(admin_url, passwords=passwords)
        database = str(settings.DATABASES["default"]["NAME"])
        postgres.bootstrap_database(admin_url, database)
        self.stdout.write(
            self.style.SUCCESS(f"database {database} ready for roles {postgres.OWNER_ROLE} / {postgres.APP_ROLE}")
        )
