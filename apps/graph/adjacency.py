"""The adjacency index beside the graph: which frames touch an anchor, and which evidence rows
mention it, as two relational tables with btree indexes (``graph_anchor_frame``,
``graph_anchor_row``; RLS like every tenant table).

AGE answers "the frames of this anchor" by walking every ARM edge of the anchor and reading
every frame, and an anchor vertex that holds every row id mentioning it is megabytes for a hub
(each read of any of its properties reads all of it). Here the same questions are one bounded
index scan each: ``ORDER BY … LIMIT`` over ``(anchor, predicate, frame id)`` and
``(anchor, memory type, arrival)``. The graph stays the source of anchors and frames; the
store's writes maintain these tables in the same transaction, and ``store.adjacency_rebuild``
derives them again from the graph (ADR 0014).

Every function runs in the caller's transaction and organization scope; every statement
filters by organization and subject.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from django.db import connection

from apps.platform.replica import read_connection
from apps.platform.sql_arrays import text_array

# What an anchor vertex keeps of the rows that mention it: the newest few of each type (the
# full list lives in graph_anchor_row). Retrieval reads no more than this per anchor either.
ANCHOR_ROWS_KEPT = 24

_ROLES_UNION = "ARRAY(SELECT DISTINCT r FROM unnest({a} || {b}) AS r ORDER BY r)"

_FRAMES_INSERT = f"""
INSERT INTO graph_anchor_frame (organization_id, subject_id, anchor_key, frame_id, predicate, roles, event_time, citations)
SELECT %s, %s, k, f, p, string_to_array(r, ','), e, string_to_array(c, ',')::uuid[]
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) AS t(k, f, p, r, e, c)
ON CONFLICT (organization_id, subject_id, anchor_key, frame_id)
DO UPDATE SET roles = {_ROLES_UNION.format(a="graph_anchor_frame.roles", b="EXCLUDED.roles")}, citations = EXCLUDED.citations
"""
_CITATIONS_SET = """
UPDATE graph_anchor_frame AS a SET citations = string_to_array(v.c, ',')::uuid[]
FROM unnest(%s::text[], %s::text[]) AS v(f, c)
WHERE a.organization_id = %s AND a.subject_id = %s AND a.frame_id = v.f
"""
# Each mention takes a half-precision copy of its row's vector (ADR 0019) and a copy of its
# full-text vector (ADR 0115).
_ROWS_INSERT = """
INSERT INTO graph_anchor_row (organization_id, subject_id, anchor_key, memory_type, row_id, embedding, embedding_model,
                              search_vector)
SELECT %(organization)s, %(subject)s, t.k, t.m, t.r::uuid,
       CASE WHEN v.organization_id = %(organization)s THEN v.embedding END,
       CASE WHEN v.organization_id = %(organization)s THEN v.embedding_model ELSE '' END,
       CASE WHEN v.organization_id = %(organization)s THEN v.search_vector END
FROM unnest(%(keys)s::text[], %(types)s::text[], %(rows)s::text[]) WITH ORDINALITY AS t(k, m, r, n)
LEFT JOIN LATERAL (
    -- One primary-key probe per mention: with the organization in the scan's condition, the
    -- planner may prefer the organization's index (every row of a large tenant, per mention).
    SELECT e.embedding::halfvec AS embedding, e.embedding_model, e.search_vector, e.organization_id
    FROM memory_episodic_event AS e
    WHERE t.m = 'episodic' AND e.id = t.r::uuid
    UNION ALL
    SELECT s.embedding::halfvec, s.embedding_model, s.search_vector, s.organization_id FROM memory_semantic_item AS s
    WHERE t.m = 'semantic' AND s.id = t.r::uuid
) AS v ON true
ORDER BY t.n
ON CONFLICT (organization_id, subject_id, anchor_key, row_id) DO NOTHING
"""
# What a restored mention takes again from its row: the snapshot of a merge keeps no words.
_WORDS_FILL = """
UPDATE graph_anchor_row AS a SET search_vector = e.search_vector
FROM {table} AS e
WHERE a.organization_id = %s AND a.subject_id = %s AND a.anchor_key = ANY(%s::text[]) AND a.memory_type = %s
  AND e.id = a.row_id AND e.organization_id = a.organization_id
