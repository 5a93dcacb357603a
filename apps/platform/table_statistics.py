"""Planner statistics brought up to date when a write makes them due, not at autovacuum's next round.

The search statements filter by organization and subject. Right after an organization's first
large write, the statistics hold none of its rows: the planner estimates one row for it and
prefers the organization-only index (or a composite one used on its first column) over the
index that fits the statement, filtering every row of the organization in a loop. Measured on
the graph-mode search (ADR 0083): 3–4× the statement time until autovacuum, which looks at a
database at most once a minute (``autovacuum_naptime``), analyzed the tables.

``statistics_refresh`` runs the analysis autovacuum would run — a table is due when the rows
changed since its last analysis exceed autovacuum's own threshold, ``autovacuum_analyze_threshold
+ autovacuum_analyze_scale_factor × rows`` — as soon as the caller committed the writes. So
no table is analyzed more often than autovacuum would, only sooner, and autovacuum then finds
it done. It needs the tables' owner (the ``owner`` alias); a table being analyzed or vacuumed
by someone else is skipped rather than waited for, and a failure is logged, never raised: the
writes are committed and stale statistics cost time, not correctness.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import DatabaseError, connections, transaction
from psycopg import sql

from apps.platform.sql_arrays import text_array

logger = logging.getLogger(__name__)

OWNER_ALIAS = "owner"

# The tables (of ``tables``) whose changes since their last analysis exceed autovacuum's threshold.
# Per-table storage parameters override the server's settings, as they do for autovacuum.
_DUE = """
SELECT s.relname
FROM pg_stat_user_tables AS s
JOIN pg_class AS c ON c.oid = s.relid
CROSS JOIN LATERAL (
    SELECT COALESCE((SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) AS o
                     WHERE o LIKE 'autovacuum_analyze_threshold=%%'),
                    current_setting('autovacuum_analyze_threshold'))::float8 AS threshold,
           COALESCE((SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) AS o
                     WHERE o LIKE 'autovacuum_analyze_scale_factor=%%'),
                    current_setting('autovacuum_analyze_scale_factor'))::float8 AS scale
) AS t
WHERE s.schemaname = 'public' AND s.relname = ANY(%s::text[])
  AND s.n_mod_since_analyze > t.threshold + t.scale * GREATEST(c.reltuples, 0)
ORDER BY s.relname
"""


def statistics_due(tables: Sequence[str]) -> list[str]:
    """Which of ``tables`` autovacuum would analyze at its next round."""
    with connections[OWNER_ALIAS].cursor() as cursor:
        cursor.execute(_DUE, [text_array(tables)])
        return [str(name) for (name,) in cursor.fetchall()]


def statistics_refresh(tables: Sequence[str]) -> list[str]:
    """Analyze those of ``tables`` that are due (see the module); the ones analyzed."""
    analyzed: list[str] = []
    try:
        due = statistics_due(tables)
    except DatabaseError:
        logger.warning("statistics check failed", exc_info=True)
        return analyzed
    for table in due:
        try:
            with transaction.atomic(using=OWNER_ALIAS), connections[OWNER_ALIAS].cursor() as cursor:
                # Another ANALYZE or VACUUM of the table holds its lock: that one will do.
                cursor.execute("SET LOCAL lock_timeout = '50ms'")
                cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)).as_string(None))
        except DatabaseError:
            logger.info("statistics refresh skipped", extra={"table": table})
            continue
        analyzed.append(table)
    if analyzed:
        logger.info("statistics refreshed", extra={"tables": analyzed})
    return analyzed
