"""Citation-balanced fusion and token budgets (paper §2.4, A.3): pure functions, no database needed."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime

import pytest

from apps.retrieval.fusion import (
    ANCHOR_ORDER_WEIGHT,
    CONTEXT_WEIGHT,
    DATED_EVENT_WEIGHT,
    LATER_PASSAGE_WEIGHT,
    LEADING_PASSAGES,
    OTHER_SPEAKER_WEIGHT,
    PARAPHRASE_JACCARD,
    SPECIFICITY_BOUNDS,
    UNMATCHED_PASSAGE_WEIGHT,
    asks_what_happened,
    count_tokens,
    fact_ranks,
    fuse,
    is_restatement,
    rank_candidates,
    rerank_score,
    speaker_weights,
    specificity_weights,
    token_jaccard,
    trim_to_token_budget,
    without_restatements,
)
from apps.retrieval.planner import plan_query
from apps.retrieval.types import FactCandidate, FusedRow, Lane, MemoryType, RowCandidate

pytestmark = pytest.mark.unit

PLAN = plan_query("What did Priya paint for her sister?")  # single: B^B = 6, B^R = 4
MAY_3 = datetime(2023, 5, 3, 14, 0)
MAY_9 = datetime(2023, 5, 9, 10, 0)


def _row(
    row_id: str,
    text: str = "",
    *,
    lane: Lane = "base",
    rank: int | None = None,
    kind: MemoryType = "episodic",
    when: datetime | None = None,
) -> RowCandidate:
    return RowCandidate(
        row_id=row_id,
        memory_type=kind,
        text=text or f"row {row_id}",
        event_time=None,
        mention_time=when,
        created_at=datetime(2024, 1, 1),
        chunk_id=None,
        session_id=None,
        lane=lane,
        vector_rank=rank,
        lexical_score=0.0,
    )


def _fact(frame_id: str, citations: list[str]) -> FactCandidate:
    return FactCandidate(
        frame_id=frame_id,
        predicate="paint",
        roles=[("agent", "priya", "Priya"), ("theme", "mural", "mural")],
        literals={},
        event_time=None,
        event_time_precision="day",
        mention_time=None,
        status="done",
        citations=citations,
        kind="episodic",
    )


def _sources(result_rows: tuple[FusedRow, ...]) -> Counter[str]:
    return Counter(fused.source for fused in result_rows)


def test_at_most_r_cited_then_b_base_rows() -> None:
    cited = [_row(f"c{i}", lane="relation") for i in range(7)]
    base = [_row(f"b{i}", rank=i) for i in range(10)]
    facts = [_fact("f1", ["c0", "c1", "c2"]), _fact("f2", ["c3", "c4", "c5", "c6"])]
    result = fuse([*base, *cited], facts, PLAN)
    assert _sources(result.rows) == {"cited": 4, "base": 6}
    assert {fused.row.row_id for fused in result.rows if fused.source == "cited"} == {"c0", "c1", "c2", "c3"}
    # Returned by score (ADR 0060): the ranked base rows first, then the unranked cited rows in fact order.
    assert result.row_ids == ("b0", "b1", "b2", "b3", "b4", "b5", "c0", "c1", "c2", "c3")
    assert result.rows_inspected == 17


def test_a_cited_row_that_shares_only_the_entity_does_not_take_the_first_place() -> None:
    # The fact cites a row that ranks low; a base row that matches the question ranks first.
    weak_cited = _row("c0", lane="relation", rank=8)
    strong = _row("b0", rank=0)
    result = fuse([weak_cited, strong, *(_row(f"b{i}", rank=i) for i in range(1, 4))], [_fact("f1", ["c0"])], PLAN)
    assert result.row_ids[0] == "b0"
    assert "c0" in result.row_ids  # still returned: the fact it supports stays verifiable
    scores = [fused.score for fused in result.rows]
    assert scores == sorted(scores, reverse=True)


def test_a_larger_limit_fills_beyond_the_budgets_but_never_relabels() -> None:
    cited = [_row(f"c{i}", lane="relation") for i in range(7)]
    base = [_row(f"b{i}", rank=i) for i in range(10)]
    result = fuse([*base, *cited], [_fact("f1", [f"c{i}" for i in range(7)])], PLAN, limit=14)
    sources = _sources(result.rows)
    assert sources["cited"] == PLAN.budgets.cited_rows and sources["base"] == PLAN.budgets.base_rows
    assert sources["fill"] == 4
    # Leftover cited rows fill first, so they are among the fill rows ahead of other base rows.
    assert {fused.row.row_id for fused in result.rows if fused.source == "fill"} == {"c4", "c5", "c6", "b6"}


def test_missing_cited_rows_leave_room_to_fill_from_either_lane() -> None:
    cited = [_row("c0", lane="relation"), _row("c1", lane="relation")]
    uncited_relation = [_row(f"r{i}", lane="relation", rank=i) for i in range(4)]
    base = [_row(f"b{i}", rank=i + 10) for i in range(5)]
    result = fuse([*cited, *uncited_relation, *base], [_fact("f1", ["c0", "c1", "missing"])], PLAN)
    assert _sources(result.rows) == {"cited": 2, "base": 5, "fill": 3}
    assert len(result.rows) == PLAN.budgets.total_rows
    assert {fused.row.row_id for fused in result.rows if fused.source == "fill"} == {"r0", "r1", "r2"}


def test_no_duplicate_ids_across_lanes() -> None:
    rows = [
        _row("x", lane="relation"),
        _row("x", rank=0),  # the same row through the base lane
        _row("y", rank=1),
        _row("y", lane="flat", rank=3),
        _row("z", lane="relation"),
    ]
    result = fuse(rows, [_fact("f1", ["x", "x", "z"])], PLAN, limit=20)
    assert sorted(result.row_ids) == ["x", "y", "z"]
    assert result.rows_inspected == 3


def test_types_rank_apart_then_compete_on_one_score() -> None:
    episodic = [_row(f"e{i}", rank=i) for i in range(5)]
    semantic = [_row(f"s{i}", rank=i, kind="semantic") for i in range(5)]
    result = fuse([*semantic, *episodic], [], PLAN)
    assert result.row_ids[:6] == ("e0", "s0", "e1", "s1", "e2", "s2")  # equal scores: episodic first
    # A semantic row that also matches the question's words beats episodic rows that do not.
    strong = replace(semantic[3], lexical_rank=0)
    assert fuse([*episodic, *semantic[:3], strong], [], PLAN).row_ids[0] == "s3"


def _similar(row_id: str, similarity: float, text: str, kind: MemoryType = "episodic") -> RowCandidate:
    return replace(_row(row_id, text, kind=kind), similarity=similarity)


def test_candidates_are_ranked_by_similarity_words_and_anchors() -> None:
    rows = [
        _similar("a", 0.9, "We talked about the weather all afternoon."),
        _similar("b", 0.5, "Priya painted a mural of sunflowers for her sister."),
        _similar("c", 0.7, "The gallery opens at noon."),
        _similar("s", 0.2, "Priya: painter", kind="semantic"),
    ]
    ranked = {
        r.row_id: r
        for r in rank_candidates(
            rows,
            PLAN.question,
            mentions={"b": ["priya", "mural"], "c": ["gallery"], "s": ["priya"]},
            anchor_weights={"priya": 0.8, "mural": 0.3, "weather": 0.9},
            context={"a": ["b", "a"]},
        )
    }
    assert [ranked[i].vector_rank for i in "acbs"] == [0, 1, 2, 0]  # each type ranked apart
    assert ranked["b"].anchor_rank == 0 and ranked["s"].anchor_rank == 1  # 1.1 > 0.8
    assert ranked["a"].anchor_rank is None and ranked["c"].anchor_rank is None  # unweighted anchor only
    assert ranked["b"].lexical_rank == 0 and ranked["a"].lexical_rank is None
    assert ranked["a"].context == ("b",)  # itself excluded
    # The row that covers the question's words and anchors outranks the top similarity hit.
    assert rerank_score(ranked["b"]) > rerank_score(ranked["a"])
    order = fuse(ranked.values(), [], PLAN).row_ids
    assert order.index("b") < order.index("a") and order.index("b") < order.index("c")


def test_each_types_similarity_order_is_stretched_over_the_pool() -> None:
    episodic = [_similar(f"e{i}", 0.9 - i / 10, f"turn {i}") for i in range(6)]
    semantic = [_similar("s0", 0.95, "fact one", kind="semantic"), _similar("s1", 0.3, "fact two", kind="semantic")]
    ranked = {
        r.row_id: r.vector_rank
        for r in rank_candidates([*episodic, *semantic], PLAN.question, mentions={}, anchor_weights={})
    }
    # the r-th of a type's n rows stands at r/n of the 8: the second of two semantic rows is
    # not second overall
    assert [ranked[f"e{i}"] for i in range(6)] == [0, 1, 2, 4, 5, 6]
    assert (ranked["s0"], ranked["s1"]) == (0, 4)


def test_a_row_gains_a_share_of_its_best_neighbour() -> None:
    strong = replace(_row("q", rank=0), lexical_rank=0, anchor_rank=0)
    reply = replace(_row("r", rank=6), context=("q",))
    alone = _row("z", rank=5)
    assert rerank_score(alone) > rerank_score(reply)  # on its own, the reply ranks lower
    result = fuse([strong, alone, reply], [], PLAN)
    assert result.row_ids == ("q", "r", "z")
    score = {fused.row.row_id: fused.score for fused in result.rows}
    assert score["r"] == rerank_score(reply) + CONTEXT_WEIGHT * rerank_score(strong)


def test_equally_associated_rows_are_ordered_by_similarity() -> None:
    rows = [_similar(i, s, f"Priya said {i}.") for i, s in (("a", 0.2), ("b", 0.9), ("c", 0.5))]
    ranked = rank_candidates(rows, PLAN.question, mentions={i: ["priya"] for i in "abc"}, anchor_weights={"priya": 1})
    assert {r.row_id: r.anchor_rank for r in ranked} == {"b": 0, "c": 1, "a": 2}


def test_the_anchor_order_weighs_less_than_the_orders_of_what_a_row_says() -> None:
    # A row that only mentions whom the question asks about (first by association, nothing
    # else) against one that says what is asked (first by similarity and by words, no anchor):
    # association alone ranks below either of the others alone (ADR 0117).
    mentions_only = replace(_row("m"), anchor_rank=0)
    says_it = replace(_row("s", rank=0), lexical_rank=0)
    near_only = _row("n", rank=0)
    assert rerank_score(mentions_only) == pytest.approx(ANCHOR_ORDER_WEIGHT * rerank_score(near_only))
    assert rerank_score(mentions_only) < rerank_score(near_only) < rerank_score(says_it)
    assert fuse([mentions_only, near_only, says_it], [], PLAN).row_ids == ("s", "n", "m")
    # Association still adds: between two equally near rows, the one that mentions the anchors leads.
    both = replace(_row("b", rank=1), anchor_rank=0)
    assert fuse([_row("x", rank=1), both], [], PLAN).row_ids[0] == "b"


def test_a_documents_passages_after_its_best_two_keep_half_their_score() -> None:
    # Four passages of one pasted contract lead by similarity; a turn ranks fifth. The contract's
    # third and fourth passages fall behind the turn, its best two stay ahead (ADR 0120), and a
    # second document's best passages keep their full score.
    contract = [replace(_row(f"c{i}", rank=i), passage=True, sources=("paste-1",)) for i in range(4)]
    turn = _row("turn", rank=4)
    lease = [replace(_row(f"l{i}", rank=5 + i), passage=True, sources=("paste-2",)) for i in range(2)]
    result = fuse([*contract, turn, *lease], [], PLAN, limit=10)
    assert result.row_ids[:3] == ("c0", "c1", "turn")
    scores = {row.row.row_id: row.score for row in result.rows}
    assert LEADING_PASSAGES == 2
    assert scores["c2"] == pytest.approx(LATER_PASSAGE_WEIGHT * rerank_score(contract[2]))
    assert scores["l0"] == pytest.approx(rerank_score(lease[0]))
    assert scores["l1"] == pytest.approx(rerank_score(lease[1]))


def test_a_passage_sharing_no_word_with_the_question_keeps_half_its_score() -> None:
    # A rules document's clause leads by similarity and shares no word with the question; the turn
    # that answers it is second by similarity and matches its words: the turn leads (ADR 0130).
    # A passage that matches the question's words keeps its score.
    rules = replace(_row("rules", rank=0), passage=True, sources=("paste-1",))
    needle = replace(_row("needle", rank=2), passage=True, sources=("paste-1",), lexical_rank=1)
    turn = replace(_row("turn", rank=1), lexical_rank=0)
    result = fuse([rules, needle, turn], [], PLAN, limit=10)
    scores = {row.row.row_id: row.score for row in result.rows}
    assert result.row_ids == ("turn", "needle", "rules")
    assert scores["rules"] == pytest.approx(UNMATCHED_PASSAGE_WEIGHT * rerank_score(rules))
    assert scores["needle"] == pytest.approx(rerank_score(needle))
    # When no candidate shares a word with the question, words say nothing: similarity orders.
    alone = fuse([rules, replace(turn, lexical_rank=None)], [], PLAN, limit=10)
    assert alone.row_ids == ("rules", "turn")


def test_fact_ranks_count_each_row_once_at_its_best_fact() -> None:
    # Facts in rank order cite (a, b), (b, c), (d): b keeps the first fact's place.
    assert fact_ranks(["a", "b", "b", "c", "d"]) == {"a": 0, "b": 1, "c": 2, "d": 3}
    assert fact_ranks([]) == {}


def test_rows_the_ranked_facts_cite_rank_by_fact_order() -> None:
    # Two rows equal on similarity and anchors: the one a better fact cites ranks first (ADR 0076).
    rows = [_similar(i, 0.5, f"Priya went {i}.") for i in ("swim", "camp", "other")]
    mentions = {i: ["priya"] for i in ("swim", "camp", "other")}
    plain = rank_candidates(rows, PLAN.question, mentions=mentions, anchor_weights={"priya": 1})
    assert [r.fact_rank for r in plain] == [None, None, None]
    ranked = rank_candidates(
        rows, PLAN.question, mentions=mentions, anchor_weights={"priya": 1}, fact_order=["camp", "swim"]
    )
    rank = {r.row_id: r.fact_rank for r in ranked}
    assert rank == {"camp": 0, "swim": 1, "other": None}
    score = {r.row_id: rerank_score(r) for r in ranked}
    assert score["camp"] > score["swim"] > score["other"]
    assert fuse(ranked, [], PLAN, limit=3).row_ids[0] == "camp"


def test_rows_of_other_speakers_keep_a_share_when_the_question_names_a_speaker() -> None:
    own = replace(_row("own", rank=3), speaker="Priya")
    other = replace(_row("other", rank=0), speaker="Jon")  # "Thanks, Priya!" by Jon: ranks higher by itself
    about = replace(_row("about", rank=1, kind="semantic"), speaker="Jon")
    unknown = _row("unknown", rank=2)  # no speaker: not weighted
    assert speaker_weights([own, other, about, unknown], PLAN) == {
        "own": 1.0,
        "other": OTHER_SPEAKER_WEIGHT,
        "about": OTHER_SPEAKER_WEIGHT,
        "unknown": 1.0,
    }
    result = fuse([own, other, unknown], [], PLAN)
    assert result.row_ids == ("unknown", "own", "other")  # the best-ranked row falls behind both
    assert {f.row.row_id: f.score for f in result.rows}["other"] == OTHER_SPEAKER_WEIGHT * rerank_score(other)
    # When no candidate is spoken by a named person (every row is the user's), nothing is weighted.
    user = [replace(row, speaker="user") for row in (own, other)]
    assert set(speaker_weights(user, PLAN).values()) == {1.0}
    assert fuse(user, [], PLAN).row_ids == ("other", "own")


@pytest.mark.parametrize(
    ("question", "gathers"),
    [
        ("Which events has Jon participated in to promote his business?", True),  # list, perfect
        ("How many times did Maya visit the theater?", True),  # count, past
        ("When did Caroline go to the support group?", False),  # its message may date it alone
        ("What events does Jon go to?", False),  # how things are now
        ("Where did Efua live before Calgary?", False),  # the state before a change
        ("What did Priya paint for her sister?", False),  # one fact
    ],
)
def test_a_question_that_gathers_what_happened_weighs_rows_that_date_an_event(question: str, gathers: bool) -> None:
    plan = plan_query(question)
    talk = _row("talk", "Networking is so important for a business.", rank=0)
    event = replace(_row("event", "Yesterday I went to a fair to show off my studio.", rank=1), event_time=MAY_3)
    assert asks_what_happened(plan) is gathers
    scores = {f.row.row_id: f.score for f in fuse([talk, event], [], plan).rows}
    weight = DATED_EVENT_WEIGHT if gathers else 1.0
    assert scores == {"talk": rerank_score(talk), "event": pytest.approx(weight * rerank_score(event))}
    assert fuse([talk, event], [], plan).row_ids == (("event", "talk") if gathers else ("talk", "event"))


def test_same_date_paraphrases_collapse() -> None:
    first = _row("a", "Priya painted a sunflower mural for her sister today.", rank=0, when=MAY_3)
    paraphrase = _row("b", "Today Priya painted her sister a sunflower mural!", rank=1, when=MAY_3)
    assert token_jaccard(first.text, paraphrase.text) >= PARAPHRASE_JACCARD
    result = fuse([first, paraphrase], [], PLAN)
    assert result.row_ids == ("a",)
    assert result.collapsed == (("b", "a"),)


def test_the_same_wording_on_another_date_stays() -> None:
    monday = _row("a", "Priya painted a sunflower mural for her sister.", rank=0, when=MAY_3)
    later = _row("b", "Priya painted a sunflower mural for her sister.", rank=1, when=MAY_9)
    undated = _row("c", "Priya painted a sunflower mural for her sister.", rank=2)
    assert fuse([monday, later, undated], [], PLAN).row_ids == ("a", "b", "c")


def test_only_episodic_rows_collapse_and_only_near_duplicates() -> None:
    text = "Priya paints murals for her sister."
    semantic = [
        _row("a", text, rank=0, kind="semantic", when=MAY_3),
        _row("b", text, rank=1, kind="semantic", when=MAY_3),
    ]
    assert fuse(semantic, [], PLAN).row_ids == ("a", "b")
    puppy = _row("c", "Priya adopted a puppy named Max today.", rank=0, when=MAY_3)
    kitten = _row("d", "Priya adopted a kitten named Max today.", rank=1, when=MAY_3)
    assert token_jaccard(puppy.text, kitten.text) < PARAPHRASE_JACCARD
    assert fuse([puppy, kitten], [], PLAN).row_ids == ("c", "d")
    three = _row("e", "Priya said she painted 3 murals for the school fair this week.", rank=0, when=MAY_3)
    four = _row("f", "Priya said she painted 4 murals for the school fair this week.", rank=1, when=MAY_3)
    assert token_jaccard(three.text, four.text) >= PARAPHRASE_JACCARD  # a single digit is no content stem
    assert fuse([three, four], [], PLAN).row_ids == ("e", "f")  # different quantities never collapse


def test_a_collapsed_row_takes_no_budget() -> None:
    base = [_row("a", "Priya painted a mural today.", rank=0, when=MAY_3)]
    base += [_row("dup", "Today Priya painted a mural.", rank=1, when=MAY_3)]
    base += [_row(f"b{i}", rank=i + 2) for i in range(6)]
    result = fuse(base, [], PLAN)
    assert "dup" not in result.row_ids
    assert _sources(result.rows)["base"] == PLAN.budgets.base_rows


def _said(
    row_id: str, text: str, *, rank: int, kind: MemoryType = "episodic", sources: tuple[str, ...] = ("m1",)
) -> RowCandidate:
    return replace(_row(row_id, text, rank=rank, kind=kind, when=MAY_3), speaker="Melanie", sources=sources)


def test_a_statement_its_message_already_says_collapses_into_it() -> None:
    """ADR 0102: the writers' statement of a message adds nothing beside a taken row of that
    message that holds its words in order; the taken row stays, whatever its kind."""
    turn = _said("turn", "Melanie: I just signed up for a pottery class yesterday. [shared an image: a vase]", rank=0)
    fact = _said("fact", "Melanie: I just signed up for a pottery class yesterday.", rank=1, kind="semantic")
    assert is_restatement(fact, turn) and not is_restatement(turn, fact)
    result = fuse([turn, fact], [], PLAN)
    assert result.row_ids == ("turn",)
    assert result.collapsed == (("fact", "turn"),)
    log = replace(
        _said(
            "passage",
            "09:14 deploy #1057 to eu-west failed: out of memory\n09:20 deploy #1058 to eu-west succeeded",
            rank=0,
        ),
        speaker="",
        passage=True,
    )
    line = _said(
        "line",
        "deploy-bot, about eu-west: 09:14 deploy #1057 to eu-west failed: out of memory",
        rank=1,
        kind="semantic",
    )
    assert fuse([log, replace(line, speaker="eu-west")], [], PLAN).row_ids == ("passage",)


def test_a_statement_that_says_more_or_comes_from_elsewhere_stays() -> None:
    turn = _said("turn", "Melanie: I just signed up for a pottery class yesterday. [shared an image: a vase]", rank=0)
    kept = [
        # another message says the same words
        _said(
            "elsewhere",
            "Melanie: I just signed up for a pottery class yesterday.",
            rank=1,
            kind="semantic",
            sources=("m2",),
        ),
        # a label that says who it is about
        _said(
            "about",
            "Melanie, about her daughter: I just signed up for a pottery class yesterday.",
            rank=2,
            kind="semantic",
        ),
        # the same words in another order
        _said("order", "Melanie: Yesterday I just signed up for a pottery class.", rank=3, kind="semantic"),
        # replaced since: its currency is news beside a current row
        replace(
            _said("old", "Melanie: I just signed up for a pottery class yesterday.", rank=4, kind="semantic"),
            superseded_by="x",
        ),
    ]
    assert fuse([turn, *kept], [], PLAN).row_ids == ("turn", "elsewhere", "about", "order", "old")
    # The message's own row is never dropped for a statement taken before it (its details are the
    # whole message): the statement is, and the row takes its place.
    fact = _said("fact", "Melanie: We leased a car!", rank=0, kind="semantic")
    leased = _said("leased", "Melanie: We leased a car!", rank=1)
    # far behind: its rarer words weigh more among three rows (ADR 0123)
    other = _said("other", "Melanie: We went to the beach.", rank=8, sources=("m2",))
    result = fuse([fact, leased, other], [], PLAN)
    assert result.row_ids == ("leased", "other")
    assert result.rows[0].score == rerank_score(fact) > rerank_score(leased)
    assert result.collapsed == (("fact", "leased"),)


def test_rows_in_order_without_the_statements_another_says() -> None:
    turn = _said("turn", "Melanie: I just signed up for a pottery class yesterday. [shared an image: a vase]", rank=0)
    fact = _said("fact", "Melanie: I just signed up for a pottery class yesterday.", rank=1, kind="semantic")
    twin = _said("twin", "Melanie: I just signed up for a pottery class yesterday.", rank=2, kind="semantic")
    assert [row.row_id for row in without_restatements([fact, turn])] == ["turn"]
    assert [row.row_id for row in without_restatements([fact, twin])] == ["twin"]  # of two alike, one stays


def test_count_tokens_counts_words_and_punctuation() -> None:
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("Priya's 3 kids.") == 6  # Priya ' s 3 kids .
    assert count_tokens("") == 0


def test_trimming_to_a_token_budget_is_deterministic() -> None:
    rows = [_row("a", "one two three"), _row("b", "one two three four five six"), _row("c", "one two")]
    kept = trim_to_token_budget(rows, 6, text=lambda row: row.text)
    assert [row.row_id for row in kept] == ["a", "c"]  # b does not fit and is skipped whole
    assert kept == trim_to_token_budget(rows, 6, text=lambda row: row.text)
    assert sum(count_tokens(row.text) for row in kept) <= 6
    assert trim_to_token_budget(rows, 0, text=lambda row: row.text) == []
    assert [row.row_id for row in trim_to_token_budget(rows, 100, text=lambda row: row.text)] == ["a", "b", "c"]


def test_a_documents_passages_rank_their_similarity_among_passages() -> None:
    turns = [_similar(f"t{i}", 0.7 - i / 20, f"turn {i}") for i in range(3)]
    passages = [replace(_similar(f"p{i}", 0.4 - i / 10, f"passage {i}"), passage=True) for i in range(2)]
    ranked = {
        r.row_id: r.vector_rank
        for r in rank_candidates([*turns, *passages], PLAN.question, mentions={}, anchor_weights={})
    }
    # Below every turn by raw similarity, the best passage still heads its own order.
    assert [ranked[f"t{i}"] for i in range(3)] == [0, 1, 3]
    assert (ranked["p0"], ranked["p1"]) == (0, 2)


def test_a_row_matching_only_the_asked_names_has_no_lexical_rank() -> None:
    rows = [
        _row("name", "Lyon Nadia is a calmer person, Nadia says."),
        _row("fact", "My mum Helena made me take a blanket."),
        _row("other", "We talked about the weather."),
    ]
    ranked = {
        r.row_id: r.lexical_rank
        for r in rank_candidates(
            rows, "What is the name of Nadia's mum?", mentions={}, anchor_weights={}, names=("Nadia",)
        )
    }
    assert ranked == {"name": None, "fact": 0, "other": None}
    without = {
        r.row_id: r.lexical_rank
        for r in rank_candidates(rows, "What is the name of Nadia's mum?", mentions={}, anchor_weights={})
    }
    assert without["name"] is not None


def test_a_passage_heads_the_order_only_when_it_stands_out_from_its_document() -> None:
    # three turns the question is about, and twelve it is not
    turns = [
        _similar(f"t{i}", s, f"turn {i}")
        for i, s in enumerate([0.78, 0.74, 0.70, *(0.45 - i / 100 for i in range(12))])
    ]

    def ranks(similarities: list[float]) -> dict[str, int | None]:
        passages = [replace(_similar(f"p{i}", s, f"passage {i}"), passage=True) for i, s in enumerate(similarities)]
        ranked = rank_candidates([*turns, *passages], PLAN.question, mentions={}, anchor_weights={})
        return {r.row_id: r.vector_rank for r in ranked}

    standing_out = ranks([0.48, 0.22, 0.21, 0.20, 0.19, 0.18])  # the one passage the question is about
    assert standing_out["p0"] <= standing_out["t1"] and standing_out["p1"] > standing_out["t2"]
    even = ranks([0.30, 0.29, 0.28, 0.27, 0.26, 0.25])  # a document the question is not about
    assert even["p0"] > even["t2"]  # behind the turns the question is about


def test_beside_passages_a_statement_stands_where_its_spread_puts_it_among_the_turns() -> None:
    # turns the question is about and turns it is not; a handbook's passages; statements of which
    # the best only names the handbook's company (ADR 0082)
    turns = [
        _similar(f"t{i}", s, f"turn {i}")
        for i, s in enumerate([0.45, 0.34, 0.29, *(0.25 - i / 100 for i in range(12))])
    ]
    statements = [
        _similar(f"s{i}", s, f"statement {i}", kind="semantic")
        for i, s in enumerate([0.44, 0.30, 0.30, 0.29, 0.19, 0.18, 0.17])
    ]

    def ranks(with_passages: bool) -> dict[str, int | None]:
        similarities = [0.56, 0.30, 0.29, 0.28, 0.27, 0.26] if with_passages else []
        passages = [replace(_similar(f"p{i}", s, f"passage {i}"), passage=True) for i, s in enumerate(similarities)]
        ranked = rank_candidates([*turns, *statements, *passages], PLAN.question, mentions={}, anchor_weights={})
        return {r.row_id: r.vector_rank for r in ranked}

    beside = ranks(with_passages=True)
    assert 0 < beside["s0"] and beside["p0"] <= beside["s0"]  # no longer ahead of the passage that stands out
    assert beside["s0"] <= beside["t2"]  # still among the turns the question is about
    alone = ranks(with_passages=False)
    assert alone["s0"] == 0  # without passages, statements keep their stretched order (ADR 0020)


def test_of_rows_alike_in_every_order_the_one_that_names_something_the_others_do_not_leads() -> None:
    # Four of Melanie's turns tie on every order; the one that names a place and what happened
    # there says what the others do not, and leads (ADR 0123).
    texts = {
        "thanks": "Melanie: Thanks, Caroline! Your support means a lot to me.",
        "support": "Melanie: Your support means a lot, thanks so much!",
        "museum": "Melanie: I took the kids to the dinosaur museum yesterday.",
        "lot": "Melanie: Thanks, that means a lot to me, Caroline.",
    }
    rows = [replace(_row(row_id, text, rank=0)) for row_id, text in texts.items()]
    weights = specificity_weights(rows)
    assert weights["museum"] > 1.0 > weights["lot"]
    assert all(SPECIFICITY_BOUNDS[0] <= w <= SPECIFICITY_BOUNDS[1] for w in weights.values())
    result = fuse(rows, [], PLAN, limit=4)
    assert result.row_ids[0] == "museum"
    assert {row.row.row_id: row.score for row in result.rows}["museum"] == pytest.approx(
        weights["museum"] * rerank_score(rows[2])
    )


def test_rows_without_any_content_word_keep_their_scores() -> None:
    rows = [_row("a", "What is it?", rank=0), _row("b", "And you?", rank=1)]
    assert specificity_weights(rows) == {"a": 1.0, "b": 1.0}
