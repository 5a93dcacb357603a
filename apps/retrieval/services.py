"""Graph-owned retrieval (docs/architecture.md, "Retrieval plane"): plan, enter through anchors, two bounded lanes,
fusion within budgets. Episodic and semantic rows enter only through the graph; only a graph
read that raises falls back to direct evidence retrieval, and the result says so."""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.db import transaction

from apps.graph.admission import SUBJECT_ROLES, speaks_as_subject
from apps.graph.indexing import subject_speaker_of
from apps.graph.keys import anchor_key
from apps.graph.selectors import SubjectGraphState, subject_graph_state
from apps.language.pipeline import PARSES
from apps.language.questions import asked_anchor, asked_key, asked_prior, asks_an_amount, asks_prior, kinds_only
from apps.language.references import numbered_references
from apps.language.words import count_tokens
from apps.memory.currency import with_currency
from apps.memory.filters import Filter
from apps.memory.models import CoreBlock, ProceduralItem, ResourceItem
from apps.memory.resource_search import resource_hits
from apps.memory.search import fuse as fuse_typed
from apps.memory.search import keyword_lane, vector_lane
from apps.memory.selectors import current_rows, rows_filtered
from apps.platform.replica import read_alias
from apps.providers.interfaces import Embedder, MeteringContext
from apps.retrieval import reads
from apps.retrieval.currency import asked_facts_first, current_first, mark_facts, successor_ids
from apps.retrieval.fusion import first_pass_scores, fuse, rank_candidates, trim_to_token_budget, without_restatements
from apps.retrieval.planner import as_a_name, asked_words, plan_query, spoken_of
from apps.retrieval.scoring import (
    FACT_ORDER_LIMIT,
    entity_keys,
    named_anchor_keys,
    rank_facts,
    relation_arm_keys,
    select_anchors,
)
from apps.retrieval.types import FactCandidate, FusedRow, Plan, RowCandidate, ScoredFact
from apps.tenancy.models import Subject

logger = logging.getLogger(__name__)

Mode = Literal["graph", "flat"]
FLAT_DEPTH = 100  # rows of each order (BM25, similarity) that flat mode fuses
TOKEN_BUDGET_ROW_LIMIT = 64
SUCCESSOR_STEPS = 3  # links of a supersession chain followed to the current value (each one bounded read)
TYPED_LIMIT = 3  # rows of each typed store (procedural, resource) a search returns


@dataclass
class BudgetReport:
    anchors_inspected: int = 0
    frames_inspected: int = 0
    rows_inspected: int = 0
    rows_returned: int = 0
    facts_returned: int = 0
    tokens_returned: int = 0


@dataclass
class SearchResult:
    plan: Plan
    mode: Mode
    facts: list[ScoredFact]
    rows: list[FusedRow]
    budget: BudgetReport
    fallback: bool = False
    typed: dict[str, list[Any]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class LaneTrace:
    """What the graph lanes reached for one question, for diagnostics: the anchors the question
    recalled or named, those selected, the co-participants read, and every candidate row id."""

    recalled: list[str] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)
    co_participants: list[str] = field(default_factory=list)
    candidates: set[str] = field(default_factory=set)


class _Clock:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.ms[name] = self.ms.get(name, 0.0) + (now - self._last) * 1000
        self._last = now


