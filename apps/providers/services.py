"""Token metering: one row per provider reply, in the organization's own scope."""

from __future__ import annotations

import uuid

from apps.providers.models import ProviderUsage
from apps.tenancy.scope import organization_scope


def usage_record(
    *, organization_id: uuid.UUID, purpose: str, model: str, prompt_tokens: int, completion_tokens: int
) -> ProviderUsage:
    """Needs the organization in scope: the fail-closed manager and RLS both check it."""
    return ProviderUsage.objects.create(
        organization_id=organization_id,
        purpose=purpose,
        model=model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


class DatabaseUsageMeter:
    """The production ``UsageMeter``.

    Provider calls are best made outside any transaction (they are slow), so the meter opens
    the organization's scope for the write itself; inside an open scope it nests as a savepoint.
    """

    def record(
        self, *, organization_id: uuid.UUID, purpose: str, model: str, prompt_tokens: int, completion_tokens: int
    ) -> None:
        with organization_scope(organization_id):
            usage_record(
                organization_id=organization_id,
                purpose=purpose,
                model=model,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
