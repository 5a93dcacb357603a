"""The idempotency core: which keys are allowed, and when two requests are the same one."""

from __future__ import annotations

import pytest

from apps.tenancy.idempotency import key_problem, request_fingerprint

pytestmark = pytest.mark.unit


def _multipart(boundary: str, content: bytes) -> tuple[str, bytes]:
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n'.encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return f"multipart/form-data; boundary={boundary}", body


def test_keys_are_one_to_255_characters() -> None:
    assert key_problem("k" * 255) is None
    assert "at most 255" in (key_problem("k" * 256) or "")
    assert "empty" in (key_problem("  ") or "")


def test_a_multipart_body_is_the_same_request_whatever_its_boundary() -> None:
    first = request_fingerprint(
        method="POST", path="/v1/x", content_type=_multipart("AaB03x", b"hi")[0], body=_multipart("AaB03x", b"hi")[1]
    )
    again = request_fingerprint(
        method="POST", path="/v1/x", content_type=_multipart("Zz99", b"hi")[0], body=_multipart("Zz99", b"hi")[1]
    )
    other = request_fingerprint(
        method="POST", path="/v1/x", content_type=_multipart("Zz99", b"ho")[0], body=_multipart("Zz99", b"ho")[1]
    )
    assert first == again != other


def test_method_path_media_type_and_body_each_tell_requests_apart() -> None:
    base = {"method": "POST", "path": "/v1/a", "content_type": "application/json", "body": b"{}"}
    same = request_fingerprint(**base)  # type: ignore[arg-type]
    assert request_fingerprint(**{**base, "content_type": "application/json; charset=utf-8"}) == same  # type: ignore[arg-type]
    for change in (
        {"method": "PUT"},
        {"path": "/v1/b"},
        {"path": "/v1/a?x=1"},
        {"body": b"{ }"},
        {"content_type": "text/plain"},
    ):
        assert request_fingerprint(**{**base, **change}) != same  # type: ignore[arg-type]
    # The parts are length-prefixed: moving bytes from the path into the body is another request.
    assert request_fingerprint(method="POST", path="/v1/ab", content_type="", body=b"c") != request_fingerprint(
        method="POST", path="/v1/a", content_type="", body=b"bc"
    )
