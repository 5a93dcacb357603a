"""The read adapters of retrieval: bounded reads of the graph and the evidence plane.

Every read here has a cap that does not depend on the subject's history: anchors by name
embedding (15), exactly named anchors (16), rows per anchor, frames per anchor, frames of the
relation lane (240, chosen inside the database by frame id after the predicate filter), rows
by id. A caller's filter is tested inside each of those reads, before its cap (ADR 0035,
0048). Adjacency comes from the index beside the graph (apps.graph.adjacency), never from a
walk over a hub's edges. The pure core (planner, scoring, fusion) decides; this module only
fetches. Flat mode, the baseline, reads the whole history on purpose (:func:`flat_rows`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.pq import Format

from apps.graph import adjacency, store
from apps.language.dates import parse_event_time
from apps.language.facts import PLAN
from apps.language.questions import AskedAnchor
from apps.memory.currency import from_replaced_document_sql, rows_currency, successor_columns_sql, valid_from_sql
from apps.memory.filter_sql import NamedParams, filter_sql
from apps.memory.filters import Filter
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.memory.search import vector_lane
from apps.memory.selectors import current_rows, rows_filtered
from apps.memory.statements import semantic_statement
from apps.platform.replica import read_connection
from apps.platform.sql_arrays import int_array, text_array, uuid_array
from apps.providers.local_embedder import MODEL_NAMES as LOCAL_MODEL_NAMES
from apps.retrieval import lexical
from apps.retrieval.currency import CitedCurrency
from apps.retrieval.types import AnchorCandidate, FactCandidate, RowCandidate
from apps.tenancy.models import Subject

ANCHOR_RECALL = 15  # paper: K_A
HNSW_MODELS = frozenset(LOCAL_MODEL_NAMES.values())  # each has a partial HNSW index on graph_anchor_vector
HNSW_DIMENSION = 384
EXACT_SCAN_LIMIT = 5000  # below this many anchors an exact scan is as fast and always complete
ROWS_PER_ANCHOR = 40  # rows of each type per anchor: the nearest the question among its ANCHOR_ROW_SCAN newest
FRAMES_PER_ANCHOR = 16  # incident frames per anchor in the base lane, by frame id
CO_PARTICIPANTS = 8  # anchors reached through those frames whose rows join the base lane
CO_PARTICIPANT_ROWS = 2  # the rows of each type of a co-participant nearest the question
LEXICAL_ROWS_PER_ANCHOR = 16  # of a named anchor, also the rows of its scan with the question's words (ADR 0114)
ANCHOR_ROW_SCAN = 100  # an anchor's newest mentions, ranked by similarity to the question (ADR 0018)
NAMED_ROW_SCAN = 400  # the same for an anchor the question names: its own history is what is asked (ADR 0019)
RELATION_FRAME_CAP = 240  # paper A.3
NEIGHBOUR_SEEDS = 20  # the best candidates (by rerank score) whose same-chunk neighbours join the base lane
NEIGHBOURS_PER_SEED = 2  # turns before and after each
REFERENCED_ROWS = 3  # a numbered reference identifies a part when at most this many rows have it (ADR 0098)


@dataclass(frozen=True)
class AnchorRecall:
    anchor_key: str
    name: str
    type: str
    similarity: float


def _recall_sql(*, exact: bool) -> str:
    distance = (
        "embedding <=> %s::vector" if exact else f"embedding::vector({HNSW_DIMENSION}) <=> %s::vector({HNSW_DIMENSION})"
    )
    return f"""
        SELECT anchor_key, name, anchor_type, 1 - ({distance}) AS similarity
        FROM graph_anchor_vector
        WHERE organization_id = %s AND subject_id = %s AND embedding_model = %s
        ORDER BY {distance}
        LIMIT %s
    """


def recall_anchors(
    *, subject: Subject, vector: list[float], model: str, limit: int = ANCHOR_RECALL
) -> list[AnchorRecall]:
    """The subject's anchors nearest to the question by name embedding.

    Large subjects go through the HNSW index with iterative scans (the subject filter applies
    after the index, so a plain HNSW scan could return fewer rows than exist); if it still
    comes back short, an exact scan answers, so the result is never incomplete."""
    text = str(vector)
    params: list[Any] = [text, subject.organization_id, subject.id, model, text, limit]
    with read_connection().cursor() as cursor:
        # Counted only up to the threshold (a full count(*) grows with the subject's anchors),
        # over every model: the (organization, subject, type) index answers it without the heap.
        cursor.execute(
            "SELECT count(*) FROM (SELECT 1 FROM graph_anchor_vector WHERE organization_id = %s AND subject_id = %s"
            " LIMIT %s) AS bounded",
            [subject.organization_id, subject.id, EXACT_SCAN_LIMIT + 1],
        )
        total = int(cursor.fetchone()[0])
        use_index = model in HNSW_MODELS and len(vector) == HNSW_DIMENSION and total > EXACT_SCAN_LIMIT
        if use_index:
            cursor.execute(  # both transaction-local settings in one round trip
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '100', true)"
            )
            cursor.execute(_recall_sql(exact=False), params)
            rows = cursor.fetchall()
            if len(rows) < min(limit, total):
                use_index = False
        if not use_index:
            cursor.execute(_recall_sql(exact=True), params)
            rows = cursor.fetchall()
    recalled = [AnchorRecall(anchor_key=r[0], name=r[1], type=r[2], similarity=float(r[3])) for r in rows]
    return sorted(recalled, key=lambda a: (-a.similarity, a.anchor_key))


def anchor_candidates(
    *,
    subject: Subject,
    recalled: Sequence[AnchorRecall],
    named_keys: Sequence[str],
    vector: list[float],
    model: str,
    rows_per_type: int = ROWS_PER_ANCHOR,
    deep_keys: Collection[str] = (),
    where: Filter | None = None,
    words: str = "",
) -> list[AnchorCandidate]:
    """Recalled and exactly named anchors with their graph properties (one graph read) and, of
    each type, the ``rows_per_type`` rows closest to the question among the ``ANCHOR_ROW_SCAN``
    newest that mention the anchor — ``NAMED_ROW_SCAN`` for the ``deep_keys`` (the anchors
    the question names), with the ``LEXICAL_ROWS_PER_ANCHOR`` of their scan that best match
    the question's ``words`` — in one bounded read of the adjacency index. With a filter
    ``where``, only rows that match it count, before either cap."""
    similarity = {a.anchor_key: a.similarity for a in recalled}
    keys = list(dict.fromkeys([*similarity, *named_keys]))
    found = _anchors(subject, keys, ("name", "type", "mention_count"))
    present = [key for key in keys if key in found]
    scans = [NAMED_ROW_SCAN if key in deep_keys else ANCHOR_ROW_SCAN for key in present]
    by_words = [LEXICAL_ROWS_PER_ANCHOR if key in deep_keys and words else 0 for key in present]
    rows = anchor_rows(
        subject=subject,
        keys=present,
        vector=vector,
        model=model,
        per_type=rows_per_type,
        scans=scans,
        where=where,
        words=words,
        by_words=by_words,
    )
    return [
        AnchorCandidate(
            anchor_key=key,
            name=str(found[key]["name"]),
            type=str(found[key]["type"]),
            vector_similarity=similarity.get(key, 0.0),
            degree=int(found[key]["mention_count"]),
            is_person=found[key]["type"] == "person",
            episodic_ids=rows[key]["episodic"],
            semantic_ids=rows[key]["semantic"],
        )
        for key in present
    ]


# An anchor's newest mentions, ranked by the row vectors kept beside the adjacency index
# (ADR 0019): one bounded index scan per anchor and type. The scans of the anchors matched by
# words test each mention's copy of its row's full-text vector (ADR 0115) and read the evidence
# row only for the mentions with the question's words (ADR 0114). The two types are parts of
# one statement (each with its own filter restriction).
_NEWEST_OF_TYPE = """(
        SELECT row_id, embedding, embedding_model, search_vector
        FROM graph_anchor_row
        WHERE organization_id = %(organization)s AND subject_id = %(subject)s AND anchor_key = k.key
          AND memory_type = %(type_{memory_type})s{restriction}
        ORDER BY id DESC LIMIT k.scan
    ) AS newest"""
_ANCHOR_ROWS_OF_TYPE = """
SELECT %(type_{memory_type})s::text AS memory_type, k.n, k.key, r.row_id, r.distance, NULL::text AS scanned
FROM unnest(%(keys)s::text[], %(scans)s::int[]) WITH ORDINALITY AS k(key, scan, n)
CROSS JOIN LATERAL (
    SELECT newest.row_id, newest.embedding <=> %(vector)s::halfvec AS distance FROM {newest}
    WHERE newest.embedding_model = %(model)s
    ORDER BY distance, newest.row_id LIMIT %(per_type)s
) AS r
"""
# The scans of the keys matched by words (ADR 0114): every mention with its distance and, when
# its row has any of the question's words, its text ('' when it has none, or when the row is
# gone): a primary-key probe of the evidence row for those mentions only. The caller takes the
# nearest and ranks the texts by BM25 over the scan.
_WORDED_OF_TYPE = """
SELECT %(type_{memory_type})s::text AS memory_type, k.n, k.key, newest.row_id,
       newest.embedding <=> %(vector)s::halfvec AS distance,
       CASE WHEN newest.search_vector @@ w.query THEN coalesce((
           SELECT {text} FROM {table} AS t WHERE t.id = newest.row_id AND t.organization_id = %(organization)s
       ), '') ELSE '' END AS scanned
