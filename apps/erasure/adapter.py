"""SQL and Cypher of erasure and export: every value a bound parameter, every identifier
generated on the server (graph names) or read from the catalog and quoted.

Subject-level functions run in the organization's scope (application role, RLS, the
organization's graph through ``apps.graph.adapter``). ``organization_rows_erase`` is a
platform operation on the owner connection, inside the caller's owner transaction;
``relation_rewrite`` runs on the owner connection outside any transaction (ADR 0022).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection
from typing import Any

import psycopg
from django.db import connections
from psycopg import sql

from apps.graph import adapter as graph

_VERTICES = "MATCH (n) WHERE n.subject_id = $subject_id RETURN n"
_EDGES = "MATCH (a)-[e]->(b) WHERE a.subject_id = $subject_id OR b.subject_id = $subject_id RETURN DISTINCT e"


_FRAMES_CITATIONS_SET = """
UNWIND $frames AS x
MATCH (f:Frame) WHERE f.subject_id = $subject_id AND f.frame_id = x.frame_id
SET f.citations = x.citations
RETURN count(f)
"""
_FRAMES_DELETE = """
UNWIND $frame_ids AS i
MATCH (f:Frame) WHERE f.subject_id = $subject_id AND f.frame_id = i
DETACH DELETE f
RETURN count(*)
"""
_ANCHORS_MENTIONS_SET = """
UNWIND $anchors AS x
MATCH (a:Anchor) WHERE a.subject_id = $subject_id AND a.key = x.key
SET a.episodic_ids = x.episodic_ids, a.semantic_ids = x.semantic_ids, a.mention_count = x.mention_count
RETURN count(a)
"""
_ANCHORS_DELETE = """
UNWIND $keys AS k
MATCH (a:Anchor) WHERE a.subject_id = $subject_id AND a.key = k
DETACH DELETE a
RETURN count(*)
"""


def _graph_write(organization_id: uuid.UUID, query: str, subject_id: uuid.UUID, **params: Any) -> int:
    if not any(params.values()):
        return 0
    rows = graph.cypher(
        organization_id=organization_id, query=query, params={"subject_id": str(subject_id), **params}, returns=["n"]
    )
    return int(rows[0][0]) if rows else 0


def graph_frames_update(*, organization_id: uuid.UUID, subject_id: uuid.UUID, frames: list[dict[str, Any]]) -> int:
    """Set the citations of the subject's frames (``frame_id``, ``citations`` each)."""
    return _graph_write(organization_id, _FRAMES_CITATIONS_SET, subject_id, frames=frames)


def graph_frames_delete(*, organization_id: uuid.UUID, subject_id: uuid.UUID, frame_ids: list[str]) -> int:
    """Delete the subject's frames with these ids and their arms; how many frames went."""
    return _graph_write(organization_id, _FRAMES_DELETE, subject_id, frame_ids=frame_ids)


def graph_anchors_update(*, organization_id: uuid.UUID, subject_id: uuid.UUID, anchors: list[dict[str, Any]]) -> int:
    """Set what the subject's anchors keep of their mentions (``key``, ``episodic_ids``,
    ``semantic_ids``, ``mention_count`` each)."""
    return _graph_write(organization_id, _ANCHORS_MENTIONS_SET, subject_id, anchors=anchors)


def graph_anchors_delete(*, organization_id: uuid.UUID, subject_id: uuid.UUID, keys: list[str]) -> int:
    """Delete the subject's anchors with these keys (and any edge left on them)."""
    return _graph_write(organization_id, _ANCHORS_DELETE, subject_id, keys=keys)


def graph_subject_elements(*, organization_id: uuid.UUID, subject_id: uuid.UUID) -> dict[str, list[Any]]:
    """The subject's vertices (anchors, frames, ...) and every edge touching them."""
    params = {"subject_id": str(subject_id)}
    vertices = graph.cypher(organization_id=organization_id, query=_VERTICES, params=params, returns=["n"])
    edges = graph.cypher(organization_id=organization_id, query=_EDGES, params=params, returns=["e"])
    return {"vertices": [row[0] for row in vertices], "edges": [row[0] for row in edges]}