def _graph_lanes(
    *,
    subject: Subject,
    plan: Plan,
    vector: list[float],
    model: str,
    report: BudgetReport,
    clock: _Clock,
    where: Filter | None = None,
    trace: LaneTrace | None = None,
) -> tuple[list[RowCandidate], list[FactCandidate]]:
    """The two lanes' candidates. A filter ``where`` is part of every read of rows (an anchor's
    rows, cited rows, neighbours, successors), of frames (the incident and relation frames are
    chosen among those citing a matching row, ADR 0048) and of facts (a fact keeps only its
    citations that match), so every later cap and budget chooses among matching rows only
    (ADR 0035)."""
    recalled = reads.recall_anchors(subject=subject, vector=vector, model=model)
    named = list(named_anchor_keys(plan)) if plan.is_relation_query else []
    candidates = reads.anchor_candidates(
        subject=subject,
        recalled=recalled,
        named_keys=named,
        vector=vector,
        model=model,
        deep_keys=entity_keys(plan),
        where=where,
        words=asked_words(plan),
    )
    anchors = select_anchors(candidates, plan)
    report.anchors_inspected = len(candidates)
    clock.lap("graph")

    # Base-recall lane: the anchors' own rows, the cited rows of their incident frames, and the
    # rows of a bounded set of co-participants.
    selected = [scored.anchor for scored in anchors]
    base_ids: list[str] = []
    for anchor in selected:
        base_ids += anchor.episodic_ids + anchor.semantic_ids
    incident = reads.incident_frames(subject=subject, keys=[a.anchor_key for a in selected], where=where)
    selected_keys = {a.anchor_key for a in selected}
    co_participants: list[str] = []
    for frame in incident:
        base_ids += list(frame["citations"])
        co_participants += [key for _, key in frame["arms"] if key not in selected_keys]
    co_keys = list(dict.fromkeys(co_participants))[: reads.CO_PARTICIPANTS]
    co_anchors = reads.anchor_candidates(
        subject=subject,
        recalled=[],
        named_keys=co_keys,
        vector=vector,
        model=model,
        rows_per_type=reads.CO_PARTICIPANT_ROWS,
        where=where,
    )
    report.anchors_inspected += len(co_anchors)  # co-participants are read too
    for anchor in co_anchors:
        base_ids += anchor.episodic_ids + anchor.semantic_ids

    # Relation lane: from the exactly named anchors, frames of the asked relation.
    facts: list[FactCandidate] = []
    if plan.is_relation_query:
        named_present = [key for key in named if any(c.anchor_key == key for c in candidates)]
        frames = reads.relation_frames(
            subject=subject,
            keys=named_present,
            predicates=_predicates(plan),
            entities=[key for key in entity_keys(plan) if key in named_present],
            arm_keys=relation_arm_keys(plan),
            where=where,
        )
        objects = {anchor_key(o) for o in plan.objects}
        if objects:  # frames that must contain a named object
            frames = [f for f in frames if objects & {key for _, key in f["arms"]}] or frames
        facts = reads.fact_candidates(subject=subject, frames=frames)
        if where is not None:
            facts = _matching_facts(facts, reads.matching_row_ids(subject=subject, ids=_citations(facts), where=where))
        cited = reads.cited_currency(subject=subject, ids=_citations(facts))
        facts = mark_facts(facts, cited)
        report.frames_inspected = len(incident) + len(frames)
    else:
        report.frames_inspected = len(incident)
    clock.lap("graph")

    # The facts past the rendered ones still say which rows carry the asked relation: the rows
    # the first FACT_ORDER_LIMIT facts cite join the candidates and rank by fact order (ADR 0076).
    ordered = rank_facts(facts, plan, cap=max(FACT_ORDER_LIMIT, plan.budgets.max_facts))
    ranked = ordered[: plan.budgets.max_facts]
    fact_order = [c for scored in ordered for c in scored.fact.citations]
    weights = {scored.anchor.anchor_key: max(scored.anchor.vector_similarity, 0.0) for scored in anchors}
    keys = list(weights)
    rows, mentions = reads.rows_with_mentions(
        subject=subject, ids=[*fact_order, *base_ids], vector=vector, model=model, lane="base", keys=keys, where=where
    )
    # Same-chunk neighbours, recomputed from provenance: of every candidate (its context), and
    # those of the best candidates join the base lane.
    near = reads.neighbours(subject=subject, row_ids=[r.row_id for r in rows], per_row=reads.NEIGHBOURS_PER_SEED)
    first = first_pass_scores(rows, mentions=mentions, anchor_weights=weights)
    seeds = sorted((r for r in rows if r.memory_type == "episodic"), key=lambda r: (-first[r.row_id], r.row_id))
    known = {r.row_id for r in rows}
    joining = [n for seed in seeds[: reads.NEIGHBOUR_SEEDS] for n in near.get(seed.row_id, []) if n not in known]
    joined, joined_mentions = reads.rows_with_mentions(
        subject=subject, ids=joining, vector=vector, model=model, lane="base", keys=keys, where=where
    )
    rows += joined
    mentions.update(joined_mentions)
    if plan.time_focus == "present":  # what replaced a superseded candidate joins, to rank in its place
        for _ in range(SUCCESSOR_STEPS):
            successors = successor_ids(rows)
            if not successors:
                break
            replacing, replacing_mentions = reads.rows_with_mentions(
                subject=subject, ids=successors, vector=vector, model=model, lane="base", keys=keys, where=where
            )
            rows += replacing
            mentions.update(replacing_mentions)
    clock.lap("rows")
    ranked_rows = rank_candidates(
        rows,
        plan.question,
        mentions=mentions,
        anchor_weights=weights,
        context=_both_ways(near),
        names=plan.entities,
        fact_order=fact_order,
    )
    if trace is not None:
        trace.recalled = [c.anchor_key for c in candidates]
        trace.selected = sorted(selected_keys)
        trace.co_participants = [a.anchor_key for a in co_anchors]
        trace.candidates = {r.row_id for r in ranked_rows} | set(fact_order)
    return ranked_rows, [scored.fact for scored in ranked]


