"""The registry of erasure steps: the extension point for every capability that stores data
about a subject.

An ``Eraser`` erases one kind of data of one subject, a bounded batch per call, and returns
how many items of each kind it removed (``{receipt key: count}``). The erasure job calls it
again, each call in a transaction of its own, until it reports nothing: so a step must be
idempotent and must make progress with every call. A capability registers its steps in its
``AppConfig.ready``::

    from apps.erasure.registry import Eraser, eraser_register

    eraser_register(Eraser(name="skills", erase=skills_erase, keys=("skills",),
                           purposes=frozenset({LEARN_SKILLS}), order=450))

Erasing a subject runs every registered step in ``order``; withdrawing consent for a purpose
runs the steps whose ``purposes`` name it. Anything still referencing the subject when the
last step has run is deleted with the subject row (and counted), so a capability that forgets
to register still loses its rows with the subject — but only a registered step is run on a
consent withdrawal or can erase data that does not hang off the subject row (graph vertices,
objects, rows in tables without a foreign key).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass

from apps.platform.registry import named_register

Counts = dict[str, int]


@dataclass(frozen=True)
class ErasureTarget:
    organization_id: uuid.UUID
    subject_id: uuid.UUID


@dataclass(frozen=True)
class Eraser:
    name: str  # unique; recorded on the request as the step completes
    erase: Callable[[ErasureTarget], Counts]  # one bounded batch; {} or zeros when nothing is left
    keys: tuple[str, ...] = ()  # the receipt keys it reports (listed with 0 when nothing was found)
    purposes: frozenset[str] = frozenset()  # consent purposes whose withdrawal runs it
    order: int = 500


_ERASERS: dict[str, Eraser] = {}


def eraser_register(eraser: Eraser) -> Eraser:
    return named_register(_ERASERS, eraser, kind="an eraser")


def erasers_for(*, purposes: Collection[str] | None) -> list[Eraser]:
    """The steps of an erasure in order: all of them for a subject (``purposes=None``), or
    those covering any of ``purposes`` for a consent withdrawal."""
    selected = [e for e in _ERASERS.values() if purposes is None or any(purpose in e.purposes for purpose in purposes)]
    return sorted(selected, key=lambda e: (e.order, e.name))
