"""The only module that speaks to Apache AGE.

Every call takes the organization explicitly, checks it against the scope of the current
transaction, resolves that organization's graph through RLS, and binds every value as an
agtype parameter map. Graph names are generated on the server and validated before they are
placed into SQL as literals (AGE refuses a bound graph name); Cypher text is always a
constant of the calling module, never built from input.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from django.conf import settings
from django.db import connections, transaction
from psycopg import sql

from apps.platform.errors import ApplicationError
from apps.platform.faults import fault_pause
from apps.platform.replica import read_connection
from apps.platform.sql_arrays import text_array
from apps.tenancy.lifecycle import OrganizationHooks
from apps.tenancy.models import GRAPH_NAME_PATTERN
from apps.tenancy.scope import current_organization_id
from apps.tenancy.selectors import organization_graph_name

VERTEX_LABELS = ("Anchor", "Frame")
EDGE_LABELS = ("ARM",)
logger = logging.getLogger(__name__)

_COLUMN_PATTERN = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# (label, properties) for btree indexes on agtype_access_operator (ADR 0017).
PROPERTY_INDEXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Anchor", ("subject_id",)),
    ("Anchor", ("subject_id", "type")),
    ("Frame", ("subject_id",)),
    ("Frame", ("subject_id", "predicate")),
)
# Identity keys: unique expression indexes (AGE MERGE alone duplicates under concurrency).
UNIQUE_INDEXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Anchor", ("subject_id", "key")),
    ("Frame", ("frame_id",)),
)


# The identity property of each vertex label: lookups by it read the label's table in SQL
# through the unique expression index above (see :func:`vertices_by_identity`).
IDENTITY_PROPERTY = {"Anchor": "key", "Frame": "frame_id"}


class CrossTenantGraphAccess(ApplicationError):
    status_code = 404
    code = "not_found"


_AGE_SEARCH_PATH = 'SET LOCAL search_path = ag_catalog, "$user", public'


def _checked_graph_name(graph_name: str) -> str:
    if not GRAPH_NAME_PATTERN.match(graph_name):
        raise ValueError(f"invalid graph name {graph_name!r}")
    return graph_name


def _property_expression(prop: str) -> sql.Composable:
    return sql.SQL("ag_catalog.agtype_access_operator(VARIADIC ARRAY[properties, {}::ag_catalog.agtype])").format(
        sql.Literal(json.dumps(prop))
    )


def graph_ddl(graph_name: str, app_role: str) -> list[sql.Composed]:
    """Statements that create a graph with every label, index and grant, in order."""
    graph = _checked_graph_name(graph_name)
    statements: list[sql.Composed] = [sql.SQL("SELECT ag_catalog.create_graph({})").format(sql.Literal(graph))]
    statements += [
        sql.SQL("SELECT ag_catalog.create_vlabel({}, {})").format(sql.Literal(graph), sql.Literal(label))
        for label in VERTEX_LABELS
    ]
    statements += [
        sql.SQL("SELECT ag_catalog.create_elabel({}, {})").format(sql.Literal(graph), sql.Literal(label))
        for label in EDGE_LABELS
    ]
    for label in VERTEX_LABELS:
        statements.append(
            sql.SQL("CREATE INDEX ON {}.{} USING gin (properties)").format(sql.Identifier(graph), sql.Identifier(label))
        )
    for unique, indexes in ((False, PROPERTY_INDEXES), (True, UNIQUE_INDEXES)):
        for label, props in indexes:
            statements.append(
                sql.SQL("CREATE {}INDEX ON {}.{} ({})").format(
                    sql.SQL("UNIQUE " if unique else ""),
                    sql.Identifier(graph),
                    sql.Identifier(label),
                    sql.SQL(", ").join(_property_expression(p) for p in props),
                )
            )
    role = sql.Identifier(app_role)
    statements += [
        sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(graph), role),
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {} TO {}").format(
            sql.Identifier(graph), role
        ),
        sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(sql.Identifier(graph), role),
    ]
    return statements


def _app_role() -> str:
    return str(settings.DATABASES["default"]["USER"])


def _raw(alias: str) -> psycopg.Connection[Any]:
    wrapper = connections[alias]
    wrapper.ensure_connection()
    raw = wrapper.connection
    assert raw is not None
    return raw  # type: ignore[no-any-return]


def graph_create(graph_name: str) -> None:
    """Create the graph as the owner role; call inside ``transaction.atomic(using="owner")``."""
    raw = _raw("owner")
    with psycopg.Cursor(raw) as cursor:
        cursor.execute(_AGE_SEARCH_PATH)
        for statement in graph_ddl(graph_name, _app_role()):
            cursor.execute(statement)


# An organization's graph is created on its first write (ADR 0050), not with the organization:
# an empty graph costs about 37 relations and 0.35 MB of catalog and files. Creating and
# dropping one take this transaction-scoped advisory lock on the graph's name, so two first
# writes create it once and a drop never races a creation. A creation waits at most this long
# for the lock (a concurrent creation takes well under a second; a drop waits on the rows it
# deletes, which may include the writer's own).
GRAPH_CREATE_LOCK_TIMEOUT_MS = 10_000
_GRAPH_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('graph:' || %s, 0))"


def graph_drop(graph_name: str) -> None:
    """Drop the graph if it was ever created; call inside ``transaction.atomic(using="owner")``."""
    for organization_id, name in list(_GRAPH_NAMES.items()):
        if name == graph_name:
            _GRAPH_NAMES.pop(organization_id, None)
    raw = _raw("owner")
    with psycopg.Cursor(raw) as cursor:
        cursor.execute(_GRAPH_LOCK, (_checked_graph_name(graph_name),))
        cursor.execute(_AGE_SEARCH_PATH)
        exists = cursor.execute("SELECT 1 FROM ag_catalog.ag_graph WHERE name = %s", (graph_name,)).fetchone()
        if exists:
            cursor.execute(sql.SQL("SELECT ag_catalog.drop_graph({}, true)").format(sql.Literal(graph_name)))


def graph_ensure(*, organization_id: uuid.UUID) -> str:
    """The organization's graph, created now if it does not exist yet; its name.

    Runs in an owner transaction of its own, committed before the caller's transaction writes
    to the graph (the application role cannot create schemas): under the advisory lock, the
    organization row and the graph are read again, so of two concurrent first writes one
    creates the graph and the other finds it; an organization deleted meanwhile gets none. A
    graph created for a write that then rolls back stays, empty, like any graph."""
    graph_name = _graph_name_for(organization_id)
    if graph_name is not None:
        return graph_name
    graph_name = _checked_graph_name(organization_graph_name(organization_id=organization_id) or "")
    with transaction.atomic(using="owner", durable=True), psycopg.Cursor(_raw("owner")) as cursor:
        cursor.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(f"{GRAPH_CREATE_LOCK_TIMEOUT_MS}ms")))
        cursor.execute(_GRAPH_LOCK, (graph_name,))
        if cursor.execute("SELECT 1 FROM tenancy_organization WHERE id = %s", (organization_id,)).fetchone() is None:
            raise CrossTenantGraphAccess("No such graph.")  # deleted since the read above
        if cursor.execute("SELECT 1 FROM ag_catalog.ag_graph WHERE name = %s", (graph_name,)).fetchone() is None:
            fault_pause("graph.before_create")
            graph_create(graph_name)
            logger.info("graph created", extra={"organization_id": str(organization_id)})
    return graph_name


# What each organization keeps beside its rows: its graph, once it has one, is dropped with it
# (registered with tenancy by ``GraphConfig.ready``).
organization_graph_hooks = OrganizationHooks(
    name="graph", offboarded=lambda organization: graph_drop(organization.graph_name)
)


def graph_exists(graph_name: str, *, using: str = "default") -> bool:
    with psycopg.Cursor(_raw(using)) as cursor:
        row = cursor.execute(
            "SELECT 1 FROM ag_catalog.ag_graph WHERE name = %s", (_checked_graph_name(graph_name),)
        ).fetchone()
    return row is not None


# An organization's graph name is set once, when the organization is created, and its graph
# created on its first write. The name of a graph that exists is remembered for the process
# (dropped with the graph); the scope check below still runs on every call. Saves one query
# per graph read (a search makes about five); an organization without a graph costs two.
_GRAPH_NAMES: dict[uuid.UUID, str] = {}
_GRAPH_NAMES_KEPT = 4096


def _graph_name_for(organization_id: uuid.UUID) -> str | None:
    """The name of the organization's graph, or ``None`` while it has none (nothing written)."""
    if organization_id != current_organization_id():
        raise CrossTenantGraphAccess("No such graph.")
    graph_name = _GRAPH_NAMES.get(organization_id)
    if graph_name is None:
        found = organization_graph_name(organization_id=organization_id)
        if found is None:
            raise CrossTenantGraphAccess("No such graph.")
        graph_name = _checked_graph_name(found)
        if not graph_exists(graph_name):
            return None
        if len(_GRAPH_NAMES) >= _GRAPH_NAMES_KEPT:
            _GRAPH_NAMES.clear()
        _GRAPH_NAMES[organization_id] = graph_name
    return graph_name