"""
_VECTORS_REFRESH = """
UPDATE graph_anchor_row AS a SET embedding = v.embedding::halfvec, embedding_model = v.model
FROM unnest(%s::uuid[], %s::uuid[], %s::text[], %s::text[]) AS v(row_id, subject_id, embedding, model)
WHERE a.organization_id = %s AND a.subject_id = v.subject_id AND a.row_id = v.row_id AND a.memory_type = %s
"""


def _execute(query: str, params: Sequence[Any] | dict[str, Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return int(cursor.rowcount or 0)


def _fetch(query: str, params: Sequence[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
    with read_connection().cursor() as cursor:
        cursor.execute(query, params)
        return list(cursor.fetchall())


# --- maintenance (called by apps.graph.store's writes) --------------------------------------------


def add_frames(*, organization_id: uuid.UUID, subject_id: uuid.UUID, frames: Iterable[dict[str, Any]]) -> None:
    """Index new frames (graph properties: frame_id, predicate, arms, event_time, citations) by
    each anchor they touch; an anchor in several roles of a frame is one row with those roles."""
    entries: dict[tuple[str, str], tuple[str, set[str], str, str]] = {}
    for frame in frames:
        for role, key in frame["arms"]:
            _, roles, _, _ = entries.setdefault(
                (str(key), str(frame["frame_id"])),
                (str(frame["predicate"]), set(), str(frame.get("event_time") or ""), _cited(frame)),
            )
            roles.add(str(role))
    if not entries:
        return
    ordered = sorted(entries.items())
    _execute(
        _FRAMES_INSERT,
        [
            organization_id,
            subject_id,
            [key for (key, _), _ in ordered],
            [frame_id for (_, frame_id), _ in ordered],
            [predicate for _, (predicate, _, _, _) in ordered],
            [",".join(sorted(roles)) for _, (_, roles, _, _) in ordered],
            [event_time for _, (_, _, event_time, _) in ordered],
            [citations for _, (_, _, _, citations) in ordered],
        ],
    )


def _cited(frame: dict[str, Any]) -> str:
    return ",".join(str(row_id) for row_id in frame.get("citations") or [])


def set_citations(*, organization_id: uuid.UUID, subject_id: uuid.UUID, frames: Sequence[dict[str, Any]]) -> int:
    """Record the frames' new citations (``frame_id`` and ``citations`` each) on every anchor
    row of theirs; returns how many rows changed."""
    if not frames:
        return 0
    return _execute(
        _CITATIONS_SET,
        [[str(f["frame_id"]) for f in frames], [_cited(f) for f in frames], organization_id, subject_id],
    )


def add_mentions(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, mentions: Iterable[tuple[str, str, str]]
) -> None:
    """Record (anchor key, memory type, row id) mentions in arrival order; repeats are ignored."""
    unique = list(dict.fromkeys((str(k), str(m), str(r)) for k, m, r in mentions))
    if not unique:
        return
    _execute(
        _ROWS_INSERT,
        {
            "organization": organization_id,
            "subject": subject_id,
            "keys": [k for k, _, _ in unique],
            "types": [m for _, m, _ in unique],
            "rows": [r for _, _, r in unique],
        },
    )


def refresh_row_vectors(
    *, organization_id: uuid.UUID, memory_type: str, rows: Sequence[tuple[str, str, Sequence[float], str]]
) -> int:
    """Copy re-embedded rows' vectors — ``(row id, subject id, vector, model)`` — onto their
    mentions; returns how many mentions changed."""
    if not rows:
        return 0
    return _execute(
        _VECTORS_REFRESH,
        [
            [row_id for row_id, _, _, _ in rows],
            [subject_id for _, subject_id, _, _ in rows],
            [str([float(x) for x in vector]) for _, _, vector, _ in rows],
            [model for _, _, _, model in rows],
            organization_id,
            memory_type,
        ],
    )


def fill_row_words(*, organization_id: uuid.UUID, subject_id: uuid.UUID, anchor_keys: Sequence[str]) -> int:
    """Copy the rows' full-text vectors onto these anchors' mentions again (a merge's undo
    restores mentions without them); returns how many mentions were filled."""
    return sum(
        _execute(_WORDS_FILL.format(table=table), [organization_id, subject_id, list(anchor_keys), memory_type])
        for memory_type, table in (("episodic", "memory_episodic_event"), ("semantic", "memory_semantic_item"))
    )


def anchor_mentions(anchors: Iterable[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The mentions an anchor's property map lists (its ``episodic_ids`` and ``semantic_ids``)."""
    return [
        (str(props["key"]), memory_type, str(row_id))
        for props in anchors
        for memory_type in ("episodic", "semantic")
        for row_id in props.get(f"{memory_type}_ids") or []
    ]


