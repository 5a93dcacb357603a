"""An anchor's rows: its newest mentions ranked by the vectors kept beside the adjacency index,
with a deeper scan for the anchors a question names."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.graph import adjacency
from apps.graph.models import AnchorRow
from apps.retrieval import reads
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.graph.test_adjacency import _anchor, _write_graph
from tests.retrieval.test_row_reads import MODEL, _episodic


def test_a_named_anchor_is_scanned_deeper_and_the_evidence_tables_are_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reads, "ANCHOR_ROW_SCAN", 3)
    monkeypatch.setattr(reads, "NAMED_ROW_SCAN", 6)
    tenant, other = make_tenant(), make_tenant()
    subject = tenant.subject()
    question = [1.0, 0.0, 0.0]
    with organization_scope(tenant.id), transaction.atomic():
        # Oldest first: the nearest row is the oldest, the farthest the newest.
        rows = [_episodic(subject, f"turn {i}", [1.0, 0.1 * i, 0.0]) for i in range(8)]
        unembedded = _episodic(subject, "no vector", None)
        ids = [str(r.id) for r in [*rows, unembedded]]
        adjacency.add_mentions(
            organization_id=tenant.id, subject_id=subject.id, mentions=[("ana", "episodic", i) for i in ids]
        )
        with CaptureQueriesContext(connection) as queries:
            shallow = reads.anchor_rows(subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=2)
        deep = reads.anchor_rows(
            subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=2, scans=[reads.NAMED_ROW_SCAN]
        )
        wide = reads.anchor_rows(subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=10, scans=[6])
    with organization_scope(other.id), transaction.atomic():
        foreign = reads.anchor_rows(
            subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=2, scans=[reads.NAMED_ROW_SCAN]
        )
    # The 3 newest mentions are the unembedded row and turns 7 and 6: the nearest of them.
    assert shallow == {"ana": {"episodic": [ids[6], ids[7]], "semantic": []}}
    # Six newest reach turn 3, nearer than any newer one.
    assert deep == {"ana": {"episodic": [ids[3], ids[4]], "semantic": []}}
    assert wide["ana"]["episodic"] == [ids[3], ids[4], ids[5], ids[6], ids[7]]  # no vector: never ranked
    assert foreign == {"ana": {"episodic": [], "semantic": []}}  # another organization sees nothing
    statements = " ".join(q["sql"] for q in queries.captured_queries)
    assert "graph_anchor_row" in statements and "memory_episodic_event" not in statements


def test_anchor_candidates_scan_the_question_s_named_anchors_deeper_and_by_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reads, "ANCHOR_ROW_SCAN", 2)
    monkeypatch.setattr(reads, "NAMED_ROW_SCAN", 5)
    seen: list[tuple[list[int], list[int]]] = []
    original = reads.anchor_rows

    def recording(**kwargs):  # type: ignore[no-untyped-def]
        seen.append((list(kwargs["scans"]), list(kwargs["by_words"])))
        return original(**kwargs)

    monkeypatch.setattr(reads, "anchor_rows", recording)
    tenant = make_tenant()
    subject = tenant.subject()
    _write_graph(subject, [_anchor(subject, "ana", []), _anchor(subject, "bo", [])], [])
    recalled = [reads.AnchorRecall(anchor_key=k, name=k, type="person", similarity=0.5) for k in ("ana", "bo")]
    with organization_scope(tenant.id), transaction.atomic():
        for words in ("grooming or essential", ""):
            reads.anchor_candidates(
                subject=subject,
                recalled=recalled,
                named_keys=[],
                vector=[1.0, 0.0, 0.0],
                model=MODEL,
                deep_keys={"bo"},
                words=words,
            )
    # The named anchor's newest mentions are scanned deeper, and only its rows are matched by words.
    assert seen == [([2, 5], [0, reads.LEXICAL_ROWS_PER_ANCHOR]), ([2, 5], [0, 0])]


def test_an_anchor_s_rows_that_best_match_the_question_s_words_join_its_nearest() -> None:
    tenant, other = make_tenant(), make_tenant()
    subject = tenant.subject()
    question = [1.0, 0.0, 0.0]
    words = "essential or keep or looking or good"
    with organization_scope(tenant.id), transaction.atomic():
        near = _episodic(subject, "a quiet weekend at home", [1.0, 0.0, 0.0])
        grooming = _episodic(subject, "regular grooming is essential to keep them looking good", [0.0, 1.0, 0.0])
        brushing = _episodic(subject, "brushing keeps the coat good", [0.0, 0.9, 0.1])  # fewer of the words
        far = _episodic(subject, "a long drive north", [0.0, 0.0, 1.0])
        ids = [str(r.id) for r in (near, grooming, brushing, far)]
        adjacency.add_mentions(
            organization_id=tenant.id, subject_id=subject.id, mentions=[("ana", "episodic", i) for i in ids]
        )
        nearest = reads.anchor_rows(subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=1)
        worded = reads.anchor_rows(
            subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=1, words=words, by_words=[1]
        )
        unmatched = reads.anchor_rows(
            subject=subject,
            keys=["ana"],
            vector=question,
            model=MODEL,
            per_type=1,
            words="violin or concert",
            by_words=[1],
        )
        unasked = reads.anchor_rows(
            subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=1, words=words, by_words=[0]
        )
        # The mentions' copies of their rows' words decide which rows have them (ADR 0115).
        AnchorRow.objects.filter(subject=subject, row_id=grooming.id).update(search_vector=None)
        copied = reads.anchor_rows(
            subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=1, words=words, by_words=[1]
        )
    with organization_scope(other.id), transaction.atomic():
        foreign = reads.anchor_rows(
            subject=subject, keys=["ana"], vector=question, model=MODEL, per_type=1, words=words, by_words=[1]
        )
    assert nearest["ana"]["episodic"] == [ids[0]]
    # The nearest, then the row with most of the question's words, whatever its distance.
    assert worded["ana"]["episodic"] == [ids[0], ids[1]]
    assert unmatched["ana"]["episodic"] == [ids[0]]  # no row has the words: the nearest alone
    assert unasked["ana"]["episodic"] == [ids[0]]  # an anchor the question does not name
    assert copied["ana"]["episodic"] == [ids[0], ids[2]]  # the next best by its copy
    assert foreign == {"ana": {"episodic": [], "semantic": []}}
