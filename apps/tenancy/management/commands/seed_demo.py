"""Create the demo organization, an API key, a console superuser and a demo staff member — printed once."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from apps.tenancy import keys, services
from apps.tenancy.models import Membership, Organization

DEMO_SLUG = "demo"


class Command(BaseCommand):
    help = "Create the demo organization, a demo API key, a console superuser and a staff member if missing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="Where the server listens (for the console link)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        organization = Organization.objects.dangerously_across_organizations().filter(slug=DEMO_SLUG).first()
        if organization is not None:
            self.stdout.write(f"Demo organization exists ({organization.id}); its keys were shown when created.")
            return
        organization = services.organization_create(name="Demo organization", slug=DEMO_SLUG)
        issued = services.api_key_create(organization_id=organization.id, name="demo", scopes=list(keys.SCOPES))
        password = secrets.token_urlsafe(12)
        user_model = get_user_model()
        with transaction.atomic(using="owner"):
            user = user_model.objects.db_manager("owner").create_superuser(
                username="admin", email="admin@example.com", password=password
            )
            staff_password = secrets.token_urlsafe(12)
            staff = user_model.objects.db_manager("owner").create_user(
                username="staff", email="staff@example.com", password=staff_password, is_staff=True
            )
        services.membership_create(organization_id=organization.id, user_id=user.pk, role=Membership.Role.OWNER)
        services.membership_create(organization_id=organization.id, user_id=staff.pk, role=Membership.Role.ADMIN)
        self.stdout.write(self.style.SUCCESS("Demo organization created. Shown once — store them now:"))
        self.stdout.write(f"  organization: {organization.slug} ({organization.id})")
        self.stdout.write(f"  API key:      {issued.secret}")
        self.stdout.write(f"  console:      {options['base_url'].rstrip('/')}/console/")
        self.stdout.write(f"    superuser:  user 'admin'  password '{password}'  (every organization)")
        self.stdout.write(f"    staff:      user 'staff'  password '{staff_password}'  (admin of {organization.slug})")
