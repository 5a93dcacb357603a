"""Search extensions: procedural skills reach /search through retrieval's registry, and the
schema lists what the response may hold."""

from __future__ import annotations

import dataclasses
import json

import pytest
from rest_framework.test import APIClient

from apps.procedural.api.hooks import skills_search_extension
from apps.procedural.api.serializers import SkillRetrievalSerializer
from apps.retrieval.api import TypedResultsSerializer
from apps.retrieval.extensions import search_extension_register, search_extensions


@pytest.mark.unit
def test_procedural_registers_its_skills_extension_once_and_a_taken_name_is_refused() -> None:
    assert search_extensions().count(skills_search_extension) == 1
    assert search_extension_register(skills_search_extension) is skills_search_extension  # idempotent
    other = dataclasses.replace(skills_search_extension, memory_type="semantic")
    with pytest.raises(ValueError, match="'skills' is already registered"):
        search_extension_register(other)
    assert search_extensions().count(skills_search_extension) == 1


@pytest.mark.unit
def test_the_typed_results_carry_a_field_per_extension() -> None:
    fields = TypedResultsSerializer().fields
    assert isinstance(fields["skills"], SkillRetrievalSerializer) and not fields["skills"].required
    assert {"core", "procedural", "resource"} <= set(fields)


def test_the_schema_lists_the_skills_under_typed_results() -> None:
    document = json.loads(APIClient().get("/v1/schema", HTTP_ACCEPT="application/json").content)
    typed = document["components"]["schemas"]["TypedResults"]["properties"]
    assert typed["skills"]["allOf"][0]["$ref"] == "#/components/schemas/SkillRetrieval"
    assert "Verified skills" in typed["skills"]["description"]
