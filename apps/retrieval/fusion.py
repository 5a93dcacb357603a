"""Citation-balanced fusion and token budgets (docs/architecture.md, "Retrieval plane"). Pure.

Rows arrive tagged with the lane that produced them (``base``, ``relation``, or ``flat`` after a
graph read raised). Fusion:

1. **Reranks** every row by reciprocal rank over the orders of the bounded candidate set
   (:func:`rank_candidates`): similarity to the question (per kind of text), Okapi BM25 with the
   candidates' own statistics, association with the question's anchors (the summed name
   similarity of the entry anchors the row mentions, read from the adjacency index), and, for a
   relation query, the order of the relation lane's ranked facts that cite the row (ADR 0076:
   the rows that carry the asked relation, whatever their wording). Each order
   contributes ``1 / (RANK_K + rank + 1)``, the anchor order ``ANCHOR_ORDER_WEIGHT`` of that
   (a row that mentions whom a question asks about need not say what it asks, ADR 0117);
   ``RANK_K`` is small because the set is small (a few hundred rows, not a corpus). Then
   **context**: an episodic row gains ``CONTEXT_WEIGHT`` × the best score among the rows next
   to it in its chunk (a reply is evidence with the turn it answers). Then **speaker**: when
   the question names people who speak in the candidates, a row spoken by (or, semantic,
   about) someone else keeps ``OTHER_SPEAKER_WEIGHT`` of its score: "Thanks, Melanie!" matches
   the name, the anchor and the words as well as Melanie's own lines do, but it tells about its
   speaker (ADR 0019).
   Then **events**: when the question gathers what happened (about the past, after several
   rows or a count), a row that dates what it tells weighs ``DATED_EVENT_WEIGHT``
   times its score: the events asked for are told as events ("Yesterday I went to a fair to
   show off my studio"), the talk around them is not (ADR 0116). Then **documents**: a pasted
   document's passages after its best ``LEADING_PASSAGES`` keep ``LATER_PASSAGE_WEIGHT`` of
   their score, so that one document's clauses near in meaning to a question do not fill the
   head (ADR 0120); a passage that shares no word with the question, when other candidates
   do, keeps ``UNMATCHED_PASSAGE_WEIGHT`` of its score: a document near a question in meaning
   but not in its words is about something else ("Where did Noor go to university?" against a
   climbing centre's rules on classes; ADR 0130). Then **specificity**: each row's score is
   multiplied by ``(s / median s) ** SPECIFICITY_EXPONENT``, ``s`` its :func:`lexical.specificity` among the
   candidates (the mean IDF of its ``SPECIFIC_TERMS`` rarest terms), kept within
   ``SPECIFICITY_BOUNDS``: of a busy person's many turns near a question, those that name
   something the others do not ("took the kids to the museum") are evidence more often than
   the talk around them ("Your support means a lot"; ADR 0123). The
   constants were set on the LoCoMo dev split by evidence recall within 1,024 tokens (ADR 0017).
   Ties: the adapter's ``lexical_score``, then row id.
2. **Cited rows** (up to the cited-row budget): the citations of the ranked facts, taken in fact order (within
   one fact, by rerank score), because a fact without its supporting row is unverifiable.
3. **Base rows** (up to the base-row budget) from the base and flat lanes, by score. Turns, statements and
   passages take their similarity ranks apart (their vectors embed different texts), each order
   stretched over the whole pool (ADR 0020), and then compete on the one score: interleaving
   them by position would put a weak semantic row beside every strong episodic one.
4. **Fill** up to the row limit (default: the two budgets together): cited rows past their budget first (they support
   rendered facts; our choice), then everything else by score. No row id is taken twice.
5. **Paraphrase collapse**: an episodic row whose content-stem Jaccard similarity with an
   already taken episodic row is at least :data:`PARAPHRASE_JACCARD`, with the same numbers, is
   dropped only when both fall on the same calendar date (event time, else mention time; ``created_at`` is when we
   stored it, not when it happened, so it never dates a row). A dropped row takes no budget.
   The same wording on two dates stays two rows (A.3; the retrieval side of eq. 7).
   **Restatement collapse** (ADR 0102): a semantic row written from messages an already taken
   row was written from too, whose words (after its speaker's label) stand in order inside that
   row's, both current, says nothing the taken row does not ("Melanie: I just signed up for
   a pottery class yesterday." beside the turn that says it and shows a photo; a statement
   read from pasted text beside the passage that holds it). It is dropped and takes no budget;
   taken after the row that says it, that row takes its place and the better score.
6. **Order**: the budgets choose the returned set; the returned rows are then ordered by score
   alone, whatever step took them (ADR 0060). Putting cited rows first filled the first places
   with rows that share the question's entities but not its relation.

:func:`count_tokens` is the evaluation's token metric: words and punctuation marks.
:func:`trim_to_token_budget` keeps items in order while they fit and skips those that do not;
:func:`truncate_to_tokens` cuts one text to a budget.
"""

