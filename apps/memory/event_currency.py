"""Currency of episodic rows: a turn that stated a value that has since changed.

An episodic row is an event, and an event is never superseded: "I live in Porto", said in
January, stays said. What it stated can still be out of date. The local and OpenAI writers
extract the turn's facts as semantic rows that cite the same source message in the same
chunk, and it is those rows that a later value supersedes. So, at read time: an episodic row
whose extracted facts were *all* superseded states only old values. It reads as
``current: false``, ``superseded_by`` the turn that stated the newest of the new values (the
episodic row of the superseding fact's message, else the superseding fact itself when it has
no turn, as after a manual update), and ``valid_to`` that row's ``valid_from``.

The turn's facts are those about its speaker when it states some (a passing fact about someone
else in the same sentence, "Joon and I have our flat in Bonfim", does not keep a moved
speaker's old home current), else every fact extracted from it. A turn with no extracted fact,
or with one of its facts still current, stays current: nothing says it is out of date. A
passage of pasted text or a document stays current too: the facts of its message are the whole
text's, not the passage's (ADR 0100). Nothing is stored; the fragment below is folded into the
row statements of :mod:`apps.memory.currency` and the retrieval reads, one lateral read per
episodic row over the chunk index.
"""

from __future__ import annotations

from apps.memory.models import EpisodicEvent, SemanticItem

_EPISODIC = EpisodicEvent._meta.db_table
_SEMANTIC = SemanticItem._meta.db_table


def semantic_valid_from_sql(alias: str) -> str:
    """A semantic row's ``valid_from``: the mention time of its turns, else when it was stored."""
    return (
        f"COALESCE((SELECT min(m.mention_time) FROM {_EPISODIC} AS m"
        f" WHERE m.organization_id = {alias}.organization_id AND m.chunk_id = {alias}.chunk_id"
        f" AND m.subject_id = {alias}.subject_id AND m.source_message_ids && {alias}.source_message_ids),"
        f" {alias}.created_at)"
    )


def _turn_fact(fact: str, alias: str) -> str:
    """``fact`` is a semantic row extracted from the turn of the episodic row ``alias``."""
    return (
        f"{fact}.organization_id = {alias}.organization_id AND {fact}.chunk_id = {alias}.chunk_id"
        f" AND {fact}.subject_id = {alias}.subject_id AND {fact}.source_message_ids && {alias}.source_message_ids"
    )


def event_successor_join_sql(alias: str, successor: str) -> str:
    """A LEFT JOIN LATERAL giving ``{successor}.id`` and ``{successor}.valid_from`` for the
    episodic row ``alias``: both NULL unless every fact extracted from its turn was superseded."""
    return f"""LEFT JOIN LATERAL (
        SELECT (array_agg(nx.id ORDER BY nx.valid_from DESC NULLS LAST, nx.id))[1] AS id,
               max(nx.valid_from) AS valid_from
        FROM (
            SELECT n.id AS next_id, COALESCE(ne.id, n.id) AS id,
                   CASE WHEN ne.id IS NOT NULL THEN COALESCE(ne.event_time, ne.mention_time)
                        ELSE {semantic_valid_from_sql("n")} END AS valid_from
            FROM {_SEMANTIC} AS f
            LEFT JOIN {_SEMANTIC} AS n ON n.organization_id = f.organization_id AND n.supersedes_id = f.id
            LEFT JOIN LATERAL (
                SELECT m.id, m.event_time, m.mention_time FROM {_EPISODIC} AS m
                WHERE n.id IS NOT NULL AND m.organization_id = n.organization_id AND m.subject_id = n.subject_id
                  AND m.chunk_id = n.chunk_id AND m.source_message_ids && n.source_message_ids
                  AND m.id <> {alias}.id
                ORDER BY m.mention_time, m.id LIMIT 1
            ) AS ne ON TRUE
            WHERE {alias}.resource_id IS NULL AND {_turn_fact("f", alias)}
              AND (f.name = {alias}.actor OR NOT EXISTS (
                  SELECT 1 FROM {_SEMANTIC} AS g WHERE {_turn_fact("g", alias)} AND g.name = {alias}.actor))
        ) AS nx
        HAVING count(*) > 0 AND bool_and(nx.next_id IS NOT NULL)
    ) AS {successor} ON TRUE"""
