"""Client processes: plain HTTP, no Django, so that each runs as a separate OS process."""

from __future__ import annotations

from typing import Any

import requests


def post_all(url: str, key: str, writes: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, Any]]:
    """POST each (path, body) in turn; the status and JSON body (or text) of each answer."""
    answers: list[tuple[int, Any]] = []
    with requests.Session() as session:
        session.headers["Authorization"] = f"Bearer {key}"
        for path, body in writes:
            response = session.post(f"{url}{path}", json=body, timeout=120)
            try:
                answers.append((response.status_code, response.json()))
            except ValueError:
                answers.append((response.status_code, response.text))
    return answers
