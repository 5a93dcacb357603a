from __future__ import annotations

import pytest

from apps.providers import openai_provider
from tests.clock import SkippingClock


@pytest.fixture(autouse=True)
def provider_clock(clock: SkippingClock, monkeypatch: pytest.MonkeyPatch) -> SkippingClock:
    """The openai provider waits between attempts on a clock that skips the waits."""
    monkeypatch.setattr(openai_provider, "clock", clock)
    return clock
