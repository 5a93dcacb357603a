"""Registers the suite's deterministic executor with the local replay provider."""

from __future__ import annotations

from apps.procedural.suite.tasks import EXECUTOR, run_task
from apps.providers.procedural_local import executor_register


def register_suite_executors() -> None:
    executor_register(EXECUTOR, run_task)