from __future__ import annotations

import functools
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Protocol, TypeVar

from apps.language.words import content_stems, count_tokens, fold, words
from apps.memory.statements import split_about
from apps.retrieval.lexical import lexical_ranks, specificity
from apps.retrieval.types import (
    FactCandidate,
    FusedRow,
    FusedSource,
    FusionResult,
    Plan,
    RowCandidate,
)

RANK_K = 4  # reciprocal-rank constant over a bounded candidate set (our choice; ADR 0017, ADR 0020)
# The anchor order's share of the reciprocal-rank sum (ADR 0117): mentioning the question's
# anchors says a row is about whom or what is asked, not that it says what is asked, and at full
# weight the rows that only share the entity crowded the head (LoCoMo dev R@5 62.1 → 63.0 %).
ANCHOR_ORDER_WEIGHT = 0.6
CONTEXT_WEIGHT = 0.4  # share of the best same-chunk neighbour's score a row gains (our choice; ADR 0017)
# Share of its score a row keeps when the question names speakers and the row's is none of them
# (our choice, ADR 0019; on the LoCoMo dev split any value in [0.4, 0.8] is within a point).
OTHER_SPEAKER_WEIGHT = 0.5
# Weight of a row with an event time when the question gathers what happened (our choice, ADR
# 0116; on the LoCoMo dev split 1.4–2.0 are within half a point within 1,024 tokens).
DATED_EVENT_WEIGHT = 1.6
# A document's passages after its best LEADING_PASSAGES keep LATER_PASSAGE_WEIGHT of their score
# (our choice, ADR 0120): one pasted contract's clauses near in meaning to a question about its
# owner filled the head. One passage and 0.3 lost a needle of updates v1; two and 0.5 lose none.
LEADING_PASSAGES = 2
LATER_PASSAGE_WEIGHT = 0.5
# A passage that shares no word with the question, when other candidates do, keeps
# UNMATCHED_PASSAGE_WEIGHT of its score (our choice, ADR 0130): a membership contract's clauses
# near in meaning to "Where did Noor go to university?" led the turn that says it.
UNMATCHED_PASSAGE_WEIGHT = 0.5
# A row's specificity weight (ADR 0123): (its mean IDF over its 3 rarest terms / the candidates'
# median) ** 0.5, kept within [0.5, 2] (a row with no content word keeps half). Set on a kept
# LoCoMo dev ingestion: exponents 0.3, 0.7 and 1 read lower within 1,024 tokens, 2 and 5 terms
# about the same with a lower R@1, 8 terms lower; the bounds do not bind on the dev split.
SPECIFIC_TERMS = 3
SPECIFICITY_EXPONENT = 0.5
SPECIFICITY_BOUNDS = (0.5, 2.0)
# Content-stem Jaccard at or above which same-date episodic rows collapse (our choice): one
# differing content word in a short turn ("a puppy" / "a kitten named Max") scores ≈ 0.71.
PARAPHRASE_JACCARD = 0.8


