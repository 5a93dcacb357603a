"""The ``openai`` provider: any OpenAI-compatible endpoint through the official SDK.

Each decision is one chat completion with a strict JSON-schema response format, validated by
pydantic. The SDK's own retries are off (``max_retries=0``): one retry loop here covers rate
limits, 5xx, timeouts, connection errors and malformed replies (invalid JSON or a schema
violation) with exponential backoff, then raises a ``ProviderError`` that carries no model
output. Token usage of every reply, malformed ones included, is metered per organization and
per purpose. Every connection goes through ``apps.providers.outbound``: no redirect is
followed, and an organization's own endpoint is checked against the address policy each time
a connection is made; a refusal is a ``ProviderError`` at once, not retried.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema
from pydantic import BaseModel, ValidationError

from apps.graph.frames import ExtractedFrame, Extraction
from apps.graph.identity import frame_signature
from apps.graph.keys import anchor_key, may_denote_same
from apps.platform import netpolicy
from apps.platform.clock import SYSTEM_CLOCK, Clock
from apps.providers import prompts
from apps.providers.config import OpenAIConfig
from apps.providers.dream_schemas import DreamQuestion, DreamVerdict, verdict_schema
from apps.providers.errors import ProviderError
from apps.providers.extraction_schemas import (
    ExtractionInput,
    FrameExtraction,
    FrameRepair,
    SameEntityChoices,
    SameEntityDecision,
    SameEntityQuestion,
    consistent_extraction,
)
from apps.providers.interfaces import MeteringContext, Purpose
from apps.providers.outbound import provider_http_client
from apps.providers.schemas import (
    CitedDraft,
    CoreDraft,
    CoreDrafts,
    EpisodicDraft,
    EpisodicDrafts,
    ProceduralDraft,
    ProceduralDrafts,
    RouteDecision,
    SemanticDraft,
    SemanticDrafts,
    WriterInput,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")
OutputT = TypeVar("OutputT", bound=BaseModel)
DraftT = TypeVar("DraftT", bound=CitedDraft)

_MAX_DELAY_SECONDS = 30.0
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_EMBEDDING_BATCH = 256
# Waits between attempts go through this clock (tests install one that skips the waits).
clock: Clock = SYSTEM_CLOCK


class _Retryable(Exception):
    """One failed attempt that another attempt may fix."""

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _retry_after_seconds(error: openai.APIStatusError) -> float | None:
    headers = error.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw: str | None = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


class _ResilientClient:
    """An SDK client plus the retry policy shared by the chat and embedding calls."""

    def __init__(self, config: OpenAIConfig) -> None:
        self.config = config
        self.sdk = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key,
            timeout=config.timeout_seconds,
            max_retries=0,
            http_client=provider_http_client(policy=config.address_policy),
        )

    def call(self, *, purpose: Purpose, attempt: Callable[[], T]) -> T:
        max_attempts = max(1, self.config.max_attempts)
        number = 1
        while True:
            try:
                return self._classified(attempt)
            except _Retryable as failure:
                if number >= max_attempts:
                    logger.warning(
                        "provider call failed",
                        extra={"purpose": purpose.value, "attempts": number, "reason": failure.reason},
                    )
                    raise ProviderError(
                        f"The model provider failed on '{purpose.value}' after {number} attempts ({failure.reason}).",
                        details={"purpose": purpose.value, "attempts": number, "reason": failure.reason},
                    ) from None
                delay = self._delay(number, failure.retry_after)
                logger.info(
                    "provider call retried",
                    extra={
                        "purpose": purpose.value,
                        "attempt": number,
                        "reason": failure.reason,
                        "delay_seconds": delay,
                    },
                )
                clock.sleep(delay)
                number += 1

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = self.config.retry_base_delay_seconds * 2.0 ** (attempt - 1) * random.uniform(0.5, 1.0)
        return min(_MAX_DELAY_SECONDS, max(backoff, retry_after or 0.0))

    @staticmethod
    def _classified(attempt: Callable[[], T]) -> T:
        try:
            return attempt()
        except netpolicy.ResolutionFailed:
            raise _Retryable("dns_error") from None
        except netpolicy.OutboundError as exc:
            # Refused by the address policy or a redirect: another attempt would be refused too.
            logger.warning("provider endpoint refused", extra={"reason": exc.code})
            raise ProviderError(
                f"The model provider's endpoint was refused: {exc}",
                details={"reason": exc.code},
            ) from None
        except openai.APITimeoutError:
            raise _Retryable("timeout") from None
        except openai.APIConnectionError:
            raise _Retryable("connection_error") from None
        except (json.JSONDecodeError, openai.APIResponseValidationError):
            # A 200 whose body is not the JSON the SDK expects (an HTML error page, a cut-off
            # body): retried like a malformed reply; the body goes nowhere.
            raise _Retryable("malformed_reply") from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status == 429:
                raise _Retryable("rate_limited", retry_after=_retry_after_seconds(exc)) from None
            if status in _RETRYABLE_STATUSES or status >= 500:
                raise _Retryable("server_error", retry_after=_retry_after_seconds(exc)) from None
            logger.warning("provider rejected the request", extra={"status": status})
            raise ProviderError(
                f"The model provider rejected the request (HTTP {status}).",
                details={"reason": "rejected", "status": status},
            ) from None


def _parsed(response: ChatCompletion, output: type[OutputT]) -> OutputT:
    content = response.choices[0].message.content if response.choices else None
    if content is None:  # a refusal or an empty reply
        raise _Retryable("malformed_reply")
    try:
        return output.model_validate_json(content)
    except ValidationError:
        # The validation error quotes the reply: it must not travel any further.
        raise _Retryable("malformed_reply") from None


def _cited(drafts: list[DraftT], memory_input: WriterInput) -> list[DraftT]:
    """Provenance must name real input messages: unknown ids are dropped, none left cites all."""
    known = memory_input.message_ids
    cited: list[DraftT] = []
    for draft in drafts:
        ids = [message_id for message_id in dict.fromkeys(draft.source_message_ids) if message_id in known]
        unknown = len(set(draft.source_message_ids) - set(known))
        if unknown:
            logger.info("draft cited unknown messages", extra={"unknown": unknown})
        cited.append(draft.model_copy(update={"source_message_ids": ids or list(known)}))
    return cited


class OpenAIMemoryLLM:
    def __init__(self, *, config: OpenAIConfig) -> None:
        self._client = _ResilientClient(config)

    @property
    def model(self) -> str:
        return self._client.config.model

    def route(self, memory_input: WriterInput, *, metering: MeteringContext) -> RouteDecision:
        return self._decide(Purpose.ROUTE, prompts.ROUTE, memory_input, RouteDecision, metering)

    def write_core(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[CoreDraft]:
        drafts = self._decide(Purpose.WRITE_CORE, prompts.WRITE_CORE, memory_input, CoreDrafts, metering).drafts
        return _cited(drafts, memory_input)

    def write_episodic(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[EpisodicDraft]:
        result = self._decide(Purpose.WRITE_EPISODIC, prompts.WRITE_EPISODIC, memory_input, EpisodicDrafts, metering)
        return _cited(result.drafts, memory_input)

    def write_semantic(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[SemanticDraft]:
        result = self._decide(Purpose.WRITE_SEMANTIC, prompts.WRITE_SEMANTIC, memory_input, SemanticDrafts, metering)
        return _cited(result.drafts, memory_input)

    def write_procedural(self, memory_input: WriterInput, *, metering: MeteringContext) -> list[ProceduralDraft]:
        result = self._decide(
            Purpose.WRITE_PROCEDURAL, prompts.WRITE_PROCEDURAL, memory_input, ProceduralDrafts, metering
        )
        return _cited(result.drafts, memory_input)

    def _decide(
        self,
        purpose: Purpose,
        system_prompt: str,
        memory_input: WriterInput,
        output: type[OutputT],
        metering: MeteringContext,
    ) -> OutputT:
        user_prompt = prompts.render_memory_input(memory_input)
        return _structured_reply(self._client, purpose, system_prompt, user_prompt, output, metering)


def _structured_reply(
    client: _ResilientClient,
    purpose: Purpose,
    system_prompt: str,
    user_prompt: str,
    output: type[OutputT],
    metering: MeteringContext,
    schema: dict[str, Any] | None = None,
) -> OutputT:
    """One chat completion constrained to ``output``'s strict JSON schema (or a narrower
    ``schema`` of the same shape), metered and retried."""
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": user_prompt},
    ]
    response_format: ResponseFormatJSONSchema = {
        "type": "json_schema",
        "json_schema": {"name": output.__name__, "schema": schema or output.model_json_schema(), "strict": True},
    }
    model = client.config.model

    def attempt() -> OutputT:
        response = client.sdk.chat.completions.create(model=model, messages=messages, response_format=response_format)
        if response.usage is not None:
            metering.record(
                purpose=purpose,
                model=response.model or model,
                prompt_tokens=response.usage.prompt_tokens,
                completion_tokens=response.usage.completion_tokens,
            )
        return _parsed(response, output)

    return client.call(purpose=purpose, attempt=attempt)


def _allowed_candidate(question: SameEntityQuestion, answer: str | None) -> str | None:
    """The candidate an answer names (exactly, or but for case), if merging with it is allowed."""
    if answer is None:
        return None
    names = [candidate.name for candidate in question.candidates]
    chosen = next((name for name in names if name == answer), None)
    chosen = chosen or next((name for name in names if name.casefold() == answer.strip().casefold()), None)
    if chosen is None:
        logger.info("same-entity answer named no candidate", extra={"purpose": Purpose.CANONICALIZE.value})
        return None
    if not may_denote_same(question.name, chosen):
        logger.info("same-entity answer differs in a number or code", extra={"purpose": Purpose.CANONICALIZE.value})
        return None
    return chosen


class OpenAIGraphLLM:
    """Extraction, canonicalization and repair through one OpenAI-compatible endpoint.

    The replies are proposals that this class narrows before anyone sees them: frames keep two
    distinct entities, a same-entity answer must name one of that entity's own candidates (and
    agree with it in every number, date and code), and repair returns only frames the record
    did not already have.
    """

    def __init__(self, *, config: OpenAIConfig) -> None:
        self._client = _ResilientClient(config)

    @property
    def model(self) -> str:
        return self._client.config.model

    def extract_frames(self, record: ExtractionInput, *, metering: MeteringContext) -> Extraction:
        user_prompt = prompts.render_extraction_input(record)
        reply = _structured_reply(
            self._client, Purpose.EXTRACT, prompts.EXTRACT_FRAMES, user_prompt, FrameExtraction, metering
        )
        return reply.to_extraction()

    def extract_frames_many(self, records: Sequence[ExtractionInput], *, metering: MeteringContext) -> list[Extraction]:
        return [self.extract_frames(record, metering=metering) for record in records]  # one call per record

    def decide_same_entity(
        self, record: ExtractionInput, questions: Sequence[SameEntityQuestion], *, metering: MeteringContext
    ) -> list[SameEntityDecision]:
        # Only entities with candidates are asked about; ids are 1-based positions in ``questions``.
        asked = [(index + 1, question) for index, question in enumerate(questions) if question.candidates]
        answers: dict[int, str | None] = {}
        if asked:
            user_prompt = prompts.render_same_entity(record, asked)
            reply = _structured_reply(
                self._client, Purpose.CANONICALIZE, prompts.CANONICALIZE, user_prompt, SameEntityChoices, metering
            )
            for decision in reply.decisions:
                answers.setdefault(decision.entity_id, decision.same_as)  # the first answer for an id counts
        return [
            SameEntityDecision(name=question.name, same_as=_allowed_candidate(question, answers.get(index + 1)))
            for index, question in enumerate(questions)
        ]

    def repair_frames(
        self,
        record: ExtractionInput,
        *,
        frames: Sequence[ExtractedFrame],
        missing: Sequence[str],
        metering: MeteringContext,
    ) -> Extraction:
        user_prompt = prompts.render_repair(record, frames, missing)
        reply = _structured_reply(
            self._client, Purpose.REPAIR, prompts.REPAIR_FRAMES, user_prompt, FrameRepair, metering
        ).to_extraction()
        known = {frame_signature(frame) for frame in frames}
        added: list[ExtractedFrame] = []
        for frame in reply.frames:
            if frame_signature(frame) not in known:
                known.add(frame_signature(frame))
                added.append(frame)
        used = {anchor_key(name) for frame in added for name in frame.argument_names}
        return consistent_extraction([entity for entity in reply.entities if anchor_key(entity.name) in used], added)


class OpenAIDreamJudge:
    """The semantic AutoDream decision through an OpenAI-compatible endpoint."""

    def __init__(self, *, config: OpenAIConfig) -> None:
        self._client = _ResilientClient(config)

    @property
    def model(self) -> str:
        return self._client.config.model

    def dream_decide(self, question: DreamQuestion, *, metering: MeteringContext) -> DreamVerdict:
        """One call per pair, the representative constrained to the pair's two names by the schema
        (the caller still rejects any other name)."""
        return _structured_reply(
            self._client,
            Purpose.DREAM,
            prompts.DREAM_DECIDE,
            prompts.render_dream_question(question),
            DreamVerdict,
            metering,
            schema=verdict_schema(question),
        )


class OpenAIEmbedder:
    def __init__(self, *, config: OpenAIConfig, dimension: int) -> None:
        self._client = _ResilientClient(config)
        self._dimension = dimension

    @property
    def model_name(self) -> str:
        return self._client.config.model

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str], *, metering: MeteringContext | None = None) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _EMBEDDING_BATCH):
            batch = list(texts[start : start + _EMBEDDING_BATCH])
            attempt = functools.partial(self._embed_batch, batch, metering)
            vectors.extend(self._client.call(purpose=Purpose.EMBED, attempt=attempt))
        return vectors

    def _embed_batch(self, batch: list[str], metering: MeteringContext | None) -> list[list[float]]:
        response = self._client.sdk.embeddings.create(
            model=self.model_name, input=batch, dimensions=self._dimension, encoding_format="float"
        )
        if metering is not None and response.usage is not None:
            metering.record(
                purpose=Purpose.EMBED,
                model=response.model or self.model_name,
                prompt_tokens=response.usage.prompt_tokens,
                completion_tokens=0,
            )
        rows = sorted(response.data, key=lambda row: row.index)
        if len(rows) != len(batch) or any(len(row.embedding) != self._dimension for row in rows):
            raise _Retryable("malformed_reply")
        return [_unit(row.embedding) for row in rows]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0.0:
        raise _Retryable("malformed_reply")
    return [value / norm for value in vector]
