"""The Meta Memory Manager (docs/architecture.md, "Evidence plane"). Framework-free.

One routing decision per input selects a subset of the memory types; each selected writer
produces that type's drafts. Sensitive values never get this far: ``redact_messages`` runs
first and swaps each for a vault placeholder, so no writer, prompt or other store sees them.

What the router accepts is kept whole: a message no writer cited is stored as it was said
(``verbatim_drafts``), and pasted documents never reach the writers (the write path keeps
them as resources and passages), so an accepted input always has a row (ADR 0025).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from apps.memory.timing import Stopwatch
from apps.providers.interfaces import MemoryLLM, MeteringContext
from apps.providers.schemas import (
    CoreDraft,
    EpisodicDraft,
    InputMessage,
    ProceduralDraft,
    RouteDecision,
    SemanticDraft,
    WriterInput,
)
from apps.vault.detect import Detection, redact_sensitive


@dataclass(frozen=True)
class IncomingMessage:
    """One message as the client sent it (validated, not yet redacted)."""

    message_id: str
    role: str
    content: str
    timestamp: datetime
    name: str | None = None


@dataclass(frozen=True)
class VaultFinding:
    message_id: str
    detection: Detection


@dataclass
class MemoryPlan:
    route: RouteDecision
    core: list[CoreDraft] = field(default_factory=list)
    episodic: list[EpisodicDraft] = field(default_factory=list)
    semantic: list[SemanticDraft] = field(default_factory=list)
    procedural: list[ProceduralDraft] = field(default_factory=list)


def redact_messages(messages: list[IncomingMessage]) -> tuple[list[InputMessage], list[VaultFinding]]:
    redacted: list[InputMessage] = []
    findings: list[VaultFinding] = []
    for message in messages:
        redaction = redact_sensitive(message.content)
        findings += [VaultFinding(message.message_id, detection) for detection in redaction.detections]
        redacted.append(
            InputMessage(
                message_id=message.message_id,
                role=message.role,  # type: ignore[arg-type]  # validated by the API layer
                name=message.name,
                content=redaction.text,
                timestamp=message.timestamp,
            )
        )
    return redacted, findings


def plan_memories(
    *, memory_input: WriterInput, llm: MemoryLLM, metering: MeteringContext, stopwatch: Stopwatch
) -> MemoryPlan:
    """Route once, then run each selected writer."""
    with stopwatch.phase("routing"):
        route = llm.route(memory_input, metering=metering)
    plan = MemoryPlan(route=route)
    with stopwatch.phase("writing"):
        if "core" in route.memory_types:
            plan.core = llm.write_core(memory_input, metering=metering)
        if "episodic" in route.memory_types:
            plan.episodic = llm.write_episodic(memory_input, metering=metering)
        if "semantic" in route.memory_types:
            plan.semantic = llm.write_semantic(memory_input, metering=metering)
        if "procedural" in route.memory_types:
            plan.procedural = llm.write_procedural(memory_input, metering=metering)
    return plan


VERBATIM_EVENT_TYPE = "message"


def cited_message_ids(plan: MemoryPlan) -> set[str]:
    drafts = [*plan.core, *plan.episodic, *plan.semantic, *plan.procedural]
    return {message_id for draft in drafts for message_id in draft.source_message_ids}


def verbatim_drafts(plan: MemoryPlan, messages: Sequence[InputMessage]) -> list[EpisodicDraft]:
    """An episode for each message that no writer cited (small talk next to substance, a
    system prompt, whatever a writer skipped), in the speaker's words: once the router
    accepts a chunk, no message of it is dropped."""
    cited = cited_message_ids(plan)
    drafts = []
    for message in messages:
        if message.message_id in cited or not message.content.strip():
            continue
        actor = message.name or message.role
        said = f"Said by {actor} on {message.timestamp.date().isoformat()} (message {message.message_id})."
        drafts.append(
            EpisodicDraft(
                actor=actor,
                event_type=VERBATIM_EVENT_TYPE,
                summary=f"{actor}: {' '.join(message.content.split())}",
                details=f"{message.content.strip()}\n{said}",
                event_time=None,
                status="done",
                source_message_ids=[message.message_id],
            )
        )
    return drafts
