"""Frame identity (paper §2.3 eqs. 6–8; invariant §14.2): pure functions, no database needed."""

from __future__ import annotations

import re
import uuid

import pytest

from apps.graph.frames import ExtractedFrame
from apps.graph.identity import (
    episodic_frame_id,
    frame_identity,
    frame_signature,
    normalize_label,
    occurrence_key,
    role_signature,
    semantic_frame_id,
)

pytestmark = pytest.mark.unit

SUBJECT = uuid.UUID("00000000-0000-4000-8000-000000000001")
OTHER_SUBJECT = uuid.UUID("00000000-0000-4000-8000-000000000002")
ROW_1 = uuid.UUID("10000000-0000-4000-8000-000000000001")
ROW_2 = uuid.UUID("10000000-0000-4000-8000-000000000002")

RUN = ExtractedFrame("go_for", [("agent", "Caroline"), ("activity", "run")])
FLIGHT = ExtractedFrame(
    "fly",
    [("agent", "Caroline"), ("origin", "Boston"), ("destination", "Paris"), ("companion", "Melanie")],
    {"price": "$450"},
    "2023-05-07",
)


def _episodic(frame: ExtractedFrame, row: uuid.UUID, subject: uuid.UUID = SUBJECT) -> str:
    return frame_identity(frame, kind="episodic", subject_id=subject, memory_id=row)


def test_undated_episodes_from_different_rows_get_different_ids() -> None:
    assert _episodic(RUN, ROW_1) != _episodic(RUN, ROW_2)
    assert _episodic(RUN, ROW_1) == _episodic(RUN, ROW_1)  # deterministic


def test_a_dated_repeated_mention_shares_one_id() -> None:
    dated = ExtractedFrame(RUN.predicate, RUN.roles, {}, "2023-05-07")
    assert _episodic(dated, ROW_1) == _episodic(dated, ROW_2)
    other_day = ExtractedFrame(RUN.predicate, RUN.roles, {}, "2023-05-08")
    assert _episodic(other_day, ROW_1) != _episodic(dated, ROW_1)


def test_role_order_does_not_matter() -> None:
    reordered = ExtractedFrame(FLIGHT.predicate, list(reversed(FLIGHT.roles)), FLIGHT.literals, FLIGHT.event_time)
    assert _episodic(reordered, ROW_1) == _episodic(FLIGHT, ROW_1)


def test_status_literals_and_surface_forms_do_not_matter() -> None:
    planned = ExtractedFrame(FLIGHT.predicate, FLIGHT.roles, {"price": "$999"}, FLIGHT.event_time, status="planned")
    assert _episodic(planned, ROW_1) == _episodic(FLIGHT, ROW_1)
    renamed = ExtractedFrame(
        "Fly", [("Agent", "caroline"), ("origin", "BOSTON"), ("destination", "Paris"), ("companion", "Melanie")]
    )
    assert frame_identity(renamed, kind="semantic", subject_id=SUBJECT, memory_id=ROW_1) == frame_identity(
        FLIGHT, kind="semantic", subject_id=SUBJECT, memory_id=ROW_2
    )


def test_roles_predicates_and_subjects_do_matter() -> None:
    swapped = ExtractedFrame(
        "fly", [("agent", "Caroline"), ("origin", "Paris"), ("destination", "Boston"), ("companion", "Melanie")]
    )
    base = frame_identity(FLIGHT, kind="semantic", subject_id=SUBJECT, memory_id=ROW_1)
    assert frame_identity(swapped, kind="semantic", subject_id=SUBJECT, memory_id=ROW_1) != base
    drove = ExtractedFrame("drive", FLIGHT.roles)
    assert frame_identity(drove, kind="semantic", subject_id=SUBJECT, memory_id=ROW_1) != base
    assert frame_identity(FLIGHT, kind="semantic", subject_id=OTHER_SUBJECT, memory_id=ROW_1) != base


def test_semantic_frames_ignore_the_row_and_the_time() -> None:
    undated = ExtractedFrame("own", [("owner", "Mia"), ("theme", "Suica card")])
    dated = ExtractedFrame("own", [("owner", "Mia"), ("theme", "Suica cards")], {}, "2023-05-02")
    first = frame_identity(undated, kind="semantic", subject_id=SUBJECT, memory_id=ROW_1)
    assert first == frame_identity(dated, kind="semantic", subject_id=SUBJECT, memory_id=ROW_2)
    assert first != frame_identity(undated, kind="episodic", subject_id=SUBJECT, memory_id=ROW_1)


def test_sigma_is_the_sorted_set_of_role_and_anchor_keys() -> None:
    assert role_signature([("Companion", "Melanie"), ("agent", "The Users' Group"), ("agent", "users group")]) == (
        "agent:group user",
        "companion:melanie",
    )
    assert role_signature([("theme", "the")]) == ()  # a name without a key is no arm
    assert frame_signature(FLIGHT) == ("fly", role_signature(FLIGHT.roles))
    assert normalize_label(" Pick-Up ") == normalize_label("pick up") == "pick_up"


def test_the_occurrence_key_and_the_id_format() -> None:
    assert occurrence_key(event_time="2023-05", memory_id=ROW_1) == "time:2023-05"
    assert occurrence_key(event_time=None, memory_id=ROW_1) == f"row:{ROW_1}"
    assert occurrence_key(event_time="  ", memory_id=ROW_1) == f"row:{ROW_1}"
    frame_id = episodic_frame_id(
        subject_id=SUBJECT, predicate="fly", roles=FLIGHT.roles, event_time=None, memory_id=ROW_1
    )
    assert re.fullmatch(r"[0-9a-f]{64}", frame_id)
    assert semantic_frame_id(subject_id=SUBJECT, predicate="fly", roles=FLIGHT.roles) != frame_id
