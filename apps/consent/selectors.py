from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from apps.consent.models import ConsentRecord
from apps.consent.purposes import PURPOSES
from apps.tenancy.models import Subject


@dataclass(frozen=True)
class ConsentState:
    """The current consent of one purpose: its latest record, or the default (version 0)."""

    purpose: str
    granted: bool
    version: int
    is_default: bool  # no change yet: the purpose's default applies
    changed_at: datetime | None
    changed_by: str | None
    record_id: uuid.UUID | None


def consent_state(*, subject: Subject) -> dict[str, ConsentState]:
    """Every purpose's current state for ``subject``, in the order of ``PURPOSES``."""
    latest = {
        record.purpose: record
        for record in ConsentRecord.objects.filter(subject=subject).order_by("purpose", "-version").distinct("purpose")
    }
    states = {}
    for name, purpose in PURPOSES.items():
        record = latest.get(name)
        states[name] = (
            ConsentState(
                purpose=name,
                granted=record.granted,
                version=record.version,
                is_default=False,
                changed_at=record.created_at,
                changed_by=record.actor,
                record_id=record.id,
            )
            if record
            else ConsentState(
                purpose=name,
                granted=purpose.default_granted,
                version=0,
                is_default=True,
                changed_at=None,
                changed_by=None,
                record_id=None,
            )
        )
    return states


def consent_history(*, subject: Subject, purpose: str | None = None) -> list[ConsentRecord]:
    """Every change, oldest first."""
    records = ConsentRecord.objects.filter(subject=subject)
    if purpose is not None:
        records = records.filter(purpose=purpose)
    return list(records.order_by("created_at", "purpose", "version"))
