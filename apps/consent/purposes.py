"""Consent purposes and their defaults. Framework-free.

A purpose names one use of a subject's data that the subject can allow or refuse. Each has a
default that applies until the first explicit change (see ADR 0008): storing what the subject
says is what the product is for, so it starts granted; learning from it beyond plain storage
starts refused and needs an explicit grant.
"""

from __future__ import annotations

from dataclasses import dataclass

STORE_CONVERSATIONS = "store_conversations"
STORE_SENSITIVE_VALUES = "store_sensitive_values"
LEARN_SKILLS = "learn_skills"
CROSS_DOMAIN_GENERALIZATION = "cross_domain_generalization"


@dataclass(frozen=True)
class Purpose:
    name: str
    default_granted: bool
    covers: str  # what is stored under it, and so what withdrawing it erases


PURPOSES: dict[str, Purpose] = {
    p.name: p
    for p in (
        Purpose(
            STORE_CONVERSATIONS,
            default_granted=True,
            covers=(
                "messages, texts and documents written for the subject: core, episodic, semantic, procedural and "
                "resource rows (with superseded versions), uploaded objects, pending batch ingestions, the graph "
                "vertices and anchor vectors derived from them, and webhook payloads holding their text"
            ),
        ),
        Purpose(
            STORE_SENSITIVE_VALUES,
            default_granted=True,
            covers="values the vault detector finds (passwords, keys, card and account numbers, ...): vault entries",
        ),
        Purpose(
            LEARN_SKILLS,
            default_granted=False,
            covers="skills and experiences distilled from the subject's task sessions",
        ),
        Purpose(
            CROSS_DOMAIN_GENERALIZATION,
            default_granted=False,
            covers="general forms of the subject's skills offered outside the domain they were learned in",
        ),
    )
}


def unknown_purposes(names: list[str]) -> list[str]:
    return sorted(set(names) - set(PURPOSES))
