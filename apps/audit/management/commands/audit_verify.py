"""Walk every organization's audit chain and name the first entry that breaks it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.audit.selectors import audit_chain_status, audited_organizations


class Command(BaseCommand):
    help = "Verify the hash chain of the audit log; exits non-zero naming the first entry that does not verify."

    def handle(self, *args: Any, **options: Any) -> None:
        broken = []
        organizations = audited_organizations()
        for organization_id in organizations:
            status = audit_chain_status(organization_id=organization_id, as_owner=True)
            if status.intact:
                continue
            entry = status.broken_entry
            described = (
                f" (id {entry.id}, action {entry.action!r}, created {entry.created_at.isoformat()})" if entry else ""
            )
            broken.append(
                f"organization {organization_id}: first broken link at entry {status.broken_sequence}{described}"
            )
        if broken:
            raise CommandError("; ".join(broken))
        self.stdout.write(self.style.SUCCESS(f"audit chain intact for {len(organizations)} organization(s)"))
