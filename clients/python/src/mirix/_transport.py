"""The one HTTP layer: authentication, an Idempotency-Key on every write, retries with
backoff that honours ``Retry-After``, error envelopes turned into typed exceptions, responses
parsed into models, cursors followed, and jobs waited for. Resources only name paths."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter

from mirix import __version__
from mirix.errors import (
    APIConnectionError,
    APITimeoutError,
    JobFailed,
    WaitTimeout,
    error_from_response,
    parse_retry_after,
)
from mirix.models import Job, WriteResult, WrittenRecord

M = TypeVar("M")
RETRIED_STATUSES = frozenset({429, 502, 503, 504})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` more attempts after the first; exponential backoff from ``base_delay``
    (with jitter, at most ``max_delay``) unless the answer says how long to wait."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def delay(self, attempt: int, response: httpx.Response | None, *, idempotent: bool = True) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None when it is not retried.
        ``response`` is None for a timeout or a connection failure (retried too). A call that
        cannot carry an Idempotency-Key is retried only after a 429 (refused before it ran)."""
        if attempt >= self.max_retries:
            return None
        if not idempotent and (response is None or response.status_code != 429):
            return None
        if response is not None:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            retryable = response.status_code in RETRIED_STATUSES or (
                response.status_code == 409 and retry_after is not None
            )
            if not retryable:
                return None
            if retry_after is not None:
                return retry_after if retry_after <= self.max_retry_after else None
        backoff = min(self.max_delay, self.base_delay * 2**attempt)
        return backoff * (0.5 + random.random() / 2)


@dataclass(frozen=True)
class Call:
    """One operation: what to send, and what the answer parses into."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    cast: Any = None
    idempotency_key: str | None = None
    # False for the writes whose answer carries a secret: the service stores no answer of
    # theirs to replay, so they take no Idempotency-Key (and are not retried blindly).
    idempotent: bool = True
    headers: dict[str, str] = field(default_factory=dict)


def _parse(cast: Any, response: httpx.Response) -> Any:
    if response.status_code == 204 or not response.content:
        return None
    body = response.json()
    if cast is None:
        return body
    if isinstance(cast, type) and issubclass(cast, BaseModel):
        return cast.model_validate(body)
    return TypeAdapter(cast).validate_python(body)


class _Base:
    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: float,
        retry: RetryPolicy,
        job_poll_interval: float,
        job_wait_timeout: float,
    ) -> None:
        self.base_url = base_url
        self.retry = retry
        self.job_poll_interval = job_poll_interval
        self.job_wait_timeout = job_wait_timeout
        self._client_options: dict[str, Any] = {
            "timeout": timeout,
            "headers": {
                "Authorization": f"Bearer {api_key}",
                "Accept": "application/json",
                "User-Agent": f"mirix-python/{__version__}",
            },
        }

    def _request(self, client: httpx.Client | httpx.AsyncClient, call: Call) -> httpx.Request:
        headers = dict(call.headers)
        if call.method in WRITE_METHODS and call.idempotent:
            # One key for every attempt of this call: a retry replays the first answer.
            headers["Idempotency-Key"] = call.idempotency_key or str(uuid.uuid4())
        params = {k: _wire(v) for k, v in (call.params or {}).items() if v is not None}
        return client.build_request(
            call.method, self.base_url + call.path, params=params, json=call.json, headers=headers
        )

    def _poll_delay(self, polls: int) -> float:
        """Job polls start at ``job_poll_interval`` and slow down to every 5 s."""
        return min(5.0, self.job_poll_interval * 1.5**polls)

    @staticmethod
    def _outcome(call: Call, response: httpx.Response) -> Any:
        if response.is_success:
            return _parse(call.cast, response)
        raise error_from_response(response)


def _page(body: Any) -> tuple[list[Any], str | None]:
    """A page's items and its ``next_cursor``; a bare array (an older service) is one page."""
    if isinstance(body, list):
        return body, None
    return body["results"], body.get("next_cursor")


def _unfinished_job(result: Any) -> str | None:
    """The id of a write's job unless the answer says it has succeeded (a service that waited
    answers with its ``job``; one that ran out of time, or does not wait, leaves it to us)."""
    job_id = getattr(result, "job_id", None)
    job = getattr(result, "job", None) or (getattr(result, "model_extra", None) or {}).get("job")
    status = job.get("status") if isinstance(job, dict) else getattr(job, "status", None)
    if status == "succeeded":
        return None
    return str(job_id) if job_id else None


def _followed(result: Any, job: Job) -> Any:
    """A write's answer once its job, followed by the client, has finished: the job, and the
    rows and routing the job's result names (what a finished server-side wait answers)."""
    if not isinstance(result, WriteResult):
        return result
    done = job.result or {}
    update: dict[str, Any] = {"job": job}
    if isinstance(done.get("records"), list):
        update["records"] = TypeAdapter(list[WrittenRecord]).validate_python(done["records"])
    if isinstance(done.get("routed_types"), list):
        update["routed_types"] = done["routed_types"]
    return result.model_copy(update=update)


