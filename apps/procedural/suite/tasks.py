"""A deterministic multi-domain task suite for procedural memory. Framework-free.

Each domain has a numeric task with one piece of know-how: an executor that is told it (a
guidance text containing the domain's ``keyword``) answers correctly in few tokens; one that
is told a plausible but wrong rule (the ``trap``) answers wrongly; one told nothing answers
with the naive rule after a longer search (more tokens). In ``shipping`` the naive rule is
right, so only harmful guidance can hurt there. The executor is what local SEDM replay runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

EXECUTOR = "suite.v1"
BASE_TOKENS = 120
SEARCH_TOKENS = 260  # extra tokens spent finding a rule without guidance


@dataclass(frozen=True)
class Family:
    domain: str
    prompt: str  # with {n}
    keyword: str  # in helpful guidance
    trap: str  # in harmful guidance
    correct: Callable[[int], float]
    naive: Callable[[int], float]
    wrong: Callable[[int], float]
    lesson: str  # helpful guidance, as a session would state it
    trap_lesson: str


FAMILIES: dict[str, Family] = {
    f.domain: f
    for f in (
        Family(
            "travel",
            "Convert {n} euros to US dollars for the travel budget",
            "1.08",
            "parity",
            correct=lambda n: round(n * 1.08, 2),
            naive=lambda n: float(n),
            wrong=lambda n: float(n),
            lesson="Convert euros to dollars at the fixed budget rate of 1.08 dollars per euro",
            trap_lesson="Convert euros to dollars at parity, one dollar per euro",
        ),
        Family(
            "cooking",
            "How many grams of flour are needed to bake bread for {n} servings",
            "125",
            "handful",
            correct=lambda n: float(n * 125),
            naive=lambda n: float(n * 100),
            wrong=lambda n: float(n * 80),
            lesson="Use 125 grams of flour per serving when scaling the bread recipe",
            trap_lesson="Use a handful of flour, about 80 grams, per serving of bread",
        ),
        Family(
            "devops",
            "Total seconds waited by a deploy job that retries {n} times with backoff starting at 2 seconds",
            "doubling",
            "constant",
            correct=lambda n: float(2 * (2**n - 1)),
            naive=lambda n: float(2 * n),
            wrong=lambda n: float(2 * n),
            lesson="Retry waits grow by doubling from 2 seconds, so the total is 2 times (2 to the power of retries minus 1)",
            trap_lesson="Retry waits stay constant at 2 seconds per retry",
        ),
        Family(
            "shipping",
            "Shipping cost in dollars of a parcel of {n} kilograms at 4 dollars per kilogram",
            "per kilogram",
            "flat fee",
            correct=lambda n: float(4 * n),
            naive=lambda n: float(4 * n),
            wrong=lambda n: 15.0,
            lesson="Charge 4 dollars per kilogram of parcel weight",
            trap_lesson="Charge a flat fee of 15 dollars for every parcel",
        ),
    )
}


def run_task(inputs: dict[str, Any], guidance: str | None, seed: int) -> tuple[str, int]:
    """The suite's deterministic executor: ``(output, tokens)``. A trap in the guidance
    wins over the keyword (harmful advice misleads even next to good advice)."""
    family = FAMILIES[inputs["domain"]]
    n = int(inputs["n"])
    text = (guidance or "").lower()
    words = len(text.split())
    if family.trap in text:
        return f"answer: {family.wrong(n)}", BASE_TOKENS + words
    if family.keyword in text:
        return f"answer: {family.correct(n)}", BASE_TOKENS + words
    return f"answer: {family.naive(n)}", BASE_TOKENS + SEARCH_TOKENS + words


def reward_spec(domain: str, n: int) -> dict[str, Any]:
    return {"kind": "numeric", "expected": FAMILIES[domain].correct(n), "tolerance": 0.01}


def task_text(domain: str, n: int) -> str:
    return FAMILIES[domain].prompt.format(n=n)


@dataclass(frozen=True)
class TrainingSession:
    domain: str
    n: int
    lesson: str
    with_scec: bool

    def payload(self) -> dict[str, Any]:
        """The session as the sessions endpoint takes it."""
        task = task_text(self.domain, self.n)
        output = f"answer: {FAMILIES[self.domain].correct(self.n)}"
        body: dict[str, Any] = {
            "task": task,
            "domain": self.domain,
            "steps": [
                {"kind": "thought", "content": f"Lesson: {self.lesson}"},
                {"kind": "action", "content": f"compute the {self.domain} result for {self.n}"},
                {"kind": "tool_result", "content": "the check passed"},
            ],
            "final_output": output,
            "outcome": "success",
        }
        if self.with_scec:
            body["scec"] = {
                "inputs": {"domain": self.domain, "n": self.n},
                "output": output,
                "tool_summaries": [f"calculator used for {self.domain}"],
                "seeds": [7, 11, 13],
                "model_hash": "suite-model",
                "config_hash": "suite-config",
                "executor": EXECUTOR,
                "reward_spec": reward_spec(self.domain, self.n),
            }
        return body


def training_sessions() -> list[TrainingSession]:
    """Per domain a helpful and a harmful lesson, with SCECs; shipping's harmful lesson comes
    without one (it can only enter unverified, and only evolution can remove it)."""
    sessions = []
    for domain, family in FAMILIES.items():
        if domain == "shipping":
            sessions.append(TrainingSession(domain, 3, family.trap_lesson, with_scec=False))
            continue
        sessions.append(TrainingSession(domain, 3, family.lesson, with_scec=True))
        sessions.append(TrainingSession(domain, 4, family.trap_lesson, with_scec=True))
    return sessions


def task_sequence(length: int) -> Iterator[tuple[str, int]]:
    """``length`` evaluation tasks, round-robin over domains, with varying sizes."""
    domains = sorted(FAMILIES)
    for index in range(length):
        yield domains[index % len(domains)], 5 + (index * 7) % 23
