"""The organization's procedural LLM (its provider override, else the deployment's) and the
metering its calls are billed through."""

from __future__ import annotations

import uuid

from apps.providers.interfaces import MeteringContext, ProceduralLLM
from apps.providers.registry import procedural_llm_for
from apps.providers.selectors import provider_override
from apps.providers.services import DatabaseUsageMeter


def procedural_llm(organization_id: uuid.UUID) -> ProceduralLLM:
    return procedural_llm_for(organization_id, override=provider_override(organization_id=organization_id))


def metering_for(organization_id: uuid.UUID) -> MeteringContext:
    return MeteringContext(organization_id=organization_id, meter=DatabaseUsageMeter())
