from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from apps.providers.config import OpenAIConfig
from apps.providers.interfaces import MeteringContext
from tests.providers.openai_stub import OpenAIStub


@dataclass
class RecordingMeter:
    """A UsageMeter that keeps what it is told, for tests that need no database."""

    records: list[dict[str, object]] = field(default_factory=list)

    def record(
        self, *, organization_id: uuid.UUID, purpose: str, model: str, prompt_tokens: int, completion_tokens: int
    ) -> None:
        self.records.append(
            {
                "organization_id": organization_id,
                "purpose": purpose,
                "model": model,
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
            }
        )


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    stub = OpenAIStub()
    try:
        yield stub
    finally:
        stub.close()


@pytest.fixture
def stub_config(openai_stub: OpenAIStub) -> OpenAIConfig:
    return OpenAIConfig(
        model="gpt-test",
        api_key="sk-test-key",
        base_url=openai_stub.url,
        timeout_seconds=2.0,
        max_attempts=3,
        retry_base_delay_seconds=0.001,
    )


@pytest.fixture
def meter() -> RecordingMeter:
    return RecordingMeter()


@pytest.fixture
def metering(meter: RecordingMeter) -> MeteringContext:
    return MeteringContext(organization_id=uuid.uuid4(), meter=meter)