def _wire(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


class SyncTransport(_Base):
    def __init__(
        self, *, http_client: httpx.Client | None = None, sleep: Callable[[float], None] = time.sleep, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.http = http_client or httpx.Client(**self._client_options)
        if http_client is not None:
            self.http.headers.update(self._client_options["headers"])
        self.sleep = sleep

    def close(self) -> None:
        self.http.close()

    def send(self, call: Call) -> httpx.Response:
        request = self._request(self.http, call)
        attempt = 0
        while True:
            try:
                response = self.http.send(request)
            except httpx.TimeoutException as exc:
                error: Exception = APITimeoutError(f"{call.method} {call.path} timed out: {exc}")
                response = None
            except httpx.TransportError as exc:
                error = APIConnectionError(f"{call.method} {call.path}: {exc}")
                response = None
            wait = self.retry.delay(attempt, response, idempotent=call.idempotent)
            if wait is None:
                if response is None:
                    raise error
                return response
            if response is not None:
                response.close()
            self.sleep(wait)
            attempt += 1

    def request(self, call: Call) -> Any:
        return self._outcome(call, self.send(call))

    def paginate(self, call: Call, item: Any) -> Iterator[Any]:
        """Every item of every page, following ``next_cursor``."""
        params = dict(call.params or {})
        while True:
            results, cursor = _page(self.request(Call("GET", call.path, params=params)))
            for raw in results:
                yield TypeAdapter(item).validate_python(raw)
            if not cursor:
                return
            params["cursor"] = cursor

    def wait_job(self, job_id: str, *, timeout: float | None = None) -> Job:
        deadline = time.monotonic() + (self.job_wait_timeout if timeout is None else timeout)
        polls = 0
        while True:
            job: Job = self.request(Call("GET", f"/v1/jobs/{job_id}", cast=Job))
            if job.status == "failed":
                raise JobFailed(job)
            if job.done:
                return job
            if time.monotonic() >= deadline:
                raise WaitTimeout(job)
            self.sleep(self._poll_delay(polls))
            polls += 1

    def write(self, call: Call, *, wait: bool) -> Any:
        """A write; with ``wait``, asked to wait server-side and then its job followed to the end."""
        if wait:
            call = replace(call, params={**(call.params or {}), "wait": True})
        result = self.request(call)
        job_id = _unfinished_job(result) if wait else None
        return _followed(result, self.wait_job(job_id)) if job_id else result


class AsyncTransport(_Base):
    def __init__(
        self,
        *,
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.http = http_client or httpx.AsyncClient(**self._client_options)
        if http_client is not None:
            self.http.headers.update(self._client_options["headers"])
        self.sleep = sleep

    async def close(self) -> None:
        await self.http.aclose()

    async def send(self, call: Call) -> httpx.Response:
        request = self._request(self.http, call)
        attempt = 0
        while True:
            try:
                response = await self.http.send(request)
            except httpx.TimeoutException as exc:
                error: Exception = APITimeoutError(f"{call.method} {call.path} timed out: {exc}")
                response = None
            except httpx.TransportError as exc:
                error = APIConnectionError(f"{call.method} {call.path}: {exc}")
                response = None
            wait = self.retry.delay(attempt, response, idempotent=call.idempotent)
            if wait is None:
                if response is None:
                    raise error
                return response
            if response is not None:
                await response.aclose()
            await self.sleep(wait)
            attempt += 1

    async def request(self, call: Call) -> Any:
        return self._outcome(call, await self.send(call))

    async def paginate(self, call: Call, item: Any) -> AsyncIterator[Any]:
        params = dict(call.params or {})
        while True:
            results, cursor = _page(await self.request(Call("GET", call.path, params=params)))
            for raw in results:
                yield TypeAdapter(item).validate_python(raw)
            if not cursor:
                return
            params["cursor"] = cursor

    async def wait_job(self, job_id: str, *, timeout: float | None = None) -> Job:
        deadline = time.monotonic() + (self.job_wait_timeout if timeout is None else timeout)
        polls = 0
        while True:
            job: Job = await self.request(Call("GET", f"/v1/jobs/{job_id}", cast=Job))
            if job.status == "failed":
                raise JobFailed(job)
            if job.done:
                return job
            if time.monotonic() >= deadline:
                raise WaitTimeout(job)
            await self.sleep(self._poll_delay(polls))
            polls += 1

    async def write(self, call: Call, *, wait: bool) -> Any:
        if wait:
            call = replace(call, params={**(call.params or {}), "wait": True})
        result = await self.request(call)
        job_id = _unfinished_job(result) if wait else None
        return _followed(result, await self.wait_job(job_id)) if job_id else result