def known_mentions(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, row_ids: Sequence[str]
) -> set[tuple[str, str]]:
    """(anchor key, row id) already recorded for these rows: what a re-run must not count twice."""
    if not row_ids:
        return set()
    rows = _fetch(
        "SELECT anchor_key, row_id::text FROM graph_anchor_row"
        " WHERE organization_id = %s AND subject_id = %s AND row_id = ANY(%s::uuid[])",
        [organization_id, subject_id, list(row_ids)],
    )
    return {(str(k), str(r)) for k, r in rows}


# --- bounded reads (retrieval) ---------------------------------------------------------------------

# Each read takes ``cited``: a condition on the frame's adjacency row ``f`` (its citations),
# true without a filter. It is tested inside the per-anchor scan, before the LIMIT, so a
# filtered read caps the frames that cite a matching row (ADR 0048).
_INCIDENT = """
SELECT DISTINCT x.frame_id FROM unnest(%(keys)s::text[]) AS k(key)
CROSS JOIN LATERAL (
    SELECT f.frame_id FROM graph_anchor_frame AS f
    WHERE f.organization_id = %(organization)s AND f.subject_id = %(subject)s AND f.anchor_key = k.key AND {cited}
    ORDER BY f.frame_id LIMIT %(per_anchor)s
) AS x
ORDER BY x.frame_id
"""
_RELATION = """
SELECT DISTINCT x.frame_id FROM unnest(%(keys)s::text[]) AS k(key)
CROSS JOIN unnest(%(predicates)s::text[]) AS p(predicate)
CROSS JOIN LATERAL (
    SELECT f.frame_id FROM graph_anchor_frame AS f
    WHERE f.organization_id = %(organization)s AND f.subject_id = %(subject)s AND f.anchor_key = k.key
      AND f.predicate = p.predicate AND {cited}
    ORDER BY f.frame_id LIMIT %(cap)s
) AS x
ORDER BY x.frame_id LIMIT %(cap)s
"""

# Frames of an anchor with another arm on one of the given anchors: the first ``cap`` frames of
# each such anchor by frame id, kept when the named anchor is an arm of the frame too.
_BY_ARM = """
SELECT DISTINCT x.frame_id FROM unnest(%(keys)s::text[]) AS k(key)
CROSS JOIN unnest(%(arm_keys)s::text[]) AS m(arm)
CROSS JOIN LATERAL (
    SELECT b.frame_id FROM (
        SELECT f.frame_id FROM graph_anchor_frame AS f
        WHERE f.organization_id = %(organization)s AND f.subject_id = %(subject)s AND f.anchor_key = m.arm AND {cited}
        ORDER BY f.frame_id LIMIT %(cap)s
    ) AS b
    WHERE m.arm <> k.key AND EXISTS (
        SELECT 1 FROM graph_anchor_frame AS a
        WHERE a.organization_id = %(organization)s AND a.subject_id = %(subject)s AND a.anchor_key = k.key
          AND a.frame_id = b.frame_id
    )
) AS x
ORDER BY x.frame_id LIMIT %(cap)s
"""


