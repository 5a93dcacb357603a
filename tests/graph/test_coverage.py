"""The coverage audit that triggers repair (paper A.2): a pure function, no database needed."""

from __future__ import annotations

import pytest

from apps.graph.coverage import MAX_REPAIR_ITEMS, VISUAL_COVERAGE_THRESHOLD, audit_coverage
from apps.graph.frames import ExtractedFrame

pytestmark = pytest.mark.unit

FLIGHT = ExtractedFrame(
    "fly",
    [("agent", "Caroline"), ("origin", "Boston"), ("destination", "Paris"), ("companion", "Melanie")],
    {"date": "Yesterday", "price": "$450"},
    "2023-05-07",
)


def test_the_papers_constants() -> None:
    assert (MAX_REPAIR_ITEMS, VISUAL_COVERAGE_THRESHOLD) == (12, 0.45)


def test_frames_that_carry_every_detail_need_no_repair() -> None:
    audit = audit_coverage("Yesterday Caroline flew from Boston to Paris with Melanie for $450.", [FLIGHT])
    assert (audit.needs_repair, audit.missing, audit.visual_coverage) == (False, [], None)


def test_a_number_the_frames_miss_is_listed_with_its_unit() -> None:
    source = "Caroline flew to Paris for $450 with 3 suitcases and a 10km walk, 2nd time this year."
    audit = audit_coverage(source, [FLIGHT])
    assert audit.needs_repair
    assert audit.missing == ["3 suitcases", "10km", "2nd time"]


def test_numbers_match_by_value() -> None:
    frame = ExtractedFrame("buy", [("agent", "Nadia"), ("theme", "puppy")], {"price": "$1,200.00"})
    assert not audit_coverage("Nadia paid 1200 dollars for the puppy.", [frame]).needs_repair


def test_a_quoted_phrase_the_frames_miss_is_listed() -> None:
    source = 'Caroline called her painting "Embracing Identity" and flew to Paris.'
    audit = audit_coverage(source, [FLIGHT])
    assert (audit.needs_repair, audit.missing) == (True, ["Embracing Identity"])

    named = ExtractedFrame("name", [("agent", "Caroline"), ("title", "Embracing Identity")])
    assert not audit_coverage(source, [FLIGHT, named]).needs_repair
    assert audit_coverage("She said \u201cnever again\u201d to Melanie.", [FLIGHT]).missing == ["never again"]


def test_apostrophes_are_not_quotes() -> None:
    source = "Caroline's kids' toys and Melanie's car went to Paris."
    assert audit_coverage(source, [FLIGHT]).missing == []


def test_a_missing_date_alone_never_triggers_repair() -> None:
    source = "Caroline flew from Boston to Paris on 9 June 2023 at 3 pm, in 2021 and in the 90s."
    audit = audit_coverage(source, [FLIGHT])
    assert (audit.needs_repair, audit.missing) == (False, [])


def test_a_missing_date_joins_a_repair_that_something_else_requires() -> None:
    source = "Caroline flew from Boston to Paris on 9 June 2023 with 2 bags, not on 7 May 2023."
    audit = audit_coverage(source, [FLIGHT])
    assert audit.needs_repair
    assert audit.missing == ["2 bags", "9 June 2023"]  # 7 May 2023 is the frame's event time


def test_ids_and_codes_are_not_numbers() -> None:
    source = "Said by Caroline on 2023-05-08 (message D1:3) about Form W-2 and s1-2."
    assert not audit_coverage(source, [FLIGHT]).needs_repair


def test_visual_content_under_45_percent_coverage_is_uncovered() -> None:
    source = "Look at this! [shared an image: a photo of a sunset over the lake with two kayaks]"
    share = ExtractedFrame("share", [("agent", "Melanie"), ("depicts", "photo")])

    audit = audit_coverage(source, [share])

    assert audit.needs_repair
    assert audit.visual_coverage is not None and audit.visual_coverage < VISUAL_COVERAGE_THRESHOLD
    assert audit.missing[0] == "a photo of a sunset over the lake with two kayaks"


def test_visual_content_covered_enough_needs_no_repair() -> None:
    source = "[shared an image: a photo of a sunset over the lake]"
    depicted = ExtractedFrame("share", [("agent", "Melanie"), ("depicts", "sunset"), ("location", "lake")])
    audit = audit_coverage(source, [depicted])
    assert (audit.needs_repair, audit.visual_coverage) == (False, 2 / 3)  # photo, sunset, lake


def test_without_frames_everything_is_missing_but_at_most_twelve_items() -> None:
    source = " ".join(f"item {number} costs ${number}0." for number in range(1, 20))
    audit = audit_coverage(source, [])
    assert audit.needs_repair and len(audit.missing) == MAX_REPAIR_ITEMS
    assert audit.missing[:2] == ["1 costs", "$10"]


def test_the_items_are_trimmed_and_distinct_as_the_repair_takes_them() -> None:
    # The repair implementations take the audit's list as it is: the trimming is done here, once.
    source = 'She said "  never again " twice: "never again". It cost $450, then $450 more; [photo:  a red kite  ]'
    audit = audit_coverage(source, [])
    assert audit.missing == ["never again", "$450", "a red kite"]