def evidence_rows_delete(
    *, table: str, subject_id: uuid.UUID, ids: Collection[uuid.UUID]
) -> tuple[int, list[tuple[uuid.UUID, uuid.UUID | None]]]:
    """Delete the subject's rows with these ids from one evidence table, in the caller's
    organization scope; a surviving row that superseded one of them supersedes the nearest
    older survivor instead (erasure 0004). How many went, and those (row, supersedes) changes."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT erasure_evidence_rows_delete(%s, %s, %s::uuid[])", [table, subject_id, list(ids)])
        row = cursor.fetchone()
    result: dict[str, Any] = json.loads(row[0]) if row and isinstance(row[0], str) else (row[0] if row else {})
    relinked = [(uuid.UUID(s), uuid.UUID(p) if p else None) for s, p in result["relinked"]]
    return int(result["deleted"]), relinked


def _owner_connection() -> psycopg.Connection[Any]:
    wrapper = connections["owner"]
    wrapper.ensure_connection()
    raw = wrapper.connection
    assert raw is not None
    return raw  # type: ignore[no-any-return]


def _count(cursor: psycopg.Cursor[Any], query: sql.Composed, params: tuple[Any, ...] = ()) -> int:
    row = cursor.execute(query, params).fetchone()
    return int(row[0]) if row else 0


def _graph_size(cursor: psycopg.Cursor[Any], graph_name: str) -> dict[str, int]:
    if cursor.execute("SELECT 1 FROM ag_catalog.ag_graph WHERE name = %s", (graph_name,)).fetchone() is None:
        return {"graph_vertices": 0, "graph_edges": 0}
    return {
        key: _count(cursor, sql.SQL("SELECT count(*) FROM {}.{}").format(sql.Identifier(graph_name), sql.Identifier(t)))
        for key, t in (("graph_vertices", "_ag_label_vertex"), ("graph_edges", "_ag_label_edge"))
    }


def organization_rows_erase(
    *, organization_id: uuid.UUID, graph_name: str, keep_tables: Collection[str]
) -> dict[str, int]:
    """Drop the organization's graph and delete its rows from every table with an
    ``organization_id`` column (but ``keep_tables``), then the organization row itself.

    Runs inside ``transaction.atomic(using="owner")``: foreign keys are deferred, so the
    order of the deletes does not matter and everything commits or nothing does.
    """
    counts: dict[str, int] = {}
    with psycopg.Cursor(_owner_connection()) as cursor:
        counts.update(_graph_size(cursor, graph_name))
        graph.graph_drop(graph_name)
        tables = cursor.execute(
            """SELECT c.table_name FROM information_schema.columns c
               JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
               WHERE c.table_schema = 'public' AND c.column_name = 'organization_id' AND t.table_type = 'BASE TABLE'
               ORDER BY c.table_name"""
        ).fetchall()
        for (table,) in tables:
            if table in keep_tables:
                continue
            cursor.execute(
                sql.SQL("DELETE FROM public.{} WHERE organization_id = %s").format(sql.Identifier(table)),
                (organization_id,),
            )
            if cursor.rowcount:
                counts[table] = cursor.rowcount
        cursor.execute("DELETE FROM public.tenancy_organization WHERE id = %s", (organization_id,))
        counts["tenancy_organization"] = cursor.rowcount
    return counts


def graph_relations(*, graph_name: str) -> list[str]:
    """Every table of the organization's graph (the label tables and their parents), qualified."""
    with psycopg.Cursor(_owner_connection()) as cursor:
        rows = cursor.execute(
            """SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               JOIN ag_catalog.ag_graph g ON g.namespace = n.oid
               WHERE g.name = %s AND c.relkind = 'r' ORDER BY c.relname""",
            (graph_name,),
        ).fetchall()
    return [f"{graph_name}.{name}" for (name,) in rows]


def relation_rewrite(*, relation: str, lock_timeout_ms: int) -> str:
    """``VACUUM (FULL, ANALYZE)`` one table: the table, its TOAST table and its indexes are
    written anew from their live rows, so deleted rows leave no bytes in its files, and its
    statistics no longer quote them. A plain VACUUM frees the space but leaves the bytes in the
    pages (measured: ADR 0022).

    VACUUM cannot run in a transaction: this runs on the owner connection (the tables' owner)
    in autocommit, and refuses to run inside an owner transaction. It holds an exclusive lock
    on the table while it runs; ``lock_timeout_ms`` bounds the wait for it, so a queued erasure
    never stalls the table's readers behind it for longer than that.

    Returns ``rewritten``, ``busy`` (the lock was not granted in time), ``not_permitted`` (the
    connection's role may not maintain the table: VACUUM would only warn and skip it) or
    ``gone`` (the table no longer exists, e.g. a dropped graph).
    """
    wrapper = connections["owner"]
    if wrapper.in_atomic_block:
        raise RuntimeError("relation_rewrite runs outside any owner transaction")
    schema, _, table = relation.partition(".")
    with psycopg.Cursor(_owner_connection()) as cursor:
        allowed = cursor.execute(
            """SELECT pg_has_role(c.relowner, 'USAGE') OR has_table_privilege(c.oid, 'MAINTAIN')
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = %s AND c.relname = %s""",
            (schema, table),
        ).fetchone()
        if allowed is None:
            return "gone"
        if not allowed[0]:
            return "not_permitted"
        cursor.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(f"{int(lock_timeout_ms)}ms")))
        try:
            cursor.execute(
                sql.SQL("VACUUM (FULL, ANALYZE) {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
            )
        except psycopg.errors.LockNotAvailable:
            return "busy"
        finally:
            cursor.execute("RESET lock_timeout")
    return "rewritten"