def graph_created(*, organization_id: uuid.UUID) -> bool:
    """Whether the organization's graph exists yet (it is created on the first write)."""
    return _graph_name_for(organization_id) is not None


# Clauses that add to a graph. Every other statement on a graph not created yet reads, updates
# or deletes nothing: it returns no rows without touching AGE.
_CREATES = re.compile(r"\b(CREATE|MERGE)\b", re.IGNORECASE)


def cypher(
    *,
    organization_id: uuid.UUID,
    query: str,
    params: Mapping[str, Any],
    returns: Sequence[str],
) -> list[tuple[Any, ...]]:
    """Run one Cypher statement in the organization's graph; values only through ``params``.

    Returned agtype values are decoded to Python (vertices and edges as dicts). Before the
    organization's first write it has no graph: a statement that creates (``CREATE``,
    ``MERGE``) creates the graph first (:func:`graph_ensure`), any other returns no rows.
    """
    if "$$" in query:
        raise ValueError("Cypher text must not contain $$")
    if not returns or not all(_COLUMN_PATTERN.match(c) for c in returns):
        raise ValueError("invalid return columns")
    graph_name = _graph_name_for(organization_id)
    reading = read_connection()
    if not reading.in_atomic_block:
        raise RuntimeError("graph calls run inside the organization's transaction")
    if graph_name is None:
        if not _CREATES.search(query):
            return []
        graph_name = graph_ensure(organization_id=organization_id)
    statement = sql.SQL("SELECT {cols} FROM ag_catalog.cypher({graph}, $$ {query} $$, %s) AS ({defs})").format(
        cols=sql.SQL(", ").join(sql.Identifier(c) for c in returns),
        graph=sql.Literal(graph_name),
        query=sql.SQL(query),  # constant text of the calling module
        defs=sql.SQL(", ").join(sql.SQL("{} ag_catalog.agtype").format(sql.Identifier(c)) for c in returns),
    )
    # A plain psycopg cursor binds on the server: AGE requires the map to be a real parameter.
    # agtype has no client loader, so its values arrive as text and are decoded below.
    with psycopg.Cursor(_raw(reading.alias)) as cursor:
        cursor.execute(_AGE_SEARCH_PATH)
        rows = cursor.execute(statement, (json.dumps(dict(params)),)).fetchall()
        cursor.execute("RESET search_path")
    return [tuple(decode_agtype(value) for value in row) for row in rows]


