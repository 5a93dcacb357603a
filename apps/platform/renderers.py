"""The API's JSON renderer: DRF's, with its time counted as ``serialization`` in the request's
timings (``apps.platform.timing``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.renderers import JSONRenderer

from apps.platform.timing import phase


class TimedJSONRenderer(JSONRenderer):
    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Mapping[str, Any] | None = None
    ) -> bytes:
        with phase("serialization"):
            return super().render(data, accepted_media_type, renderer_context)