@dataclass(frozen=True, slots=True)
class _Voice:
    """Who the subject's own unnamed turns ("user": …) are: ``speaker`` (ADR 0095)."""

    speaker: str | None
    aliases: tuple[str, ...] = ()

    @classmethod
    def of(cls, subject: Subject, speaker: str | None, stated: str | None = None) -> _Voice:
        """``speaker``: the name the subject speaks under, when its graph has that anchor (a
        subject whose turns all name their speakers may have none: then "I" in a question is
        no one the service knows, and the question is planned as asked). ``stated``: the name
        the subject gave itself ("I'm Kwame"), another name a question may call it by."""
        if speaker is None:
            return cls(None)
        names = (subject.display_name, subject.external_id, speaker, *((stated,) if stated else ()))
        return cls(speaker, tuple(dict.fromkeys([*names, *(name.split()[0] for name in names if name.strip())])))

    @classmethod
    def in_graph(cls, subject: Subject) -> tuple[_Voice, SubjectGraphState]:
        """The subject's voice and its graph's state, read in one round trip."""
        speaker = subject_speaker_of(subject)
        state = subject_graph_state(subject=subject, speaker=speaker)
        return cls.of(subject, speaker if state.has_speaker else None, state.stated_name), state

    def planned(self, question: str) -> str:
        """The question as the planner reads it: about the subject in the third person."""
        return spoken_of(question, self.speaker, self.aliases) if self.speaker else question

    def row(self, row: RowCandidate) -> RowCandidate:
        """A row of the subject's own turns speaks as the subject: "user's sister" → "Ana's sister"."""
        if not self.speaker or not row.speaker:
            return row
        if speaks_as_subject(row.speaker):
            return dataclasses.replace(row, speaker=self.speaker)
        head, apostrophe, rest = row.speaker.partition("'s ")
        if apostrophe and speaks_as_subject(head):
            return dataclasses.replace(row, speaker=f"{self.speaker}'s {rest}")
        return row

    def written(self, names: Sequence[str], question: str) -> tuple[str, ...]:
        """The names as statements are filed: the subject's own under its turns' role too. The
        planned ``question`` asks about the subject itself when it names the subject but not as
        a possessor ("Where does Subject live?", which a parser may not read as a name)."""
        if not self.speaker:
            return tuple(names)
        own = set(anchor_key(self.speaker).split())

        def names_subject(name: str) -> bool:  # "Ana" or "Silva" of "Ana Silva"
            words = set(anchor_key(name).split())
            return bool(words) and words <= own

        if not any(names_subject(name) for name in names) and re.search(
            rf"(?<![\w'’]){re.escape(as_a_name(self.speaker))}(?![\w'’])", question
        ):
            names = [*names, self.speaker]
        out = list(names)
        for name in names:
            head, apostrophe, rest = name.partition("'s ")
            if names_subject(name):
                out += sorted(SUBJECT_ROLES)
            elif apostrophe and names_subject(head):
                out += [f"{role}'s {rest}" for role in sorted(SUBJECT_ROLES)]
        return tuple(dict.fromkeys(out))


def _asked_ids(subject: Subject, question: str, plan: Plan, voice: _Voice) -> list[str]:
    """The facts of the key a question asks for (apps.language.questions.asked_key), in order:
    the current ones for a present question, the earlier values for a question about the value
    before ("before Lyon", "used to"; ADR 0061), the values held with another fact for a
    question about then ("the car in Porto"; ADR 0086), and a value that never changed for
    another question about the past."""
    if plan.time_focus not in ("present", "history") and not asks_prior(question):
        return []
    span = PARSES.get(question)[:]  # a question asked again is not parsed again
    key = asked_key(span)
    key = dataclasses.replace(key, names=voice.written(key.names, question))
    if plan.time_focus == "present":
        amount = asks_an_amount(question)
        ids = reads.current_fact_ids(
            subject=subject, names=key.names, groups=key.groups, amount=amount, every=key.every
        )
    elif (later := asked_prior(span, key)) is not None:
        ids = reads.prior_fact_ids(subject=subject, names=key.names, groups=key.groups, later=later)
    elif plan.time_focus == "history" and (anchor := asked_anchor(span, key)) is not None:
        ids = reads.anchored_fact_ids(subject=subject, names=key.names, groups=kinds_only(key.groups), anchor=anchor)
    elif plan.time_focus == "history":  # "Where did Kwame study?": a value that never changed
        ids = reads.current_fact_ids(subject=subject, names=key.names, groups=kinds_only(key.groups), unchanged=True)
    else:
        return []
    return ids