def vertices_by_identity(
    *,
    organization_id: uuid.UUID,
    label: str,
    subject_id: uuid.UUID,
    values: Sequence[str],
    properties: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The subject's vertices of ``label`` whose identity property (an anchor's ``key``, a
    frame's ``frame_id``) is one of ``values``, as property maps, in no particular order; with
    ``properties``, only those (a missing one is ``None``, as Cypher returns it).

    One SQL statement on the label's table of the organization's graph — the rows a Cypher
    ``MATCH`` on the same label reads — resolved through the label's unique expression index:
    one btree probe per value, where ``UNWIND … MATCH (n {…})`` makes one GIN containment
    lookup and one Cypher execution step per value. Same tenant checks as :func:`cypher`."""
    graph_name = _graph_name_for(organization_id)
    reading = read_connection()
    if not reading.in_atomic_block:
        raise RuntimeError("graph calls run inside the organization's transaction")
    if graph_name is None or not values:
        return []
    statement = _identity_lookup_text(graph_name, label, tuple(properties))
    with reading.cursor() as cursor:
        cursor.execute(statement, [text_array(json.dumps(v) for v in values), json.dumps(str(subject_id))])
        rows = cursor.fetchall()
    if properties:
        return [dict(zip(properties, decode_agtype(row[0]), strict=True)) for row in rows]
    return [decode_agtype(row[0]) for row in rows]


@functools.lru_cache(maxsize=1024)
def _identity_lookup_text(graph_name: str, label: str, properties: tuple[str, ...]) -> str:
    """The text of :func:`identity_lookup`, composed once per graph, label and properties."""
    return identity_lookup(graph_name, label, properties).as_string(None)


def identity_lookup(graph_name: str, label: str, properties: Sequence[str] = ()) -> sql.Composed:
    """The statement of :func:`vertices_by_identity`; parameters: the identity values as an
    array of JSON texts, then the subject id as a JSON text."""
    identity = IDENTITY_PROPERTY.get(label)
    if identity is None:
        raise ValueError(f"no identity lookup for label {label!r}")
    if not all(_COLUMN_PATTERN.match(p) for p in properties):
        raise ValueError("invalid property names")
    # A scalar cast to text loses its quotes; a list of the properties keeps agtype's notation.
    columns = (
        sql.SQL("ag_catalog.agtype_build_list({})::text").format(
            sql.SQL(", ").join(_property_expression(p) for p in properties)
        )
        if properties
        else sql.SQL("properties::text")
    )
    # Schema-qualified operator and type: no search_path change (and its round trips) needed.
    return sql.SQL(
        "SELECT {columns} FROM {graph}.{label}"
        " WHERE {identity} OPERATOR(ag_catalog.=) ANY(%s::text[]::ag_catalog.agtype[])"
        " AND {subject} OPERATOR(ag_catalog.=) %s::text::ag_catalog.agtype"
    ).format(
        columns=columns,
        graph=sql.Identifier(_checked_graph_name(graph_name)),
        label=sql.Identifier(label),
        identity=_property_expression(identity),
        subject=_property_expression("subject_id"),
    )


def decode_agtype(text: str | None) -> Any:
    """agtype text → Python. Vertices, edges and paths carry ``::vertex`` style suffixes
    outside string literals; those are dropped, string contents are left untouched."""
    if text is None:
        return None
    if "::" not in text:  # nothing to drop: the text is JSON as it stands
        return json.loads(text)
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            i += 1
            continue
        if char == '"':
            in_string = True
        elif text.startswith("::", i):
            i += 2
            while i < len(text) and text[i].isalpha():
                i += 1
            continue
        out.append(char)
        i += 1
    return json.loads("".join(out))