FROM unnest(%(worded_keys)s::text[], %(worded_scans)s::int[]) WITH ORDINALITY AS k(key, scan, n)
CROSS JOIN (SELECT websearch_to_tsquery('english', %(words)s) AS query) AS w
CROSS JOIN LATERAL {newest}
WHERE newest.embedding_model = %(model)s
"""
_WORDED_TEXT = {
    "episodic": "concat_ws(E'\\n', t.summary, t.details)",
    "semantic": "concat_ws(E'\\n', t.name, t.summary, t.details)",
}


def anchor_rows(
    *,
    subject: Subject,
    keys: Sequence[str],
    vector: list[float],
    model: str,
    per_type: int,
    scans: Sequence[int] | None = None,
    where: Filter | None = None,
    words: str = "",
    by_words: Sequence[int] | None = None,
) -> dict[str, dict[str, list[str]]]:
    """Per anchor and type, the ids of the ``per_type`` rows nearest the question among the
    anchor's newest mentions (``scans[i]`` of the i-th key, default ``ANCHOR_ROW_SCAN``),
    nearest first, and the ``by_words[i]`` (default none) of the same scan whose text best
    matches ``words`` (BM25 over the scan; ADR 0114). With a filter ``where``, the newest
    mentions are those of rows that match it (a primary-key probe of the row per mention
    scanned, inside the scan: ADR 0035)."""
    found: dict[str, dict[str, list[str]]] = {key: {"episodic": [], "semantic": []} for key in keys}
    if not keys:
        return found
    scans = scans if scans is not None else [ANCHOR_ROW_SCAN] * len(keys)
    limits = dict(zip(keys, by_words or [0] * len(keys), strict=True)) if words else {}
    plain = [(key, scan) for key, scan in zip(keys, scans, strict=True) if not limits.get(key)]
    worded = [(key, scan) for key, scan in zip(keys, scans, strict=True) if limits.get(key)]
    params: dict[str, Any] = {
        "keys": text_array(key for key, _ in plain),
        "scans": int_array(scan for _, scan in plain),
        "worded_keys": text_array(key for key, _ in worded),
        "worded_scans": int_array(scan for _, scan in worded),
        "vector": str(vector),
        "organization": subject.organization_id,
        "subject": subject.id,
        "model": model,
        "per_type": per_type,
        "words": words,
    }
    parts: list[str] = []
    for memory_type in ("episodic", "semantic"):
        params[f"type_{memory_type}"] = memory_type
        matching = _matching(where, memory_type, "e", params)
        if matching is False:  # no row of this type can match: nothing to read
            continue
        restriction = (
            ""
            if matching is True
            else f"""
          AND EXISTS (SELECT 1 FROM {_TABLES[memory_type]} AS e WHERE e.id = graph_anchor_row.row_id
                      AND e.organization_id = %(organization)s AND e.subject_id = %(subject)s AND {matching})"""
        )
        for template, keyed in ((_ANCHOR_ROWS_OF_TYPE, plain), (_WORDED_OF_TYPE, worded)):
            if keyed:
                part = template.replace("{newest}", _NEWEST_OF_TYPE).replace("{table}", _TABLES[memory_type])
                part = part.replace("{text}", _WORDED_TEXT[memory_type]).replace("{memory_type}", memory_type)
                parts.append(part.replace("{restriction}", restriction))
    if not parts:
        return found
    statement = f"""
        SELECT memory_type, key, row_id::text, scanned FROM ({" UNION ALL ".join(parts)}) AS chosen
        ORDER BY memory_type, n, distance, row_id
    """
    scanned: dict[tuple[str, str], dict[str, str | None]] = {}
    with read_connection().cursor() as cursor:
        cursor.execute(statement, params)
        for memory_type, key, row_id, text in cursor.fetchall():
            if text is None:  # a plain key's nearest, nearest first
                found[key][memory_type].append(row_id)
                continue
            of_key = scanned.setdefault((key, memory_type), {})  # a worded key's scan, nearest first
            if len(of_key) < per_type:
                found[key][memory_type].append(row_id)
            of_key[row_id] = text or None
    for (key, memory_type), documents in scanned.items():
        chosen = found[key][memory_type]
        best = lexical.best_matches(words, documents, limit=limits[key])
        chosen += [row_id for row_id in best if row_id not in chosen]
    return found


# Anchors and frames are fetched by identity in one statement each, through the graph's unique
# (subject_id, key) and frame_id indexes (apps.graph.store). Adjacency (an anchor's frames, the
# rows that mention it) is read from the relational index beside the graph
# (apps.graph.adjacency): bounded btree scans instead of walking every ARM edge of a hub.


def _anchors(subject: Subject, keys: Sequence[str], properties: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The named properties of the subject's anchors with these keys, by key (one read)."""
    return store.anchor_properties(
        organization_id=subject.organization_id, subject_id=subject.id, keys=keys, properties=properties
    )


