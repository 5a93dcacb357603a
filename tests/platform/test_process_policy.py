"""The CPU policy of ADR 0052 in real processes: gunicorn's API processes keep their torch
threads within their share of the cores at normal priority, Celery's pool processes run one
torch thread at a lower priority, and both have loaded their models before taking work."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from apps.language import pipeline
from apps.platform import cpu
from apps.platform.cpu import autogroup_nice, available_cores, torch_threads_for
from apps.providers import local_embedder
from apps.providers.registry import providers_warm
from tests.processes import ROOT, celery_worker, wait_for, worker_log
from tests.reliability.support import api_server

POLICY_LINE = re.compile(r"process policy applied \(kind=(\w+), inference_threads=(\d+), nice=(-?\d+)\)")
STARTING = {"MIRIX_WARM_START": "on", "MIRIX_REQUEST_BUDGET_SECONDS": "300", "MIRIX_WORKER_START_SECONDS": "300"}


@pytest.mark.unit
@pytest.mark.parametrize(("processes", "cores", "threads"), [(1, 2, 2), (2, 2, 1), (4, 2, 1), (3, 8, 2), (0, 4, 4)])
def test_a_process_share_of_the_cores_is_at_least_one_thread(processes: int, cores: int, threads: int) -> None:
    assert torch_threads_for(processes, cores) == threads


def _children(pid: int) -> list[int]:
    return [
        int(child) for task in Path(f"/proc/{pid}/task").iterdir() for child in (task / "children").read_text().split()
    ]


def _nice(pid: int) -> int:
    # /proc/<pid>/stat: the 19th field is the niceness (after the parenthesized command name).
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _policies(text: str, kind: str) -> list[tuple[int, int]]:
    return [(int(threads), int(nice)) for found, threads, nice in POLICY_LINE.findall(text) if found == kind]


def test_api_processes_take_their_share_of_the_cores_at_normal_priority() -> None:
    # Two processes asking for every thread of their share: each gets cores // 2, read back from the loaded model.
    env = {**STARTING, "MIRIX_API_TORCH_THREADS": "0"}
    with api_server(workers=2, threads=1, name="policy", env=env, ready_timeout=300) as server:
        log = ROOT / "var" / "test-server-policy.log"
        policies = wait_for(lambda: len(_policies(log.read_text(), "api")) == 2 and _policies(log.read_text(), "api"))
        assert policies == [(torch_threads_for(2, available_cores()), 0)] * 2
        workers = _children(server.process.pid)
        assert len(workers) == 2 and all(_nice(pid) == 0 for pid in workers)


def test_worker_pool_processes_run_one_torch_thread_at_a_lower_priority() -> None:
    with celery_worker(name="policy", concurrency=1, env=STARTING) as process:
        policies = wait_for(lambda: _policies(worker_log("policy"), "worker"), timeout=300)
        assert policies == [(1, settings.WORKER_NICE)]  # the loaded model's count once the warm start loaded it
        assert settings.WORKER_NICE == 19  # the lowest priority (ADR 0094)
        (child,) = _children(process.pid)
        assert _nice(child) == 19
        assert _nice(process.pid) == 0  # the pool's parent only supervises
        # The worker leads a session of its own: its scheduling group yields to the API's too.
        if autogroup_nice() is not None:
            group = Path(f"/proc/{child}/autogroup").read_text()
            assert group.split()[-1] == "19" and group == Path(f"/proc/{process.pid}/autogroup").read_text()
            assert autogroup_nice() == 0  # this session's (the test runner's) is not the worker's


@pytest.mark.unit
def test_a_session_group_is_lowered_only_when_the_session_is_the_processs_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = tmp_path / "autogroup"
    monkeypatch.setattr(cpu, "AUTOGROUP", group)
    monkeypatch.setattr(cpu.os, "setpriority", lambda *args: None)  # this test process keeps its priority
    monkeypatch.delenv(cpu.TORCH_THREADS_VARIABLE, raising=False)  # and its thread setting, afterwards
    group.write_text("/autogroup-7 nice 0")
    assert cpu.process_policy_apply(torch_threads=1, nice=10, own_session=False).session_nice == 0
    assert group.read_text() == "/autogroup-7 nice 0"  # a shared session is left alone
    assert cpu.process_policy_apply(torch_threads=1, nice=10, own_session=True).session_nice == 10
    group.write_text("/autogroup-7 nice 15")
    assert cpu.process_policy_apply(torch_threads=1, nice=10, own_session=True).session_nice == 15  # never raised
    group.unlink()
    assert cpu.process_policy_apply(torch_threads=1, nice=10, own_session=True).session_nice is None  # no groups


def test_the_warm_start_loads_the_models_a_first_request_would() -> None:
    providers_warm()
    assert local_embedder._MODELS[settings.LOCAL_EMBEDDING_PRECISION]._value is not None
    assert pipeline._PIPELINE._value is not None


@pytest.mark.unit
def test_the_worker_waits_while_others_wait_for_a_core_and_no_longer_than_its_bound() -> None:
    """ADR 0106: a window in which runnable tasks waited for a core a tenth of it or more is
    waited out; the first calmer window ends the wait, and so does the bound."""
    now = [0.0]
    totals: list[int] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds

    def waits(*stalls_ms: int) -> float:
        totals[:] = [0]
        for stall in stalls_ms:
            totals.append(totals[-1] + stall * 1000)
        readings = iter(cpu.CpuPressure(recent=0.5, total_us=total) for total in totals)
        now[0] = 0.0
        return cpu.yield_to_contention(longest=0.5, pressure=lambda: next(readings), sleep=sleep, clock=lambda: now[0])

    def once(longest: float, reading: cpu.CpuPressure | None) -> float:
        return cpu.yield_to_contention(longest=longest, pressure=lambda: reading, sleep=sleep)

    assert waits(1) == pytest.approx(0.05)  # a calm window: on at once
    assert waits(30, 25, 2) == pytest.approx(0.15)  # two busy windows, then a calm one
    assert waits(*[40] * 20) == pytest.approx(0.5)  # busy throughout: the bound
    assert once(1.0, cpu.CpuPressure(recent=0.02, total_us=0)) == 0.0  # an idle machine: no window
    assert once(0.0, cpu.CpuPressure(recent=0.5, total_us=0)) == 0.0  # turned off
    assert once(1.0, None) == 0.0  # no pressure kept
    assert cpu.cpu_pressure() is None or 0.0 <= cpu.cpu_pressure().recent <= 1.0  # this machine's reading parses
