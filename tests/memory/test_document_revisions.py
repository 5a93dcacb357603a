"""A document pasted or uploaded again, changed, replaces its earlier version (ADR 0101): the new
resource supersedes the old, each new passage the passage it revises, and a question about a
changed value gets the new passage first, the old one after it marked not current. Through
the API, local providers."""

from __future__ import annotations

import threading
import time
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from apps.memory.models import EpisodicEvent, ResourceItem
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant

SECTIONS = [
    ("Annual leave", "Full-time staff receive 27 days of paid annual leave per calendar year, plus public holidays."),
    ("Sick leave", "A doctor's note is required from the eighth calendar day of sickness."),
    ("Remote work", "Staff may work remotely up to three days a week once they have passed probation."),
    ("Expenses", "Meals while travelling are reimbursed up to 45 euros per day, with receipts."),
    ("Equipment", "A home-office allowance of 600 euros is paid once, with the first salary."),
    ("Parental leave", "Partners receive 10 weeks of fully paid leave during the child's first year."),
    ("Learning", "Each employee has a learning budget of 1,200 euros a year for courses and books."),
    ("On-call", "Engineers on the on-call rota are paid a stipend of 250 euros per week on call."),
    ("Pension", "Employees join the pension scheme automatically after their first month of service."),
    ("Office", "The Lisbon office is open from 07:30 to 20:00 on weekdays; bicycles go in the basement."),
]
# Long enough to be passages of its own, which version 5 cuts.
OFFICE = " ".join(
    f"Floor {floor} of the Lisbon office has {floor + 3} meeting rooms named after rivers, a kitchen restocked "
    f"on {day}, and {floor * 4} standing desks booked through the front desk by 10:00."
    for floor, day in enumerate(("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"), start=1)
)
BOILER = (
    "This section applies to every employee of Northwind Labs, whatever their contract or team, unless a "
    "local addendum says otherwise. Questions about it go to the People team, who answer within two working "
    "days, and managers explain each change to their teams at the next team meeting."
)


def handbook(version: int, sections: list[tuple[str, str]] = SECTIONS) -> str:
    parts = [f"Northwind Labs employee handbook, version {version}"]
    parts += [
        f"{n}. {title}\n{body} The {title.lower()} rules were agreed with the staff council in {2000 + len(title)}. "
        f"Exceptions to the {title.lower()} rules need the written approval of a director.\n\n{BOILER}"
        for n, (title, body) in enumerate(sections, start=1)
    ]
    if any(title == "Office" for title, _ in sections):
        parts.append(f"Appendix: the office floors\n\n{OFFICE}")
    return "\n\n".join(parts)


def revised() -> str:
    """Version 5: two values changed, the office section cut, a section added."""
    sections = [(title, body) for title, body in SECTIONS if title != "Office"]
    sections.append(("Volunteering", "Everyone can take two paid volunteering days a year for a registered charity."))
    return handbook(5, sections).replace("27 days", "30 days").replace("250 euros", "300 euros")


def _paste(tenant: Tenant, subject: str, intro: str, text: str) -> dict[str, Any]:
    return tenant.write(subject, {"messages": [{"role": "user", "content": f"{intro}\n\n{text}"}]}, index=True)


def _resource_id(answer: dict[str, Any]) -> str:
    return next(record["id"] for record in answer["records"] if record["type"] == "resource")


def _search(tenant: Tenant, subject: str, question: str) -> list[dict[str, Any]]:
    found = tenant.client().post(f"/v1/subjects/{subject}/search", {"query": question}, format="json")
    assert found.status_code == 200, found.content
    return found.json()["rows"]  # type: ignore[no-any-return]


def _two_versions() -> tuple[Tenant, str, str]:
    """A tenant whose subject sam pasted the handbook, then its revision: (tenant, old, new) resource ids."""
    tenant = make_tenant()
    tenant.subject("sam")
    first = _paste(tenant, "sam", "Here is our handbook:", handbook(4))
    second = _paste(tenant, "sam", "The handbook was updated, here is the new one:", revised())
    return tenant, _resource_id(first), _resource_id(second)