def incident_frames(*, subject: Subject, keys: Sequence[str], where: Filter | None = None) -> list[dict[str, Any]]:
    """Up to FRAMES_PER_ANCHOR frames per anchor (lowest frame ids: a deterministic choice),
    with what the base lane reads of them: their arms and citations. With a filter ``where``,
    the frames are chosen among those citing a matching row (ADR 0048)."""
    ids = adjacency.incident_frame_ids(
        organization_id=subject.organization_id,
        subject_id=subject.id,
        keys=keys,
        per_anchor=FRAMES_PER_ANCHOR,
        cited=_citing(subject, where),
    )
    return _frames_by_id(subject, ids, properties=("arms", "citations"))


def relation_frames(
    *,
    subject: Subject,
    keys: Sequence[str],
    predicates: Sequence[str],
    entities: Sequence[str] = (),
    arm_keys: Collection[str] = (),
    where: Filter | None = None,
) -> list[dict[str, Any]]:
    """One-hop adjacency from the named anchors, predicate-filtered in the database, then at
    most 240 frames by frame id. Room left under the cap goes to frames of the named
    ``entities`` with an arm on one of ``arm_keys`` (the relation's nouns: ADR 0020), by frame
    id. With a filter ``where``, both choose among frames citing a matching row (ADR 0048)."""
    scope = {"organization_id": subject.organization_id, "subject_id": subject.id}
    cited = _citing(subject, where)
    ids = adjacency.relation_frame_ids(**scope, keys=keys, predicates=predicates, cap=RELATION_FRAME_CAP, cited=cited)
    if entities and arm_keys and len(ids) < RELATION_FRAME_CAP:
        taken = set(ids)
        by_arm = adjacency.arm_frame_ids(**scope, keys=entities, arm_keys=arm_keys, cap=RELATION_FRAME_CAP, cited=cited)
        ids += [frame_id for frame_id in by_arm if frame_id not in taken][: RELATION_FRAME_CAP - len(ids)]
    return _frames_by_id(subject, ids)


def _citing(subject: Subject, where: Filter | None) -> tuple[str, dict[str, Any]] | None:
    """The filter as a condition on a frame's adjacency row ``f``: it cites a row that matches
    (one primary-key probe per citation and type), or its citations are not recorded yet
    (``NULL``: the facts' citations are filtered after the read, as before ADR 0048)."""
    if where is None:
        return None
    params: dict[str, Any] = {"organization": subject.organization_id, "subject": subject.id}
    cites = [
        f"EXISTS (SELECT 1 FROM {_TABLES[memory_type]} AS e WHERE e.id = ANY(f.citations)"
        f" AND e.organization_id = %(organization)s AND e.subject_id = %(subject)s AND {_clause(compiled)})"
        for memory_type in ("episodic", "semantic")
        if (compiled := _matching(where, memory_type, "e", params)) is not False
    ]
    return f"(f.citations IS NULL OR {' OR '.join(cites) or 'FALSE'})", params


def _frames_by_id(subject: Subject, ids: Sequence[str], properties: Sequence[str] = ()) -> list[dict[str, Any]]:
    found = store.frames_by_id(
        organization_id=subject.organization_id, subject_id=subject.id, frame_ids=ids, properties=properties
    )
    return [found[i] for i in ids if i in found]


def fact_candidates(*, subject: Subject, frames: Sequence[dict[str, Any]]) -> list[FactCandidate]:
    """Frames with their arms' anchor names (one graph read for all the names)."""
    keys = sorted({key for frame in frames for _, key in frame["arms"]})
    names = {k: str(v["name"]) for k, v in _anchors(subject, keys, ("name",)).items()}
    facts = []
    for frame in frames:
        event_time = parse_event_time(frame["event_time"]).start if frame.get("event_time") else None
        mention = frame.get("mention_time")
        facts.append(
            FactCandidate(
                frame_id=str(frame["frame_id"]),
                predicate=str(frame["predicate"]),
                roles=[(role, key, names.get(key, key)) for role, key in frame["arms"]],
                literals={str(k): str(v) for k, v in dict(frame.get("literals") or {}).items()},
                event_time=event_time,
                event_time_precision=str(frame.get("event_time_precision") or ""),
                mention_time=_parse_time(mention),
                status="planned" if frame.get("status") == "planned" else "done",
                citations=[str(c) for c in frame["citations"]],
                kind="semantic" if frame.get("kind") == "semantic" else "episodic",
            )
        )
    return facts


