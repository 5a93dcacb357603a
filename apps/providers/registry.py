"""Which provider serves a call, chosen by the deployment settings (default: ``local`` for both).

Providers are built once and reused: the local models load once per process, and each
OpenAI configuration keeps one SDK client (and its connection pool).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import uuid

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from apps.platform.netpolicy import AddressPolicy
from apps.providers.answer_local import LocalAnswerLLM
from apps.providers.answer_openai import OpenAIAnswerLLM
from apps.providers.config import OpenAIConfig, ProviderConfig
from apps.providers.errors import ProviderError
from apps.providers.extraction_local import LocalGraphLLM
from apps.providers.interfaces import AnswerLLM, Embedder, GraphLLM, MemoryLLM, ProceduralLLM
from apps.providers.local_embedder import DIMENSION as LOCAL_DIMENSION
from apps.providers.local_embedder import LocalEmbedder
from apps.providers.local_provider import LocalMemoryLLM
from apps.providers.openai_provider import OpenAIEmbedder, OpenAIGraphLLM, OpenAIMemoryLLM
from apps.providers.procedural_local import LocalProceduralLLM
from apps.providers.procedural_openai import OpenAIProceduralLLM

logger = logging.getLogger(__name__)


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
def _local_llm() -> LocalMemoryLLM:
    return LocalMemoryLLM()


@functools.lru_cache(maxsize=256)
def _openai_llm(config: OpenAIConfig, organization_id: uuid.UUID | None) -> OpenAIMemoryLLM:
    # Keyed by organization too: one tenant's client, holding its key, serves no other tenant.
    return OpenAIMemoryLLM(config=config)


def llm_for(organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None) -> MemoryLLM:
    """The language model for an organization's calls.

    ``override`` is the organization's own endpoint (its fields replace the deployment's, so an
    organization may bring only a key, or a base URL, model and key) and always means ``openai``.
    """
    if override is None:
        if settings.LLM_PROVIDER == "local":
            return _local_llm()
        return _openai_llm(_deployment_openai(model=settings.OPENAI_MODEL), None)
    return _openai_llm(_override_config(organization_id, override), organization_id)


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


@functools.cache
def _local_graph_llm() -> LocalGraphLLM:
    return LocalGraphLLM()


@functools.lru_cache(maxsize=256)
def _openai_graph_llm(config: OpenAIConfig, organization_id: uuid.UUID | None) -> OpenAIGraphLLM:
    return OpenAIGraphLLM(config=config)


def graph_llm_for(organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None) -> GraphLLM:
    """The model that extracts, canonicalizes and repairs frames for an organization's graph.

    Chosen like :func:`llm_for`: the deployment's ``LLM_PROVIDER``, or the organization's own
    endpoint when it has one (always ``openai``).
    """
    if override is None:
        if settings.LLM_PROVIDER == "local":
            return _local_graph_llm()
        return _openai_graph_llm(_deployment_openai(model=settings.OPENAI_MODEL), None)
    return _openai_graph_llm(_override_config(organization_id, override), organization_id)


@functools.cache
def _embedder(provider: str, dimension: int, config: OpenAIConfig) -> Embedder:
    if provider == "openai":
        return OpenAIEmbedder(config=config, dimension=dimension)
    if dimension != LOCAL_DIMENSION:
        raise ImproperlyConfigured(
            f"MIRIX_EMBEDDING_DIMENSION is {dimension} but the local embedder makes {LOCAL_DIMENSION}-d vectors"
        )
    return LocalEmbedder()


def embedder() -> Embedder:
    """The deployment's embedder. Every organization shares it: the vector dimension is global."""
    return _embedder(
        settings.EMBEDDING_PROVIDER,
        settings.EMBEDDING_DIMENSION,
        _deployment_openai(model=settings.OPENAI_EMBEDDING_MODEL),
    )


@functools.cache
def _local_answer_llm() -> LocalAnswerLLM:
    return LocalAnswerLLM()


@functools.lru_cache(maxsize=256)
def _openai_answer_llm(config: OpenAIConfig, organization_id: uuid.UUID | None) -> OpenAIAnswerLLM:
    return OpenAIAnswerLLM(config=config)


def answer_llm_for(organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None) -> AnswerLLM:
    """The answering agent of an organization's answer calls, chosen like :func:`llm_for`: the
    deployment's ``LLM_PROVIDER``, or the organization's own endpoint when it has one (always
    ``openai``)."""
    if override is None:
        if settings.LLM_PROVIDER == "local":
            return _local_answer_llm()
        return _openai_answer_llm(_deployment_openai(model=settings.OPENAI_MODEL), None)
    return _openai_answer_llm(_override_config(organization_id, override), organization_id)


@functools.cache
def _local_procedural_llm() -> LocalProceduralLLM:
    return LocalProceduralLLM()


@functools.lru_cache(maxsize=256)
def _openai_procedural_llm(config: OpenAIConfig, organization_id: uuid.UUID | None) -> OpenAIProceduralLLM:
    return OpenAIProceduralLLM(config=config)


def procedural_llm_for(
    organization_id: uuid.UUID | None = None, *, override: ProviderConfig | None = None
) -> ProceduralLLM:
    """The distiller, curator, abstractor and replayer of an organization's procedural memory,
    chosen like :func:`llm_for`."""
    if override is None:
        if settings.LLM_PROVIDER == "local":
            return _local_procedural_llm()
        return _openai_procedural_llm(_deployment_openai(model=settings.OPENAI_MODEL), None)
    return _openai_procedural_llm(_override_config(organization_id, override), organization_id)
