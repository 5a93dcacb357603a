"""Semantic AutoDream candidates, caps and decisions (docs/architecture.md, "Consolidation plane"). Pure:
no framework imports.

Sources are the anchors of the identity-stable types that semantic rows back and that the
frontier (the semantic rows of the chunks just written) mentions; the final round adds the
eligible anchors no earlier round used as a source, and a repair round takes the
representatives the final round merged into. Each source is paired with the four nearest
entries of the name index — itself among them — of the same type, backed by semantic rows too,
at cosine ≥ 0.86, and with at most four anchors of its type whose names resemble its own
(``apps.dream.evidence.names_resemble``: a shared name token, a short form or initial, one
name's key inside the other's), read from the type's name index (ADR 0059). A source is backed
by a semantic row; its partner may be an episodic-only person, organization or location ("Mel"
beside a semantic-backed "Melanie"). Frames are never candidates.

A round verifies at most its cap of unseen pairs (pairs whose rejection is not cached), most
similar first. Pairs beyond the cap are not recorded anywhere: their sources stay "never used",
so they come back in the final round, or whenever one of their anchors is in a later frontier.
Only explicit rejections are cached, under ``rejection_key`` — a hash of the case-folded names
in sorted order and the type, so the order a pair is met in does not matter.

A decision names one of the two existing names as the representative; anything else — an
invented or altered name — is ``invalid``: nothing merges and nothing is cached.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from apps.dream.evidence import PREFIX_LETTERS, SHORT_FORMS, codes_agree, name_tokens, names_resemble

SAFE_TYPES: frozenset[str] = frozenset({"person", "organization", "location", "object", "concept"})
NEIGHBOURS = 4  # nearest name-index entries per source, the source itself included
MIN_COSINE = 0.86  # the index score 0.93 on the (1 + cos) / 2 scale
NAME_NEIGHBOURS = 4  # anchors of the source's type with a resembling name, per source
NAME_SCAN_LIMIT = 5000  # names of one type read for the name lane, per round
# Types whose episodic-only anchors may be a semantic-backed source's partner (names of one referent).
PARTNER_TYPES: frozenset[str] = frozenset({"person", "organization", "location"})
INTERMEDIATE_CAP = 80
FINAL_CAP = 120
REPAIR_CAP = 60

RoundKind = Literal["intermediate", "final", "repair"]
ROUND_CAPS: dict[str, int] = {"intermediate": INTERMEDIATE_CAP, "final": FINAL_CAP, "repair": REPAIR_CAP}
Outcome = Literal["merge", "reject", "invalid"]


@dataclass(frozen=True)
class AnchorInfo:
    """What candidate generation and a decision need of an anchor."""

    key: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()
    mention_count: int = 0
    semantic_backed: bool = True

    @property
    def eligible(self) -> bool:
        """May be a source: an identity-stable type, backed by a semantic row."""
        return self.type in SAFE_TYPES and self.semantic_backed

    @property
    def partner_eligible(self) -> bool:
        """May be paired with a source: eligible, or an episodic-only anchor of a partner type."""
        return self.eligible or (self.type in PARTNER_TYPES and self.type in SAFE_TYPES)


@dataclass(frozen=True)
class Neighbour:
    key: str
    cosine: float


def rejection_key(name: str, other: str, anchor_type: str) -> str:
    """hash(sorted case-folded pair, type): the negative cache key of a pair."""
    pair = sorted((name.casefold().strip(), other.casefold().strip()))
    encoded = json.dumps(["mirix.dream.v1", pair, anchor_type], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CandidatePair:
    """Two distinct anchors of one type, ``first`` having the smaller key."""

    first: AnchorInfo
    second: AnchorInfo
    cosine: float

    @property
    def keys(self) -> tuple[str, str]:
        return self.first.key, self.second.key

    @property
    def anchor_type(self) -> str:
        return self.first.type

    @property
    def cache_key(self) -> str:
        return rejection_key(self.first.name, self.second.name, self.first.type)


NAME_BUCKET = 200  # names looked at per token of a source (a very common token does not scan the type)


class NameIndex:
    """The names of one type by token, by 3-letter prefix and by short form, so a source looks
    at a bounded number of names instead of every name of its type."""

    def __init__(self, names: Sequence[tuple[str, str]]) -> None:
        self.by_token: dict[str, list[tuple[str, str]]] = {}
        for key, name in sorted(set(names)):
            for token in name_tokens(name):
                for entry in {token, token[:PREFIX_LETTERS]}:
                    bucket = self.by_token.setdefault(entry, [])
                    if len(bucket) < NAME_BUCKET:
                        bucket.append((key, name))

    def near(self, name: str) -> list[tuple[str, str]]:
        found: dict[str, str] = {}
        for token in name_tokens(name):
            for entry in {token, token[:PREFIX_LETTERS], *SHORT_FORMS.get(token, ())}:
                found.update(self.by_token.get(entry, []))
        return sorted(found.items())


def name_partners(source: AnchorInfo, index: NameIndex, *, limit: int = NAME_NEIGHBOURS) -> list[str]:
    """Keys of up to ``limit`` anchors of the index (the source's type) whose names resemble the
    source's and agree in numbers, dates and codes (others could never merge), the closest in
    length first, then by key."""
    found = {
        (abs(len(name) - len(source.name)), key)
        for own in (source.name, *source.aliases)
        for key, name in index.near(own)
        if key != source.key and names_resemble(own, name) and codes_agree(source.type, own, name)
    }
    return [key for _, key in sorted(found)[:limit]]


def candidate_pairs(
    sources: Iterable[AnchorInfo],
    neighbours: Mapping[str, Sequence[Neighbour]],
    anchors: Mapping[str, AnchorInfo],
    named: Mapping[str, Sequence[Neighbour]] | None = None,
) -> list[CandidatePair]:
    """C_Δ: for each eligible source, its nearest name-index entries (at most ``NEIGHBOURS``,
    nearest first, the source itself included) at cosine ≥ ``MIN_COSINE``, and the anchors its
    name resembles (``named``, at most ``NAME_NEIGHBOURS``, at any cosine), when they are other
    partner-eligible anchors of its type. Each unordered pair once, most similar first, then by keys."""
    found: dict[tuple[str, str], CandidatePair] = {}
    for source in sources:
        if not source.eligible:
            continue
        near = [n for n in list(neighbours.get(source.key, ()))[:NEIGHBOURS] if n.cosine >= MIN_COSINE]
        for neighbour in [*near, *list((named or {}).get(source.key, ()))[:NAME_NEIGHBOURS]]:
            other = anchors.get(neighbour.key)
            if other is None or other.key == source.key or not other.partner_eligible or other.type != source.type:
                continue
            first, second = sorted((source, other), key=lambda a: a.key)
            pair = CandidatePair(first=first, second=second, cosine=neighbour.cosine)
            kept = found.get(pair.keys)
            if kept is None or kept.cosine < pair.cosine:
                found[pair.keys] = pair
    return sorted(found.values(), key=lambda p: (-p.cosine, p.keys))


@dataclass
class RoundPlan:
    """What a round verifies, what the cache answers, and what its cap leaves for later."""

    to_verify: list[CandidatePair] = field(default_factory=list)
    cached: list[CandidatePair] = field(default_factory=list)
    skipped: list[CandidatePair] = field(default_factory=list)
    used_sources: list[str] = field(default_factory=list)  # sources whose every pair was reached

    @property
    def considered(self) -> int:
        return len(self.to_verify) + len(self.cached) + len(self.skipped)


def plan_round(
    pairs: Sequence[CandidatePair], *, rejected: Iterable[str], cap: int, sources: Iterable[str]
) -> RoundPlan:
    """At most ``cap`` unseen pairs, in the order given; cached rejections are not asked again."""
    negative = set(rejected)
    plan = RoundPlan()
    for pair in pairs:
        if pair.cache_key in negative:
            plan.cached.append(pair)
        elif len(plan.to_verify) < cap:
            plan.to_verify.append(pair)
        else:
            plan.skipped.append(pair)
    waiting = {key for pair in plan.skipped for key in pair.keys}
    plan.used_sources = [key for key in dict.fromkeys(sources) if key not in waiting]
    return plan


def decision_outcome(
    pair: CandidatePair, *, same_entity: bool, representative: str | None
) -> tuple[Outcome, str | None]:
    """(outcome, representative key). A merge must name one of the pair's two names exactly."""
    if not same_entity:
        return "reject", None
    if representative == pair.first.name:
        return "merge", pair.first.key
    if representative == pair.second.name:
        return "merge", pair.second.key
    return "invalid", None
