"""Anchor entry and fact scores (docs/architecture.md, "Retrieval plane"). Pure.

The paper fixes the terms, their order of importance and the caps; it gives no weights, so
every weight below is our choice, chosen to respect the paper's rules and written next to it.

**Anchor entry** ``s_A = vec + exact + lex + pred + spec − hub`` (eq. 10). The vector score
dominates: the four bonuses add up to at most :data:`ANCHOR_BONUS_MAX` (0.295), so no bonus can
overturn a name-embedding gap larger than that. The hub and predicate terms read ``degree``
and ``predicates``, which only exact lookups carry (A.3), so in practice they act on exactly
named anchors alone. Person hubs pay :data:`PERSON_HUB_FACTOR` times the penalty unless a
relation query names them exactly (A.3). The top :data:`ANCHOR_LIMIT` are kept, ties by key.

**Fact score** ``s_F`` = the nine terms of eq. 11, each documented at its weight. Weights are
multiples of 0.25 so equal evidence gives equal scores exactly, and ties fall to the temporal
order the question asks for (earliest first for "first", latest first for "last"), then to the
frame id. For an intersection question, the hard shared-object group (frames that bind both
named sides, or bind one side and an object some frame of the other side also binds) ranks
before every soft refinement (A.3), so recency cannot replace evidence for one side.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

from apps.graph.keys import anchor_key, key_tokens
from apps.language.lexicon import RoleGroup, predicate_families, role_compatible, role_group
from apps.language.words import stem
from apps.retrieval.types import (
    AnchorCandidate,
    AnchorScore,
    FactCandidate,
    FactScore,
    Operator,
    Plan,
    RelationFamily,
    ScoredAnchor,
    ScoredFact,
)

# --- anchor entry (eq. 10) -----------------------------------------------------------------

ANCHOR_LIMIT = 15  # K_A: anchors kept after scoring, and anchors recalled by name embedding (the design's value)
MAX_NAMED_ANCHORS = 16  # exactly named anchors a relation query adds to the recalled ones (paper A.3)
W_VEC = 1.0  # times the name-embedding similarity in [0, 1]: the dominant term (ADR 0010)
W_EXACT = 0.12  # the anchor's key equals the key of a span of the question (our choice)
W_LEX = 0.08  # times the share of the anchor's key tokens the question contains (our choice)
W_PRED = 0.05  # an incident predicate belongs to one of the question's relation families (our choice)
W_SPEC = 0.015  # per key token beyond the first, up to SPEC_MAX_EXTRA_TOKENS (our choice)
SPEC_MAX_EXTRA_TOKENS = 3
W_HUB = 0.03  # times ln(1 + degree): 0.19 at 500 frames, 0.07 at 10 (our choice)
PERSON_HUB_FACTOR = 2.0  # person hubs pay double unless a relation query names them (rule: A.3; factor: ours)
ANCHOR_BONUS_MAX = W_EXACT + W_LEX + W_PRED + W_SPEC * SPEC_MAX_EXTRA_TOKENS
_MAX_SPAN_TOKENS = 6  # longest question span compared with anchor keys (our choice)


@functools.lru_cache(maxsize=4096)
def _question_keys(question: str) -> tuple[frozenset[str], frozenset[str]]:
    """The keys of every span of up to six key tokens of the question, and its key tokens."""
    tokens = key_tokens(question)
    spans = {
        " ".join(sorted(tokens[start : start + size]))
        for size in range(1, _MAX_SPAN_TOKENS + 1)
        for start in range(len(tokens) - size + 1)
    }
    return frozenset(spans), frozenset(tokens)


def is_named_in(candidate: AnchorCandidate, plan: Plan) -> bool:
    """The question names the anchor exactly: its key is the key of a span of the question."""
    return bool(candidate.anchor_key) and candidate.anchor_key in _question_keys(plan.question)[0]


def anchor_entry_score(candidate: AnchorCandidate, plan: Plan) -> AnchorScore:
    spans, question_tokens = _question_keys(plan.question)
    tokens = candidate.anchor_key.split()
    named = bool(tokens) and candidate.anchor_key in spans
    families = {family.name for family in plan.relations}
    pred = any(predicate_families(predicate) & families for predicate in sorted(candidate.predicates))
    person_factor = PERSON_HUB_FACTOR if candidate.is_person and not (named and plan.is_relation_query) else 1.0
    return AnchorScore(
        vec=W_VEC * min(max(candidate.vector_similarity, 0.0), 1.0),
        exact=W_EXACT if named else 0.0,
        lex=W_LEX * (len(set(tokens) & question_tokens) / len(tokens)) if tokens else 0.0,
        pred=W_PRED if pred else 0.0,
        spec=W_SPEC * min(max(len(tokens) - 1, 0), SPEC_MAX_EXTRA_TOKENS),
        hub=W_HUB * math.log1p(max(candidate.degree, 0)) * person_factor,
    )


def _merge(first: AnchorCandidate, second: AnchorCandidate) -> AnchorCandidate:
    """One anchor reached by both routes: recall gives the similarity, exact lookup the degree."""
    return replace(
        first,
        vector_similarity=max(first.vector_similarity, second.vector_similarity),
        degree=max(first.degree, second.degree),
        is_person=first.is_person or second.is_person,
        episodic_ids=list(dict.fromkeys([*first.episodic_ids, *second.episodic_ids])),
        semantic_ids=list(dict.fromkeys([*first.semantic_ids, *second.semantic_ids])),
        predicates=first.predicates | second.predicates,
    )


def select_anchors(candidates: Iterable[AnchorCandidate], plan: Plan, limit: int = ANCHOR_LIMIT) -> list[ScoredAnchor]:
    """The top ``limit`` anchors by s_A; candidates with one key are merged; ties by key."""
    by_key: dict[str, AnchorCandidate] = {}
    for candidate in sorted(candidates, key=lambda c: (c.anchor_key, c.name)):
        if not candidate.anchor_key:
            continue
        seen = by_key.get(candidate.anchor_key)
        by_key[candidate.anchor_key] = candidate if seen is None else _merge(seen, candidate)
    scored = [ScoredAnchor(candidate, anchor_entry_score(candidate, plan)) for candidate in by_key.values()]
    scored.sort(key=lambda item: (-item.score.total, item.anchor.anchor_key))
    return scored[: max(limit, 0)]


def named_anchor_keys(plan: Plan, limit: int = MAX_NAMED_ANCHORS) -> tuple[str, ...]:
    """The keys an adapter looks up exactly for a relation query: named entities, then keywords."""
    keys = [anchor_key(name) for name in (*plan.entities, *plan.objects, *plan.constraints.keywords)]
    return tuple(dict.fromkeys(key for key in keys if key))[:limit]


# --- fact score (eq. 11) -------------------------------------------------------------------

FRAME_CAP = 240  # frames that survive the predicate filter, chosen by frame id (ADR 0010)
# Ranked facts whose cited rows join the candidates and order them (ADR 0076): past the
# rendered facts (at most 12), the relation lane still names the rows that carry the asked
# relation. Bounded by the frames read (240); set on the LoCoMo dev split (80 scores the same).
FACT_ORDER_LIMIT = 40

W_RELATION = 3.0  # the predicate belongs to a relation family of the question (our choice)
W_RELATION_LEXICAL = 1.5  # else the predicate shares a stem with the question's content words (our choice)
W_ENTITY = 1.5  # per named entity bound by an arm with the same key (our choice)
W_ENTITY_PARTIAL = 0.75  # per named entity whose key tokens nest in an arm's ("Lisbon" / "Lisbon trip")
MAX_ENTITIES_SCORED = 3
W_CONSTRAINT_NUMBER = 0.5  # per number of the question found in the frame (our choice)
W_CONSTRAINT_KEYWORD = 0.25  # per keyword of the question found in an arm or a literal (our choice)
MAX_CONSTRAINT = 2.0
W_ANSWER_TYPE = 1.0  # the frame can supply a value of an expected answer type (our choice)
W_TIME = 0.75  # a time is asked for and the frame has one (our choice)
W_TIME_ORDER = 0.75  # ± per before/after date the frame's time satisfies or violates (our choice)
W_INTERSECTION = 2.0  # an intersection question and the frame binds two named sides (our choice)
W_SPECIFICITY = 0.25  # per distinct anchor beyond the required two (our choice)
MAX_SPECIFICITY = 1.0
W_ROLE_AGREE = 1.0  # per role hint the frame agrees with, up to MAX_ROLE_AGREE (our choice)
MAX_ROLE_AGREE = 2.0
W_ROLE_CONFLICT = 1.5  # per role hint the frame contradicts: subtracted (our choice)
W_ANSWER_ROLE = 0.5  # an arm other than the named ones plays the role the answer plays (our choice)
W_STATE_MATCH = 1.5  # the event time falls in a requested date (our choice)
W_STATE_MISMATCH = 1.0  # the event time falls outside every requested date: subtracted (our choice)
STATE_FALLBACK_FACTOR = 0.5  # no event time: the source row's time counts at half weight (paper A.3)
W_PLANNED = 2.0  # a planned event in a count, list-union or temporal question: subtracted (a rule of the design)
PLANNED_PENALIZED: frozenset[Operator] = frozenset({"count", "list-union", "temporal"})

_GENERIC_PREDICATES = frozenset({"be", "have", "do", "say", "tell", "think", "feel", "want", "share", "mention"})
_DATE_LITERAL_KEYS = frozenset({"date", "time", "when", "day", "month", "year", "event_time", "period", "season"})
_NUMBER_LITERAL_KEYS = frozenset(
    {"count", "number", "quantity", "amount", "price", "cost", "duration", "age", "times", "frequency", "distance"}
)
_REASON_KEYS = frozenset({"reason", "purpose", "cause", "motivation", "why", "because"})
_DATE_LIKE = re.compile(
    r"\b(?:19|20)\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b(?:mon|tues|wednes|thurs|fri"
    r"|satur|sun)day\b|\byesterday\b|\btoday\b|\btomorrow\b|\bago\b|\blast (?:week|month|year|weekend)\b",
    re.IGNORECASE,
)
_NUMBER_LIKE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|once|twice|dozen)\b", re.IGNORECASE
)


def entity_keys(plan: Plan) -> tuple[str, ...]:
    return tuple(dict.fromkeys(key for key in map(anchor_key, plan.entities) if key))


def _binds(entity: str, keys: Iterable[str]) -> float:
    """1 when an arm has the entity's key, 0.5 when their key tokens nest, else 0."""
    best = 0.0
    for key in keys:
        bound = _binds_key(entity, key)
        if bound == 1.0:
            return 1.0
        best = max(best, bound)
    return best


