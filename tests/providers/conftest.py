from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest

from apps.providers import openai_provider
from apps.providers.interfaces import MeteringContext
from tests.clock import SkippingClock


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


@pytest.fixture(autouse=True)
def provider_clock(clock: SkippingClock, monkeypatch: pytest.MonkeyPatch) -> SkippingClock:
    """The openai provider waits between attempts on a clock that skips the waits."""
    monkeypatch.setattr(openai_provider, "clock", clock)
    return clock


@pytest.fixture
def meter() -> RecordingMeter:
    return RecordingMeter()


@pytest.fixture
def metering(meter: RecordingMeter) -> MeteringContext:
    return MeteringContext(organization_id=uuid.uuid4(), meter=meter)
