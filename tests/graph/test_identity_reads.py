"""Anchors and frames read by identity in SQL from the graph's label tables: the same vertices a
Cypher MATCH returns, only the subject's, only the organization's, through the unique indexes."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.db import connection

from apps.graph import adapter, store
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.graph.test_adjacency import _anchor, _frame, _write_graph

# What the store ran before the SQL reads: one GIN containment lookup per value.
CYPHER_ANCHORS = """
UNWIND $keys AS k
MATCH (n:Anchor {subject_id: $subject_id, key: k})
RETURN properties(n)
"""
CYPHER_FRAMES = """
UNWIND $frame_ids AS i
MATCH (f:Frame {subject_id: $subject_id, frame_id: i})
RETURN properties(f)
"""
TRICKY = "x'}) RETURN 1 $$ \" ::vertex \\ ü 名"


def _graph() -> tuple[Any, Any, Any, list[dict[str, Any]], list[dict[str, Any]]]:
    tenant = make_tenant()
    subject, other = tenant.subject(), tenant.subject()
    rows = [str(uuid.uuid4()) for _ in range(4)]
    anchors = [
        {**_anchor(subject, "ana", rows[:2]), "aliases": [TRICKY], "admission_score": 0.25},
        _anchor(subject, "bo", []),
        _anchor(subject, TRICKY, rows[2:3]),
    ]
    frames = [
        _frame(subject, "f1", [["agent", "ana"], ["patient", "bo"]]),
        {
            **_frame(subject, "f2", [["agent", "ana"], ["theme", TRICKY]], predicate="paint"),
            "literals": {"count": 3, "price": 2.5, "note": TRICKY},
            "event_time": None,
        },
    ]
    _write_graph(subject, anchors, frames)
    # The other subject of the same organization has an anchor and a frame of the same identity.
    _write_graph(other, [_anchor(other, "ana", rows[3:])], [_frame(other, "f9", [["agent", "ana"], ["agent", "ana"]])])
    return tenant, subject, other, anchors, frames


def test_identity_reads_return_what_the_cypher_match_returns() -> None:
    tenant, subject, other, anchors, frames = _graph()
    keys = ["ana", "bo", TRICKY, "nobody", "ana"]
    frame_ids = ["f2", "f1", "f9", "missing"]
    with organization_scope(tenant.id):
        by_key = store.anchors_by_key(organization_id=tenant.id, subject_id=subject.id, keys=keys)
        by_id = store.frames_by_id(organization_id=tenant.id, subject_id=subject.id, frame_ids=frame_ids)
        names = store.anchor_properties(
            organization_id=tenant.id, subject_id=subject.id, keys=keys, properties=["name", "type", "absent"]
        )
        cypher_anchors = adapter.cypher(
            organization_id=tenant.id,
            query=CYPHER_ANCHORS,
            params={"subject_id": str(subject.id), "keys": keys},
            returns=["props"],
        )
        cypher_frames = adapter.cypher(
            organization_id=tenant.id,
            query=CYPHER_FRAMES,
            params={"subject_id": str(subject.id), "frame_ids": frame_ids},
            returns=["props"],
        )
        others = store.frames_by_id(organization_id=tenant.id, subject_id=other.id, frame_ids=frame_ids)
    assert by_key == {row[0]["key"]: row[0] for row in cypher_anchors}
    assert by_id == {row[0]["frame_id"]: row[0] for row in cypher_frames}
    assert sorted(by_key) == sorted(["ana", "bo", TRICKY])  # absent keys left out, repeats once
    assert by_key["ana"] == anchors[0]  # every property, types kept (float, lists, the payload)
    stored = [{k: v for k, v in f.items() if v is not None} for f in frames]  # a graph keeps no nulls
    assert by_id == {f["frame_id"]: f for f in stored}  # not the other subject's f9
    assert by_id["f2"]["literals"] == {"count": 3, "price": 2.5, "note": TRICKY}
    assert names == {a["key"]: {"key": a["key"], "name": a["name"], "type": "person", "absent": None} for a in anchors}
    assert list(others) == ["f9"]


def test_another_organization_reads_nothing_of_the_graph() -> None:
    tenant, subject, _, _, _ = _graph()
    intruder = make_tenant()
    assert tenant.id in adapter._GRAPH_NAMES  # the name is remembered: the scope check still holds
    with organization_scope(intruder.id):
        with pytest.raises(adapter.CrossTenantGraphAccess):
            store.frames_by_id(organization_id=tenant.id, subject_id=subject.id, frame_ids=["f1"])
        with pytest.raises(adapter.CrossTenantGraphAccess):
            store.anchors_by_key(organization_id=tenant.id, subject_id=subject.id, keys=["ana"])
        # Its own graph does not hold them, whatever subject id it names.
        assert store.frames_by_id(organization_id=intruder.id, subject_id=subject.id, frame_ids=["f1"]) == {}
        assert store.anchors_by_key(organization_id=intruder.id, subject_id=subject.id, keys=["ana"]) == {}
    with pytest.raises(Exception, match="organization"):
        store.frames_by_id(organization_id=tenant.id, subject_id=subject.id, frame_ids=["f1"])


def test_identity_reads_go_through_the_unique_indexes() -> None:
    tenant = make_tenant()
    graph = tenant.graph()
    with organization_scope(tenant.id), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # an empty table: make the planner show its index
        plans = {}
        for label, properties in (("Anchor", ("name",)), ("Frame", ())):
            statement = adapter.identity_lookup(graph, label, properties).as_string(adapter._raw("default"))
            cursor.execute(f"EXPLAIN {statement}", [[json.dumps("a"), json.dumps("b")], json.dumps("s")])
            plans[label] = "\n".join(row[0] for row in cursor.fetchall())
    assert (
        "Index Cond: ((ag_catalog.agtype_access_operator(VARIADIC ARRAY[properties, '\"subject_id\"'" in plans["Anchor"]
    )
    assert '"key"' in plans["Anchor"].split("Index Cond:")[1]
    assert "Index Cond: (ag_catalog.agtype_access_operator(VARIADIC ARRAY[properties, '\"frame_id\"'" in plans["Frame"]


@pytest.mark.unit
def test_identity_lookups_take_only_known_labels_and_plain_property_names() -> None:
    with pytest.raises(ValueError, match="label"):
        adapter.identity_lookup("g_" + "0" * 32, "ARM")
    with pytest.raises(ValueError, match="property"):
        adapter.identity_lookup("g_" + "0" * 32, "Anchor", ["name; DROP"])
    with pytest.raises(ValueError, match="graph name"):
        adapter.identity_lookup('g"; DROP', "Anchor")


def test_an_offboarded_organization_has_no_graph_to_read() -> None:
    from apps.tenancy.services import organization_offboard

    tenant, subject, _, _, _ = _graph()
    organization_offboard(organization_id=tenant.id)
    assert tenant.id not in adapter._GRAPH_NAMES
    with organization_scope(tenant.id), pytest.raises(adapter.CrossTenantGraphAccess):
        store.frames_by_id(organization_id=tenant.id, subject_id=subject.id, frame_ids=["f1"])
