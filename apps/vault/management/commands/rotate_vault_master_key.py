"""Re-wrap every vault data key under a master key (by default the active one).

Rotation: add the new key to ``MIRIX_VAULT_MASTER_KEYS``, make it
``MIRIX_VAULT_ACTIVE_MASTER_KEY``, deploy, run this command, and remove the old key once the
command reports that it wraps no data keys. Values are never re-encrypted.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.vault.crypto import UnknownMasterKey
from apps.vault.selectors import vault_master_key_usage
from apps.vault.services import vault_rewrap_data_keys


class Command(BaseCommand):
    help = "Re-wrap every organization's vault data keys under a master key; values are not re-encrypted."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--master-key-id", default="", help="Key id from MIRIX_VAULT_MASTER_KEYS (default: the active key)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        master_key_id = options["master_key_id"] or settings.VAULT_ACTIVE_MASTER_KEY
        try:
            rewrapped = vault_rewrap_data_keys(new_master_key_id=master_key_id)
        except UnknownMasterKey as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Re-wrapped {rewrapped} data keys under master key {master_key_id!r}.")
        for key_id, count in vault_master_key_usage().items():
            self.stdout.write(f"  master key {key_id!r} wraps {count} data keys")