def _scoped_keys(
    organization_id: uuid.UUID, subject_id: uuid.UUID, keys: Sequence[str], **extra: Any
) -> dict[str, Any]:
    return {"keys": text_array(dict.fromkeys(keys)), "organization": organization_id, "subject": subject_id, **extra}


def _frame_ids(query: str, params: dict[str, Any], cited: tuple[str, dict[str, Any]] | None) -> list[str]:
    condition, extra = cited if cited is not None else ("TRUE", {})
    return [str(row[0]) for row in _fetch(query.replace("{cited}", condition), {**params, **extra})]


def incident_frame_ids(
    *,
    organization_id: uuid.UUID,
    subject_id: uuid.UUID,
    keys: Sequence[str],
    per_anchor: int,
    cited: tuple[str, dict[str, Any]] | None = None,
) -> list[str]:
    """At most ``per_anchor`` frames of each anchor (lowest frame ids first), deduplicated,
    sorted. ``cited`` — a condition on the frame's row ``f`` and its named parameters — keeps
    only the frames it holds for, before the cap."""
    if not keys:
        return []
    return _frame_ids(_INCIDENT, _scoped_keys(organization_id, subject_id, keys, per_anchor=per_anchor), cited)


def relation_frame_ids(
    *,
    organization_id: uuid.UUID,
    subject_id: uuid.UUID,
    keys: Sequence[str],
    predicates: Sequence[str],
    cap: int,
    cited: tuple[str, dict[str, Any]] | None = None,
) -> list[str]:
    """Frames touching any of the anchors with one of the predicates (filtered by the index), the
    ``cap`` lowest frame ids of them (of those ``cited`` holds for)."""
    if not keys or not predicates:
        return []
    params = _scoped_keys(organization_id, subject_id, keys, predicates=text_array(sorted(set(predicates))), cap=cap)
    return _frame_ids(_RELATION, params, cited)


def arm_frame_ids(
    *,
    organization_id: uuid.UUID,
    subject_id: uuid.UUID,
    keys: Sequence[str],
    arm_keys: Collection[str],
    cap: int,
    cited: tuple[str, dict[str, Any]] | None = None,
) -> list[str]:
    """Frames touching one of ``keys`` that have another arm on one of ``arm_keys``, the ``cap``
    lowest frame ids of them; each arm anchor contributes from its ``cap`` lowest frame ids
    (of those ``cited`` holds for)."""
    if not keys or not arm_keys:
        return []
    params = _scoped_keys(organization_id, subject_id, keys, arm_keys=text_array(sorted(set(arm_keys))), cap=cap)
    return _frame_ids(_BY_ARM, params, cited)


def anchor_degrees(*, organization_id: uuid.UUID, subject_id: uuid.UUID, keys: Sequence[str]) -> dict[str, int]:
    """How many rows mention each anchor, counted in the index (bounded: used for a handful of keys)."""
    if not keys:
        return {}
    rows = _fetch(
        "SELECT anchor_key, count(*) FROM graph_anchor_row WHERE organization_id = %s AND subject_id = %s"
        " AND anchor_key = ANY(%s::text[]) GROUP BY anchor_key",
        [organization_id, subject_id, list(keys)],
    )
    return {str(k): int(n) for k, n in rows}


# --- anchor merges ---------------------------------------------------------------------------------

_SCOPE = "organization_id = %s AND subject_id = %s"


def _scoped(alias: str) -> str:
    return f"{alias}.organization_id = %s AND {alias}.subject_id = %s"


