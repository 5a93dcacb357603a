from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from apps.tenancy import keys, services


class Command(BaseCommand):
    help = "Create an organization (its graph follows on its first write) and an API key with the given scopes; the key is printed once."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--scopes", default=",".join(keys.SCOPES))

    def handle(self, *args: Any, **options: Any) -> None:
        organization = services.organization_create(name=options["name"] or options["slug"], slug=options["slug"])
        issued = services.api_key_create(
            organization_id=organization.id, name="initial", scopes=options["scopes"].split(",")
        )
        self.stdout.write(f"organization {organization.slug} {organization.id}")
        self.stdout.write(f"api key {issued.secret}")
