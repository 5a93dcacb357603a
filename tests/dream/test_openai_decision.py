"""The dream decision through the openai provider: the real SDK against the local stub. The
schema restricts the representative to the pair's names; a reply that invents one anyway
merges nothing and is not cached."""

from __future__ import annotations

import json
import re

from apps.dream.models import DreamMerge, DreamRejection
from apps.dream.services import dream_run
from apps.graph.keys import anchor_key
from apps.graph.models import AnchorVector
from apps.providers.config import OpenAIConfig
from apps.providers.models import ProviderUsage
from apps.providers.openai_provider import OpenAIDreamJudge
from tests.dream.support import Spec, add_anchors, graph_state, in_scope
from tests.factories import make_tenant
from tests.providers.openai_stub import OpenAIStub, RecordedRequest, StubReply, json_reply


def _pair(request: RecordedRequest) -> list[str]:
    user = request.body["messages"][1]["content"]
    inside = re.search(r"<pair>\n(.*?)\n</pair>", user, re.DOTALL)
    assert inside is not None
    return sorted(n["name"] for n in json.loads(inside.group(1))["names"])


def _decide(request: RecordedRequest) -> StubReply:
    names = _pair(request)
    if names == ["stainless steel bottle", "steel bottle"]:
        return json_reply({"same_entity": True, "representative": "stainless steel bottle"})
    return json_reply({"same_entity": True, "representative": "big water jug"})  # invented


def test_openai_decisions_merge_only_to_one_of_the_two_names(
    openai_stub: OpenAIStub, stub_config: OpenAIConfig
) -> None:
    tenant = make_tenant()
    subject = tenant.subject("ana")
    with in_scope(subject):
        built = add_anchors(
            subject,
            [
                Spec("steel bottle", "object"),
                Spec("stainless steel bottle", "object"),
                Spec("water jug", "object"),
                Spec("plastic water jug", "object"),
            ],
        )
        jug = AnchorVector.objects.get(subject=subject, anchor_key=anchor_key("water jug"))
        AnchorVector.objects.filter(subject=subject, anchor_key=anchor_key("plastic water jug")).update(
            embedding=jug.embedding
        )
    openai_stub.respond_with(_decide)
    llm = OpenAIDreamJudge(config=stub_config)
    with in_scope(subject):
        summary = dream_run(subject=subject, chunk_ids=[built.chunk_id], final=False, llm=llm)
        anchors = graph_state(subject)["anchors"]
        merges = list(DreamMerge.objects.filter(subject=subject))
        cached = DreamRejection.objects.filter(subject=subject).count()
        metered = list(ProviderUsage.objects.filter(purpose="dream").values_list("prompt_tokens", flat=True))
    assert summary["verified"] == 2 and summary["merged"] == 1 and summary["invalid"] == 1
    assert [(m.source_name, m.target_name) for m in merges] == [("steel bottle", "stainless steel bottle")]
    assert merges[0].decided_by == "gpt-test"
    assert anchor_key("steel bottle") not in anchors
    assert anchor_key("water jug") in anchors and anchor_key("plastic water jug") in anchors  # nothing merged
    assert cached == 0  # an invented name is not an explicit rejection
    assert len(metered) == 2  # every decision is metered for the organization, as "dream"
    # Each request asked for the strict schema whose representative is one of the pair's names.
    for request in openai_stub.requests:
        response_format = request.body["response_format"]
        assert response_format["json_schema"]["strict"] is True
        enum = response_format["json_schema"]["schema"]["properties"]["representative"]["anyOf"][0]["enum"]
        assert sorted(enum) == _pair(request)
