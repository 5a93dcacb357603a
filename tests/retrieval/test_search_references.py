"""A question's numbered reference finds the part of a long document that has it (ADR 0098):
"under clause 17" puts the passage with clause 17 first, even among hundreds of clauses that
say nearly the same thing. Through the API, local providers."""

from __future__ import annotations

import random
from typing import Any

from apps.memory.filters import parse_filters
from apps.memory.models import EpisodicEvent
from apps.retrieval import reads
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant

TOPICS = ("report damage", "pay the rent", "give notice before leaving", "return the keys", "request repairs")


def _lease(clauses: int, seed: int) -> str:
    """A pasted lease of near-identical numbered clauses; each names a section of the general
    terms, so "section N" is in many of them."""
    rng = random.Random(seed)
    return "Here is my lease, keep it:\n\n" + "\n\n".join(
        f"Clause {n}. The tenant shall {TOPICS[n % len(TOPICS)]} to the landlord in writing within "
        f"{rng.randint(2, 60)} days, and the landlord shall acknowledge receipt within {rng.randint(2, 9)} "
        f"working days. This clause is governed by section {n % 12 + 1} of the general terms."
        for n in range(1, clauses + 1)
    )


def _rows(tenant: Tenant, subject: str, question: str, **extra: Any) -> list[dict[str, Any]]:
    found = tenant.client().post(f"/v1/subjects/{subject}/search", {"query": question, **extra}, format="json")
    assert found.status_code == 200, found.content
    return found.json()["rows"]


def _has_clause(row: dict[str, Any], number: int) -> bool:
    return f"Clause {number}. " in row["text"]


def test_a_numbered_reference_puts_the_part_that_has_it_first() -> None:
    tenant = make_tenant()
    tenant.subject("lena")
    tenant.write("lena", {"messages": [{"role": "user", "content": _lease(160, seed=3)}]}, index=True)

    for number in (17, 48, 131):
        rows = _rows(tenant, "lena", f"How many days to report damage under clause {number}?")
        assert rows and _has_clause(rows[0], number), [row["text"][:60] for row in rows[:3]]
        assert rows[0]["provenance"]["resource"] is not None  # a passage of the pasted lease
    # Within a caller's token budget too: the referenced passage is what fills it first.
    rows = _rows(tenant, "lena", "What does clause 99 say?", token_budget=400)
    assert rows and _has_clause(rows[0], 99)


def test_a_paste_shorter_than_a_document_is_searched_passage_by_passage() -> None:
    """ADR 0100: a 10,000-character lease is pasted text, not one turn. A question about one
    clause gets its passage first and within a budget of 1,024 tokens; before, the writer's
    episode of the whole lease (two rows of about 6,800 characters) did not fit at all."""
    tenant = make_tenant()
    tenant.subject("lena")
    lease = _lease(40, seed=9).replace(
        "\n\nClause 21.", "\n\nClause 40b. The tenant may keep one cat named Miso.\n\nClause 21."
    )
    assert 3_000 < len(lease) < 20_000
    tenant.write("lena", {"messages": [{"role": "user", "content": lease}]}, index=True)

    for question, part in (
        ("How many days to report damage under clause 17?", "Clause 17. "),
        ("What does clause 33 say?", "Clause 33. "),
        ("Can the tenant keep a cat?", "cat named Miso"),
    ):
        rows = _rows(tenant, "lena", question, token_budget=1_024)
        assert rows and part in rows[0]["text"], [row["text"][:60] for row in rows[:3]]
        assert all(len(row["text"]) <= 1_400 for row in rows)


def test_a_reference_many_parts_share_identifies_none_of_them() -> None:
    tenant = make_tenant()
    subject = tenant.subject("lena")
    tenant.write("lena", {"messages": [{"role": "user", "content": _lease(160, seed=5)}]}, index=True)
    with organization_scope(tenant.id):
        [clause] = reads.referenced_row_ids(subject=subject, references=["clause 17"])
        passage = EpisodicEvent.objects.get(id=clause)
        # "section 4" is named by every twelfth clause, in more passages than identify a part.
        shared = reads.referenced_row_ids(subject=subject, references=["section 4", "clause 18"])
        # A filter applies: no row of another session is referenced.
        other_session = reads.referenced_row_ids(
            subject=subject, references=["clause 17"], where=parse_filters({"session_id": "another"})
        )
        shared_text = EpisodicEvent.objects.get(id=shared[0]).summary if len(shared) == 1 else ""
    assert "Clause 17. " in passage.summary and passage.resource_id is not None
    assert "Clause 18. " in shared_text
    assert other_session == []


def test_another_subjects_and_another_tenants_rows_are_never_referenced() -> None:
    tenant, other = make_tenant(), make_tenant()
    tenant.subject("lena")
    tenant.subject("omar")
    other.subject("lena")
    tenant.write("omar", {"messages": [{"role": "user", "content": "Invoice 4471 was paid in cash."}]}, index=True)
    other.write("lena", {"messages": [{"role": "user", "content": "Invoice 4471 was paid by card."}]}, index=True)
    tenant.write("lena", {"messages": [{"role": "user", "content": "The hall lamp cost 4471 pennies."}]}, index=True)

    rows = _rows(tenant, "lena", "How was invoice 4471 paid?")
    assert all("Invoice" not in row["text"] for row in rows)
    with organization_scope(tenant.id):
        lena = Subject.objects.get(external_id="lena")
        # The reference's word is the phrase's too: "once" is a stop word of the text search,
        # and the number alone ("4471", in the lamp's row) is no reference.
        assert reads.referenced_row_ids(subject=lena, references=["once 4471"]) == []
        assert reads.referenced_row_ids(subject=lena, references=["invoice 4471"]) == []
    # The other tenant's key reads its own subject "lena", never this tenant's.
    other_rows = _rows(other, "lena", "How was invoice 4471 paid?")
    assert other_rows and "paid by card" in other_rows[0]["text"]
    assert all("cash" not in row["text"] for row in other_rows)
