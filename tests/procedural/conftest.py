from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.providers.openai_stub import OpenAIStub


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    server = OpenAIStub()
    try:
        yield server
    finally:
        server.close()
