"""A usage meter that keeps what it is told, for tests that need no database."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass
class RecordingMeter:
    records: list[dict[str, object]] = field(default_factory=list)

    def record(
        self,
        *,
        organization_id: uuid.UUID,
        api_key_id: uuid.UUID | None,
        purpose: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        self.records.append(
            {
                "organization_id": organization_id,
                "api_key_id": api_key_id,
                "purpose": purpose,
                "model": model,
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
            }
        )