def _referenced_ids(subject: Subject, question: str, where: Filter | None) -> list[str]:
    """The rows a question's numbered reference identifies ("under clause 17": the passage
    with clause 17; ADR 0098)."""
    return reads.referenced_row_ids(subject=subject, references=numbered_references(question), where=where)


def _rows_in_order(
    subject: Subject,
    ids: Sequence[str],
    vector: list[float],
    model: str,
    where: Filter | None,
    candidates: Sequence[RowCandidate],
    voice: _Voice,
) -> list[RowCandidate]:
    """The rows with these ids in this order, as candidates: from ``candidates`` when they
    hold them, else read by id (in the subject's voice)."""
    known = {row.row_id: row for row in candidates}
    if missing := [row_id for row_id in ids if row_id not in known]:
        known.update(
            (row.row_id, row)
            for row in reads.rows_by_id(
                subject=subject, ids=missing, vector=vector, model=model, lane="base", where=where
            )
        )
    return [voice.row(known[row_id]) for row_id in ids if row_id in known]


def graph_lane_trace(*, subject: Subject, question: str, embedder: Embedder) -> LaneTrace:
    """The graph lanes of one question, traced (no fusion, no budgets): which anchors and rows
    they reached. For the evaluation's coverage analysis."""
    plan = plan_query(_Voice.in_graph(subject)[0].planned(question))
    trace = LaneTrace()
    _graph_lanes(
        subject=subject,
        plan=plan,
        vector=embedder.embed([question])[0],
        model=embedder.model_name,
        report=BudgetReport(),
        clock=_Clock(),
        trace=trace,
    )
    return trace


def _citations(facts: Sequence[FactCandidate]) -> list[str]:
    return [row_id for fact in facts for row_id in fact.citations]


def _matching_facts(facts: Sequence[FactCandidate], matching: set[str]) -> list[FactCandidate]:
    """The facts that cite a matching row, each citing only those."""
    kept = []
    for fact in facts:
        citations = [row_id for row_id in fact.citations if row_id in matching]
        if citations:
            kept.append(dataclasses.replace(fact, citations=citations))
    return kept


def _both_ways(near: dict[str, list[str]]) -> dict[str, set[str]]:
    """Neighbourhood as a symmetric relation: a row next to a candidate has it as context too."""
    both: dict[str, set[str]] = {}
    for row_id, neighbours in near.items():
        for neighbour in neighbours:
            both.setdefault(row_id, set()).add(neighbour)
            both.setdefault(neighbour, set()).add(row_id)
    return both


def _predicates(plan: Plan) -> list[str]:
    """Frame predicates that count as the question's relations: each surface form and its
    multi-word forms joined the way extraction writes them (``go to`` → ``go_to``)."""
    forms = set()
    for form in plan.relation_forms:
        forms.add(form)
        forms.add(form.replace(" ", "_"))
        forms.add(form.split(" ")[0])
    return sorted(forms)


def _typed_paths(
    subject: Subject,
    plan: Plan,
    memory_types: Sequence[str],
    embedder: Embedder,
    vector: list[float],
    token_budget: int | None,
    where: Filter | None = None,
) -> dict[str, list[Any]]:
    typed: dict[str, list[Any]] = {}
    if "core" in memory_types:
        typed["core"] = with_currency(rows_filtered(current_rows(CoreBlock, subject=subject), where).order_by("label"))
    for name, model in (("procedural", ProceduralItem), ("resource", ResourceItem)):
        if name in memory_types:
            rows = rows_filtered(current_rows(model, subject=subject).defer("embedding"), where)
            hits = fuse_typed(
                vector_lane(rows, vector=vector, model=embedder.model_name),
                keyword_lane(rows, query=plan.question),
                limit=TYPED_LIMIT,
            )
            typed[name] = with_currency(hit.row for hit in hits)
    if "resource" in typed:
        typed["resource"] = resource_hits(
            subject=subject,
            resources=typed["resource"],
            question=plan.question,
            vector=vector,
            model=embedder.model_name,
            token_budget=token_budget,
        )
    return typed


def _within(row: RowCandidate, since: datetime | None, until: datetime | None) -> bool:
    moment = row.event_time or row.mention_time or row.created_at
    if moment is None:
        return False
    return (since is None or moment >= since) and (until is None or moment < until)