# The C loader of psycopg's binary build. Django loads timestamps with a Python subclass of the
# pure-Python loader that relabels each value with the connection's zone (for a database
# TIME_ZONE setting); when that zone is UTC, as the session's is, the C loader returns the same
# aware UTC values at a twentieth of the CPU, and a search reads a few hundred of them.
_TIMESTAMPTZ_LOADER = psycopg.adapters.get_loader(psycopg.adapters.types["timestamptz"].oid, Format.TEXT)


def _timestamp_cursor() -> Any:
    connection = read_connection()
    cursor = connection.cursor()
    if _TIMESTAMPTZ_LOADER is not None and connection.timezone is UTC:
        cursor.cursor.adapters.register_loader("timestamptz", _TIMESTAMPTZ_LOADER)
    return cursor


def _parse_time(value: Any) -> Any:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def rows_by_id(
    *, subject: Subject, ids: Sequence[str], vector: list[float], model: str, lane: str, where: Filter | None = None
) -> list[RowCandidate]:
    """The rows with these ids (episodic and semantic), with their similarity to the question
    and their rank by it within their type (0-based, ties by id: the shallow prior fusion uses).

    One statement for both types, reading only the columns a candidate is made of (no
    embedding, no provenance lists), made into candidates without model instances. With a
    filter ``where``, only the rows that match it."""
    return rows_with_mentions(subject=subject, ids=ids, vector=vector, model=model, lane=lane, keys=(), where=where)[0]


def rows_with_mentions(
    *,
    subject: Subject,
    ids: Sequence[str],
    vector: list[float],
    model: str,
    lane: str,
    keys: Sequence[str],
    where: Filter | None = None,
) -> tuple[list[RowCandidate], dict[str, list[str]]]:
    """:func:`rows_by_id`, and which of the anchors ``keys`` each returned row mentions (the
    adjacency index, by row id: bounded by the rows, whatever the anchors' degrees), in the
    same statement; a row that mentions none of them is absent from the second."""
    if not ids:
        return [], {}
    params: dict[str, Any] = {
        "organization": subject.organization_id,
        "subject": subject.id,
        "ids": uuid_array(ids),
        "vector": str(vector),
    }
    mentioned = "NULL::text[]"
    if keys:
        params["keys"] = text_array(dict.fromkeys(keys))
        mentioned = _MENTIONED
    statement = (
        _ROWS_BY_ID.replace("{episodic}", _clause(_matching(where, "episodic", "e", params)))
        .replace("{semantic}", _clause(_matching(where, "semantic", "e", params)))
        .replace("{mentioned}", mentioned)
    )
    with _timestamp_cursor() as cursor:
        cursor.execute(statement, params)
        fetched = cursor.fetchall()
    scored: dict[str, list[tuple[float, str, dict[str, Any]]]] = {"episodic": [], "semantic": []}
    mentions: dict[str, list[str]] = {}
    for kind, *values, anchors, distance in fetched:
        columns = dict(zip(_ROW_COLUMNS, values, strict=True))
        same_model = columns.pop("embedding_model") == model and distance is not None
        row_id = columns["id"]
        scored[kind].append((1.0 - float(distance) if same_model else 0.0, row_id, columns))
        if anchors:
            mentions[row_id] = list(anchors)
    ranked: list[RowCandidate] = []
    for kind, rows in scored.items():
        rows.sort(key=lambda item: (-item[0], item[1]))
        ranked += [
            _candidate(kind, lane, vector_rank=rank, similarity=similarity, **columns)
            for rank, (similarity, _, columns) in enumerate(rows)
        ]
    return ranked, mentions


# The columns of a row candidate, in the order of the statement below; semantic rows have no
# actor, event or mention time, episodic rows no name. The last three are the row's currency:
# the row that supersedes it comes in the same statement (a join on the unique supersedes index).
_ROW_COLUMNS = (
    "id",
    "session_id",
    "chunk_id",
    "created_at",
    "embedding_model",
    "summary",
    "details",
    "name",
    "attribute",
    "actor",
    "event_time",
    "mention_time",
    "passage",
    "source_message_ids",
    "valid_from",
    "superseded_by",
    "valid_to",
)
_EPISODIC = EpisodicEvent._meta.db_table
_SEMANTIC = SemanticItem._meta.db_table
_EPISODIC_SUCCESSOR = successor_columns_sql(_EPISODIC, "e", "s")
_SEMANTIC_SUCCESSOR = successor_columns_sql(_SEMANTIC, "e", "s")
_ROWS_BY_ID = f"""
SELECT 'episodic', e.id::text, e.session_id, e.chunk_id::text, e.created_at, e.embedding_model, e.summary, e.details,
       NULL::varchar, NULL::varchar, e.actor, e.event_time, e.mention_time, e.resource_id IS NOT NULL,
       e.source_message_ids, {valid_from_sql(_EPISODIC, "e")},
       {_EPISODIC_SUCCESSOR[1]}, {{mentioned}}, e.embedding <=> %(vector)s::vector
FROM {_EPISODIC} AS e {_EPISODIC_SUCCESSOR[0]}
WHERE e.organization_id = %(organization)s AND e.subject_id = %(subject)s AND e.id = ANY(%(ids)s::uuid[])
  AND {{episodic}}
UNION ALL
SELECT 'semantic', e.id::text, e.session_id, e.chunk_id::text, e.created_at, e.embedding_model, e.summary, e.details, e.name,
       e.attribute, NULL::varchar, NULL::timestamptz, NULL::timestamptz, FALSE,
       e.source_message_ids, {valid_from_sql(_SEMANTIC, "e")},
       {_SEMANTIC_SUCCESSOR[1]}, {{mentioned}}, e.embedding <=> %(vector)s::vector
FROM {_SEMANTIC} AS e {_SEMANTIC_SUCCESSOR[0]}
WHERE e.organization_id = %(organization)s AND e.subject_id = %(subject)s AND e.id = ANY(%(ids)s::uuid[])
  AND {{semantic}}
"""
_TABLES = {"episodic": _EPISODIC, "semantic": _SEMANTIC}
# The anchors among %(keys)s that the row ``e`` mentions, by key.
_MENTIONED = """ARRAY(SELECT m.anchor_key FROM graph_anchor_row AS m
       WHERE m.organization_id = e.organization_id AND m.subject_id = e.subject_id AND m.row_id = e.id
         AND m.anchor_key = ANY(%(keys)s::text[]) ORDER BY m.anchor_key)"""


