"""The anchor admission gate (paper §2.3, A.2): a pure function, no database needed."""

from __future__ import annotations

import pytest

from apps.graph.admission import (
    EPISODIC_ANCHOR_CAP,
    SEMANTIC_ANCHOR_CAP,
    admit_anchors,
    anchor_cap,
    rejection_reason,
)
from apps.graph.frames import ExtractedEntity, ExtractedFrame
from apps.graph.keys import anchor_key

pytestmark = pytest.mark.unit


def _reason(name: str) -> str | None:
    return rejection_reason(anchor_key(name))


def test_the_papers_caps() -> None:
    assert (EPISODIC_ANCHOR_CAP, SEMANTIC_ANCHOR_CAP) == (16, 18)
    assert (anchor_cap("episodic"), anchor_cap("semantic")) == (16, 18)


@pytest.mark.parametrize("name", ["advice", "Details", "information", "plan", "Tips", "personal information", "Places"])
def test_generic_filing_terms_are_rejected(name: str) -> None:
    assert _reason(name) == "generic"


@pytest.mark.parametrize("name", ["user", "User", "Users", "the user", "assistant", "Speaker A", "speaker 2", "me"])
def test_dialogue_role_pseudo_entities_are_rejected_on_their_key(name: str) -> None:
    assert _reason(name) == "dialogue_role"


@pytest.mark.parametrize("name", ["2023", "$450", "2023-05-07", "3.5"])
def test_numbers_are_literals_not_anchors(name: str) -> None:
    assert _reason(name) == "number"


@pytest.mark.parametrize("name", ["", "the", "--"])
def test_empty_keys_are_rejected(name: str) -> None:
    assert _reason(name) == "empty"


@pytest.mark.parametrize(
    "name", ["Caroline", "LGBTQ support group", "10 gallons", "travel agent", "user research", "Plan B", "New York"]
)
def test_real_entities_are_admissible(name: str) -> None:
    assert _reason(name) is None


def test_admission_returns_admitted_and_rejected_with_reasons() -> None:
    entities = [
        ExtractedEntity("Caroline", "person"),
        ExtractedEntity("the user", "person"),
        ExtractedEntity("Tips", "concept"),
        ExtractedEntity("$450", "other"),
        ExtractedEntity("Mobile Apps", "object"),
        ExtractedEntity("mobile app", "concept"),  # the same key: one anchor with an alias
    ]

    admission = admit_anchors(entities, kind="episodic")

    assert [(a.key, a.name, a.type, a.aliases) for a in admission.admitted] == [
        ("caroline", "Caroline", "person", ()),
        ("app mobile", "Mobile Apps", "object", ("mobile app",)),
    ]
    assert [(r.name, r.reason) for r in admission.rejected] == [
        ("the user", "dialogue_role"),
        ("Tips", "generic"),
        ("$450", "number"),
    ]
    anchor = admission.anchor_for("Mobile App")
    assert anchor is not None and anchor.name == "Mobile Apps"
    assert admission.anchor_for("the user") is None


def test_the_cap_keeps_frame_arguments_then_named_kinds_then_first_mentions() -> None:
    concepts = [ExtractedEntity(f"garden plot {index}", "concept") for index in range(20)]
    people = [ExtractedEntity("Melanie", "person"), ExtractedEntity("Caroline", "person")]
    studio = ExtractedEntity("pottery studio", "location")
    frame = ExtractedFrame("visit", [("agent", "Melanie"), ("destination", "garden plot 19")])

    admission = admit_anchors([*concepts, *people, studio], kind="episodic", frames=[frame])

    names = [anchor.name for anchor in admission.admitted]
    assert len(names) == EPISODIC_ANCHOR_CAP
    # Frame arguments first, then people, then the location, then concepts by first mention.
    assert {"Melanie", "garden plot 19", "Caroline", "pottery studio"} <= set(names)
    assert [n for n in names if n.startswith("garden")] == [f"garden plot {i}" for i in range(12)] + ["garden plot 19"]
    assert names[:3] == ["garden plot 0", "garden plot 1", "garden plot 2"]  # admitted keep mention order
    over = [r.name for r in admission.rejected if r.reason == "over_cap"]
    assert over == [f"garden plot {i}" for i in range(12, 19)]


def test_semantic_records_have_a_larger_cap() -> None:
    entities = [ExtractedEntity(f"Guest {chr(65 + index)}{chr(65 + index)}", "person") for index in range(20)]
    assert len(admit_anchors(entities, kind="semantic").admitted) == SEMANTIC_ANCHOR_CAP
    assert len(admit_anchors(entities, kind="episodic").admitted) == EPISODIC_ANCHOR_CAP


def test_admission_is_deterministic() -> None:
    entities = [ExtractedEntity(f"widget {chr(97 + index)}x", "object") for index in range(25)]
    assert admit_anchors(entities, kind="episodic") == admit_anchors(list(entities), kind="episodic")
