"""Load the local models of this process before it serves: the embedder and the NLP pipeline.

Both load lazily on first use, once per process; in an API worker that first use is a
client's first write or search, which then pays for loading them (seconds, tens of seconds on
a busy machine). The API server calls ``warm_up_models`` once in each worker before it accepts
a request (``infra.gunicorn_config``). A remote provider needs no warm-up.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from django.conf import settings

from apps.providers.interfaces import MeteringContext
from apps.providers.registry import embedder, llm_for
from apps.providers.schemas import InputMessage, WriterInput


class _Unmetered:
    """Local inference costs nothing; a warm-up is nobody's usage."""

    def record(
        self, *, organization_id: uuid.UUID, purpose: str, model: str, prompt_tokens: int, completion_tokens: int
    ) -> None:
        return None


def warm_up_models() -> list[str]:
    """Run each local model once on a short text; the names of the models warmed up."""
    loaded: list[str] = []
    if settings.EMBEDDING_PROVIDER == "local":
        embedder().embed(["warm-up"])
        loaded.append("embedder")
    if settings.LLM_PROVIDER == "local":
        message = InputMessage(
            message_id="warm-up", role="user", content="I moved to Lisbon last May.", timestamp=datetime.now(UTC)
        )
        metering = MeteringContext(organization_id=uuid.UUID(int=0), meter=_Unmetered())
        llm_for().route(WriterInput(messages=[message]), metering=metering)
        loaded.append("language pipeline")
    return loaded
