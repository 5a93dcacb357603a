"""Hostile text through the write path, the graph indexer and every read that reaches Cypher.

Memory text, entity names, search queries, anchor filters, cursors and frame ids carrying
Cypher and SQL metacharacters (quotes, ``$``, ``$$``, ``}) RETURN``, ``; DROP``,
backslashes) must be stored literally, raise no error, and reach nothing of another
organization (architecture §17: values pasted into Cypher text leaked other tenants' rows).
"""

from __future__ import annotations

import uuid
from urllib.parse import quote

import pytest
from django.db import connections

from apps.graph import adapter
from apps.graph.services import index_chunk
from apps.memory.models import EpisodicEvent
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, complete_writes, make_tenant

EPISODIC_TABLE = EpisodicEvent._meta.db_table
PAYLOADS = [
    "Liam O'Brien",
    'Ava "the Hammer" Novak',
    "Zoe $$ }) RETURN n //",
    "Quinn'}) MATCH (n) DETACH DELETE n RETURN 1 //",
    f"Robert'); DROP TABLE {EPISODIC_TABLE}; --",
    "Nina \\' \\\" \\\\ Back\\slash",
    "Omar $subject_id ${organization_id} $$",
    'Eve"}) WITH 1 AS x MATCH (m) RETURN m //',
]
CANARY = f"intruder-canary-{uuid.uuid4().hex[:10]}"


def _write(tenant: Tenant, subject: str, text: str) -> dict[str, object]:
    response = tenant.client().post(
        f"/v1/subjects/{subject}/memories",
        {"messages": [{"role": "user", "name": "Mia", "content": text, "timestamp": "2024-05-02T10:00:00Z"}]},
        format="json",
    )
    assert response.status_code == 202, response.content
    body: dict[str, object] = response.json()
    complete_writes(tenant.id)
    with organization_scope(tenant.id):
        result = index_chunk(chunk_id=uuid.UUID(str(body["chunk_id"])))
    assert result["failed"] == 0, result
    return body


def _graph_size(tenant: Tenant) -> int:
    with organization_scope(tenant.id):
        rows = adapter.cypher(organization_id=tenant.id, query="MATCH (n) RETURN count(n)", params={}, returns=["n"])
    return int(rows[0][0])


@pytest.fixture
def tenants() -> tuple[Tenant, Tenant]:
    owner, intruder = make_tenant("injection-owner"), make_tenant("injection-intruder")
    owner.subject("mia")
    intruder.subject("mia")
    _write(intruder, "mia", f"Yesterday I had lunch with Carla Diaz in Lisbon. Code word {CANARY}.")
    return owner, intruder


def test_hostile_names_are_stored_literally_and_touch_no_other_graph(tenants: tuple[Tenant, Tenant]) -> None:
    owner, intruder = tenants
    intruder_graph = _graph_size(intruder)
    for payload in PAYLOADS:
        _write(owner, "mia", f"Yesterday I had lunch with {payload} at the Lisbon office.")

    listed = owner.client().get("/v1/subjects/mia/memories?type=episodic&limit=100").json()["results"]
    stored = " ".join(str(value) for row in listed for value in row["content"].values())
    assert [p for p in PAYLOADS if p not in stored] == []  # every payload byte for byte
    assert CANARY not in stored

    anchors = owner.client().get("/v1/subjects/mia/graph/anchors?limit=200").json()["results"]
    names = [a["name"] for a in anchors]
    # Names with metacharacters made it into the graph, unescaped and unmangled.
    hostile = [n for n in names if any(c in n for c in "'\"$\\}")]
    assert hostile and all(any(n in p for p in PAYLOADS) for n in hostile), names
    assert _graph_size(intruder) == intruder_graph  # nothing written to or removed from another graph
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [f"public.{EPISODIC_TABLE}"])
        assert cursor.fetchone() == (True,)
        cursor.execute("SELECT count(*) FROM ag_catalog.ag_graph")
        assert cursor.fetchone()[0] >= 2


@pytest.mark.parametrize("payload", PAYLOADS)
def test_hostile_reads_answer_cleanly_and_only_with_the_callers_data(
    tenants: tuple[Tenant, Tenant], payload: str
) -> None:
    owner, intruder = tenants
    _write(owner, "mia", "Last week I visited the Lisbon aquarium with Tomas.")
    before = _graph_size(owner), _graph_size(intruder)
    client = owner.client()
    responses = {
        "search": client.post("/v1/subjects/mia/search", {"query": payload}, format="json"),
        "flat search": client.post("/v1/subjects/mia/search", {"query": payload, "mode": "flat"}, format="json"),
        "answer": client.post("/v1/subjects/mia/answer", {"query": payload}, format="json"),
        "resource search": client.post("/v1/subjects/mia/memories/resource/search", {"query": payload}, format="json"),
        "frames of anchor": client.get(f"/v1/subjects/mia/graph/frames?anchor={quote(payload)}"),
        "anchor cursor": client.get(f"/v1/subjects/mia/graph/anchors?cursor={quote(payload)}"),
        "frame cursor": client.get(f"/v1/subjects/mia/graph/frames?cursor={quote(payload)}"),
        "frame id": client.get(f"/v1/subjects/mia/graph/frames/{quote(payload, safe='')}"),
        "subject id": client.get(f"/v1/subjects/{quote(payload, safe='')}"),
    }
    for name, response in responses.items():
        assert response.status_code in {200, 404}, (name, response.status_code, response.content)
        assert CANARY not in response.content.decode() and str(intruder.id) not in response.content.decode(), name
    assert responses["frame id"].json()["error"]["code"] == "not_found"
    assert (_graph_size(owner), _graph_size(intruder)) == before
