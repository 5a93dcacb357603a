"""How ``bench_api`` adds up its rounds: a cell's figures over every round, each round's ratio apart."""

from __future__ import annotations

import pytest

from apps.evaluation import loadgen
from apps.evaluation.management.commands.bench_api import Command, Run

pytestmark = pytest.mark.unit


def _sample(requests: int, seconds: float = 10.0) -> loadgen.Sample:
    return loadgen.Sample(latencies=[0.01] * requests, seconds=seconds)


def test_a_cell_adds_up_its_rounds_and_each_round_keeps_its_own_ratio() -> None:
    run = Run(
        rounds=[
            {(1, 8, "write"): _sample(600), (2, 8, "write"): _sample(900)},
            {(1, 8, "write"): _sample(700), (2, 8, "write"): _sample(1_400)},
        ]
    )
    (one, two) = run.measurements
    assert (one.api_workers, one.summary.requests, one.summary.per_second) == (1, 1_300, 65.0)
    assert (two.api_workers, two.summary.requests, two.summary.per_second) == (2, 2_300, 115.0)
    assert Command()._scaling_row(run, "write") == "| write | 65.0 (1.00×) | 115.0 (1.77×) | 1.50×, 2.00× |"