def _matching(where: Filter | None, memory_type: str, alias: str, params: dict[str, Any]) -> str | bool:
    """The filter as a condition on the ``memory_type`` row ``alias``, its values added to
    ``params``; ``True`` without a filter, ``False`` when no row of the type can match."""
    if where is None:
        return True
    return filter_sql(
        where, memory_type=memory_type, table=_TABLES[memory_type], alias=alias, param=NamedParams(params)
    )


def _clause(compiled: str | bool) -> str:
    return compiled if isinstance(compiled, str) else ("TRUE" if compiled else "FALSE")


def matching_row_ids(*, subject: Subject, ids: Sequence[str], where: Filter) -> set[str]:
    """Which of the subject's episodic and semantic rows with these ids match ``where``
    (one statement: e.g. every row the relation lane's frames cite)."""
    wanted = list(dict.fromkeys(uuid.UUID(row_id) for row_id in ids))
    if not wanted:
        return set()
    params: dict[str, Any] = {"organization": subject.organization_id, "subject": subject.id, "ids": wanted}
    parts = [
        f"SELECT e.id::text FROM {_TABLES[memory_type]} AS e WHERE e.organization_id = %(organization)s"
        f" AND e.subject_id = %(subject)s AND e.id = ANY(%(ids)s::uuid[]) AND {_clause(compiled)}"
        for memory_type in ("episodic", "semantic")
        if (compiled := _matching(where, memory_type, "e", params)) is not False
    ]
    if not parts:
        return set()
    with read_connection().cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        return {str(row_id) for (row_id,) in cursor.fetchall()}


def referenced_row_ids(*, subject: Subject, references: Sequence[str], where: Filter | None = None) -> list[str]:
    """The subject's episodic and semantic rows that contain a numbered reference ("clause
    17") as a phrase, word next to number, in their full-text vectors: for each reference in
    turn, its rows when there are at most ``REFERENCED_ROWS`` of them (a reference many rows
    have identifies none of them), newest first. One statement per reference; it reads the
    subject's rows, since row-level security keeps the text match off the full-text index
    (ADR 0098)."""
    params: dict[str, Any] = {
        "organization": subject.organization_id,
        "subject": subject.id,
        "over": REFERENCED_ROWS + 1,
    }
    parts = [
        f"SELECT e.id::text, e.created_at FROM {_TABLES[memory_type]} AS e"
        " WHERE e.organization_id = %(organization)s AND e.subject_id = %(subject)s"
        f" AND e.search_vector @@ phraseto_tsquery('english', %(reference)s) AND {_clause(compiled)}"
        for memory_type in ("episodic", "semantic")
        if (compiled := _matching(where, memory_type, "e", params)) is not False
    ]
    # A phrase of at least the word and the number: a word the text search drops (one of its
    # stop words) would leave the number alone, which many rows may hold.
    query = (
        f"SELECT id FROM ({' UNION ALL '.join(parts)}) AS r"
        " WHERE numnode(phraseto_tsquery('english', %(reference)s)) > 1"
        " ORDER BY created_at DESC, id LIMIT %(over)s"
    )
    found: list[str] = []
    for reference in references if parts else ():
        with read_connection().cursor() as cursor:
            cursor.execute(query, {**params, "reference": reference})
            ids = [str(row_id) for (row_id,) in cursor.fetchall()]
        if len(ids) <= REFERENCED_ROWS:
            found += [row_id for row_id in ids if row_id not in found]
    return found


def _candidate(
    kind: str,
    lane: str,
    *,
    id: Any,
    session_id: str,
    chunk_id: Any,
    created_at: Any,
    summary: str,
    details: str,
    name: str | None,
    attribute: str | None,
    actor: str | None,
    event_time: Any,
    mention_time: Any,
    vector_rank: int | None,
    similarity: float | None,
    passage: bool = False,
    source_message_ids: Any = (),
    valid_from: Any = None,
    superseded_by: Any = None,
    valid_to: Any = None,
) -> RowCandidate:
    text = _text(kind, summary, name)
    return RowCandidate(
        row_id=str(id),
        memory_type="episodic" if kind == "episodic" else "semantic",
        text=text,
        event_time=event_time,
        mention_time=mention_time,
        created_at=created_at,
        chunk_id=str(chunk_id),
        session_id=session_id,
        lane=lane,  # type: ignore[arg-type]
        vector_rank=vector_rank,
        lexical_score=0.0,
        match_text=f"{text}\n{details}",
        similarity=similarity,
        speaker=str((name if kind == "semantic" else actor) or ""),
        attribute=str(attribute) if kind == "semantic" and attribute else None,
        passage=bool(passage),
        valid_from=valid_from,
        superseded_by=str(superseded_by) if superseded_by is not None else None,
        valid_to=valid_to if superseded_by is not None else None,
        sources=tuple(str(message) for message in source_message_ids or ()),
    )


def _row_candidate(row: Any, kind: str, lane: str, *, vector_rank: int | None = None) -> RowCandidate:
    """A candidate from a model instance (flat mode reads through the ORM)."""
    columns: dict[str, Any] = {
        c: getattr(row, c, None) for c in _ROW_COLUMNS[:-3] if c not in ("embedding_model", "passage")
    }
    columns["passage"] = getattr(row, "resource_id", None) is not None
    return _candidate(kind, lane, vector_rank=vector_rank, similarity=None, **columns)


def _text(kind: str, summary: str, name: str | None) -> str:
    return semantic_statement(name, str(summary)) if kind == "semantic" else str(summary)


def row_text(row: Any) -> str:
    """What a search returns of a row: the episodic summary (speaker and what was said) or the
    semantic statement. The details stay one GET away."""
    return _text("semantic" if isinstance(row, SemanticItem) else "episodic", row.summary, getattr(row, "name", None))


