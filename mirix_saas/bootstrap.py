"""What every entry point does before Django reads its settings."""

from __future__ import annotations

import os


def prepare_environment() -> bool:
    """Start the embedded services for any URL the environment does not configure; True when
    the embedded database was just started or created (see ``migrate_if_due``).

    The test settings manage their own database; production configures every URL and
    sets ``MIRIX_EMBEDDED=off`` so that a missing URL fails loudly instead.
    """
    settings_module = os.environ.get("DJANGO_SETTINGS_MODULE", "")
    if settings_module.endswith(".test") or os.environ.get("MIRIX_EMBEDDED", "on") == "off":
        return False
    from infra.embedded.environment import configure_embedded_environment

    return configure_embedded_environment()


def migrate_if_due() -> None:
    """Apply the migrations a just started or created embedded database lacks, so that the
    first ``manage.py`` command on a new var directory finds its tables. A database that is up to
    date is only read (the migration plan is empty)."""
    import django
    from django.core.management import call_command
    from django.db import connections
    from django.db.migrations.executor import MigrationExecutor

    django.setup()
    executor = MigrationExecutor(connections["owner"])
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        print("New embedded database: applying migrations first.", flush=True)
        call_command("migrate", interactive=False, verbosity=0)