def merge_anchor(
    *,
    organization_id: uuid.UUID,
    subject_id: uuid.UUID,
    source_key: str,
    target_key: str,
    frame_renames: dict[str, str],
) -> None:
    """Move every index row of anchor ``source_key`` to ``target_key`` (a union: a frame or row
    both already have stays once, with the roles of both), then rename frame ids per
    ``frame_renames`` (old → new; when the new id is already indexed for an anchor, the two are
    united). Runs in the caller's transaction."""
    scope = [organization_id, subject_id]
    if source_key != target_key:
        _execute(
            f"DELETE FROM graph_anchor_row s USING graph_anchor_row t WHERE {_scoped('s')} AND s.anchor_key = %s"
            f" AND {_scoped('t')} AND t.anchor_key = %s AND t.row_id = s.row_id",
            [*scope, source_key, *scope, target_key],
        )
        _execute(
            f"UPDATE graph_anchor_row SET anchor_key = %s WHERE {_SCOPE} AND anchor_key = %s",
            [target_key, *scope, source_key],
        )
        _unite_frames(scope, ("anchor_key", source_key), ("anchor_key", target_key), "frame_id")
        _execute(
            f"UPDATE graph_anchor_frame SET anchor_key = %s WHERE {_SCOPE} AND anchor_key = %s",
            [target_key, *scope, source_key],
        )
    for old, new in sorted(frame_renames.items()):
        if old == new:
            continue
        _unite_frames(scope, ("frame_id", old), ("frame_id", new), "anchor_key")
        _execute(f"UPDATE graph_anchor_frame SET frame_id = %s WHERE {_SCOPE} AND frame_id = %s", [new, *scope, old])


# Either side not recorded (NULL) leaves the union unrecorded: it passes every filter.
_CITATIONS_UNION = (
    "CASE WHEN t.citations IS NULL OR s.citations IS NULL THEN NULL"
    " ELSE ARRAY(SELECT DISTINCT c FROM unnest(t.citations || s.citations) AS c ORDER BY c) END"
)


def _unite_frames(scope: list[Any], source: tuple[str, str], target: tuple[str, str], same: str) -> None:
    """Where a source row and a target row agree on ``same``, the target takes the union of
    their roles and citations, and the source row goes."""
    column, source_value = source
    _, target_value = target
    join = f"{_scoped('s')} AND s.{column} = %s AND {_scoped('t')} AND t.{column} = %s AND t.{same} = s.{same}"
    params = [*scope, source_value, *scope, target_value]
    _execute(
        f"UPDATE graph_anchor_frame t SET roles = {_ROLES_UNION.format(a='t.roles', b='s.roles')},"
        f" citations = {_CITATIONS_UNION} FROM graph_anchor_frame s WHERE {join}",
        params,
    )
    _execute(f"DELETE FROM graph_anchor_frame s USING graph_anchor_frame t WHERE {join}", params)


# --- rebuild ---------------------------------------------------------------------------------------


def frames_clear(*, organization_id: uuid.UUID, subject_id: uuid.UUID) -> None:
    """Forget which frames touch the subject's anchors (a rebuild records them again)."""
    _execute(f"DELETE FROM graph_anchor_frame WHERE {_SCOPE}", [organization_id, subject_id])


def mentions_keep_only(*, organization_id: uuid.UUID, subject_id: uuid.UUID, anchor_keys: Collection[str]) -> None:
    """Forget the mentions of every anchor of the subject but ``anchor_keys`` (those that exist)."""
    _execute(
        f"DELETE FROM graph_anchor_row WHERE {_SCOPE} AND NOT (anchor_key = ANY(%s::text[]))",
        [organization_id, subject_id, sorted(anchor_keys)],
    )


def index_counts(*, organization_id: uuid.UUID, subject_id: uuid.UUID) -> dict[str, int]:
    scope = [organization_id, subject_id]
    counts = _fetch(
        f"SELECT (SELECT count(*) FROM graph_anchor_frame WHERE {_SCOPE}), "
        f"(SELECT count(*) FROM graph_anchor_row WHERE {_SCOPE})",
        [*scope, *scope],
    )[0]
    return {"anchor_frames": int(counts[0]), "anchor_rows": int(counts[1])}
