"""Reads from a streaming replica: which alias a read uses, and when the replica may serve it.

Views that only read (search, answer) open a second organization scope on the ``replica``
alias for their handler (``apps.tenancy.api.base``); inside it ``read_alias()`` is
``replica``, so the ORM's reads (``ReplicaReadsRouter``) and the read modules' raw SQL
(``read_connection()``) go there, while every write stays on ``default`` (ADR 0051).

The replica serves a read only when all of these hold (``replica_serves``):

- a replica is configured (``DATABASE_REPLICA_URL``); without one nothing changes;
- the organization has not written in the last ``DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS``
  (a Redis key set when a write's transaction commits, seen by every API process);
- the replica answers and replays within ``DATABASE_REPLICA_MAX_LAG_MS`` of the primary,
  as measured at most every ``DATABASE_REPLICA_CHECK_MS`` per process (``replica_state``).
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

logger = logging.getLogger(__name__)

REPLICA_ALIAS = "replica"
_WROTE_KEY = "replica:wrote:{}"

_read_alias: contextvars.ContextVar[str] = contextvars.ContextVar("read_alias", default=DEFAULT_DB_ALIAS)


def read_alias() -> str:
    """The alias the current block reads from: ``default`` unless a replica scope is open."""
    return _read_alias.get()


def read_connection() -> BaseDatabaseWrapper:
    """The connection of the current block's reads (for read modules' raw SQL)."""
    return connections[_read_alias.get()]


@contextmanager
def reading_from(alias: str) -> Iterator[None]:
    token = _read_alias.set(alias)
    try:
        yield
    finally:
        _read_alias.reset(token)


# --- read-your-writes ------------------------------------------------------------------------


def replica_configured() -> bool:
    return bool(settings.DATABASE_REPLICA_URL)


def record_write_on_commit(organization_id: uuid.UUID, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Pin ``organization_id`` to the primary once the open transaction commits, if it wrote.

    Called by the outermost organization scope as it ends; a transaction that was never
    assigned an id changed nothing."""
    connection = connections[using]
    if not replica_configured() or connection.needs_rollback:  # rolled back: nothing was written
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT txid_current_if_assigned() IS NOT NULL")
        row = cursor.fetchone()
    if row and row[0]:
        transaction.on_commit(lambda: _mark_written(organization_id), using=using)


def _mark_written(organization_id: uuid.UUID) -> None:
    try:
        cache.set(_WROTE_KEY.format(organization_id), 1, timeout=settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS)
    except Exception:  # committed already; a lost mark costs at most a stale read for the window
        logger.exception("read-your-writes mark failed", extra={"organization_id": str(organization_id)})


def wrote_recently(organization_id: uuid.UUID) -> bool:
    """True when the organization's last write committed within the window (or Redis cannot say)."""
    try:
        return cache.get(_WROTE_KEY.format(organization_id)) is not None
    except Exception:  # unknown: the primary is always right
        logger.warning("read-your-writes lookup failed", extra={"organization_id": str(organization_id)})
        return True


# --- lag policy -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplicaState:
    """What the last check saw: ``lag_ms`` is how far the replica's replay trails the primary
    (0 when it has replayed everything the primary had written at the check)."""

    status: str  # "streaming", "lagging", "not_in_recovery", "unreachable", "not_configured"
    lag_ms: float | None = None

    @property
    def serves_reads(self) -> bool:
        return self.status == "streaming"

    def report(self) -> dict[str, Any]:
        lag = self.lag_ms
        return {"status": self.status, "lag_ms": round(lag, 1) if lag is not None and lag != float("inf") else None}


_REPLICA_POSITION = """
SELECT pg_is_in_recovery(),
       pg_wal_lsn_diff(%s::pg_lsn, pg_last_wal_replay_lsn()),
       1000 * EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())
"""


def _measure() -> ReplicaState:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        row = cursor.fetchone()
    assert row is not None
    primary_lsn = row[0]
    replica = connections[REPLICA_ALIAS]
    try:
        with replica.cursor() as cursor:
            cursor.execute(_REPLICA_POSITION, [primary_lsn])
            position = cursor.fetchone()
    except DatabaseError as exc:
        logger.warning("replica unreachable", extra={"error_type": type(exc).__name__})
        replica.close()
        return ReplicaState("unreachable")
    assert position is not None
    in_recovery, behind_bytes, replay_age_ms = position
    return state_from_position(
        in_recovery=in_recovery,
        behind_bytes=behind_bytes,
        replay_age_ms=replay_age_ms,
        max_lag_ms=settings.DATABASE_REPLICA_MAX_LAG_MS,
    )


def state_from_position(
    *, in_recovery: bool, behind_bytes: float | None, replay_age_ms: float | None, max_lag_ms: float
) -> ReplicaState:
    """The state of a replica that trails the primary's WAL position by ``behind_bytes`` of
    replay and last replayed a commit ``replay_age_ms`` ago (``None``: never)."""
    if not in_recovery:
        return ReplicaState("not_in_recovery")
    if behind_bytes is not None and behind_bytes <= 0:
        lag_ms = 0.0  # replayed all the primary had written, however long ago its last commit was
    else:
        lag_ms = float("inf") if replay_age_ms is None else max(0.0, float(replay_age_ms))
    return ReplicaState("streaming" if lag_ms <= max_lag_ms else "lagging", lag_ms)


class _Checked:
    """The last measurement, shared by the process's threads, renewed when it is older than
    ``DATABASE_REPLICA_CHECK_MS``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.state = ReplicaState("not_configured")
        self.at = float("-inf")

    def get(self) -> ReplicaState:
        if not replica_configured():
            return ReplicaState("not_configured")
        now = time.monotonic()
        with self.lock:
            if now - self.at < settings.DATABASE_REPLICA_CHECK_MS / 1000:
                return self.state
            self.at = now  # one thread measures; the others keep the last state meanwhile
            previous = self.state
        try:
            state = _measure()
        except DatabaseError:
            state = previous if previous.status != "not_configured" else ReplicaState("unreachable")
        if state.status != previous.status:
            logger.info("replica state changed", extra={"status": state.status, "lag_ms": state.lag_ms})
        with self.lock:
            self.state = state
        return state

    def set(self, state: ReplicaState) -> None:
        with self.lock:
            self.state, self.at = state, time.monotonic()

    def forget(self) -> None:
        with self.lock:
            self.at = float("-inf")


_checked = _Checked()


def replica_state() -> ReplicaState:
    return _checked.get()


def replica_failed() -> None:
    """A request could not open its replica transaction: unreachable until the next check."""
    connections[REPLICA_ALIAS].close()
    _checked.set(ReplicaState("unreachable"))


def forget_replica_state() -> None:
    """Measure again at the next read (after a change of topology, and in tests)."""
    _checked.forget()


def replica_serves(organization_id: uuid.UUID) -> bool:
    """Whether the organization's next read-only request may read from the replica."""
    if not replica_configured() or wrote_recently(organization_id):
        return False
    return replica_state().serves_reads
