"""Consent: versioned changes (the checks on the write paths are ``checks``).

Every change appends a record (who, when, granted or withdrawn); the current state of a
purpose is its latest record, or its default (``purposes.PURPOSES``). Withdrawing purposes
requests the erasure of what they cover through the erasure machinery (job + outbox), in the
transaction of the change.

A change takes an exclusive lock on the subject row, which waits for every write that
passed its check (``checks`` takes a shared one) and makes later writes see the change.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from apps.audit.services import current_actor
from apps.consent.checks import subject_erasure_refuse
from apps.consent.models import ConsentRecord
from apps.consent.purposes import PURPOSES, unknown_purposes
from apps.consent.selectors import ConsentState, consent_state
from apps.erasure.erasers import delete_batch
from apps.erasure.models import ErasureRequest
from apps.erasure.pending import purposes_being_erased
from apps.erasure.registry import Counts, ErasureTarget
from apps.erasure.services import erasure_request_create
from apps.platform.errors import Conflict, NotFound, ValidationFailed
from apps.tenancy.models import Subject
from apps.webhooks.events import CONSENT_CHANGED
from apps.webhooks.services import webhook_event_emit

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConsentChange:
    states: dict[str, ConsentState]
    records: list[ConsentRecord]  # appended by this change (none when nothing changed)
    erasure_request: ErasureRequest | None  # erasing what the withdrawn purposes covered


def consent_update(*, subject: Subject, changes: Mapping[str, bool]) -> ConsentChange:
    """Grant or withdraw purposes for ``subject``, in the caller's organization scope and
    transaction. Unchanged purposes append nothing; withdrawn ones have what they covered
    erased (one erasure request for all of them)."""
    unknown = unknown_purposes(list(changes))
    if unknown or not changes:
        raise ValidationFailed(
            f"purposes must be a non-empty map of {sorted(PURPOSES)} to true or false; unknown: {unknown}",
            details={"purposes": unknown},
        )
    locked = Subject.objects.select_for_update().filter(id=subject.id).first()
    if locked is None:
        raise NotFound("No such subject in this organization.")
    subject_erasure_refuse(subject=subject, refusal="The subject is being erased; its consent can no longer change.")
    states = consent_state(subject=subject)
    being_erased = purposes_being_erased(subject_id=subject.id)
    actor = current_actor()
    records = []
    for purpose in PURPOSES:  # a fixed order: versions and events come out the same every time
        if purpose not in changes or changes[purpose] == states[purpose].granted:
            continue
        granted = changes[purpose]
        if granted and purpose in being_erased:
            raise Conflict(
                f"What {purpose!r} covered is still being erased; grant it again once that erasure completes.",
                details={"purpose": purpose, "erasure_request_id": str(being_erased[purpose])},
            )
        records.append(
            ConsentRecord.objects.create(
                organization_id=subject.organization_id,
                subject=subject,
                purpose=purpose,
                version=states[purpose].version + 1,
                granted=granted,
                actor=actor,
            )
        )
    withdrawn = [r.purpose for r in records if not r.granted]
    request = (
        erasure_request_create(subject=subject, kind=ErasureRequest.Kind.CONSENT_WITHDRAWAL, purposes=withdrawn)
        if withdrawn
        else None
    )
    for record in records:
        webhook_event_emit(
            organization_id=subject.organization_id,
            event_type=CONSENT_CHANGED,
            subject_id=subject.id,
            payload={
                "subject_id": str(subject.id),
                "purpose": record.purpose,
                "granted": record.granted,
                "version": record.version,
                "erasure_request_id": str(request.id) if request and not record.granted else None,
            },
        )
    if records:
        logger.info(
            "consent changed",
            extra={
                "subject_id": str(subject.id),
                "changes": {r.purpose: r.granted for r in records},
                "erasure_request_id": str(request.id) if request else None,
            },
        )
    return ConsentChange(states=consent_state(subject=subject), records=records, erasure_request=request)


def consent_erase(target: ErasureTarget) -> Counts:
    """This app's erasure step: an erased subject's consent history goes with it."""
    rows = ConsentRecord.objects.for_organization(target.organization_id).filter(subject_id=target.subject_id)
    return delete_batch(rows)