def test_a_revised_paste_replaces_the_earlier_version_passage_by_passage() -> None:
    tenant, old_id, new_id = _two_versions()

    old = tenant.client().get(f"/v1/subjects/sam/memories/resource/{old_id}").json()
    assert (old["current"], old["superseded_by"]) == (False, new_id)
    history = tenant.client().get(f"/v1/subjects/sam/memories/resource/{old_id}/history").json()["results"]
    assert [row["id"] for row in history] == [new_id, old_id]  # the document's versions, newest first
    for question, new_value, old_value in (
        ("How many days of annual leave do I get?", "30 days", "27 days"),
        ("How much is the on-call stipend?", "300 euros", "250 euros"),
    ):
        rows = _search(tenant, "sam", question)
        assert new_value in rows[0]["text"] and rows[0]["current"] is True, [r["text"][:50] for r in rows[:3]]
        stale = [row for row in rows if old_value in row["text"]]
        # The old passage, and the fact the writers read from the old version, read as replaced:
        # by the passage that revises it, else by the new version.
        assert stale and all(row["current"] is False for row in stale), [(r["type"], r["current"]) for r in stale]
        assert {row["superseded_by"] for row in stale} <= {new_id, *(r["id"] for r in rows if new_value in r["text"])}
        assert rows.index(stale[0]) > 0
    with organization_scope(tenant.id):
        old_passages = list(EpisodicEvent.objects.filter(resource_id=old_id))
        new_passages = list(EpisodicEvent.objects.filter(resource_id=new_id))
    revised_ids = {str(row.supersedes_id) for row in new_passages if row.supersedes_id}
    assert revised_ids and revised_ids <= {str(row.id) for row in old_passages}
    # Every old passage now reads as replaced: by the passage that revises it, or (cut) by the version.
    listed = (
        tenant.client()
        .get("/v1/subjects/sam/memories", {"type": "episodic", "include_superseded": "true", "limit": 100})
        .json()["results"]
    )
    marks = {row["id"]: (row["current"], row["superseded_by"]) for row in listed}
    assert all(marks[str(row.id)][0] is False for row in old_passages)
    cut = [row for row in old_passages if str(row.id) not in revised_ids]
    assert any("meeting rooms named after rivers" in row.summary for row in cut)
    assert all(marks[str(row.id)] == (False, new_id) for row in cut)  # replaced by the version
    assert all(marks[str(row.id)][0] is True for row in new_passages)


def test_another_document_and_another_subjects_copy_are_not_revisions() -> None:
    tenant = make_tenant()
    tenant.subject("sam")
    tenant.subject("ana")
    first = _paste(tenant, "sam", "Here is our handbook:", handbook(4))
    other = "\n\n".join(f"{n}. Recipe step\nStir the sauce for {n + 3} minutes and season it well." for n in range(60))
    _paste(tenant, "sam", "My cookbook notes:", other)
    theirs = _paste(tenant, "ana", "Our handbook:", handbook(4))
    with organization_scope(tenant.id):
        assert not ResourceItem.objects.filter(supersedes__isnull=False).exists()
    assert tenant.client().get(f"/v1/subjects/sam/memories/resource/{_resource_id(first)}").json()["current"] is True
    assert tenant.client().get(f"/v1/subjects/ana/memories/resource/{_resource_id(theirs)}").json()["current"] is True


def test_an_uploaded_revision_replaces_a_pasted_version() -> None:
    tenant = make_tenant()
    tenant.subject("sam")
    first = _paste(tenant, "sam", "Here is our handbook:", handbook(4))
    upload = tenant.client().post(
        "/v1/subjects/sam/memories",
        {"file": SimpleUploadedFile("handbook-v5.txt", revised().encode(), "text/plain"), "title": "Handbook v5"},
        format="multipart",
    )
    assert upload.status_code == 202, upload.content
    old = tenant.client().get(f"/v1/subjects/sam/memories/resource/{_resource_id(first)}").json()
    assert (old["current"], old["superseded_by"]) == (False, _resource_id(upload.json()))


def test_two_revisions_at_once_chain_instead_of_forking(settings: Any) -> None:
    """The second waits for the first's subject write lock, then revises the first (ADR 0101):
    one chain v4 ← A ← B, never two rows superseding v4 (the unique constraint would refuse it)."""
    tenant = make_tenant()
    tenant.subject("sam")
    first = _paste(tenant, "sam", "Here is our handbook:", handbook(4))
    settings.FAULT_PAUSES = {"memory.write.before_commit": 2}
    answers: dict[str, Any] = {}

    def paste(name: str, text: str) -> None:
        try:
            body = {"messages": [{"role": "user", "content": text}]}
            answers[name] = tenant.client().post("/v1/subjects/sam/memories", body, format="json")
        finally:
            connection.close()

    a = threading.Thread(target=paste, args=("a", revised()))
    a.start()
    time.sleep(0.5)  # A holds the lock, paused before its commit
    paste("b", revised().replace("300 euros", "320 euros"))
    a.join()

    assert answers["a"].status_code == answers["b"].status_code == 202, (answers["a"].content, answers["b"].content)
    v4, a_id, b_id = _resource_id(first), _resource_id(answers["a"].json()), _resource_id(answers["b"].json())
    with organization_scope(tenant.id):
        supersedes = dict(ResourceItem.objects.values_list("id", "supersedes_id"))
    assert {str(k): str(v) if v else None for k, v in supersedes.items()} == {v4: None, a_id: v4, b_id: a_id}


def test_deleting_the_new_version_makes_the_old_one_current_again() -> None:
    tenant, old_id, new_id = _two_versions()
    deleter = tenant.client(tenant.issue_key(["memories:read", "memories:delete"]))
    deleted = deleter.post(
        "/v1/subjects/sam/memories/delete", {"ids": [{"type": "resource", "id": new_id}]}, format="json"
    )
    assert deleted.status_code == 200, deleted.content
    assert tenant.client().get(f"/v1/subjects/sam/memories/resource/{old_id}").json()["current"] is True
    rows = _search(tenant, "sam", "How many days of annual leave do I get?")
    assert "27 days" in rows[0]["text"] and rows[0]["current"] is True  # the old version answers again
    assert not any("30 days" in row["text"] for row in rows)
