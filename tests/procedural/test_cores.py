"""The pure cores: reward evaluators, SEDM arithmetic, quotes and the general form."""

from __future__ import annotations

import pytest

from apps.procedural.rewards import InvalidRewardSpec, reward, validate_spec
from apps.procedural.sedm import ArmRun, admission_score, general_weight, merged_weight, updated_weight
from apps.procedural.texts import general_form, leaked_specifics, quote_in

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("spec", "output", "expected"),
    [
        ({"kind": "exact", "expected": "42"}, " 42 ", 1.0),
        ({"kind": "exact", "expected": "42"}, "420", 0.0),
        ({"kind": "exact", "expected": "Paris", "case_sensitive": False}, "paris", 1.0),
        ({"kind": "contains", "expected": "tests passed"}, "all tests passed today", 1.0),
        ({"kind": "contains", "expected": "tests passed"}, "tests failed", 0.0),
        ({"kind": "regex", "pattern": r"^PR #\d+ merged$"}, "PR #12 merged", 1.0),
        ({"kind": "regex", "pattern": r"^PR #\d+ merged$"}, "PR merged", 0.0),
        ({"kind": "json_schema", "schema": {"type": "object", "required": ["id"]}}, '{"id": 3}', 1.0),
        ({"kind": "json_schema", "schema": {"type": "object", "required": ["id"]}}, '{"name": 3}', 0.0),
        ({"kind": "json_schema", "schema": {"type": "object"}}, "not json", 0.0),
        ({"kind": "numeric", "expected": 8.05, "tolerance": 0.01}, "answer: 8.046", 1.0),
        ({"kind": "numeric", "expected": 8.05, "tolerance": 0.01}, "answer: 8.2", 0.0),
        ({"kind": "numeric", "expected": 10, "tolerance": 1, "graded": True}, "10.0 and 11.5", 1.0),
        ({"kind": "numeric", "expected": 10, "tolerance": 1, "graded": True}, "11.5", 0.5),
        ({"kind": "numeric", "expected": 10}, "no number", 0.0),
    ],
)
def test_reward_evaluators(spec: dict, output: str, expected: float) -> None:  # type: ignore[type-arg]
    assert reward(validate_spec(spec), output) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "fuzzy"}, "reward_spec.kind"),
        ({"kind": "regex", "pattern": "("}, "does not compile"),
        ({"kind": "json_schema", "schema": {"type": 12}}, "not a valid JSON schema"),
        ({"kind": "numeric", "expected": "ten"}, "expected must be a number"),
        ({"kind": "exact"}, "expected must be a non-empty string"),
    ],
)
def test_invalid_reward_specs_say_what_to_fix(spec: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InvalidRewardSpec, match=message):
        validate_spec(spec)


def test_admission_score_is_the_mean_paired_delta_less_costs() -> None:
    without = [ArmRun(0.0, 1.0, 1000), ArmRun(1.0, 1.0, 1000)]
    with_item = [ArmRun(1.0, 2.0, 1500), ArmRun(1.0, 1.0, 1000)]
    score = admission_score(without=without, with_item=with_item, lambda_latency=0.1, lambda_tokens=0.2, eta=0.3)
    # ΔR = 0.5, ΔL = 0.5 s, ΔT = 0.25 k tokens → S = 0.5 − 0.05 − 0.05
    assert score.delta_reward == pytest.approx(0.5)
    assert score.score == pytest.approx(0.4)
    assert score.admitted and score.initial_weight == pytest.approx(0.4)
    harmful = admission_score(without=with_item, with_item=without, lambda_latency=0.1, lambda_tokens=0.2, eta=0.0)
    assert not harmful.admitted and harmful.initial_weight == 0.0
    with pytest.raises(ValueError):
        admission_score(without=without, with_item=with_item[:1], lambda_latency=0, lambda_tokens=0, eta=0)


def test_weight_update_follows_the_rule_and_converges() -> None:
    weight = 0.5
    trajectory = []
    for _ in range(10):
        update = updated_weight(weight=weight, utilities=[0.5, 0.5], uses=2, events=4, alpha=0.2, beta=0.1, ceiling=1.0)
        assert update.weight == pytest.approx(min(1.0, weight + 0.2 * 0.5 - 0.1 * 0.5))
        weight = update.weight
        trajectory.append(weight)
    assert trajectory[:3] == pytest.approx([0.55, 0.60, 0.65])
    assert trajectory[-1] == pytest.approx(1.0)  # 0.5 + 10 × 0.05, at the ceiling
    harmful = 0.3
    for _ in range(10):
        harmful = updated_weight(
            weight=harmful, utilities=[-0.5], uses=1, events=1, alpha=0.2, beta=0.1, ceiling=1.0
        ).weight
    assert harmful == 0.0  # floored, never negative
    idle = updated_weight(weight=0.7, utilities=[], uses=0, events=5, alpha=0.2, beta=0.1, ceiling=1.0)
    assert idle.weight == 0.7


def test_merge_never_counts_shared_evidence_twice() -> None:
    assert merged_weight([(0.6, frozenset({"e1"})), (0.6, frozenset({"e1"}))]) == pytest.approx(0.6)
    assert merged_weight([(0.8, frozenset({"e1"})), (0.4, frozenset({"e2"}))]) == pytest.approx(0.6)
    # e1 shared (mean 0.6), e2 only in the first (0.8): mean over distinct evidence
    assert merged_weight([(0.8, frozenset({"e1", "e2"})), (0.4, frozenset({"e1"}))]) == pytest.approx(0.7)


def test_general_weight_is_a_scaled_prior() -> None:
    assert general_weight(specific_weight=0.5, alpha=0.6) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        general_weight(specific_weight=0.5, alpha=1.0)


def test_quotes_must_be_verbatim_up_to_whitespace() -> None:
    text = "Step 1: run the migrations.\nStep 2:   restart the worker"
    assert quote_in("step 2: restart the worker", text)
    assert not quote_in("restart the web server", text)
    assert not quote_in("run", text)  # too short to be evidence


def test_general_form_replaces_entities_and_numbers() -> None:
    specific = "Book the Lisbon hotel through Booking Inc for 3 nights at 120 euros"
    entities = [("Lisbon", "GPE"), ("Booking Inc", "ORG")]
    general = general_form(specific, entities)
    assert general == "Book the <GPE> hotel through <ORG> for <NUMBER> nights at <NUMBER> euros"
    assert leaked_specifics(general, entities) == []
    assert leaked_specifics("Book the Lisbon hotel for 3 nights", entities) == ["Lisbon", "3"]
