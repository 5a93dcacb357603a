"""``Mirix`` and ``AsyncMirix``: the resource namespaces, search and answer, and a mem0-style
facade (``add``/``get_all``/``get``/``update``/``delete``/``delete_all``/``history``, and
``search``/``answer`` with ``user_id=``) for code ported from mem0."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import httpx

from mirix import config
from mirix import models as m
from mirix._transport import AsyncTransport, Call, RetryPolicy, SyncTransport
from mirix.resources import (
    ApiKeys,
    Audit,
    ConsentResource,
    Graph,
    Jobs,
    Memories,
    MessageLike,
    Skills,
    Subjects,
    Usage,
    Webhooks,
    _subject,
)


def _subject_and_query(subject_or_query: str, query: str | None, user_id: str | None) -> tuple[str, str]:
    """``(subject, query)`` for ``search("ana", "where?")`` and the mem0 form ``search("where?", user_id="ana")``."""
    if user_id is not None:
        if query is not None:
            raise TypeError("pass the subject positionally or as user_id=, not both")
        return user_id, subject_or_query
    if query is None:
        raise TypeError("a query is needed: search(subject, query) or search(query, user_id=subject)")
    return subject_or_query, query


class _Client:
    def _mount(self, transport: Any) -> None:
        self._transport = transport
        self.subjects = Subjects(transport)
        self.memories = Memories(transport)
        self.graph = Graph(transport)
        self.skills = Skills(transport)
        self.consent = ConsentResource(transport)
        self.webhooks = Webhooks(transport)
        self.jobs = Jobs(transport)
        self.api_keys = ApiKeys(transport)
        self.audit = Audit(transport)
        self.usage = Usage(transport)

    @property
    def base_url(self) -> str:
        return str(self._transport.base_url)

    def search(
        self,
        subject_or_query: str,
        query: str | None = None,
        *,
        user_id: str | None = None,
        filters: m.Filters | None = None,
        limit: int | None = None,
        mode: m.SearchMode | None = None,
        memory_types: list[m.MemoryType] | None = None,
        token_budget: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> m.SearchResult:
        """Facts (each citing its rows) and rows relevant to ``query`` in the subject's memory."""
        subject, text = _subject_and_query(subject_or_query, query, user_id)
        body = m.SearchRequest(
            query=text,
            filters=filters,
            limit=limit,
            mode=mode,
            memory_types=memory_types,
            token_budget=token_budget,
            since=since,
            until=until,
        ).body()
        return self._transport.request(Call("POST", f"{_subject(subject)}/search", json=body, cast=m.SearchResult))

    def answer(
        self,
        subject_or_query: str,
        query: str | None = None,
        *,
        user_id: str | None = None,
        mode: m.SearchMode | None = None,
        token_budget: int | None = None,
    ) -> m.Answer:
        """An answer from the subject's memory with the ids of the rows it rests on."""
        subject, text = _subject_and_query(subject_or_query, query, user_id)
        body = m.AnswerRequest(query=text, mode=mode, token_budget=token_budget).body()
        return self._transport.request(Call("POST", f"{_subject(subject)}/answer", json=body, cast=m.Answer))

    # The mem0-style facade --------------------------------------------------------------------

    def add(
        self,
        messages: Iterable[MessageLike] | str,
        *,
        user_id: str,
        metadata: m.Metadata | None = None,
        wait: bool = True,
    ) -> m.WriteResult:
        """mem0's ``add``: remember ``messages`` (or a string) for ``user_id``; waits for indexing
        by default, as mem0's call does."""
        return self.memories.add(user_id, messages=messages, metadata=metadata, wait=wait)

    def get_all(self, *, user_id: str, filters: m.Filters | None = None, type: m.MemoryType | None = None) -> Any:
        """mem0's ``get_all``: every row of ``user_id`` (an iterator over the pages)."""
        return self.memories.list(user_id, type=type, filters=filters)

    def get(self, memory_id: str, *, user_id: str, type: m.MemoryType) -> m.MemoryRecord:
        return self.memories.get(user_id, type, memory_id)

    def update(self, memory_id: str, changes: Mapping[str, Any], *, user_id: str, type: m.MemoryType) -> m.MemoryRecord:
        return self.memories.update(user_id, type, memory_id, changes)

    def delete(self, memory_id: str, *, user_id: str, type: m.MemoryType) -> Any:
        return self.memories.delete(user_id, type, memory_id)

    def delete_all(self, *, user_id: str) -> m.ErasureAccepted:
        """mem0's ``delete_all``: erase the subject and everything remembered of it."""
        return self.subjects.erase(user_id)

    def history(self, memory_id: str, *, user_id: str, type: m.MemoryType) -> Any:
        """mem0's ``history``: the row's versions, oldest first (an iterator)."""
        return self.memories.history(user_id, type, memory_id)


def _options(
    api_key: str | None,
    base_url: str | None,
    timeout: float,
    max_retries: int,
    job_poll_interval: float,
    job_wait_timeout: float,
) -> dict[str, Any]:
    settings = config.resolve(api_key, base_url)
    return {
        "api_key": settings.api_key,
        "base_url": settings.base_url,
        "timeout": timeout,
        "retry": RetryPolicy(max_retries=max_retries),
        "job_poll_interval": job_poll_interval,
        "job_wait_timeout": job_wait_timeout,
    }


class Mirix(_Client):
    """The synchronous client. ``api_key`` and ``base_url`` default to ``MIRIX_API_KEY`` and
    ``MIRIX_BASE_URL``. ``sleep`` is what waits between retries and job polls."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        job_poll_interval: float = 0.5,
        job_wait_timeout: float = 300.0,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        options = _options(api_key, base_url, timeout, max_retries, job_poll_interval, job_wait_timeout)
        extra: dict[str, Any] = {"sleep": sleep} if sleep is not None else {}
        self._mount(SyncTransport(http_client=http_client, **options, **extra))

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Mirix:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMirix(_Client):
    """The asyncio client: the same methods, awaited (listings are ``async for`` iterators)."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        job_poll_interval: float = 0.5,
        job_wait_timeout: float = 300.0,
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        options = _options(api_key, base_url, timeout, max_retries, job_poll_interval, job_wait_timeout)
        extra: dict[str, Any] = {"sleep": sleep} if sleep is not None else {}
        self._mount(AsyncTransport(http_client=http_client, **options, **extra))

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> AsyncMirix:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
