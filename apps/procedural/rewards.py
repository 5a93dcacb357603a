"""Deterministic reward evaluators of an SCEC's reward spec (ADR 0012). Framework-free.

A reward spec is a small JSON object ``{"kind": ..., ...}``; ``reward(spec, output)`` returns
1.0 when the output satisfies it and 0.0 otherwise (numeric tolerance may also grade
linearly when ``graded`` is set). Specs are validated when a session is written, so replay
never meets a malformed one.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import jsonschema

KINDS = ("exact", "contains", "regex", "json_schema", "numeric")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
MAX_PATTERN_LENGTH = 500


class InvalidRewardSpec(ValueError):
    """The spec cannot be evaluated; the message says which field to fix."""


def validate_spec(spec: Any) -> dict[str, Any]:
    """The spec, checked; raises ``InvalidRewardSpec`` with an actionable message."""
    if not isinstance(spec, dict):
        raise InvalidRewardSpec("reward_spec must be an object with a 'kind'")
    kind = spec.get("kind")
    if kind not in KINDS:
        raise InvalidRewardSpec(f"reward_spec.kind must be one of {list(KINDS)}")
    if kind in ("exact", "contains"):
        if not isinstance(spec.get("expected"), str) or not spec["expected"]:
            raise InvalidRewardSpec(f"reward_spec.expected must be a non-empty string for kind {kind!r}")
    elif kind == "regex":
        pattern = spec.get("pattern")
        if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN_LENGTH:
            raise InvalidRewardSpec(f"reward_spec.pattern must be a regular expression of 1-{MAX_PATTERN_LENGTH} chars")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise InvalidRewardSpec(f"reward_spec.pattern does not compile: {exc}") from None
    elif kind == "json_schema":
        schema = spec.get("schema")
        if not isinstance(schema, dict):
            raise InvalidRewardSpec("reward_spec.schema must be a JSON schema object")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise InvalidRewardSpec(f"reward_spec.schema is not a valid JSON schema: {exc.message}") from None
    else:
        expected, tolerance = spec.get("expected"), spec.get("tolerance", 0.0)
        if not _finite(expected) or not _finite(tolerance) or tolerance < 0:
            raise InvalidRewardSpec("reward_spec.expected must be a number and tolerance a number >= 0")
    return spec


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _normalized(text: str, spec: dict[str, Any]) -> str:
    text = text.strip()
    return text.casefold() if spec.get("case_sensitive") is False else text


def reward(spec: dict[str, Any], output: str) -> float:
    """The reward in [0, 1] of ``output`` under a validated ``spec``."""
    kind = spec["kind"]
    if kind == "exact":
        return float(_normalized(output, spec) == _normalized(spec["expected"], spec))
    if kind == "contains":
        return float(_normalized(spec["expected"], spec) in _normalized(output, spec))
    if kind == "regex":
        return float(re.search(spec["pattern"], output) is not None)
    if kind == "json_schema":
        try:
            document = json.loads(output)
        except ValueError:
            return 0.0
        return float(jsonschema.Draft202012Validator(spec["schema"]).is_valid(document))
    match = _NUMBER.search(output)
    if match is None:
        return 0.0
    error = abs(float(match.group()) - float(spec["expected"]))
    tolerance = float(spec.get("tolerance", 0.0))
    if error <= tolerance:
        return 1.0
    if spec.get("graded") and tolerance > 0:
        return max(0.0, 1.0 - (error - tolerance) / tolerance)
    return 0.0
