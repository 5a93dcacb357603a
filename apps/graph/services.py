from __future__ import annotations

import uuid
from typing import Any

from apps.graph import adapter

_COUNT_VERTICES = "MATCH (v) RETURN count(v)"


def graph_check(*, organization_id: uuid.UUID) -> dict[str, Any]:
    """Confirm the organization's graph answers Cypher and report its size."""
    rows = adapter.cypher(organization_id=organization_id, query=_COUNT_VERTICES, params={}, returns=["n"])
    return {"graph": "ok", "vertices": int(rows[0][0]) if rows else 0}