def search(
    *,
    subject: Subject,
    question: str,
    embedder: Embedder,
    mode: Mode = "graph",
    memory_types: Sequence[str] = ("episodic", "semantic"),
    token_budget: int | None = None,
    limit: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    where: Filter | None = None,
    metering: MeteringContext | None = None,
) -> SearchResult:
    """``limit`` caps the evidence rows returned; like a token budget it lets the caller go past
    the plan's row budgets, within the same bounded candidates (``TOKEN_BUDGET_ROW_LIMIT``).
    The query's embedding is metered to ``metering`` (the calling key's)."""
    clock = _Clock()
    voice, graph_state = _Voice.in_graph(subject)
    plan = plan_query(voice.planned(question))
    vector = embedder.embed([question], metering=metering)[0]  # as asked: the rows say "I"
    clock.lap("embedding")
    report = BudgetReport()
    facts: list[FactCandidate] = []
    # While the subject's graph is rebuilt it is partial: direct retrieval, and say so (ADR 0096).
    fallback = mode == "graph" and graph_state.rebuilding
    if mode == "graph" and not fallback:
        try:
            # A savepoint: a graph error in the database aborts only the graph reads, and the
            # fallback's own queries still run in the request's transaction.
            with transaction.atomic(using=read_alias()):
                rows, facts = _graph_lanes(
                    subject=subject,
                    plan=plan,
                    vector=vector,
                    model=embedder.model_name,
                    report=report,
                    clock=clock,
                    where=where,
                )
        except Exception as exc:  # a graph read raised: direct evidence retrieval, and say so
            logger.warning("graph read failed; falling back", extra={"error_type": type(exc).__name__})
            fallback = True
    if mode == "flat" or fallback:
        rows = reads.flat_rows(
            subject=subject,
            question=question,
            vector=vector,
            model=embedder.model_name,
            depth=FLAT_DEPTH,
            where=where,
        )
        clock.lap("rows")
    rows = [voice.row(row) for row in rows]
    if since is not None or until is not None:
        rows = [row for row in rows if _within(row, since, until)]
    scored_facts = rank_facts(facts, plan)
    # A caller's token budget is filled, past the plan's row budgets, from the same bounded
    # candidates (cited and base rows first), then trimmed deterministically.
    candidates = TOKEN_BUDGET_ROW_LIMIT if token_budget or limit else plan.budgets.total_rows
    if mode == "flat" or fallback:  # the fused BM25 + dense order, as it is
        report.rows_inspected = len(rows)
        flat = reads.with_currency(subject=subject, rows=rows[:candidates])
        returned = [FusedRow(row, "base", row.lexical_score) for row in flat]
    else:
        fused = fuse(rows, [s.fact for s in scored_facts], plan, limit=candidates)
        report.rows_inspected = fused.rows_inspected
        returned = current_first(fused.rows, {row.row_id: row for row in rows}, plan)
        # The rows a numbered reference identifies first (ADR 0098; not a statement another of
        # them says in full, ADR 0102), then the asked key's facts.
        referenced = _referenced_ids(subject, question, where)
        asked = [
            row_id
            for row_id in dict.fromkeys(_asked_ids(subject, plan.question, plan, voice))
            if row_id not in referenced
        ]
        returned = asked_facts_first(
            returned,
            [
                *without_restatements(
                    _rows_in_order(subject, referenced, vector, embedder.model_name, where, rows, voice)
                ),
                *_rows_in_order(subject, asked, vector, embedder.model_name, where, rows, voice),
            ],
        )
    if not {"episodic", "semantic"} & set(memory_types):  # only other stores were asked for
        returned, scored_facts = [], []
    if token_budget is not None:
        returned = trim_to_token_budget(returned, token_budget, text=lambda r: r.row.text)
    if limit is not None:
        returned = returned[:limit]
    report.rows_returned = len(returned)
    report.facts_returned = len(scored_facts)
    report.tokens_returned = sum(count_tokens(r.row.text) for r in returned)
    # Resource excerpts take what the rows left of the budget, and count against it.
    left = None if token_budget is None else token_budget - report.tokens_returned
    typed = (
        _typed_paths(subject, plan, memory_types, embedder, vector, left, where)
        if set(memory_types) - {"episodic", "semantic"}
        else {}
    )
    report.tokens_returned += sum(hit.tokens for hit in typed.get("resource", []))
    clock.lap("typed")
    return SearchResult(
        plan=plan,
        mode=mode,
        facts=scored_facts,
        rows=returned,
        budget=report,
        fallback=fallback,
        typed=typed,
        timings_ms=clock.ms,
    )
