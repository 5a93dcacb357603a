"""Which provider serves a call, chosen by the deployment settings (default: ``local`` for both).

Providers are built once and reused: the local models load once per process, and each
OpenAI configuration keeps one SDK client (and its connection pool).

The language-model implementations are named by dotted path and imported on first use (ADR
0021): the local ones live beside their domain (the graph extractor in
``apps.graph.extraction``, the dream decision in ``apps.dream``, the answerer in ``apps.retrieval``, the procedural writer in
``apps.procedural``, the memory writer in ``apps.memory.writing``) and import this package's
ports, and the OpenAI adapters read the graph's frame types; naming them here by path keeps
this package below all of them, with no import cycle hidden in a function body.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from apps.platform.netpolicy import AddressPolicy
from apps.providers.config import OpenAIConfig, ProviderConfig
from apps.providers.errors import ProviderError
from apps.providers.interfaces import (
    AnswerLLM,
    DreamJudge,
    Embedder,
    GraphLLM,
    MemoryLLM,
    MeteringContext,
    ProceduralLLM,
)
from apps.providers.local_embedder import DIMENSION as LOCAL_DIMENSION
from apps.providers.local_embedder import LocalEmbedder
from apps.providers.query_cache import CachedQueryEmbedder, QueryEmbeddingCache
from apps.providers.schemas import InputMessage, WriterInput

logger = logging.getLogger(__name__)

# Every language-model implementation, as "module:Class".
IMPLEMENTATIONS: dict[str, str] = {
    "memory.local": "apps.memory.writing.local:LocalMemoryLLM",
    "memory.openai": "apps.providers.openai_provider:OpenAIMemoryLLM",
    "graph.local": "apps.graph.extraction.local:LocalGraphLLM",
    "graph.openai": "apps.providers.openai_provider:OpenAIGraphLLM",
    "dream.local": "apps.dream.local:LocalDreamJudge",
    "dream.openai": "apps.providers.openai_provider:OpenAIDreamJudge",
    "answer.local": "apps.retrieval.answer_local:LocalAnswerLLM",
    "answer.openai": "apps.providers.answer_openai:OpenAIAnswerLLM",
    "procedural.local": "apps.procedural.local:LocalProceduralLLM",
    "procedural.openai": "apps.providers.procedural_openai:OpenAIProceduralLLM",
    "embedder.openai": "apps.providers.openai_provider:OpenAIEmbedder",
}


def _build(name: str, **arguments: Any) -> Any:
    """A new instance of the implementation registered as ``name``."""
    module, _, attribute = IMPLEMENTATIONS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)(**arguments)


def _deployment_openai(*, model: str) -> OpenAIConfig:
    return OpenAIConfig(
        model=model,
        api_key=settings.OPENAI_API_KEY or "",
        base_url=settings.OPENAI_BASE_URL,
        timeout_seconds=settings.OPENAI_TIMEOUT_SECONDS,
        max_attempts=settings.OPENAI_MAX_ATTEMPTS,
        retry_base_delay_seconds=settings.OPENAI_RETRY_BASE_SECONDS,
    )


@functools.cache
def _local(role: str) -> Any:
    """The process's one local implementation of ``role`` (its models load once)."""
    return _build(f"{role}.local")


@functools.lru_cache(maxsize=1024)
def _openai(role: str, config: OpenAIConfig, organization_id: uuid.UUID | None) -> Any:
    # Keyed by organization too: one tenant's client, holding its key, serves no other tenant.
    return _build(f"{role}.openai", config=config)


def _for(role: str, organization_id: uuid.UUID | None, override: ProviderConfig | None) -> Any:
    """The implementation of ``role`` for an organization: the deployment's ``LLM_PROVIDER``, or
    the organization's own endpoint when it has one (always ``openai``)."""
    if override is None:
        if settings.LLM_PROVIDER == "local":
            return _local(role)
        return _openai(role, _deployment_openai(model=settings.OPENAI_MODEL), None)
    return _openai(role, _override_config(organization_id, override), organization_id)


def llm_for(organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None) -> MemoryLLM:
    """The language model for an organization's calls.

    ``override`` is the organization's own endpoint (its fields replace the deployment's, so an
    organization may bring only a key, or a base URL, model and key) and always means ``openai``.
    """
    llm: MemoryLLM = _for("memory", organization_id, override)
    return llm