def matched_text(row: Any) -> str:
    """What lexical matching reads of a row: the returned text and the details (for an episodic
    row, the whole message it came from)."""
    return f"{row_text(row)}\n{row.details}"


_NEIGHBOURS = """
SELECT a.id::text, x.id::text
FROM memory_episodic_event AS a
CROSS JOIN LATERAL (
    (SELECT b.id, b.created_at FROM memory_episodic_event AS b
     WHERE b.organization_id = a.organization_id AND b.chunk_id = a.chunk_id AND b.subject_id = a.subject_id
       AND (b.created_at, b.id) < (a.created_at, a.id)
     ORDER BY b.created_at DESC, b.id DESC LIMIT %(per_row)s)
    UNION ALL
    (SELECT b.id, b.created_at FROM memory_episodic_event AS b
     WHERE b.organization_id = a.organization_id AND b.chunk_id = a.chunk_id AND b.subject_id = a.subject_id
       AND (b.created_at, b.id) > (a.created_at, a.id)
     ORDER BY b.created_at, b.id LIMIT %(per_row)s)
) AS x
WHERE a.organization_id = %(organization)s AND a.subject_id = %(subject)s AND a.id = ANY(%(ids)s::uuid[])
ORDER BY a.id, x.created_at, x.id
"""


def neighbours(*, subject: Subject, row_ids: Sequence[str], per_row: int = 1) -> dict[str, list[str]]:
    """Same-chunk neighbours of episodic rows: for each, up to ``per_row`` turns just before and
    after it, in chunk order, recomputed from provenance at read time rather than stored as
    graph edges; one query. Rows without neighbours (or not episodic) are absent."""
    if not row_ids:
        return {}
    params: dict[str, Any] = {
        "organization": subject.organization_id,
        "subject": subject.id,
        "ids": uuid_array(row_ids),
        "per_row": per_row,
    }
    found: dict[str, list[str]] = {}
    with read_connection().cursor() as cursor:
        cursor.execute(_NEIGHBOURS, params)
        for row_id, neighbour in cursor.fetchall():
            found.setdefault(str(row_id), []).append(str(neighbour))
    return found


def flat_rows(
    *, subject: Subject, question: str, vector: list[float], model: str, depth: int, where: Filter | None = None
) -> list[RowCandidate]:
    """Direct evidence retrieval (the ablation baseline and the fallback): Okapi BM25 over the
    text of every current episodic and semantic row, and the ``depth`` nearest rows by
    embedding, fused by reciprocal rank, best first. It reads the whole history on purpose: it
    is what graph mode's bounded access is measured against. A filter ``where`` restricts the
    rows read.

    Each row carries its dense rank (``vector_rank``, across both types) and its fused score
    (``lexical_score``)."""
    rows: dict[str, tuple[Any, str]] = {}
    nearest: list[tuple[float, str]] = []
    for model_class, kind in ((EpisodicEvent, "episodic"), (SemanticItem, "semantic")):
        current = rows_filtered(current_rows(model_class, subject=subject).defer("embedding"), where)
        for row in current:
            rows[str(row.id)] = (row, kind)
        nearest += [
            (float(row.distance), str(row.id)) for row in vector_lane(current, vector=vector, model=model, depth=depth)
        ]
    ids = sorted(rows)
    scores = lexical.bm25_scores(lexical.terms(question), [lexical.terms(matched_text(rows[i][0])) for i in ids])
    by_words = lexical.ranked(ids, scores, depth=depth)
    by_meaning = [row_id for _, row_id in sorted(nearest)][:depth]
    dense_rank = {row_id: rank for rank, row_id in enumerate(by_meaning)}
    return [
        _with_lexical(
            _row_candidate(rows[row_id][0], rows[row_id][1], "flat", vector_rank=dense_rank.get(row_id)), score
        )
        for row_id, score in lexical.rrf([by_words, by_meaning])
    ]


def _with_lexical(row: RowCandidate, score: float) -> RowCandidate:
    return replace(row, lexical_score=score)


def with_currency(*, subject: Subject, rows: Sequence[RowCandidate]) -> list[RowCandidate]:
    """The candidates with their currency (one statement): for rows read through the ORM (flat
    mode), which reads no successor."""
    ids_by_type: dict[str, list[uuid.UUID]] = {}
    for row in rows:
        ids_by_type.setdefault(row.memory_type, []).append(uuid.UUID(row.row_id))
    found = rows_currency(organization_id=subject.organization_id, subject_id=subject.id, ids_by_type=ids_by_type)
    marked = []
    for row in rows:
        currency = found.get(uuid.UUID(row.row_id))
        if currency is None:
            marked.append(row)
            continue
        successor = str(currency.superseded_by) if currency.superseded_by is not None else None
        marked.append(replace(row, valid_from=currency.valid_from, superseded_by=successor, valid_to=currency.valid_to))
    return marked


def cited_currency(*, subject: Subject, ids: Sequence[str]) -> dict[str, CitedCurrency]:
    """The currency of the subject's rows with these ids, whatever their type, by row id (one
    statement: e.g. every row the relation lane's at most 240 frames cite)."""
    wanted = list(dict.fromkeys(uuid.UUID(row_id) for row_id in ids))
    found = rows_currency(
        organization_id=subject.organization_id,
        subject_id=subject.id,
        ids_by_type={"episodic": wanted, "semantic": wanted},
    )
    return {
        str(row_id): CitedCurrency(
            valid_from=currency.valid_from,
            superseded_by=str(currency.superseded_by) if currency.superseded_by is not None else None,
            valid_to=currency.valid_to,
        )
        for row_id, currency in found.items()
    }


@dataclass(frozen=True)
class StoredProvenance:
    """Where a returned row came from, as stored: its chunk, source messages and tags, a
    semantic row's attribute, and for a passage its resource and place in it."""

    chunk_id: str
    source_message_ids: list[str]
    metadata: dict[str, Any]
    attribute: str | None
    resource: tuple[str, int | None, int | None] | None


