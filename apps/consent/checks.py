"""Consent enforcement on the write paths: what a write checks before it stores anything.

Kept apart from the changes (``services``), whose withdrawals request erasures that reach
every store and the graph: the memory write services call these checks, so this module may
import nothing above memory (the layers contract in ``pyproject.toml`` says so).

A check takes a shared lock on the subject row (``locks``) and a change an exclusive one, so
a write that passed its check commits before a withdrawal or an erasure request does, and a
write that starts later sees them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from apps.consent.locks import subject_lock_shared
from apps.consent.purposes import PURPOSES, STORE_CONVERSATIONS, STORE_SENSITIVE_VALUES
from apps.consent.selectors import ConsentState, consent_state
from apps.erasure.pending import subject_erasure_pending
from apps.platform.errors import ApplicationError, Conflict, NotFound
from apps.tenancy.models import Subject
from apps.vault.detect import redact_sensitive


class ConsentRequired(ApplicationError):
    status_code = 403
    code = "consent_required"


class SubjectBeingErased(Conflict):
    code = "erasure_in_progress"


def subject_erasure_refuse(*, subject: Subject, refusal: str) -> None:
    """Raise ``SubjectBeingErased`` (409, with ``refusal``) while the subject's erasure runs."""
    pending = subject_erasure_pending(subject_id=subject.id)
    if pending is not None:
        raise SubjectBeingErased(refusal, details={"erasure_request_id": str(pending.id)})


def _lock_shared(subject: Subject) -> None:
    if not subject_lock_shared(organization_id=subject.organization_id, subject_id=subject.id):
        raise NotFound("No such subject in this organization.")
    subject_erasure_refuse(subject=subject, refusal="The subject is being erased; nothing more can be stored for it.")


def _require(subject: Subject, purpose: str, states: Mapping[str, ConsentState]) -> None:
    if not states[purpose].granted:
        raise ConsentRequired(
            f"The subject has not consented to {purpose!r}; nothing was stored.",
            details={"missing_purpose": purpose, "subject_id": str(subject.id)},
        )


def consent_require(*, subject: Subject, purpose: str) -> None:
    """Raise ``ConsentRequired`` (403, ``details.missing_purpose``) unless ``subject`` has
    consented to ``purpose``. Call it in the transaction of the work it permits: it holds
    the subject row so that a withdrawal waits for that work to commit."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown consent purpose {purpose!r}")
    _lock_shared(subject)
    _require(subject, purpose, consent_state(subject=subject))


def consent_check_memory_write(*, subject: Subject, texts: Iterable[str]) -> None:
    """The memory write services' check, before they store anything and in their transaction:
    storing needs ``store_conversations``; texts in which the vault detector finds a sensitive
    value also need ``store_sensitive_values`` — without it the whole write is refused
    (ADR 0008), so nothing of it is stored anywhere."""
    _lock_shared(subject)
    states = consent_state(subject=subject)
    _require(subject, STORE_CONVERSATIONS, states)
    if not states[STORE_SENSITIVE_VALUES].granted and any(redact_sensitive(text).detections for text in texts):
        _require(subject, STORE_SENSITIVE_VALUES, states)
