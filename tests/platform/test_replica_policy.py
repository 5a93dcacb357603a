"""The replica's lag policy and the router's choices, without a database (ADR 0051)."""

from __future__ import annotations

import pytest

from apps.platform.db_router import ReplicaReadsRouter
from apps.platform.replica import REPLICA_ALIAS, ReplicaState, read_alias, reading_from, state_from_position
from apps.tenancy.models import Subject

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("in_recovery", "behind_bytes", "replay_age_ms", "expected"),
    [
        (True, 0, 600_000.0, ReplicaState("streaming", 0.0)),  # caught up with an idle primary
        (True, -16, None, ReplicaState("streaming", 0.0)),  # ahead of the position read first
        (True, 8192, 250.0, ReplicaState("streaming", 250.0)),
        (True, 8192, 1500.0, ReplicaState("lagging", 1500.0)),
        (True, 8192, None, ReplicaState("lagging", float("inf"))),  # has replayed no commit yet
        (True, None, None, ReplicaState("lagging", float("inf"))),
        (True, 8192, -3.0, ReplicaState("streaming", 0.0)),  # clocks a little apart
        (False, None, None, ReplicaState("not_in_recovery")),  # promoted, or not a replica at all
    ],
)
def test_lag_is_zero_once_everything_is_replayed_else_the_age_of_the_last_replayed_commit(
    in_recovery: bool, behind_bytes: float | None, replay_age_ms: float | None, expected: ReplicaState
) -> None:
    state = state_from_position(
        in_recovery=in_recovery, behind_bytes=behind_bytes, replay_age_ms=replay_age_ms, max_lag_ms=1000
    )
    assert state == expected
    assert state.serves_reads is (expected.status == "streaming")


def test_the_report_gives_no_number_for_an_unmeasured_or_endless_lag() -> None:
    assert ReplicaState("lagging", float("inf")).report() == {"status": "lagging", "lag_ms": None}
    assert ReplicaState("unreachable").report() == {"status": "unreachable", "lag_ms": None}
    assert ReplicaState("streaming", 12.345).report() == {"status": "streaming", "lag_ms": 12.3}


def test_the_router_reads_from_the_replica_only_inside_a_replica_scope_and_never_writes_there() -> None:
    router = ReplicaReadsRouter()
    assert read_alias() == "default" and router.db_for_read(Subject) is None
    with reading_from(REPLICA_ALIAS):
        assert router.db_for_read(Subject) == REPLICA_ALIAS
        assert router.db_for_write(Subject) is None  # Django's default: the primary
        with reading_from("default"):  # a scope on the primary nested inside
            assert router.db_for_read(Subject) is None
    read_there, read_here, owned = Subject(), Subject(), Subject()
    read_there._state.db, read_here._state.db, owned._state.db = REPLICA_ALIAS, "default", "owner"
    assert router.db_for_write(Subject, instance=read_there) == "default"
    assert router.db_for_write(Subject, instance=owned) is None  # an explicit alias is kept
    assert router.allow_relation(read_there, read_here) is True
    assert router.allow_relation(read_there, owned) is None
