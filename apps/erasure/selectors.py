from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.db import models
from django.db.models import QuerySet
from django.utils import timezone

from apps.audit.selectors import audit_entries_for_subject
from apps.erasure import adapter
from apps.erasure.erasers import receipt_key, subject_owned_models, subject_rows
from apps.erasure.models import ErasureRequest
from apps.erasure.receipt import public_key_text, receipt_sign, signing_key_from_seed
from apps.erasure.registry import ErasureTarget
from apps.memory.models import STORES, ResourceItem, VaultEntry
from apps.memory.selectors import vault_value
from apps.platform.errors import NotFound
from apps.resources.storage import ObjectNotFound, storage
from apps.tenancy.models import Subject

EXPORT_FORMAT = "mirix.subject-export/1"
# Derived vectors and ciphertext are not the subject's data in any readable sense; the
# organization column is the caller's own.
_NOT_EXPORTED = frozenset({"embedding", "search_vector", "ciphertext", "nonce", "organization"})


def erasure_request_get(*, erasure_request_id: uuid.UUID) -> ErasureRequest:
    request = ErasureRequest.objects.filter(id=erasure_request_id).first()
    if request is None:
        raise NotFound("Erasure request not found.")
    return request


def _receipt_signing_key() -> Ed25519PrivateKey:
    """``settings.RECEIPT_SIGNING_KEY``, or a key derived from the secret key without one."""
    seed = settings.RECEIPT_SIGNING_KEY or hmac.digest(
        settings.SECRET_KEY.encode(), b"mirix erasure receipt signing key v1", hashlib.sha256
    )
    return signing_key_from_seed(seed)


def receipt_public_key() -> str:
    """The public key that verifies downloaded receipts (base64 of the raw 32 bytes)."""
    return public_key_text(_receipt_signing_key())


def erasure_receipt_signed(*, erasure: ErasureRequest) -> dict[str, Any]:
    """The completed request's receipt as a signed document (``apps.erasure.receipt``)."""
    if not isinstance(erasure.receipt, dict):
        raise NotFound("The receipt is written when the erasure completes.")
    return receipt_sign(erasure.receipt, _receipt_signing_key())


def erasure_request_list(
    *, subject_id: uuid.UUID | None = None, kind: str | None = None, status: str | None = None
) -> QuerySet[ErasureRequest]:
    """The organization's requests, newest first (the console's list)."""
    requests = ErasureRequest.objects.all()
    if subject_id is not None:
        requests = requests.filter(subject_id=subject_id)
    if kind is not None:
        requests = requests.filter(kind=kind)
    if status is not None:
        requests = requests.filter(status=status)
    return requests.order_by("-requested_at", "-id")


# --- export ---------------------------------------------------------------------------------------


def row_data(row: models.Model) -> dict[str, Any]:
    """Every stored column of ``row`` but vectors and ciphertext; foreign keys as ids."""
    return {
        f.attname: f.value_from_object(row)
        for f in row._meta.concrete_fields
        if f.name not in _NOT_EXPORTED and not isinstance(f, models.BinaryField)
    }


@dataclass
class SubjectExport:
    data: dict[str, Any]
    vault_entries_read: list[uuid.UUID] = field(default_factory=list)  # decrypted: to audit


def _row_or_resource(row: models.Model, *, with_content: bool) -> dict[str, Any]:
    data = row_data(row)
    if with_content and isinstance(row, ResourceItem):
        try:
            data["content_base64"] = base64.b64encode(storage().get(row.object_key)).decode("ascii")
        except ObjectNotFound:
            data["content_base64"] = None
    return data


def subject_export(*, subject: Subject, include_secrets: bool) -> SubjectExport:
    """Everything stored about ``subject``, machine-readable: every store's rows including
    superseded ones, the vault (values only with ``include_secrets``, otherwise captions),
    uploaded objects (their bytes only with ``include_secrets``: an original document still
    holds the values the vault took out of its text), graph vertices and edges, every other
    row that references the subject (consent history, jobs, pending batches, webhook events,
    anchor vectors, ...), audit entries about the subject and erasure requests."""
    export = SubjectExport(data={})
    memories: dict[str, list[dict[str, Any]]] = {}
    for name, store in STORES.items():
        if store is not VaultEntry:
            rows = store.objects.filter(subject=subject).order_by("created_at", "id")
            memories[name] = [_row_or_resource(row, with_content=include_secrets) for row in rows]
    vault = []
    for entry in VaultEntry.objects.filter(subject=subject).order_by("created_at", "id"):
        data = row_data(entry)
        if include_secrets:
            data["value"] = vault_value(subject=subject, entry_id=entry.id)[1]
            export.vault_entries_read.append(entry.id)
        vault.append(data)
    records: dict[str, list[dict[str, Any]]] = {}
    target = ErasureTarget(organization_id=subject.organization_id, subject_id=subject.id)
    for model in subject_owned_models():
        if model not in STORES.values():
            records[receipt_key(model)] = [row_data(row) for row in subject_rows(model, target).order_by("pk")]
    export.data = {
        "format": EXPORT_FORMAT,
        "exported_at": timezone.now(),
        "includes_secrets": include_secrets,
        "subject": row_data(subject),
        "memories": memories,
        "vault": vault,
        "graph": adapter.graph_subject_elements(organization_id=subject.organization_id, subject_id=subject.id),
        "records": records,
        "audit_entries": [
            row_data(entry)
            for entry in audit_entries_for_subject(organization_id=subject.organization_id, subject_id=subject.id)
        ],
        "erasure_requests": [row_data(r) for r in erasure_request_list(subject_id=subject.id)],
    }
    return export
