"""The audit log's hash chain. Framework-free.

Each entry's hash covers its own fields and the previous entry's hash, so changing,
removing or reordering any entry breaks every later link.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

GENESIS = "0" * 64


@dataclass(frozen=True)
class ChainEntry:
    sequence: int
    fields: dict[str, Any]  # ids, action, times: never memory text
    previous_hash: str
    entry_hash: str


def entry_hash(*, sequence: int, fields: dict[str, Any], previous_hash: str) -> str:
    canonical = json.dumps(
        {"seq": sequence, "prev": previous_hash, **fields}, sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def first_broken_link(entries: Iterable[ChainEntry]) -> int | None:
    """The sequence number of the first entry that does not verify, or None."""
    return chain_verify(entries).first_broken


@dataclass(frozen=True)
class ChainVerdict:
    entries: int
    head_sequence: int | None  # the last entry read, and its hash: compare with an exported copy
    head_hash: str | None
    first_broken: int | None  # the sequence number of the first entry that does not verify


def chain_verify(entries: Iterable[ChainEntry]) -> ChainVerdict:
    """Walk the whole chain: every entry must follow the previous one in sequence, name its
    hash, and hash to its own ``entry_hash``."""
    expected_previous, expected_sequence = GENESIS, 1
    count, first_broken, head = 0, None, None
    for entry in entries:
        count, head = count + 1, entry
        if first_broken is None and (
            entry.sequence != expected_sequence
            or entry.previous_hash != expected_previous
            or entry.entry_hash
            != entry_hash(sequence=entry.sequence, fields=entry.fields, previous_hash=entry.previous_hash)
        ):
            first_broken = entry.sequence
        expected_previous, expected_sequence = entry.entry_hash, entry.sequence + 1
    return ChainVerdict(
        entries=count,
        head_sequence=head.sequence if head else None,
        head_hash=head.entry_hash if head else None,
        first_broken=first_broken,
    )
