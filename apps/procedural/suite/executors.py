"""Registers the suite's deterministic executor with the local replay provider."""

from __future__ import annotations

from apps.procedural.local import executor_register
from apps.procedural.suite.tasks import EXECUTOR, run_task


def register_suite_executors() -> None:
    executor_register(EXECUTOR, run_task)
