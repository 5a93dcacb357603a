"""JSON that Postgres or a UTF-8 encoder cannot hold is a 400 naming where it is, not a 500
(found by the schema fuzzing: NUL in a subject's metadata, an unpaired surrogate in a question)."""

from __future__ import annotations

import pytest

from apps.platform.parsers import unstorable_path
from tests.factories import make_tenant


@pytest.mark.parametrize(
    ("path", "body", "where"),
    [
        ("/v1/subjects", '{"external_id": "a", "kind": "user", "metadata": {"note": "x\\u0000y"}}', "$.metadata.note"),
        ("/v1/subjects", '{"external_id": "a", "kind": "user", "metadata": {"k\\u0000": 1}}', "$.metadata (a key)"),
        ("/v1/subjects/ana/answer", '{"query": "where \\ud800 now"}', "$.query"),
        (
            "/v1/subjects/ana/memories",
            '{"messages": [{"role": "user", "content": "hi \\udfff"}]}',
            "$.messages[0].content",
        ),
    ],
)
def test_unstorable_text_is_refused_naming_its_place(path: str, body: str, where: str) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    response = tenant.client().post(path, body, content_type="application/json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "malformed_request" and where in error["message"]


def test_a_form_body_on_a_json_endpoint_is_a_415() -> None:
    tenant = make_tenant()
    response = tenant.client().post("/v1/subjects", {"external_id": "a", "kind": "user"}, format="multipart")
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


def test_valid_text_passes_untouched() -> None:
    assert unstorable_path({"a": ["é", "\U0001f600", {"b": "ok"}], "c": 1}) is None
    assert unstorable_path({"a": [{"b": "\x00"}]}) == "$.a[0].b"