_PROVENANCE = f"""
SELECT e.id::text, e.chunk_id::text, e.source_message_ids, e.metadata, NULL::varchar, e.resource_id::text,
       e.resource_start, e.resource_end
FROM {_EPISODIC} AS e
WHERE e.organization_id = %(organization)s AND e.subject_id = %(subject)s AND e.id = ANY(%(ids)s::uuid[])
UNION ALL
SELECT e.id::text, e.chunk_id::text, e.source_message_ids, e.metadata, e.attribute, NULL, NULL, NULL
FROM {_SEMANTIC} AS e
WHERE e.organization_id = %(organization)s AND e.subject_id = %(subject)s AND e.id = ANY(%(ids)s::uuid[])
"""


def rows_provenance(*, subject: Subject, ids: Sequence[str]) -> dict[str, StoredProvenance]:
    """The stored provenance of the subject's episodic and semantic rows with these ids, by
    row id (one statement for both types)."""
    if not ids:
        return {}
    params: dict[str, Any] = {"organization": subject.organization_id, "subject": subject.id, "ids": uuid_array(ids)}
    with read_connection().cursor() as cursor:
        cursor.execute(_PROVENANCE, params)
        fetched = cursor.fetchall()
    return {
        row_id: StoredProvenance(
            chunk_id=chunk_id,
            source_message_ids=list(message_ids),
            metadata=dict(json.loads(tags)),
            attribute=attribute,
            resource=(resource_id, start, end) if resource_id is not None else None,
        )
        for row_id, chunk_id, message_ids, tags, attribute, resource_id, start, end in fetched
    }


