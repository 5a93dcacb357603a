"""/v1/docs (Redoc) and /v1/docs/swagger (Swagger UI) load nothing from another host: their
scripts, styles and icons are the project's static files, so the pages work air-gapped."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

EXTERNAL = re.compile(r"(?:https?:)?//[A-Za-z0-9.-]+", re.IGNORECASE)


class _References(HTMLParser):
    """Every URL the page makes the browser fetch: src, href and the schema Redoc loads."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ("src", "href", "spec-url") and value]


@pytest.fixture(scope="module")
def collected(django_db_setup: None, django_db_blocker: Any) -> None:
    with django_db_blocker.unblock():
        call_command("collectstatic", "--noinput", verbosity=0)


@pytest.mark.parametrize(("page", "asset"), [("/v1/docs", "redoc"), ("/v1/docs/swagger", "swagger-ui")])
def test_the_docs_pages_reference_no_other_host_and_their_assets_load(collected: None, page: str, asset: str) -> None:
    response = APIClient().get(page)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert EXTERNAL.findall(html) == []
    parser = _References()
    parser.feed(html)
    scripts = [url for url in parser.urls if url.endswith(".js")]
    assert any(asset in url for url in scripts), parser.urls
    assert all(not urlsplit(url).netloc for url in parser.urls)
    for url in parser.urls:
        # A fresh client: its WhiteNoise instance sees the files collected above.
        fetched = APIClient().get(url)
        assert fetched.status_code == 200, url
        body = b"".join(fetched.streaming_content) if fetched.streaming else fetched.content
        assert len(body) > 100, url


def test_the_schema_the_pages_load_is_served() -> None:
    response = APIClient().get("/v1/schema")
    assert response.status_code == 200 and b"openapi:" in response.content
