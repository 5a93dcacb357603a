"""Procedural AutoDream through the ``openai`` provider (the real SDK against the local stub):
the distiller's quotes and the curator's citations are checked before anything is stored."""

from __future__ import annotations

from apps.jobs import task_names
from apps.procedural.models import Experience, SkillCitation, TaskSession
from apps.providers.models import ProviderUsage
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.procedural.support import consenting_subject, helpful, job, post_session, run_job, subject_id, use_stub
from tests.providers.openai_stub import OpenAIStub, json_reply


def _distilled(outcome_quote: str, experience_quote: str, text: str) -> dict:  # type: ignore[type-arg]
    return {
        "outcome": "success",
        "outcome_quote": outcome_quote,
        "experiences": [{"kind": "lesson", "text": text, "quote": experience_quote}],
    }


def test_fabricated_quotes_make_the_outcome_unclear_and_uncited_citations_are_dropped(openai_stub: OpenAIStub) -> None:
    tenant = make_tenant()
    use_stub(tenant, openai_stub)
    agent = consenting_subject(tenant, "agent-openai", cross_domain=False)
    written = [post_session(tenant, agent, helpful("cooking", n, scec=False)) for n in range(2, 7)]
    # Session 1: the outcome quote and the experience quote are made up.
    openai_stub.queue(json_reply(_distilled("the customer loved the bread", "knead for an hour", "Knead for an hour")))
    for _ in range(4):
        openai_stub.queue(
            json_reply(
                _distilled(
                    "the check passed",
                    "Lesson: Use 125 grams of flour per serving",
                    "Use 125 grams of flour per serving",
                )
            )
        )
    openai_stub.respond_with(lambda request: _curate(request.body))
    run_job(task_names.PROCEDURAL_DREAM, tenant, written[-1]["dream_job_id"], subject_id=subject_id(tenant, agent))
    finished = job(tenant, written[-1]["dream_job_id"])
    assert finished["status"] == "succeeded", finished
    assert finished["result"]["unclear"] == 1 and finished["result"]["experiences"] == 4
    assert finished["result"]["created"] == 1 and finished["result"]["citations_dropped"] == 1

    with organization_scope(tenant.id):
        sessions = list(TaskSession.objects.order_by("created_at"))
        assert sessions[0].outcome == "unclear" and sessions[0].outcome_quote == ""
        assert {s.outcome for s in sessions[1:]} == {"success"}
        assert not Experience.objects.filter(session=sessions[0]).exists()  # its quote was not in the transcript
        citations = list(SkillCitation.objects.select_related("skill_version"))
        assert len(citations) == 1
        assert citations[0].quote == "Use 125 grams of flour per serving."
        assert citations[0].quote in citations[0].skill_version.text
        purposes = set(ProviderUsage.objects.values_list("purpose", flat=True))
    assert {"distill", "curate"} <= purposes
    distill_request = openai_stub.requests[0].body
    assert distill_request["response_format"]["json_schema"]["strict"] is True
    assert "<task_session>" in distill_request["messages"][1]["content"]


def _curate(body: dict):  # type: ignore[no-untyped-def, type-arg]
    """The curator's reply: one skill citing two experiences, one with a quote it lacks."""
    if body["response_format"]["json_schema"]["name"] != "CurateReply":
        return None
    import json

    payload = body["messages"][1]["content"]
    ids = [e["experience_id"] for e in json.loads(payload.split("<experiences>\n")[1].split("\n</experiences>")[0])]
    decision = {
        "action": "create",
        "skill_id": None,
        "experience_ids": ids[:2],
        "name": "Bread scaling",
        "domain": "cooking",
        "text": "Scale bread by servings. Use 125 grams of flour per serving.",
        "citations": [
            {"experience_id": ids[0], "quote": "Use 125 grams of flour per serving."},
            {"experience_id": ids[1], "quote": "Proof the dough overnight in the fridge."},
        ],
    }
    return json_reply({"decisions": [decision]})
