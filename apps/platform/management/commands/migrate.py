"""``migrate`` defaults to the owner connection: the application role owns no tables."""

from __future__ import annotations

from django.core.management.base import CommandParser
from django.core.management.commands.migrate import Command as DjangoMigrateCommand


class Command(DjangoMigrateCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.set_defaults(database="owner")