@functools.lru_cache(maxsize=65536)
def _binds_key(entity: str, key: str) -> float:
    if key == entity:
        return 1.0
    wanted, tokens = frozenset(entity.split()), frozenset(key.split())
    return 0.5 if tokens and (wanted <= tokens or tokens <= wanted) else 0.0


def _fact_tokens(fact: FactCandidate) -> frozenset[str]:
    tokens: set[str] = set()
    for _, key, name in fact.roles:
        tokens.update(key.split())
        tokens.update(_name_tokens(name))
    for name, value in fact.literals.items():
        tokens.update(_name_tokens(name))
        tokens.update(_name_tokens(value))
    return frozenset(tokens)


@functools.lru_cache(maxsize=65536)
def _name_tokens(name: str) -> tuple[str, ...]:
    return tuple(key_tokens(name))


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo is not None else moment


def _period(start: datetime, precision: str) -> tuple[date, date]:
    """The days a time of some precision covers, half-open."""
    day = start.date()
    if precision == "year":
        return date(day.year, 1, 1), date(day.year + 1, 1, 1)
    if precision == "month":
        first = date(day.year, day.month, 1)
        return first, date(first.year + first.month // 12, first.month % 12 + 1, 1)
    if precision == "week":
        return day, day + timedelta(days=7)
    return day, day + timedelta(days=1)


def _fact_time(fact: FactCandidate) -> tuple[tuple[date, date] | None, float]:
    """The frame's period and the weight it carries: event time 1, the source row's time ½."""
    if fact.event_time is not None:
        return _period(fact.event_time, fact.event_time_precision), 1.0
    if fact.mention_time is not None:
        return _period(fact.mention_time, "day"), STATE_FALLBACK_FACTOR
    return None, 0.0


def relation_arm_keys(plan: Plan) -> frozenset[str]:
    """The anchor keys of the question's relation forms. A frame with an arm on one of them
    belongs to the relation though its predicate does not: "swim(agent=Priya, companion=kid)"
    is a family activity, and most forms of a family like "family" or "pet" are nouns, which no
    predicate is (ADR 0020)."""
    return _arm_keys(plan.relations)


@functools.lru_cache(maxsize=256)
def _arm_keys(relations: tuple[RelationFamily, ...]) -> frozenset[str]:
    """Per family set, once: every frame a relation query scores asks."""
    return frozenset(anchor_key(form) for family in relations for form in family.surface_forms) - {""}


def _relation_term(fact: FactCandidate, plan: Plan) -> float:
    if not plan.is_relation_query:
        return 0.0
    families = {family.name for family in plan.relations}
    if predicate_families(fact.predicate) & families or fact.anchor_keys & relation_arm_keys(plan):
        return W_RELATION
    parts = re.split(r"[\s_\-]+", fact.predicate.lower())
    return W_RELATION_LEXICAL if any(stem(part) in plan.constraints.content_stems for part in parts) else 0.0


def _entity_term(fact: FactCandidate, plan: Plan) -> float:
    keys = fact.anchor_keys
    total = 0.0
    for entity in entity_keys(plan)[:MAX_ENTITIES_SCORED]:
        bound = _binds(entity, keys)
        total += W_ENTITY if bound == 1.0 else W_ENTITY_PARTIAL if bound else 0.0
    return total


def _constraint_term(fact: FactCandidate, plan: Plan) -> float:
    tokens = _fact_tokens(fact)
    numbers = sum((W_CONSTRAINT_NUMBER for number in plan.constraints.numbers if number in tokens), 0.0)
    keywords = {anchor_key(word) for word in plan.constraints.keywords} - {""}
    found = sum((W_CONSTRAINT_KEYWORD for keyword in sorted(keywords) if set(keyword.split()) <= tokens), 0.0)
    return min(min(numbers, 2 * W_CONSTRAINT_NUMBER) + min(found, 4 * W_CONSTRAINT_KEYWORD), MAX_CONSTRAINT)


def _other_arm_groups(fact: FactCandidate, plan: Plan) -> list[RoleGroup]:
    named = entity_keys(plan)
    return [
        group
        for role, key, _ in fact.roles
        if (group := role_group(role)) is not None and not any(_binds(entity, [key]) for entity in named)
    ]


def _answer_type_term(fact: FactCandidate, plan: Plan) -> float:
    literal_keys = {name.lower() for name in fact.literals}
    values = " ".join(fact.literals.values())
    others = _other_arm_groups(fact, plan)
    predicate_parts = set(re.split(r"[\s_\-]+", fact.predicate.lower()))
    checks = {
        "date": fact.event_time is not None
        or bool(literal_keys & _DATE_LITERAL_KEYS)
        or bool(_DATE_LIKE.search(values)),
        "number": bool(literal_keys & _NUMBER_LITERAL_KEYS) or bool(_NUMBER_LIKE.search(values)),
        "person": any(group in ("agent", "companion", "recipient") for group in others),
        "location": "place" in others,
        "activity": not predicate_parts <= _GENERIC_PREDICATES,
        "object": "theme" in others,
        "reason": bool(literal_keys & _REASON_KEYS)
        or any(role.lower() in _REASON_KEYS for role, _, _ in fact.roles)
        or bool(predicate_parts & {"cause", "inspire", "motivate"}),
    }
    return W_ANSWER_TYPE if any(checks.get(kind, False) for kind in plan.answer_types) else 0.0


def _needs_time(plan: Plan) -> bool:
    return plan.operator == "temporal" or "date" in plan.answer_types or bool(plan.temporal.orders)


def _time_term(fact: FactCandidate, plan: Plan) -> float:
    total = 0.0
    has_time = (
        fact.event_time is not None
        or bool({name.lower() for name in fact.literals} & _DATE_LITERAL_KEYS)
        or bool(_DATE_LIKE.search(" ".join(fact.literals.values())))
    )
    if _needs_time(plan) and has_time:
        total += W_TIME
    period, weight = _fact_time(fact)
    if period is not None:
        for wanted in plan.temporal.ranges:
            if wanted.relation == "in":
                continue
            satisfied = period[1] <= wanted.start if wanted.relation == "before" else period[0] >= wanted.end
            total += (W_TIME_ORDER if satisfied else -W_TIME_ORDER) * weight
    return total


def _intersection_term(fact: FactCandidate, plan: Plan) -> float:
    if plan.operator != "intersection":
        return 0.0
    sides = entity_keys(plan)
    bound = sum(1 for side in sides if _binds(side, fact.anchor_keys))
    return W_INTERSECTION if len(sides) >= 2 and bound >= 2 else 0.0


def _specificity_term(fact: FactCandidate) -> float:
    return min(W_SPECIFICITY * max(len(fact.anchor_keys) - 2, 0), MAX_SPECIFICITY)


def _role_term(fact: FactCandidate, plan: Plan) -> float:
    agree = 0.0
    conflict = 0.0
    for hint in plan.role_hints:
        groups = [
            group for role, key, _ in fact.roles if _binds(hint.key, [key]) and (group := role_group(role)) is not None
        ]
        if not groups:
            continue
        if any(role_compatible(group, hint.groups) for group in groups):
            agree += W_ROLE_AGREE
        else:
            conflict += W_ROLE_CONFLICT
    answer = (
        W_ANSWER_ROLE
        if plan.answer_roles and any(role_compatible(g, plan.answer_roles) for g in _other_arm_groups(fact, plan))
        else 0.0
    )
    return min(agree, MAX_ROLE_AGREE) - conflict + answer


def _requested_match(period: tuple[date, date], plan: Plan) -> bool | None:
    """Whether a period meets the question's requested dates; None when it requests none."""
    temporal = plan.temporal
    ranges = [wanted for wanted in temporal.ranges if wanted.relation == "in"]
    if not (ranges or temporal.months or temporal.years):
        return None
    start, end = period
    if any(start < wanted.end and wanted.start < end for wanted in ranges):
        return True
    covered = _months_in(start, end - timedelta(days=1))
    return any(
        (not temporal.months or month in temporal.months) and (not temporal.years or year in temporal.years)
        for year, month in covered
    ) and bool(temporal.months or temporal.years)


def _months_in(first: date, last: date) -> list[tuple[int, int]]:
    """The (year, month) pairs a period touches; a period is at most a year long."""
    months: list[tuple[int, int]] = []
    year, month = first.year, first.month
    while (year, month) <= (last.year, last.month) and len(months) < 13:
        months.append((year, month))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


def _state_term(fact: FactCandidate, plan: Plan) -> float:
    total = 0.0
    period, weight = _fact_time(fact)
    if period is not None:
        match = _requested_match(period, plan)
        if match is not None:
            total += (W_STATE_MATCH if match else -W_STATE_MISMATCH) * weight
    if fact.status == "planned" and plan.operator in PLANNED_PENALIZED and not plan.future:
        total -= W_PLANNED
    return total


def fact_score(fact: FactCandidate, plan: Plan) -> FactScore:
    """s_F(f, q): the nine terms of eq. 11."""
    return FactScore(
        relation=_relation_term(fact, plan),
        entity=_entity_term(fact, plan),
        constraint=_constraint_term(fact, plan),
        answer_type=_answer_type_term(fact, plan),
        time=_time_term(fact, plan),
        intersection=_intersection_term(fact, plan),
        specificity=_specificity_term(fact),
        role=_role_term(fact, plan),
        state=_state_term(fact, plan),
    )


def _dedupe(facts: Iterable[FactCandidate]) -> list[FactCandidate]:
    """One candidate per frame id (citations of repeats merged), in frame id order."""
    by_id: dict[str, FactCandidate] = {}
    for fact in facts:
        seen = by_id.get(fact.frame_id)
        if seen is None:
            by_id[fact.frame_id] = fact
        else:
            by_id[fact.frame_id] = replace(seen, citations=list(dict.fromkeys([*seen.citations, *fact.citations])))
    return [by_id[frame_id] for frame_id in sorted(by_id)]


def _object_tokens(plan: Plan) -> list[frozenset[str]]:
    return [frozenset(key.split()) for key in (anchor_key(name) for name in plan.objects) if key]


def select_relation_frames(
    facts: Iterable[FactCandidate], plan: Plan, frame_cap: int = FRAME_CAP
) -> list[FactCandidate]:
    """The relation lane's filters, in the order the database applies them (paper A.3).

    Predicate filter (a relation query keeps frames of its families; room left under the cap
    goes to frames with an arm on one of the relation's nouns, :func:`relation_arm_keys`), then
    the object filter (a question naming a concrete object keeps frames that contain it), then
    the cap by frame id order. An adapter runs the same rules inside the database; this is
    their reference.
    """
    families = {family.name for family in plan.relations}
    arms = relation_arm_keys(plan)
    candidates = _dedupe(facts)
    by_predicate = [fact for fact in candidates if not families or predicate_families(fact.predicate) & families]
    chosen = {fact.frame_id for fact in by_predicate}
    by_arm = [fact for fact in candidates if fact.frame_id not in chosen and fact.anchor_keys & arms]
    objects = _object_tokens(plan)
    kept = [
        fact
        for fact in [*by_predicate, *by_arm]
        if not objects or any(tokens <= _fact_tokens(fact) for tokens in objects)
    ]
    return kept[: max(frame_cap, 0)]


def _shared_object_frames(facts: Sequence[FactCandidate], plan: Plan) -> frozenset[str]:
    """Frame ids of the hard shared-object group of an intersection question (paper A.3)."""
    sides = entity_keys(plan)
    if plan.operator != "intersection" or len(sides) < 2:
        return frozenset()
    touched = {fact.frame_id: {side for side in sides if _binds(side, fact.anchor_keys)} for fact in facts}
    sides_of_object: dict[str, set[str]] = {}
    for fact in facts:
        for key in fact.anchor_keys:
            if not any(_binds(side, [key]) for side in sides):
                sides_of_object.setdefault(key, set()).update(touched[fact.frame_id])
    shared = {key for key, seen in sides_of_object.items() if len(seen) >= 2}
    return frozenset(
        fact.frame_id
        for fact in facts
        if len(touched[fact.frame_id]) >= 2 or (touched[fact.frame_id] and fact.anchor_keys & shared)
    )


def _order_key(fact: FactCandidate, plan: Plan) -> tuple[int, float]:
    """The temporal tiebreak: earliest first for "first", latest first for "last"."""
    orders = plan.temporal.orders
    moment = fact.event_time or fact.mention_time
    if not ({"first", "last", "order"} & set(orders)):
        return (0, 0.0)
    if moment is None:
        return (1, 0.0)
    stamp = _naive_utc(moment).replace(tzinfo=UTC).timestamp()  # naive times are read as UTC
    return (0, -stamp if "last" in orders and "first" not in orders else stamp)


def rank_facts(
    facts: Iterable[FactCandidate], plan: Plan, cap: int | None = None, *, frame_cap: int = FRAME_CAP
) -> list[ScoredFact]:
    """The top ``cap`` frames (default: the cited-row budget) by fact score, deterministically.

    At most ``frame_cap`` frames are scored, chosen by frame id order (the database's cap,
    enforced again so the work here is bounded whatever the adapter sends). Order: for a
    question about the present, current facts before the others; then the hard shared-object
    group of an intersection question, then score, then the requested temporal order, then
    frame id.
    """
    limit = plan.budgets.max_facts if cap is None else cap
    candidates = _dedupe(facts)[: max(frame_cap, 0)]
    shared = _shared_object_frames(candidates, plan)
    scored = [ScoredFact(fact, fact_score(fact, plan), fact.frame_id in shared) for fact in candidates]
    stale_last = plan.time_focus == "present"  # apps.retrieval.currency
    scored.sort(
        key=lambda item: (
            stale_last and not item.fact.current,
            not item.shared_object,
            -item.score.total,
            _order_key(item.fact, plan),
            item.fact.frame_id,
        )
    )
    return scored[: max(limit, 0)]
