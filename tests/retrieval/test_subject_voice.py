"""The subject speaks in its own unnamed turns (ADR 0095): a message sent as ``{"role": "user"}``
with no name is the subject's, its "I" is an anchor named after the subject, and a question
in the first person, by the subject's name or about "the user" reaches the same facts."""

from __future__ import annotations

from typing import Any

import pytest

from apps.graph.admission import speaks_as_subject, subject_speaker
from apps.graph.models import AnchorVector
from apps.retrieval.planner import plan_query, spoken_of
from apps.tenancy import services
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant

SAID = "2024-03-04T09:00:00+00:00"


@pytest.mark.unit
@pytest.mark.parametrize(
    ("display_name", "external_id", "speaker"),
    [
        ("", "ana", "ana"),
        ("", "Ana Silva", "Ana Silva"),
        ("Ana Silva", "u_8f3a91", "Ana Silva"),
        ("", "u_8f3a91", "Subject"),  # an opaque id is no name
        ("", "4f9c2a1e-1b2c-4d5e-8f90-123456789abc", "Subject"),
        ("", "user", "Subject"),  # a dialogue role is never an anchor
        ("  ", "O'Brien", "O'Brien"),
        ("Assistant", "jean-luc", "jean-luc"),  # a display name the gate refuses gives way
    ],
)
def test_the_subject_speaks_under_its_display_name_else_an_id_that_reads_as_a_name_else_as_subject(
    display_name: str, external_id: str, speaker: str
) -> None:
    assert subject_speaker(display_name, external_id) == speaker


@pytest.mark.unit
def test_only_the_user_role_speaks_as_the_subject() -> None:
    assert speaks_as_subject("user") and speaks_as_subject("Human")
    assert not speaks_as_subject("assistant") and not speaks_as_subject("Ana") and not speaks_as_subject(None)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("question", "planned"),
    [
        ("Where do I live?", "Where does Ana live?"),
        ("where do i live now?", "where does Ana live now?"),
        ("Am I allergic to nuts?", "is Ana allergic to nuts?"),
        ("What is the name of my sister's dog?", "What is the name of Ana's sister's dog?"),
        ("What is the user's job?", "What is Ana's job?"),
        ("Where does the user live?", "Where does Ana live?"),
        ("What did I tell you about me?", "What did Ana tell you about Ana?"),
        ("Did Ana Silva move?", "Did Ana move?"),  # another name of the subject
        ("Where does ana work?", "Where does Ana work?"),
        ("Where do we live, i.e. which city?", "Where do we live, i.e. which city?"),  # not only the subject
        ("What does Anabel do?", "What does Anabel do?"),
    ],
)
def test_a_question_about_the_subject_is_planned_in_its_third_person(question: str, planned: str) -> None:
    assert spoken_of(question, "ana", ["Ana Silva", "ana"]) == planned


@pytest.mark.unit
def test_a_first_person_question_names_the_subject_as_the_agent() -> None:
    plan = plan_query(spoken_of("Where did I move?", "ana"))
    assert plan.entities == ("Ana",)
    assert [(hint.key, "agent" in hint.groups) for hint in plan.role_hints] == [("ana", True)]


def _tenant(external_id: str, display_name: str = "", kind: str = "user") -> Tenant:
    tenant = make_tenant()
    with organization_scope(tenant.id):
        services.subject_create(
            organization_id=tenant.id, external_id=external_id, kind=kind, display_name=display_name
        )
    return tenant


def _write(tenant: Tenant, external_id: str, message_id: str, text: str, name: str | None = None) -> dict[str, Any]:
    message = {"id": message_id, "role": "user", "content": text, "timestamp": SAID}
    if name:
        message["name"] = name
    return tenant.write(external_id, {"messages": [message]}, index=True)


def _search(tenant: Tenant, external_id: str, query: str, key: str | None = None) -> dict[str, Any]:
    response = tenant.client(key).post(f"/v1/subjects/{external_id}/search", {"query": query}, format="json")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


def _lived(tenant: Tenant, external_id: str) -> None:
    """Unnamed user turns that move the subject from Porto to Lisbon, among a friend's turn
    (named) about where he lives, and a pasted list of places that only mention cities."""
    _write(tenant, external_id, "m1", "I live in Porto and pay 900 euros rent.")
    _write(tenant, external_id, "m2", "Marco lives in Rome, near the Pantheon.", name="Marco")
    places = "\n\n".join(f"Depot {n} in Braga ships pallets to the coast every {n % 5 + 1} days." for n in range(30))
    _write(tenant, external_id, "m3", f"Keep this list of depots:\n\n{places}")
    _write(tenant, external_id, "m4", "I moved to Lisbon last week.")


def _facts_of(result: dict[str, Any], anchor: str) -> list[dict[str, Any]]:
    return [fact for fact in result["facts"] if any(role["anchor"] == anchor for role in fact["roles"])]


@pytest.mark.parametrize(
    "question", ["Where does Ana live?", "Where do I live?", "Where does the user live now?", "where do i live"]
)
def test_an_unnamed_user_turn_is_the_subjects_fact_and_every_way_of_asking_finds_it(question: str) -> None:
    tenant = _tenant("ana")
    _lived(tenant, "ana")
    result = _search(tenant, "ana", question)
    first = result["rows"][0]
    assert "Lisbon" in first["text"] and first["current"], result["rows"][:3]
    # The graph knows who moved: a fact whose participant is the subject's anchor cites the turn.
    lisbon_rows = {row["id"] for row in result["rows"] if "Lisbon" in row["text"]}
    assert any(set(fact["citations"]) & lisbon_rows for fact in _facts_of(result, "ana")), result["facts"]
    # Porto is no longer where she lives: it is not above Lisbon.
    texts = [row["text"] for row in result["rows"]]
    porto = [i for i, text in enumerate(texts) if "Porto" in text]
    assert all(i > 0 for i in porto)


