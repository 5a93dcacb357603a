"""Signed receipts: the signature covers the receipt's canonical JSON and any change breaks it."""

from __future__ import annotations

import copy
import json

import pytest

from apps.erasure.receipt import (
    canonical_json,
    key_id,
    public_key_text,
    receipt_sha256,
    receipt_sign,
    receipt_verify,
    signing_key_from_seed,
)

pytestmark = pytest.mark.unit

RECEIPT = {"request_id": "e1", "subject_id": "s1", "counts": {"episodic": 3, "semantic": 1}, "completed_at": "t"}
KEY = signing_key_from_seed(bytes(range(32)))


def test_a_signed_receipt_verifies_with_the_pinned_public_key() -> None:
    document = json.loads(json.dumps(receipt_sign(RECEIPT, KEY)))  # as downloaded
    public = public_key_text(KEY)
    assert document["receipt"] == RECEIPT and document["receipt_sha256"] == receipt_sha256(RECEIPT)
    assert document["signature"]["algorithm"] == "Ed25519"
    assert document["signature"]["public_key"] == public and document["signature"]["key_id"] == key_id(public)
    assert receipt_verify(document, public_key=public)


def test_a_changed_receipt_or_another_key_does_not_verify() -> None:
    document = receipt_sign(RECEIPT, KEY)
    public = public_key_text(KEY)
    tampered = copy.deepcopy(document)
    tampered["receipt"]["counts"]["episodic"] = 2
    assert not receipt_verify(tampered, public_key=public)
    other = public_key_text(signing_key_from_seed(bytes(32)))
    assert not receipt_verify(document, public_key=other)
    # A forger who re-signs with their own key and swaps the key in the document still fails
    # against the key the verifier pinned.
    forged = receipt_sign(tampered["receipt"], signing_key_from_seed(bytes(32)))
    assert not receipt_verify(forged, public_key=public)
    assert not receipt_verify({"receipt": RECEIPT}, public_key=public)
    assert not receipt_verify({**document, "signature": {"value": "not base64!"}}, public_key=public)


def test_the_signature_is_over_the_canonical_form_not_the_layout() -> None:
    document = receipt_sign(RECEIPT, KEY)
    reordered = {**document, "receipt": dict(reversed(list(RECEIPT.items())))}
    assert canonical_json(reordered["receipt"]) == canonical_json(RECEIPT)
    assert receipt_verify(reordered, public_key=public_key_text(KEY))
