"""The structured outputs: strict-mode JSON schemas and the checks the schema cannot express."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from apps.providers.schemas import (
    CoreDrafts,
    EpisodicDraft,
    EpisodicDrafts,
    InputMessage,
    ProceduralDrafts,
    RouteDecision,
    SemanticDrafts,
    WriterInput,
)

pytestmark = pytest.mark.unit

OUTPUTS: list[type[BaseModel]] = [RouteDecision, CoreDrafts, EpisodicDrafts, SemanticDrafts, ProceduralDrafts]
EPISODE: dict[str, Any] = {
    "source_message_ids": ["m-1"],
    "actor": "Nadia",
    "event_type": "trip",
    "summary": "Nadia will fly to Paris.",
    "details": "Flight to Paris next month with her 2 kids.",
    "event_time": "2023-06",
    "status": "planned",
}


def _objects(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node] if node.get("type") == "object" else []
        return found + [obj for value in node.values() for obj in _objects(value)]
    if isinstance(node, list):
        return [obj for value in node for obj in _objects(value)]
    return []


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda output: output.__name__)
def test_output_schemas_meet_openai_strict_mode(output: type[BaseModel]) -> None:
    objects = _objects(output.model_json_schema())
    assert objects
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
        assert not any("default" in prop for prop in obj["properties"].values())


def test_route_decision_is_canonical() -> None:
    decision = RouteDecision.model_validate(
        {"memory_types": ["semantic", "core", "semantic"], "reason": "facts about the user"}
    )
    assert decision.memory_types == ["core", "semantic"]
    with pytest.raises(ValidationError):
        RouteDecision.model_validate({"memory_types": ["vault"], "reason": "the vault is not routed"})


@pytest.mark.parametrize("event_time", [None, "2023", "2023-06", "2023-W18", "2023-05-07", "2023-05-07T14:30:00Z"])
def test_episodic_event_time_accepts_iso_forms(event_time: str | None) -> None:
    assert EpisodicDraft.model_validate(EPISODE | {"event_time": event_time}).event_time == event_time


@pytest.mark.parametrize(
    "change",
    [
        {"event_time": "next month"},
        {"event_time": "2023-02-30"},
        {"status": "maybe"},
        {"summary": "   "},
        {"details": ""},
        {"unexpected": "field"},
    ],
)
def test_episodic_rejects_what_the_schema_cannot_say(change: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        EpisodicDraft.model_validate(EPISODE | change)


def test_writer_input_needs_messages_with_an_aware_mention_time() -> None:
    message = {"message_id": "m-1", "role": "user", "content": "hi", "timestamp": datetime(2023, 5, 8, tzinfo=UTC)}
    assert WriterInput.model_validate({"messages": [message]}).message_ids == ["m-1"]
    with pytest.raises(ValidationError):
        WriterInput.model_validate({"messages": []})
    with pytest.raises(ValidationError):
        InputMessage.model_validate(message | {"timestamp": datetime(2023, 5, 8)})
