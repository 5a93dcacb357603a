"""The ``local`` procedural provider: deterministic rules, honest about their limits.

- distill: the outcome comes from a transcript line with an explicit success or failure
  marker (else the caller's claim, quoting the final output; else ``unclear``); a success
  yields a lesson listing the session's actions, a failure a mistake quoting the failing step,
  and a step written as ``Lesson: ...`` or ``Avoid: ...`` yields that experience verbatim.
- curate: one skill per domain; an experience a skill already says is ``covered``, any other
  is appended as a ``- Do:`` / ``- Avoid:`` line that its citation quotes.
- abstract: spaCy's entities become typed placeholders and numbers ``<NUMBER>``.
- replay: runs a deterministic task executor registered for the SCEC (``executor``); it does
  not pretend to run a language model, so an SCEC without a registered executor cannot be
  replayed locally (``ReplayUnavailable``) and its item stays unverified.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from apps.language.pipeline import spacy_pipeline
from apps.procedural.texts import general_form, quote_in
from apps.providers.interfaces import MeteringContext, ReplayUnavailable
from apps.providers.procedural_schemas import (
    AbstractReply,
    Citation,
    CurateInput,
    CurateReply,
    CurationDecision,
    DistilledExperience,
    DistillInput,
    DistillReply,
    ExperienceKind,
    Outcome,
    ReplayRequest,
    ReplayResult,
)

VERSION = "local-procedural-1"
MAX_EXPERIENCES = 5
_FAILURE = re.compile(r"\b(error|failed|fails|failure|exception|wrong|incorrect|timed? ?out|rejected)\b", re.I)
_SUCCESS = re.compile(r"\b(success|succeeded|passed|completed|correct|resolved|accepted)\b", re.I)
_EXPLICIT = re.compile(r"^\s*(lesson|avoid)\s*:\s*(.+)$", re.I | re.S)
_ACTION_KINDS = ("action", "tool_call")

# A task executor: (inputs, the memory item injected or None, seed) -> (output, tokens used).
TaskExecutor = Callable[[dict[str, Any], str | None, int], tuple[str, int]]
_EXECUTORS: dict[str, TaskExecutor] = {}


def executor_register(name: str, executor: TaskExecutor) -> None:
    """Make a deterministic task executor available to local replay under ``name``."""
    _EXECUTORS[name] = executor


def _outcome(session: DistillInput) -> tuple[Outcome, str]:
    lines = [session.final_output, *(step.content for step in reversed(session.steps))]
    for line in lines:
        if _FAILURE.search(line):
            return "failure", line
        if _SUCCESS.search(line):
            return "success", line
    if session.outcome == "success" and session.final_output.strip():
        return "success", session.final_output
    if session.outcome == "failure" and session.final_output.strip():
        return "failure", session.final_output
    return "unclear", ""


def _experiences(session: DistillInput, outcome: str, outcome_quote: str) -> list[DistilledExperience]:
    found: list[DistilledExperience] = []
    for step in session.steps:
        explicit = _EXPLICIT.match(step.content)
        if explicit:
            kind: ExperienceKind = "lesson" if explicit.group(1).lower() == "lesson" else "mistake"
            found.append(DistilledExperience(kind=kind, text=explicit.group(2).strip(), quote=step.content))
    actions = [step for step in session.steps if step.kind in _ACTION_KINDS and not _EXPLICIT.match(step.content)]
    if outcome == "success" and actions:
        listed = "; then ".join(step.content.strip() for step in actions[:6])
        found.append(
            DistilledExperience(kind="lesson", text=f"To {session.task.strip()}: {listed}", quote=actions[0].content)
        )
    elif outcome == "failure" and outcome_quote.strip():
        found.append(DistilledExperience(kind="mistake", text=f"Avoid: {outcome_quote.strip()}", quote=outcome_quote))
    return found[:MAX_EXPERIENCES]


class LocalProceduralLLM:
    @property
    def version(self) -> str:
        return VERSION

    def distill(self, session: DistillInput, *, metering: MeteringContext) -> DistillReply:
        outcome, quote = _outcome(session)
        return DistillReply(outcome=outcome, outcome_quote=quote, experiences=_experiences(session, outcome, quote))

    def curate(self, request: CurateInput, *, metering: MeteringContext) -> CurateReply:
        texts = {skill.domain: (skill.skill_id, skill.name, skill.text) for skill in request.skills}
        pending: dict[str, list[tuple[str, str]]] = {}  # domain -> [(experience id, added line)]
        decisions: list[CurationDecision] = []
        for experience in request.experiences:
            current = texts.get(experience.domain)
            added = "\n".join(line for _, line in pending.get(experience.domain, []))
            if current is not None and quote_in(experience.text, current[2] + "\n" + added):
                decisions.append(_mark("covered", experience.experience_id))
                continue
            prefix = "- Do: " if experience.kind == "lesson" else "- Avoid: "
            text = experience.text.removeprefix("Avoid: ")
            pending.setdefault(experience.domain, []).append((experience.experience_id, prefix + text))
        for domain, lines in pending.items():
            current = texts.get(domain)
            body = "\n".join(line for _, line in lines)
            citations = [Citation(experience_id=eid, quote=line) for eid, line in lines]
            ids = [eid for eid, _ in lines]
            if current is None:
                decisions.append(
                    CurationDecision(
                        action="create",
                        skill_id=None,
                        experience_ids=ids,
                        name=f"{domain} procedure",
                        domain=domain,
                        text=f"How to handle {domain} tasks:\n{body}",
                        citations=citations,
                    )
                )
            else:
                decisions.append(
                    CurationDecision(
                        action="edit",
                        skill_id=current[0],
                        experience_ids=ids,
                        name=current[1],
                        domain=None,
                        text=f"{current[2]}\n{body}",
                        citations=citations,
                    )
                )
        return CurateReply(decisions=decisions)

    def abstract(self, text: str, *, metering: MeteringContext) -> AbstractReply:
        document = spacy_pipeline()(text)
        entities = [(entity.text, entity.label_) for entity in document.ents if entity.label_ not in _NUMERIC_LABELS]
        return AbstractReply(general_text=general_form(text, entities), entities=[list(item) for item in entities])

    def replay(self, request: ReplayRequest, *, metering: MeteringContext) -> ReplayResult:
        executor = _EXECUTORS.get(request.executor or "")
        if executor is None:
            raise ReplayUnavailable(f"no local executor {request.executor!r} is registered for this SCEC")
        output, tokens = executor(dict(request.inputs), request.item, request.seed)
        return ReplayResult(output=output, tokens=tokens, model=f"{VERSION}/{request.executor}")


# Numbers are replaced by the number rule, whatever spaCy calls them.
_NUMERIC_LABELS = frozenset({"CARDINAL", "QUANTITY", "PERCENT", "MONEY", "ORDINAL"})


def _mark(action: str, experience_id: str) -> CurationDecision:
    return CurationDecision(
        action=action,  # type: ignore[arg-type]
        skill_id=None,
        experience_ids=[experience_id],
        name=None,
        domain=None,
        text=None,
        citations=[],
    )
