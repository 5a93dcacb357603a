"""Erasure receipts. Framework-free.

A receipt says what an erasure removed — counts per store, never content — and when. Its
SHA-256 is taken over the canonical JSON (sorted keys, no insignificant whitespace, ASCII),
so anyone holding the receipt can recompute it, and the audit log entry that records the
hash pins the receipt against later change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def canonical_json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def receipt_sha256(receipt: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(receipt).encode("ascii")).hexdigest()


def counts_merge(total: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    merged = dict(total)
    for key, count in more.items():
        merged[key] = merged.get(key, 0) + count
    return merged
