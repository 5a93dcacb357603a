"""Provider selection by settings; per-organization overrides reach their own endpoint."""

from __future__ import annotations

import importlib
import uuid

import pytest
from django.core.exceptions import ImproperlyConfigured
from pytest_django.fixtures import Settings

from apps.dream.local import LocalDreamJudge
from apps.graph.extraction.local import LocalGraphLLM
from apps.memory.writing.local import LocalMemoryLLM
from apps.procedural.local import LocalProceduralLLM
from apps.providers import registry
from apps.providers.config import ProviderConfig
from apps.providers.errors import ProviderError
from apps.providers.interfaces import MeteringContext
from apps.providers.local_embedder import LocalEmbedder
from apps.providers.openai_provider import OpenAIEmbedder, OpenAIMemoryLLM
from apps.retrieval.answer_local import LocalAnswerLLM
from tests.providers.conversation import conversation
from tests.providers.openai_stub import OpenAIStub, json_reply

pytestmark = pytest.mark.unit

ROUTE = {"memory_types": ["episodic"], "reason": "an event"}


def test_local_is_the_default_for_both() -> None:
    assert isinstance(registry.llm_for(), LocalMemoryLLM)
    assert isinstance(registry.llm_for(uuid.uuid4()), LocalMemoryLLM)
    assert isinstance(registry.embedder(), LocalEmbedder)
    assert registry.llm_for() is registry.llm_for() and registry.embedder() is registry.embedder()


def test_the_deployment_openai_endpoint(settings: Settings, openai_stub: OpenAIStub, metering: MeteringContext) -> None:
    settings.LLM_PROVIDER = "openai"
    settings.OPENAI_BASE_URL = openai_stub.url
    settings.OPENAI_API_KEY = "sk-deployment"
    openai_stub.queue(json_reply(ROUTE))

    llm = registry.llm_for()
    assert isinstance(llm, OpenAIMemoryLLM) and llm is registry.llm_for()
    assert llm.route(conversation("s1-2"), metering=metering).memory_types == ["episodic"]
    [request] = openai_stub.requests
    assert request.body["model"] == settings.OPENAI_MODEL == "gpt-4.1-mini"
    assert request.headers["authorization"] == "Bearer sk-deployment"


def test_an_organization_override_uses_its_own_endpoint_model_and_key(
    openai_stub: OpenAIStub, metering: MeteringContext
) -> None:
    organization_id = uuid.uuid4()
    override = ProviderConfig(base_url=openai_stub.url, model="org-model", api_key="sk-organization")
    openai_stub.queue(json_reply(ROUTE))

    llm = registry.llm_for(organization_id, override=override)  # the deployment itself is local
    assert isinstance(llm, OpenAIMemoryLLM)
    llm.route(conversation("s1-2"), metering=metering)

    [request] = openai_stub.requests
    assert request.body["model"] == "org-model"
    assert request.headers["authorization"] == "Bearer sk-organization"
    assert registry.llm_for(organization_id, override=override) is llm
    assert registry.llm_for(uuid.uuid4(), override=override) is not llm  # no client shared across tenants
    assert "sk-organization" not in repr(override)


def test_every_local_implementation_is_built_from_its_domain_app() -> None:
    assert isinstance(registry.graph_llm_for(), LocalGraphLLM)
    assert isinstance(registry.dream_judge_for(), LocalDreamJudge)
    assert isinstance(registry.answer_llm_for(), LocalAnswerLLM)
    assert isinstance(registry.procedural_llm_for(), LocalProceduralLLM)
    assert registry.graph_llm_for() is registry.graph_llm_for()


def test_every_registered_path_names_a_class() -> None:
    for name, path in registry.IMPLEMENTATIONS.items():
        module, _, attribute = path.partition(":")
        assert isinstance(getattr(importlib.import_module(module), attribute), type), name


def test_an_override_needs_an_organization_and_a_key() -> None:
    with pytest.raises(ValueError, match="organization_id"):
        registry.llm_for(override=ProviderConfig(api_key="sk-organization"))
    with pytest.raises(ProviderError) as caught:
        registry.llm_for(uuid.uuid4(), override=ProviderConfig(model="org-model"))
    assert caught.value.details == {"reason": "not_configured"}


def test_the_openai_embedder_and_the_deployment_dimension(settings: Settings) -> None:
    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_DIMENSION = 256
    settings.OPENAI_API_KEY = "sk-deployment"

    embedder = registry.embedder()
    assert isinstance(embedder, OpenAIEmbedder)
    assert (embedder.model_name, embedder.dimension) == ("text-embedding-3-small", 256)


def test_the_local_embedder_refuses_another_dimension(settings: Settings) -> None:
    settings.EMBEDDING_DIMENSION = 1536
    with pytest.raises(ImproperlyConfigured, match="MIRIX_EMBEDDING_DIMENSION"):
        registry.embedder()