# Kinds of text whose vectors are compared only among themselves: a turn, a statement and a
# document's passage (a few hundred words scores lower against a short question than a turn).
_TEXT_KINDS = ("episodic", "semantic", "passage")
MIN_CALIBRATION = 5  # rows of a kind below which its spread says nothing (our choice)


def _text_kind(row: RowCandidate) -> str:
    return "passage" if row.passage else row.memory_type


def _calibrated_ranks(rows: Sequence[RowCandidate], kind: str, pool: int) -> dict[str, int]:
    """Each row of ``kind`` (passages, statements) placed in the turns' similarity order by how
    far it stands above the other rows of its kind (ADR 0067, ADR 0082): a row as many
    deviations above its kind's mean as a turn is above the turns' stands where that turn does.
    The best passage of a document the question is not about stands out from its document no
    more than an average turn does. When passages are placed so, statements are too: the best
    of a few statements that only name the document's company would otherwise keep the top
    of its own stretched order above every passage."""
    turns = sorted(
        (r.similarity for r in rows if _text_kind(r) == "episodic" and r.similarity is not None), reverse=True
    )
    of_kind = [r for r in rows if _text_kind(r) == kind and r.similarity is not None]
    if len(turns) < MIN_CALIBRATION or len(of_kind) < MIN_CALIBRATION:
        return {}  # too few to compare spreads: the kind's own stretched order stands
    sims = [r.similarity or 0.0 for r in of_kind]
    spread_k, spread_t = statistics.pstdev(sims), statistics.pstdev(turns)
    if spread_k == 0.0:
        return {}
    mean_k, mean_t = statistics.fmean(sims), statistics.fmean(turns)
    ranks = {}
    for row, similarity in zip(of_kind, sims, strict=True):
        equivalent = mean_t + (similarity - mean_k) / spread_k * spread_t
        above = sum(1 for turn in turns if turn > equivalent)
        ranks[row.row_id] = above * pool // len(turns)
    return ranks


_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")

T = TypeVar("T")


def trim_to_token_budget(items: Sequence[T], budget: int, *, text: Callable[[T], str]) -> list[T]:
    """The items, in order, that fit ``budget`` tokens; an item that does not fit is skipped whole."""
    kept: list[T] = []
    used = 0
    for item in items:
        cost = count_tokens(text(item))
        if used + cost <= budget:
            kept.append(item)
            used += cost
    return kept


