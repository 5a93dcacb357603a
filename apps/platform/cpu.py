"""How API and worker processes share the machine's cores (ADR 0052). Framework-free.

An API process serves customers: it runs at normal priority and its torch threads stay
within its share of the cores (``cores // processes``), so N processes never run more
inference threads than there are cores (one thread by default: ADR 0052 has the figures). A worker process indexes in the background: it runs at a lower CPU
priority (``nice``) with one torch thread, so a backlog of indexing takes the cores only when
the API leaves them idle.

Where the kernel groups processes by session for scheduling (``sched_autogroup``, on by default
on desktop and many server kernels), a process's niceness only orders it against the processes
of its own session: a worker started in a session of its own (as ``make run`` and the
benchmarks start it) would compete with the API's session as an equal, whatever its nice
level. The worker's pool processes then give that niceness to their session's group too
(``/proc/self/autogroup``), when the session is the worker's own: its leader is the pool's
parent. A session shared with other programs (a shell that started both) is left alone.

Niceness orders processes, not the database work they ask for: a worker's SQL runs in Postgres
backends at normal priority. So a worker also waits, before each batch of write completion, while
the machine is saturated (ADR 0106): it sleeps in short windows until one in which no runnable task
waited for a core for a tenth of it (the kernel's CPU pressure, ``/proc/pressure/cpu``), never
longer than its bound, and not at all on an idle machine.

The thread count reaches the model through ``MIRIX_TORCH_THREADS`` (the local embedder reads it
when it loads: its ONNX Runtime session's intra-op threads, ADR 0063; the names are older than
the runtime), and torch is told at once when it is already imported.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TORCH_THREADS_VARIABLE = "MIRIX_TORCH_THREADS"
AUTOGROUP = Path("/proc/self/autogroup")  # "/autogroup-<id> nice <n>" where the kernel has it
PRESSURE = Path("/proc/pressure/cpu")  # "some avg10=… total=<µs>" where the kernel keeps CPU pressure


def available_cores() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def torch_threads_for(processes: int, cores: int) -> int:
    """Each of ``processes`` processes' share of ``cores``, at least one thread."""
    return max(1, cores // max(1, processes))


def api_torch_threads(*, configured: int, processes: int, cores: int) -> int:
    """An API process's torch threads: ``configured`` (0: the whole share) within its share."""
    share = torch_threads_for(processes, cores)
    return min(configured or share, share)


def torch_threads() -> int:
    """The thread count set for this process (``MIRIX_TORCH_THREADS``), else all its cores."""
    configured = os.environ.get(TORCH_THREADS_VARIABLE, "")
    return int(configured) if configured.isdigit() and int(configured) > 0 else available_cores()


@dataclass(frozen=True)
class ProcessPolicy:
    torch_threads: int
    nice: int  # the process's niceness once applied (0 is the default priority)
    session_nice: int | None = None  # its session's scheduling group's, where the kernel groups sessions


def autogroup_nice() -> int | None:
    """The niceness of this process's session group, None where the kernel has no such groups."""
    try:
        return int(AUTOGROUP.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def process_policy_apply(*, torch_threads: int, nice: int = 0, own_session: bool = False) -> ProcessPolicy:
    """Pin this process's torch threads and lower (never raise) its CPU priority to ``nice``;
    with ``own_session`` (the session holds only this program's processes), its session's
    scheduling group's priority too."""
    os.environ[TORCH_THREADS_VARIABLE] = str(torch_threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(torch_threads)
    current = os.getpriority(os.PRIO_PROCESS, 0)
    if nice > current:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    group = autogroup_nice()
    if own_session and group is not None and nice > group:
        try:
            AUTOGROUP.write_text(str(nice))
        except OSError:
            pass  # not permitted here: the process's own niceness still orders it within its session
        group = autogroup_nice()
    return ProcessPolicy(torch_threads=torch_threads, nice=os.getpriority(os.PRIO_PROCESS, 0), session_nice=group)


@dataclass(frozen=True)
class CpuPressure:
    """The kernel's CPU pressure: the share of the last ten seconds in which some runnable task
    waited for a core, and the running total of that waiting in microseconds."""

    recent: float
    total_us: int


def cpu_pressure() -> CpuPressure | None:
    """The machine's CPU pressure (``/proc/pressure/cpu``), None where the kernel keeps none."""
    try:
        fields = dict(field.split("=", 1) for field in PRESSURE.read_text().splitlines()[0].split()[1:])
        return CpuPressure(recent=float(fields["avg10"]) / 100, total_us=int(fields["total"]))
    except (OSError, ValueError, IndexError, KeyError):
        return None


def yield_to_contention(
    *,
    longest: float,
    window: float = 0.05,
    share: float = 0.1,
    idle: float = 0.03,
    pressure: Callable[[], CpuPressure | None] = cpu_pressure,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Wait while other processes wait for a core: sleep in windows of ``window`` seconds until
    one in which runnable tasks waited less than ``share`` of it, or ``longest`` seconds have
    passed; the seconds waited. A sleeping process is not runnable, so what the window measures
    is the others' wait. Nothing is waited where the kernel keeps no CPU pressure, nor when
    tasks waited less than ``idle`` of the last ten seconds (an idle machine: no window)."""
    before = pressure()
    if longest <= 0 or before is None or before.recent < idle:
        return 0.0
    began = clock()
    for _ in range(max(1, round(longest / window))):
        sleep(window)
        after = pressure()
        if after is None or after.total_us - before.total_us < share * window * 1e6:
            break
        before = after
    return clock() - began
