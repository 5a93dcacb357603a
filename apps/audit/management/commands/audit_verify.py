"""Walk every organization's audit chain and report the first broken link."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.audit.selectors import audit_verify, audited_organizations


class Command(BaseCommand):
    help = "Verify the hash chain of the audit log; exits non-zero at the first broken link."

    def handle(self, *args: Any, **options: Any) -> None:
        broken = []
        organizations = audited_organizations()
        for organization_id in organizations:
            sequence = audit_verify(organization_id=organization_id)
            if sequence is not None:
                broken.append(f"organization {organization_id}: first broken link at entry {sequence}")
        if broken:
            raise CommandError("; ".join(broken))
        self.stdout.write(self.style.SUCCESS(f"audit chain intact for {len(organizations)} organization(s)"))
