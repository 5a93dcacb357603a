"""Which earlier text a pasted or uploaded document revises, and which passage revises which
(ADR 0101): pure functions, no database."""

from __future__ import annotations

import random

from apps.memory.revisions import REVISION_OVERLAP, aligned_passages, revised_version, revises

POLICY = [
    "Full-time staff receive 27 days of paid annual leave per calendar year.",
    "A doctor's note is required from the eighth calendar day of sickness.",
    "Staff may work remotely up to three days a week once they have passed probation.",
    "Meals while travelling are reimbursed up to 45 euros per day.",
    "A home-office allowance of 600 euros is paid once, with the first salary.",
    "Partners receive 10 weeks of paid leave in the child's first year.",
    "Each employee has a learning budget of 1,200 euros a year.",
    "The probation period lasts six months, with a review at the end of month three.",
    "Managers have a notice period of three months after probation.",
    "Passwords are kept in the company password manager with two-factor authentication.",
]


def _lease(seed: int, clauses: int = 60) -> str:
    """A lease cut from one template: every clause is the same but for its values."""
    rng = random.Random(seed)
    return "\n\n".join(
        f"Clause {n}. The tenant shall report damage to the landlord within {rng.randint(2, 60)} days, and the "
        f"landlord shall answer within {rng.randint(2, 9)} working days. This clause is governed by section "
        f"{n % 12 + 1} of the general terms."
        for n in range(1, clauses + 1)
    )


def test_a_changed_version_revises_its_document_and_an_unchanged_one_too() -> None:
    old = "\n\n".join(POLICY)
    new = old.replace("27 days", "30 days").replace("45 euros", "55 euros")
    assert revises(old, new) >= 0.8
    assert revises(old, "\n\n".join(POLICY[:8])) >= REVISION_OVERLAP  # two sections cut
    assert revises(old, old) == 1.0  # pasted again as it was


def test_two_documents_cut_from_one_template_are_not_versions_of_each_other() -> None:
    assert revises(_lease(3), _lease(5)) == 0.0
    assert revises(_lease(3), _lease(3).replace("within 17 days", "within 19 days")) > REVISION_OVERLAP


def test_documents_that_share_their_boilerplate_are_not_versions_of_each_other() -> None:
    boiler = (
        "Questions about this section go to the People team. They answer within two working days. "
        "Managers explain each change at the next team meeting."
    )
    ours = "\n\n".join(f"{sentence}\n\n{boiler}" for sentence in POLICY)
    theirs = "\n\n".join(
        f"Policy {n} of the other company sets its own rule number {n}.\n\n{boiler}" for n in range(10)
    )
    assert revises(ours, theirs) == 0.0


def test_unrelated_or_heavily_rewritten_texts_are_not_versions() -> None:
    assert revises("\n\n".join(POLICY), _lease(3)) == 0.0
    half = "\n\n".join([*POLICY[:4], *(f"In short: {sentence}".replace(": ", ", ") for sentence in POLICY[4:])])
    assert revises("\n\n".join(POLICY), half) == 0.0
    assert revises("", "\n\n".join(POLICY)) == 0.0


def test_passages_pair_with_the_passage_they_revise_and_cut_or_new_ones_pair_with_none() -> None:
    old = [" ".join(POLICY[i : i + 2]) for i in range(0, 10, 2)]  # five passages
    new = [
        old[0],
        old[1].replace("three days", "two days"),
        # old[2] was cut
        old[3],
        old[4].replace("six months", "four months"),
        "A new section: the office closes at 20:00 on weekdays and at 14:00 on Saturdays.",
    ]
    assert aligned_passages(old, new) == {0: 0, 1: 1, 2: 3, 3: 4}


def test_a_paragraph_repeated_through_a_document_pairs_with_its_own_place() -> None:
    boiler = "Questions about this section go to the People team, who answer within two working days."
    old = [f"{sentence} {boiler}" for sentence in POLICY]
    new = [*old[:5], old[5].replace("10 weeks", "12 weeks"), *old[6:]]
    assert aligned_passages(old, new) == {i: i for i in range(len(POLICY))}


def test_the_version_revised_is_the_candidate_most_alike_and_none_when_nothing_is() -> None:
    v1 = "\n\n".join(POLICY)
    v2 = v1.replace("27 days", "30 days")
    v3 = v2.replace("45 euros", "55 euros")
    assert revised_version(v3, [("lease", _lease(3)), ("v1", v1), ("v2", v2)]) == "v2"
    assert revised_version(v3, [("lease", _lease(3))]) is None
    assert revised_version(v3, []) is None