def _order_score(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / (RANK_K + max(rank, 0) + 1)


def rerank_score(row: RowCandidate) -> float:
    """Reciprocal rank over the row's similarity, BM25, anchor and fact orders (context not included)."""
    return _rerank(row.vector_rank, row.lexical_rank, row.anchor_rank, row.fact_rank)


def _rerank(vector_rank: int | None, lexical_rank: int | None, anchor_rank: int | None, fact_rank: int | None) -> float:
    return (
        _order_score(vector_rank)
        + _order_score(lexical_rank)
        + ANCHOR_ORDER_WEIGHT * _order_score(anchor_rank)
        + _order_score(fact_rank)
    )


def rank_candidates(
    rows: Sequence[RowCandidate],
    question: str,
    *,
    mentions: Mapping[str, Iterable[str]],
    anchor_weights: Mapping[str, float],
    context: Mapping[str, Iterable[str]] | None = None,
    names: Iterable[str] = (),
    fact_order: Sequence[str] = (),
) -> list[RowCandidate]:
    """The candidates with their ranks among themselves, and their chunk context.

    ``mentions`` maps a row id to the keys of the anchors it mentions; ``anchor_weights`` maps
    the question's entry anchors to their weight (name similarity); ``context`` maps a row id
    to the ids of the episodic rows next to it in its chunk; ``names`` are the people the
    question names (a row matching only them has no BM25 rank); ``fact_order`` holds the ids
    of the rows the relation lane's ranked facts cite, in fact order (a row's fact rank is its
    first place there, counting each row once; ADR 0076)."""
    unique = list({row.row_id: row for row in rows}.values())
    vector_rank, anchor_rank = _order_ranks(unique, mentions=mentions, anchor_weights=anchor_weights)
    near = context or {}
    by_words = lexical_ranks(unique, question, names=names)
    by_fact = fact_ranks(fact_order)
    return [
        replace(
            row,
            vector_rank=vector_rank.get(row.row_id),
            anchor_rank=anchor_rank.get(row.row_id),
            lexical_rank=by_words.get(row.row_id),
            fact_rank=by_fact.get(row.row_id, row.fact_rank),
            context=tuple(sorted(set(near.get(row.row_id, ())) - {row.row_id})),
        )
        for row in rows
    ]


def first_pass_scores(
    rows: Sequence[RowCandidate], *, mentions: Mapping[str, Iterable[str]], anchor_weights: Mapping[str, float]
) -> dict[str, float]:
    """Each row's rerank score by its similarity and anchor orders among the rows (its own
    BM25 and fact ranks, if any, as they are), by row id: a cheap first pass that only has to
    say which candidates are best, so no ranked rows are built."""
    unique = list({row.row_id: row for row in rows}.values())
    vector_rank, anchor_rank = _order_ranks(unique, mentions=mentions, anchor_weights=anchor_weights)
    return {
        row.row_id: _rerank(vector_rank.get(row.row_id), row.lexical_rank, anchor_rank.get(row.row_id), row.fact_rank)
        for row in unique
    }


def _order_ranks(
    unique: Sequence[RowCandidate], *, mentions: Mapping[str, Iterable[str]], anchor_weights: Mapping[str, float]
) -> tuple[dict[str, int], dict[str, int]]:
    """Each row's rank by similarity (per kind of text, stretched over the pool) and by
    association with the question's anchors, by row id."""
    vector_rank: dict[str, int] = {}
    similar = sum(1 for r in unique if r.similarity is not None)
    for kind in _TEXT_KINDS:  # similarities of different kinds of text: ranked apart
        of_kind = [r for r in unique if _text_kind(r) == kind and r.similarity is not None]
        of_kind.sort(key=lambda r: (-(r.similarity or 0.0), r.row_id))
        # ... and each type's order is stretched over the whole pool (ADR 0020): the r-th of a
        # type's n rows stands at r/n of the pool, so a type with few candidates does not take
        # the top of the order for free.
        vector_rank.update((r.row_id, rank * similar // len(of_kind)) for rank, r in enumerate(of_kind))
    passages = _calibrated_ranks(unique, "passage", similar)
    if passages:  # the turns' order is the one scale: statements are placed in it like passages
        vector_rank.update(passages)
        vector_rank.update(_calibrated_ranks(unique, "semantic", similar))
    association = {
        r.row_id: sum(anchor_weights.get(key, 0.0) for key in set(mentions.get(r.row_id, ()))) for r in unique
    }
    similarity = {r.row_id: r.similarity or 0.0 for r in unique}  # equal association: the nearer first
    by_anchor = sorted((i for i, a in association.items() if a > 0), key=lambda i: (-association[i], -similarity[i], i))
    return vector_rank, {row_id: rank for rank, row_id in enumerate(by_anchor)}


def fact_ranks(cited: Iterable[str]) -> dict[str, int]:
    """Each row's 0-based place among the rows the ranked facts cite, in fact order (``cited``:
    the facts' citations, best fact first), each row counted once at its first place."""
    return {row_id: rank for rank, row_id in enumerate(dict.fromkeys(cited))}


def row_calendar_date(row: RowCandidate) -> date | None:
    moment = row.event_time or row.mention_time
    return moment.date() if moment is not None else None


def token_jaccard(first: str, second: str) -> float:
    """Jaccard similarity of two texts' content stems (of their lowercase words if neither has any)."""
    a, b = content_stems(first), content_stems(second)
    if not a and not b:
        a, b = frozenset(w.lower() for w in words(first)), frozenset(w.lower() for w in words(second))
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def is_same_date_paraphrase(first: RowCandidate, second: RowCandidate) -> bool:
    if first.memory_type != "episodic" or second.memory_type != "episodic":
        return False
    day = row_calendar_date(first)
    if day is None or day != row_calendar_date(second):
        return False
    if set(_DIGITS.findall(first.text)) != set(_DIGITS.findall(second.text)):
        return False  # different quantities are different facts
    return token_jaccard(first.text, second.text) >= PARAPHRASE_JACCARD


@functools.lru_cache(maxsize=4096)
def _folded_words(text: str) -> str:
    return " " + " ".join(fold(word) for word in words(text)) + " "


def _statement_words(row: RowCandidate) -> tuple[str, str]:
    """The row's words, folded, without the label that opens it ("Melanie: …", "Kwame, about
    his mother: …"), and the words of whom such a label says it is about."""
    about, text = split_about(row.text)
    label = f"{row.speaker}: "
    if not about and row.speaker and text.startswith(label):
        text = text[len(label) :]
    return _folded_words(text), _folded_words(about)


def is_restatement(row: RowCandidate, taken: RowCandidate) -> bool:
    """``row``, a statement the writers read from messages, says nothing ``taken`` does not:
    ``taken`` was written from those messages too, ``row``'s words stand in order inside
    ``taken``'s, and so does whom its label says it is about ("Kwame, about his mother: My mum
    …" says more than "Kwame: My mum …"), and both are current: a replaced statement is the
    record of its change. An episodic row is never one: it is the message itself, whose details
    (the whole message) an answer reads."""
    if row.memory_type != "semantic" or not row.sources or not set(row.sources) <= set(taken.sources):
        return False
    if row.superseded_by is not None or taken.superseded_by is not None:
        return False
    inner, about = _statement_words(row)
    words_of_taken = _folded_words(taken.text)
    return inner.strip() != "" and inner in words_of_taken and (not about.strip() or about in words_of_taken)


def without_restatements(rows: Sequence[RowCandidate]) -> list[RowCandidate]:
    """``rows`` in order, without the statements another of them says in full (of two that say
    each other, the second stays)."""
    kept = list(rows)
    for row in rows:
        if any(other is not row and is_restatement(row, other) for other in kept):
            kept.remove(row)
    return kept


@dataclass(frozen=True, slots=True)
class _Ranked:
    row: RowCandidate
    score: float
    base: bool  # reached through the base or flat lane


@functools.lru_cache(maxsize=4096)
def _words(name: str) -> frozenset[str]:  # speakers' names: a few, asked of every row
    """The words of a name, possessives folded: a fact of "Kwame's mother" speaks of Kwame's."""
    return frozenset(fold(word) for word in words(name))


class Spoken(Protocol):
    @property
    def row_id(self) -> str: ...
    @property
    def speaker(self) -> str: ...


def speaker_weights(rows: Iterable[Spoken], plan: Plan) -> dict[str, float]:
    """Per row id, :data:`OTHER_SPEAKER_WEIGHT` for a row whose speaker shares no word with
    the people the question names, when some candidate's speaker does (otherwise the names
    are not speakers here, e.g. every row is the user's, and no row is weighted); else 1."""
    named = _words(" ".join(plan.entities))
    rows = list(rows)
    speaking = {row.row_id: bool(named & _words(row.speaker)) for row in rows if row.speaker}
    if not any(speaking.values()):
        return {row.row_id: 1.0 for row in rows}
    return {row.row_id: OTHER_SPEAKER_WEIGHT if speaking.get(row.row_id) is False else 1.0 for row in rows}


def asks_what_happened(plan: Plan) -> bool:
    """The question gathers what happened: about the past (not how things are now), after
    several rows, a count or what two share ("Which events has Jon participated in…?", "How
    many times did…?"), and not what held before or after something (ADR 0116). Not a "when"
    question: an event told as it happens ("garlic is in btw") is dated by its message alone,
    with no event time, and would lose its place to a row that names a date."""
    return (
        plan.time_focus == "history"
        and plan.operator in ("list-union", "count", "intersection")
        and not plan.temporal.orders
    )


def event_weight(row: RowCandidate) -> float:
    """:data:`DATED_EVENT_WEIGHT` for a row that dates what it tells (an event time), else 1."""
    return DATED_EVENT_WEIGHT if row.event_time is not None else 1.0


def _unique_rows(rows: Iterable[RowCandidate], plan: Plan) -> dict[str, _Ranked]:
    """One entry per row id; a row from several lanes keeps its best ranks and lexical score.
    Each row's score is its rerank score plus its context share, times its speaker weight, for
    a question that gathers what happened its event weight, a later passage's weight and its
    specificity weight."""
    merged: dict[str, tuple[RowCandidate, bool]] = {}
    for row in rows:
        base = row.lane in ("base", "flat")
        seen = merged.get(row.row_id)
        if seen is None:
            merged[row.row_id] = (row, base)
            continue
        first = seen[0]
        best = replace(
            first,
            vector_rank=_best(first.vector_rank, row.vector_rank),
            lexical_rank=_best(first.lexical_rank, row.lexical_rank),
            anchor_rank=_best(first.anchor_rank, row.anchor_rank),
            fact_rank=_best(first.fact_rank, row.fact_rank),
            lexical_score=max(first.lexical_score, row.lexical_score),
            context=tuple(sorted({*first.context, *row.context})),
        )
        merged[row.row_id] = (best, seen[1] or base)
    own = {row_id: rerank_score(row) for row_id, (row, _) in merged.items()}
    weight = speaker_weights((row for row, _ in merged.values()), plan)
    if asks_what_happened(plan):
        weight = {row_id: w * event_weight(merged[row_id][0]) for row_id, w in weight.items()}
    scores = {
        row_id: (own[row_id] + CONTEXT_WEIGHT * max((own.get(i, 0.0) for i in row.context), default=0.0))
        * weight[row_id]
        for row_id, (row, _) in merged.items()
    }
    for row_id in _later_passages(((row, scores[row.row_id]) for row, _ in merged.values())):
        scores[row_id] *= LATER_PASSAGE_WEIGHT
    for row_id in _unmatched_passages([row for row, _ in merged.values()]):
        scores[row_id] *= UNMATCHED_PASSAGE_WEIGHT
    for row_id, specific in specificity_weights(row for row, _ in merged.values()).items():
        scores[row_id] *= specific
    return {row_id: _Ranked(row, scores[row_id], base) for row_id, (row, base) in merged.items()}


def specificity_weights(rows: Iterable[RowCandidate]) -> dict[str, float]:
    """Each row's specificity weight among the rows, by row id (module docstring; ADR 0123)."""
    specific = specificity({row.row_id: row.match_text or row.text for row in rows}, top=SPECIFIC_TERMS)
    middle = statistics.median(specific.values()) if specific else 0.0
    if middle <= 0:
        return dict.fromkeys(specific, 1.0)
    low, high = SPECIFICITY_BOUNDS
    return {row_id: min(high, max(low, (value / middle) ** SPECIFICITY_EXPONENT)) for row_id, value in specific.items()}


def _later_passages(scored: Iterable[tuple[RowCandidate, float]]) -> list[str]:
    """The ids of each document's passages after its best :data:`LEADING_PASSAGES` by score."""
    documents: dict[tuple[str, ...], list[tuple[float, str]]] = {}
    for row, score in scored:
        if row.passage:
            documents.setdefault(row.sources, []).append((-score, row.row_id))
    return [row_id for passages in documents.values() for _, row_id in sorted(passages)[LEADING_PASSAGES:]]


def _unmatched_passages(rows: Sequence[RowCandidate]) -> list[str]:
    """The ids of the passages that share no word with the question (no BM25 rank) when some
    candidate does (ADR 0130)."""
    if all(row.lexical_rank is None for row in rows):
        return []
    return [row.row_id for row in rows if row.passage and row.lexical_rank is None]


def _best(first: int | None, second: int | None) -> int | None:
    ranks = [rank for rank in (first, second) if rank is not None]
    return min(ranks) if ranks else None


def _rank_key(item: _Ranked) -> tuple[float, float, str]:
    return (-item.score, -item.row.lexical_score, item.row.row_id)


def _cited(ranked: dict[str, _Ranked], facts: Sequence[FactCandidate]) -> list[_Ranked]:
    first_fact: dict[str, int] = {}
    for index, fact in enumerate(facts):
        for row_id in fact.citations:
            if row_id in ranked:
                first_fact.setdefault(row_id, index)
    return sorted(
        (ranked[row_id] for row_id in first_fact), key=lambda item: (first_fact[item.row.row_id], *_rank_key(item))
    )


class _Selection:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.rows: list[FusedRow] = []
        self.seen: set[str] = set()
        self.collapsed: list[tuple[str, str]] = []

    @property
    def full(self) -> bool:
        return len(self.rows) >= self.limit

    def take(self, item: _Ranked, source: FusedSource) -> bool:
        row = item.row
        if row.row_id in self.seen or self.full:
            return False
        self.seen.add(row.row_id)
        twin = next(
            (kept.row for kept in self.rows if is_same_date_paraphrase(kept.row, row) or is_restatement(row, kept.row)),
            None,
        )
        if twin is not None:
            self.collapsed.append((row.row_id, twin.row_id))
            return False
        # Statements taken before it that it says in full give it their place (the best score).
        restated = [kept for kept in self.rows if is_restatement(kept.row, row)]
        self.rows = [kept for kept in self.rows if kept not in restated]
        self.collapsed += [(kept.row.row_id, row.row_id) for kept in restated]
        self.rows.append(FusedRow(row, source, max([item.score, *(kept.score for kept in restated)])))
        return True


def fuse(
    rows: Iterable[RowCandidate], facts: Sequence[FactCandidate], plan: Plan, *, limit: int | None = None
) -> FusionResult:
    """The returned evidence rows, by score: cited rows up to their budget, base rows up to theirs, fill up to ``limit``.

    ``facts`` are the rendered facts in rank order (e.g. ``[s.fact for s in rank_facts(...)]``);
    ``limit`` is the request's row limit, the two budgets together by default.
    """
    budgets = plan.budgets
    selection = _Selection(budgets.total_rows if limit is None else max(limit, 0))
    ranked = _unique_rows(rows, plan)
    cited = _cited(ranked, facts)

    taken = 0
    for item in cited:
        if taken >= budgets.cited_rows:
            break
        taken += selection.take(item, "cited")

    taken = 0
    for item in sorted((item for item in ranked.values() if item.base), key=_rank_key):
        if taken >= budgets.base_rows:
            break
        taken += selection.take(item, "base")

    for item in [*cited, *sorted(ranked.values(), key=_rank_key)]:
        if selection.full:
            break
        selection.take(item, "fill")

    # The budgets choose which rows are returned; the score alone orders them (ADR 0060): a cited
    # row shares the question's entities, not always its relation, and first places are read first.
    ordered = sorted(selection.rows, key=lambda fused: -fused.score)
    return FusionResult(rows=tuple(ordered), collapsed=tuple(selection.collapsed), rows_inspected=len(ranked))