def _override_config(organization_id: uuid.UUID | None, override: ProviderConfig) -> OpenAIConfig:
    if organization_id is None:
        raise ValueError("a provider override belongs to an organization: pass organization_id")
    replaced = {name: value for name, value in dataclasses.asdict(override).items() if value is not None}
    config = dataclasses.replace(_deployment_openai(model=settings.OPENAI_MODEL), **replaced)
    if override.base_url is not None:
        # An endpoint the organization chose: checked at every connection, not only when set.
        config = dataclasses.replace(
            config, address_policy=AddressPolicy(allow_loopback=settings.PROVIDERS_ALLOW_LOOPBACK)
        )
    if not config.api_key:
        logger.warning("provider override without an api key", extra={"organization_id": str(organization_id)})
        raise ProviderError(
            "The organization's model provider has no API key configured.",
            details={"reason": "not_configured"},
        )
    return config


def graph_llm_for(organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None) -> GraphLLM:
    """The model that extracts, canonicalizes and repairs frames for an organization's graph.

    Chosen like :func:`llm_for`: the deployment's ``LLM_PROVIDER``, or the organization's own
    endpoint when it has one (always ``openai``).
    """
    llm: GraphLLM = _for("graph", organization_id, override)
    return llm


def dream_judge_for(organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None) -> DreamJudge:
    """The semantic AutoDream decision for an organization, chosen like :func:`graph_llm_for`."""
    judge: DreamJudge = _for("dream", organization_id, override)
    return judge


@functools.cache
def _embedder(provider: str, dimension: int, config: OpenAIConfig, precision: str) -> Embedder:
    if provider == "openai":
        remote: Embedder = _build("embedder.openai", config=config, dimension=dimension)
        return remote
    if dimension != LOCAL_DIMENSION:
        raise ImproperlyConfigured(
            f"MIRIX_EMBEDDING_DIMENSION is {dimension} but the local embedder makes {LOCAL_DIMENSION}-d vectors"
        )
    return LocalEmbedder(precision)


def embedder() -> Embedder:
    """The deployment's embedder. Every organization shares it: the vector dimension is global."""
    return _embedder(
        settings.EMBEDDING_PROVIDER,
        settings.EMBEDDING_DIMENSION,
        _deployment_openai(model=settings.OPENAI_EMBEDDING_MODEL),
        settings.LOCAL_EMBEDDING_PRECISION,
    )


@functools.cache
def query_embedding_cache() -> QueryEmbeddingCache:
    """The process's cache of query embeddings (``MIRIX_QUERY_EMBEDDING_CACHE_SIZE`` entries)."""
    return QueryEmbeddingCache(settings.QUERY_EMBEDDING_CACHE_SIZE)


def query_embedder(organization_id: uuid.UUID) -> Embedder:
    """The deployment's embedder for an organization's search queries: a repeated query of the
    same organization is answered from :func:`query_embedding_cache` (ADR 0053)."""
    return CachedQueryEmbedder(embedder(), organization_id, query_embedding_cache())


def answer_llm_for(organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None) -> AnswerLLM:
    """The answering agent of an organization's answer calls, chosen like :func:`llm_for`: the
    deployment's ``LLM_PROVIDER``, or the organization's own endpoint when it has one (always
    ``openai``)."""
    llm: AnswerLLM = _for("answer", organization_id, override)
    return llm


def procedural_llm_for(
    organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None
) -> ProceduralLLM:
    """The distiller, curator, abstractor and replayer of an organization's procedural memory,
    chosen like :func:`llm_for`."""
    llm: ProceduralLLM = _for("procedural", organization_id, override)
    return llm


class _Unmetered:
    def record(self, **_: object) -> None:
        """Warm-up calls are nobody's usage."""


_WARM_TEXT = "Yesterday Priya adopted a dog named Biscuit in Lisbon, and she loves hiking with him."


def providers_warm() -> None:
    """Load what the deployment's local providers load on first use (the embedding model, the
    spaCy pipeline, the writer's lexicons) and run each once, so that a process's first request
    costs what a warm one does (ADR 0052). Remote providers are only built: a warm-up never
    calls a paid endpoint."""
    model = embedder()
    if settings.EMBEDDING_PROVIDER == "local":
        model.embed([_WARM_TEXT])
    if settings.LLM_PROVIDER != "local":
        return
    writer: MemoryLLM = _local("memory")
    _local("graph")
    _local("answer")
    message = InputMessage(message_id="warm-1", role="user", name="Warm", content=_WARM_TEXT, timestamp=timezone.now())
    memory_input = WriterInput(messages=[message])
    metering = MeteringContext(organization_id=uuid.UUID(int=0), meter=_Unmetered())
    writer.route(memory_input, metering=metering)
    writer.write_episodic(memory_input, metering=metering)
    writer.write_semantic(memory_input, metering=metering)