def rows_metadata(*, subject: Subject, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The metadata of the subject's episodic and semantic rows with these ids, by row id."""
    wanted = list(dict.fromkeys(uuid.UUID(row_id) for row_id in ids))
    found: dict[str, dict[str, Any]] = {}
    for model in (EpisodicEvent, SemanticItem):
        for row_id, tags in model.objects.filter(subject=subject, id__in=wanted).values_list("id", "metadata"):
            found[str(row_id)] = dict(tags)
    return found


ASKED_FACT_ROWS = 2  # the current facts of the asked key a present question puts first
ASKED_VALUE_ROWS = 6  # the current values of a family of several asked for as a whole ("pet:"; ADR 0105)


def current_fact_ids(
    *,
    subject: Subject,
    names: Sequence[str],
    groups: Sequence[Sequence[str]],
    unchanged: bool = False,
    amount: bool = False,
    every: bool = False,
) -> list[str]:
    """The subject's current semantic rows of these keys (one statement): for each group of
    attributes in order, the newest current row of one of ``names`` (case-folded) with one of
    them (for a prefix, "pet:", of each attribute it begins: the cat and the dog), at most
    :data:`ASKED_FACT_ROWS` in all, or :data:`ASKED_VALUE_ROWS` when only prefixes are asked
    or ``every`` value is (a plural kind counted, had or named: "How many dogs does he have?",
    the dog first, then the puppy and the other pets; ADR 0125).
    ``unchanged``: only a value that never replaced another, which is the answer whatever the
    tense of the question ("Where did Kwame study?").
    ``amount``: the newest value of the key that states a number, current or not, when the
    current one states none ("How much is his gym?" after "I moved my membership to Young
    Street"); not for a family of several values."""
    return _key_fact_ids(
        subject=subject,
        names=names,
        groups=groups,
        replaced_by=None,
        unchanged=unchanged,
        amount=amount,
        every=every,
    )


def prior_fact_ids(
    *, subject: Subject, names: Sequence[str], groups: Sequence[Sequence[str]], later: Sequence[str]
) -> list[str]:
    """The subject's superseded semantic rows of these keys, like :func:`current_fact_ids`: for
    each group, the row whose successor names one of the ``later`` words and which names none
    itself ("before Lyon": the value Lyon replaced), else the newest superseded row (the value
    before the current one)."""
    return _key_fact_ids(subject=subject, names=names, groups=groups, replaced_by=later)


def _asked_attribute_sql(row: str) -> str:
    """SQL: the row ``row`` has the attribute ``k.attribute`` asks for (a prefix, "pet:", asks
    for every attribute it begins)."""
    return f"({row}.attribute = k.attribute OR (right(k.attribute, 1) = ':' AND starts_with({row}.attribute, k.attribute)))"


def _key_params(*, subject: Subject, names: Sequence[str], groups: Sequence[Sequence[str]]) -> dict[str, Any]:
    """The parameters every asked-key statement binds: whose rows, and the groups' attributes
    with each one's group number (``ords``)."""
    return {
        "organization": subject.organization_id,
        "subject": subject.id,
        "names": [name.casefold() for name in names],
        "attributes": [attribute for group in groups for attribute in group],
        "ords": [index for index, group in enumerate(groups) for _ in group],
    }


def _message_episode_names_later(row: str, text: str = "e.summary") -> str:
    """SQL: the episode of the message the semantic row ``row`` was read from names one of the
    ``later`` words in ``text`` (the sentence that names it may state no fact: "I said yes! I
    start at Saltline")."""
    return f"""EXISTS (SELECT 1 FROM {_EPISODIC} AS e
                       WHERE e.organization_id = {row}.organization_id AND e.chunk_id = {row}.chunk_id
                         AND e.source_message_ids && {row}.source_message_ids
                         AND lower({text}) LIKE ANY(%(later)s::text[]))"""


def anchored_fact_ids(
    *, subject: Subject, names: Sequence[str], groups: Sequence[Sequence[str]], anchor: AskedAnchor
) -> list[str]:
    """The subject's semantic rows of these keys while another of its facts naming the
    anchor's words held ("the car in Porto": while a fact naming Porto, the home, was
    current): for each group, the value current when that time began, else the first one
    stated in it; for a value gained then ("which gym did she join when she started at
    Loomwork"), the first one stated in it first. At most :data:`ASKED_FACT_ROWS`. Time is the
    order rows were written, as for currency."""
    params = _key_params(subject=subject, names=names, groups=groups)
    if not names or not params["attributes"]:
        return []
    held_first = "f.created_at < held.start DESC, CASE WHEN f.created_at < held.start THEN f.created_at END DESC"
    order = "f.created_at >= held.start DESC," if anchor.acquired else f"{held_first},"
    statement = f"""
        WITH held AS (
            SELECT min(a.created_at) AS start, max(COALESCE(n.created_at, 'infinity'::timestamptz)) AS stop
            FROM {_SEMANTIC} AS a
            LEFT JOIN {_SEMANTIC} AS n ON n.organization_id = a.organization_id AND n.supersedes_id = a.id
            WHERE a.organization_id = %(organization)s AND a.subject_id = %(subject)s
              AND lower(a.name) = ANY(%(names)s::text[]) AND lower(a.name) <> ALL(%(anchor)s::text[])
              AND lower(a.summary) LIKE ANY(%(patterns)s::text[])
              AND NOT starts_with(a.attribute, %(plan)s)
              AND NOT EXISTS (SELECT 1 FROM unnest(%(attributes)s::text[]) AS k(attribute)
                              WHERE {_asked_attribute_sql("a")})
        )
        SELECT id::text FROM (
            SELECT DISTINCT ON (k.ord) k.ord, f.id
            FROM held, {_SEMANTIC} AS f
            JOIN unnest(%(attributes)s::text[], %(ords)s::int[]) AS k(attribute, ord) ON {_asked_attribute_sql("f")}
            LEFT JOIN {_SEMANTIC} AS n ON n.organization_id = f.organization_id AND n.supersedes_id = f.id
            WHERE f.organization_id = %(organization)s AND f.subject_id = %(subject)s
              AND lower(f.name) = ANY(%(names)s::text[])
              AND f.created_at < held.stop AND COALESCE(n.created_at, 'infinity'::timestamptz) > held.start
            ORDER BY k.ord, {order} f.created_at ASC, f.id
        ) AS held_values ORDER BY ord LIMIT {ASKED_FACT_ROWS}
    """
    params |= {
        "anchor": list(anchor.words),
        "patterns": [f"%{_like_escaped(word)}%" for word in anchor.words],
        "plan": PLAN,
    }
    with read_connection().cursor() as cursor:
        cursor.execute(statement, params)
        return list(dict.fromkeys(row_id for (row_id,) in cursor.fetchall()))


def _key_fact_ids(
    *,
    subject: Subject,
    names: Sequence[str],
    groups: Sequence[Sequence[str]],
    replaced_by: Sequence[str] | None,
    unchanged: bool = False,
    amount: bool = False,
    every: bool = False,
) -> list[str]:
    params = _key_params(subject=subject, names=names, groups=groups)
    attributes = params["attributes"]
    if not names or not attributes:
        return []
    join = ""
    if replaced_by is None and amount and not any(attribute.endswith(":") for attribute in attributes):
        successor, preference = "", "f.summary ~ '[0-9]' DESC,"  # the newest value with a number
    elif replaced_by is None:  # current: no row supersedes it
        successor = f"""AND NOT EXISTS (SELECT 1 FROM {_SEMANTIC} AS n
                              WHERE n.organization_id = f.organization_id AND n.supersedes_id = f.id)"""
        successor += f" AND NOT {from_replaced_document_sql('f')}"
        if unchanged:
            successor += " AND f.supersedes_id IS NULL"
        preference = ""
    else:  # superseded: the successor naming the later value first
        # A later statement replaced it: not the next sentence of the same message ("Big news:
        # I got promoted! I'm the design lead now" is one statement of the new value).
        successor = "AND NOT n.source_message_ids && f.source_message_ids"
        join = f"JOIN {_SEMANTIC} AS n ON n.organization_id = f.organization_id AND n.supersedes_id = f.id"
        # The value the later one replaced: its successor's message names the later value
        # ("I quit the bakery and joined a startup! I started at Loomwork"), and it does not
        # itself, nor does its message ("We found a flat in Lyon" restated before "We moved to
        # Lyon" is not what "before Lyon" asks); failing that, the newest value not naming it.
        names_later = f"(lower(f.summary) LIKE ANY(%(later)s::text[]) OR {_message_episode_names_later('f')})"
        # The message is read through its rows: its facts, and its episode.
        preference = f"""((EXISTS (SELECT 1 FROM {_SEMANTIC} AS m
                                   WHERE m.organization_id = n.organization_id AND m.chunk_id = n.chunk_id
                                     AND m.source_message_ids && n.source_message_ids
                                     AND lower(m.summary || ' ' || m.details) LIKE ANY(%(later)s::text[]))
                           OR {_message_episode_names_later("n", "e.summary || ' ' || e.details")})
                          AND NOT {names_later}) DESC,
                         NOT {names_later} DESC,"""
    # A prefix ("pet:") asks for every value of a family of several: the newest row of each,
    # after the row of the kind the question names ("pet: beagle"), if any.
    value = "CASE WHEN right(k.attribute, 1) = ':' THEN f.attribute ELSE '' END"
    # Every current value of a family asked for as a whole ("What are her hobbies?": the choir
    # and the pottery), one row each, up to its own bound; one or two rows of any other key, or
    # of a family asked for by one of its kinds ("How do her dogs react to snow?").
    families = any(attribute.endswith(":") for attribute in attributes)
    several = replaced_by is None and (all(a.endswith(":") for a in attributes) or (every and families))
    limit = ASKED_VALUE_ROWS if several else ASKED_FACT_ROWS
    # A row of the kind asked is a value of its family too. Of every value it comes once, at its
    # first place; of one or two rows, the second place may be that same row (dropped below).
    order = "ORDER BY ord, exact DESC, created_at DESC, id"
    if several:
        order = "GROUP BY id ORDER BY min(ord), bool_or(exact) DESC, max(created_at) DESC, id"
    statement = f"""
        SELECT id::text FROM (
            SELECT DISTINCT ON (k.ord, {value}) k.ord, f.id, f.created_at, f.attribute = k.attribute AS exact
            FROM {_SEMANTIC} AS f
            JOIN unnest(%(attributes)s::text[], %(ords)s::int[]) AS k(attribute, ord) ON {_asked_attribute_sql("f")}
            {join}
            WHERE f.organization_id = %(organization)s AND f.subject_id = %(subject)s
              AND lower(f.name) = ANY(%(names)s::text[])
              {successor}
            ORDER BY k.ord, {value}, {preference} f.created_at DESC, f.id
        ) AS newest {order} LIMIT {limit}
    """
    params["later"] = [f"%{_like_escaped(word)}%" for word in replaced_by or ()]
    with read_connection().cursor() as cursor:
        cursor.execute(statement, params)
        return list(dict.fromkeys(row_id for (row_id,) in cursor.fetchall()))


def _like_escaped(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
