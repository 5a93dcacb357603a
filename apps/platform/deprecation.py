"""Deprecated request fields: still accepted for one release, and said so on the response.

The headers follow RFC 9745 (``Deprecation`` with the date the field was deprecated) and
RFC 8288 (``Link`` with ``rel="deprecation"`` to the documentation of the operation), so
a client library or a gateway can warn without parsing the body.
"""

from __future__ import annotations

from django.http import HttpResponseBase
from django.urls import reverse

# 2026-12-01T00:00:00Z, the release that renamed the fields (docs/adr/0040).
DEPRECATED_SINCE = 1_796_083_200


def mark_deprecated(response: HttpResponseBase, *, operation_id: str) -> None:
    """Tell the caller that the request used a deprecated field; the operation's documentation
    (the link) names the field and its replacement."""
    response["Deprecation"] = f"@{DEPRECATED_SINCE}"
    response["Link"] = f'<{reverse("docs")}#operation/{operation_id}>; rel="deprecation"; type="text/html"'
