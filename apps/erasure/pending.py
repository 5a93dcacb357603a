"""Which erasures are still under way for a subject: read by the consent checks on every
memory write, so this module imports nothing but erasure's model (the rest of erasure's
reads reach the stores and the graph, which sit above memory)."""

from __future__ import annotations

import uuid

from apps.erasure.models import ErasureRequest


def subject_erasure_pending(*, subject_id: uuid.UUID) -> ErasureRequest | None:
    return (
        ErasureRequest.objects.filter(kind=ErasureRequest.Kind.SUBJECT, subject_id=subject_id)
        .exclude(status=ErasureRequest.Status.COMPLETED)
        .first()
    )


def purposes_being_erased(*, subject_id: uuid.UUID) -> dict[str, uuid.UUID]:
    """Purposes whose withdrawal erasure has not finished yet, with the request erasing them."""
    pending = ErasureRequest.objects.filter(kind=ErasureRequest.Kind.CONSENT_WITHDRAWAL, subject_id=subject_id).exclude(
        status=ErasureRequest.Status.COMPLETED
    )
    return {purpose: request.id for request in pending for purpose in request.purposes}