def test_the_answer_to_a_first_person_question_is_the_current_value_and_cites_it() -> None:
    tenant = _tenant("ana")
    _lived(tenant, "ana")
    response = tenant.client().post("/v1/subjects/ana/answer", {"query": "Where do I live now?"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert "Lisbon" in body["answer"] and "Porto" not in body["answer"], body
    assert body["cited_row_ids"], body


def test_the_display_name_names_the_subject_whose_id_is_opaque() -> None:
    tenant = _tenant("u_8f3a91", display_name="Ana Silva")
    _lived(tenant, "u_8f3a91")
    for question in ("Where does Ana live?", "Where does Ana Silva live?", "Where do I live?"):
        result = _search(tenant, "u_8f3a91", question)
        assert "Lisbon" in result["rows"][0]["text"], (question, result["rows"][:3])
        assert _facts_of(result, "ana silva"), question


def test_another_speaker_of_the_subjects_conversation_keeps_his_own_facts() -> None:
    tenant = _tenant("ana")
    _lived(tenant, "ana")
    result = _search(tenant, "ana", "Where does Marco live?")
    assert "Rome" in result["rows"][0]["text"], result["rows"][:3]
    assert not any("Lisbon" in row["text"] for row in result["rows"][:1])


def test_a_subject_without_a_name_speaks_as_subject() -> None:
    tenant = _tenant("u_8f3a91")
    _lived(tenant, "u_8f3a91")
    for question in ("Where do I live?", "Where does the user live now?"):
        result = _search(tenant, "u_8f3a91", question)
        assert "Lisbon" in result["rows"][0]["text"], (question, result["rows"][:3])
        assert _facts_of(result, "subject"), question


def test_an_agent_subjects_unnamed_user_turns_are_its_users_not_its_own() -> None:
    tenant = _tenant("ana", kind="agent")
    _lived(tenant, "ana")
    result = _search(tenant, "ana", "Where do I live?")
    assert any("Lisbon" in row["text"] for row in result["rows"][:3]), result["rows"][:3]
    assert not _facts_of(result, "ana")


def test_another_tenants_key_finds_nothing_of_the_subject() -> None:
    tenant = _tenant("ana")
    _lived(tenant, "ana")
    other = make_tenant()
    response = other.client().post("/v1/subjects/ana/search", {"query": "Where does Ana live?"}, format="json")
    assert response.status_code == 404, response.content


def test_a_subject_whose_turns_name_their_speaker_is_asked_as_before_unless_its_name_is_theirs() -> None:
    tenant = _tenant("u_8f3a91")
    _write(tenant, "u_8f3a91", "m1", "I adopted a cat named Miso last week.", name="Ana")
    result = _search(tenant, "u_8f3a91", "What is the name of my cat?")
    assert result["plan"]["entities"] == []  # no "Subject" anchor: "my" is no one the service knows
    assert "Miso" in result["rows"][0]["text"]
    named = _tenant("ana")
    _write(named, "ana", "m1", "I adopted a cat named Miso last week.", name="Ana")
    result = _search(named, "ana", "What is the name of my cat?")
    assert result["plan"]["entities"] == ["Ana"]  # the subject's name is its speaker's: "my" is Ana's
    assert "Miso" in result["rows"][0]["text"]


def test_the_noun_subject_in_named_turns_is_not_the_unnamed_subject() -> None:
    tenant = _tenant("u_8f3a91")
    _write(tenant, "u_8f3a91", "m1", "My favourite subject at school was chemistry.", name="Ana")
    with organization_scope(tenant.id):
        assert AnchorVector.objects.filter(anchor_key="subject").exclude(anchor_type="person").exists()
    result = _search(tenant, "u_8f3a91", "What was my favourite subject?")
    assert result["plan"]["entities"] == []
    assert "chemistry" in result["rows"][0]["text"]


def test_the_name_an_unnamed_subject_gives_itself_names_it_in_questions() -> None:
    tenant = _tenant("u_8f3a91")
    _write(tenant, "u_8f3a91", "m1", "Hi! I'm Kwame, I test software for a living.")
    _write(tenant, "u_8f3a91", "m2", "Marco lives in Rome.", name="Marco")
    _write(tenant, "u_8f3a91", "m3", "I live in Winnipeg, in an old house in Wolseley.")
    result = _search(tenant, "u_8f3a91", "Where does Kwame live?")
    assert result["plan"]["entities"] == ["Subject"]  # Kwame is the subject, whose turns say "I"
    assert "Winnipeg" in result["rows"][0]["text"], result["rows"][:3]
    assert "Rome" in _search(tenant, "u_8f3a91", "Where does Marco live?")["rows"][0]["text"]


def test_a_subject_asking_its_own_name_is_answered_from_its_introduction() -> None:
    tenant = _tenant("u_8f3a91")
    _write(tenant, "u_8f3a91", "m1", "Hi! I'm Kwame, I test software for a living.")
    _write(tenant, "u_8f3a91", "m2", "My manager Brenda bought the team doughnuts.")
    response = tenant.client().post("/v1/subjects/u_8f3a91/answer", {"query": "What is my name?"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert "Kwame" in body["answer"] and body["cited_row_ids"], body
