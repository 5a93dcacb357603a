"""The resource namespaces. Each method names its path and models; the transport does the
rest. One implementation serves both clients: on ``Mirix`` a method returns the model, on
``AsyncMirix`` an awaitable of it (and listings are async iterators)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from mirix import models as m
from mirix._transport import Call

MessageLike = m.Message | Mapping[str, Any]
RowLike = m.RowRef | m.WrittenRecord | m.MemoryRecord | tuple[str, str] | Mapping[str, Any]


def _p(value: str) -> str:
    return quote(str(value), safe="")


def _subject(external_id: str) -> str:
    return f"/v1/subjects/{_p(external_id)}"


def _messages(messages: Iterable[MessageLike] | str | None) -> list[m.Message] | None:
    if messages is None:
        return None
    if isinstance(messages, str):
        return [m.Message(role="user", content=messages)]
    return [x if isinstance(x, m.Message) else m.Message.model_validate(dict(x)) for x in messages]


def _row_ref(row: RowLike) -> m.RowRef:
    if isinstance(row, m.RowRef):
        return row
    if isinstance(row, tuple):
        return m.RowRef.model_validate({"type": row[0], "id": row[1]})
    if isinstance(row, Mapping):
        return m.RowRef.model_validate(dict(row))
    return m.RowRef.model_validate({"type": row.type, "id": row.id})


def _filters(filters: m.Filters | None) -> str | None:
    return None if filters is None else json.dumps(filters, separators=(",", ":"))


class Resource:
    def __init__(self, transport: Any) -> None:
        self._t = transport


class Subjects(Resource):
    def create(
        self,
        external_id: str,
        *,
        kind: str = "user",
        display_name: str | None = None,
        metadata: m.Metadata | None = None,
    ) -> m.Subject:
        body = m.SubjectCreate(external_id=external_id, kind=kind, display_name=display_name, metadata=metadata)  # type: ignore[arg-type]
        return self._t.request(Call("POST", "/v1/subjects", json=body.body(), cast=m.Subject))

    def get(self, external_id: str) -> m.Subject:
        return self._t.request(Call("GET", _subject(external_id), cast=m.Subject))

    def update(
        self, external_id: str, *, display_name: str | None = None, metadata: m.Metadata | None = None
    ) -> m.SubjectUpdated:
        """Rename the subject or replace its metadata; a new name re-indexes its graph (a job)."""
        body = m.SubjectUpdate(display_name=display_name, metadata=metadata)  # type: ignore[arg-type]
        return self._t.request(Call("PATCH", _subject(external_id), json=body.body(), cast=m.SubjectUpdated))

    def list(self, *, kind: str | None = None, page_size: int | None = None) -> Any:
        """Every subject (an iterator that fetches page after page)."""
        return self._t.paginate(Call("GET", "/v1/subjects", params={"kind": kind, "limit": page_size}), m.Subject)

    def erase(self, external_id: str) -> m.ErasureAccepted:
        """Erase the subject and everything remembered of it (a receipt; the job finishes it)."""
        return self._t.request(Call("DELETE", _subject(external_id), cast=m.ErasureAccepted))

    def export(self, external_id: str) -> dict[str, Any]:
        return self._t.request(Call("GET", f"{_subject(external_id)}/export"))


class Memories(Resource):
    def add(
        self,
        subject: str,
        *,
        messages: Iterable[MessageLike] | str | None = None,
        text: str | None = None,
        metadata: m.Metadata | None = None,
        session_id: str | None = None,
        timestamp: datetime | None = None,
        wait: bool = False,
        idempotency_key: str | None = None,
    ) -> m.WriteResult:
        """Remember a conversation (``messages``) or a passage (``text``). The service accepts it
        at once (each message stored as its episodic row; ``records`` and the ``job`` that
        completes it: routing, the other typed rows, embeddings, graph indexing). With ``wait``
        the call returns once that job has finished: every row written and searchable."""
        body = m.MemoryWrite(
            messages=_messages(messages), text=text, metadata=metadata, session_id=session_id, timestamp=timestamp
        )
        call = Call(
            "POST",
            f"{_subject(subject)}/memories",
            json=body.body(),
            cast=m.WriteResult,
            idempotency_key=idempotency_key,
        )
        return self._t.write(call, wait=wait)

    def add_batch(
        self,
        subject: str,
        chunks: Sequence[m.MemoryWrite | Mapping[str, Any]],
        *,
        session_id: str | None = None,
        wait: bool = False,
        idempotency_key: str | None = None,
    ) -> m.BatchAccepted:
        """Many writes in one call, processed by a job (``wait`` follows it to the end)."""
        parsed = [c if isinstance(c, m.MemoryWrite) else m.MemoryWrite.model_validate(dict(c)) for c in chunks]
        body = m.BatchWrite(chunks=parsed, session_id=session_id)
        call = Call(
            "POST",
            f"{_subject(subject)}/memories/batch",
            json=body.body(),
            cast=m.BatchAccepted,
            idempotency_key=idempotency_key,
        )
        return self._t.write(call, wait=wait)

    def list(
        self,
        subject: str,
        *,
        type: m.MemoryType | None = None,
        filters: m.Filters | None = None,
        session_id: str | None = None,
        include_superseded: bool | None = None,
        page_size: int | None = None,
    ) -> Any:
        """Every row (of ``type``, or of all stores), following the cursor."""
        params = {
            "type": type,
            "filters": _filters(filters),
            "session_id": session_id,
            "include_superseded": include_superseded,
            "limit": page_size,
        }
        return self._t.paginate(Call("GET", f"{_subject(subject)}/memories", params=params), m.MemoryRecord)

    def get(self, subject: str, type: m.MemoryType, id: str) -> m.MemoryRecord:
        return self._t.request(Call("GET", f"{_subject(subject)}/memories/{type}/{_p(id)}", cast=m.MemoryRecord))

    def update(self, subject: str, type: m.MemoryType, id: str, changes: Mapping[str, Any]) -> m.MemoryRecord:
        """A new row superseding ``id`` (the old one stays, in its history)."""
        body = m.MemoryUpdate(changes=dict(changes)).body()
        return self._t.request(
            Call("PATCH", f"{_subject(subject)}/memories/{type}/{_p(id)}", json=body, cast=m.MemoryRecord)
        )

    def history(self, subject: str, type: m.MemoryType, id: str) -> Any:
        """The row's chain of versions, oldest first (an iterator)."""
        return self._t.paginate(Call("GET", f"{_subject(subject)}/memories/{type}/{_p(id)}/history"), m.MemoryRecord)

    def delete(self, subject: str, type: m.MemoryType, id: str) -> dict[str, Any] | None:
        """Remove one row from every store (a receipt)."""
        return self._t.request(Call("DELETE", f"{_subject(subject)}/memories/{type}/{_p(id)}"))

    def delete_many(
        self, subject: str, *, ids: Sequence[RowLike] | None = None, filters: m.Filters | None = None
    ) -> dict[str, Any]:
        """Remove rows by reference (``(type, id)`` pairs, ``{"type", "id"}`` or the records a
        write returned) or by filter (a receipt; beyond 1,000 rows, a job)."""
        refs = None if ids is None else [_row_ref(x) for x in ids]
        body = m.MemoryDelete(ids=refs, filters=filters).body()
        return self._t.request(Call("POST", f"{_subject(subject)}/memories/delete", json=body))

    def core(self, subject: str) -> Any:
        """The subject's core blocks (persona, preferences), an iterator."""
        return self._t.paginate(Call("GET", f"{_subject(subject)}/core"), m.MemoryRecord)


class Graph(Resource):
    def anchors(self, subject: str, *, page_size: int | None = None) -> Any:
        call = Call("GET", f"{_subject(subject)}/graph/anchors", params={"limit": page_size})
        return self._t.paginate(call, m.Anchor)

    def frames(self, subject: str, *, page_size: int | None = None) -> Any:
        call = Call("GET", f"{_subject(subject)}/graph/frames", params={"limit": page_size})
        return self._t.paginate(call, m.Frame)

    def frame(self, subject: str, frame_id: str) -> dict[str, Any]:
        return self._t.request(Call("GET", f"{_subject(subject)}/graph/frames/{_p(frame_id)}"))

    def check(self) -> m.JobAccepted:
        return self._t.request(Call("POST", "/v1/graph/check", cast=m.JobAccepted))


class Skills(Resource):
    def list(self, subject: str) -> dict[str, Any]:
        return self._t.request(Call("GET", f"{_subject(subject)}/skills"))

    def get(self, subject: str, skill_id: str) -> dict[str, Any]:
        return self._t.request(Call("GET", f"{_subject(subject)}/skills/{_p(skill_id)}"))

    def search(
        self, subject: str, query: str, *, domain: str | None = None, limit: int | None = None
    ) -> m.SkillRetrieval:
        body = m.SkillSearch(query=query, domain=domain, limit=limit).body()
        return self._t.request(Call("POST", f"{_subject(subject)}/skills/search", json=body, cast=m.SkillRetrieval))

    def record_session(
        self,
        subject: str,
        *,
        task: str,
        steps: Sequence[m.Step | Mapping[str, Any]],
        final_output: str,
        outcome: str | None = None,
        domain: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.TaskSessionRecorded:
        """Record how an agent did a task; verified sessions become skills."""
        body = m.TaskSession(
            task=task,
            domain=domain,
            steps=[s if isinstance(s, m.Step) else m.Step.model_validate(dict(s)) for s in steps],
            final_output=final_output,
            outcome=outcome,  # type: ignore[arg-type]
        ).body()
        call = Call(
            "POST",
            f"{_subject(subject)}/sessions",
            json=body,
            cast=m.TaskSessionRecorded,
            idempotency_key=idempotency_key,
        )
        return self._t.request(call)


class ConsentResource(Resource):
    def get(self, subject: str) -> m.Consent:
        return self._t.request(Call("GET", f"{_subject(subject)}/consent", cast=m.Consent))

    def update(self, subject: str, purposes: Mapping[str, bool]) -> dict[str, Any]:
        """Grant (True) or withdraw (False) purposes; a withdrawal erases what it covered."""
        body = m.ConsentUpdate(purposes=dict(purposes)).body()
        return self._t.request(Call("PUT", f"{_subject(subject)}/consent", json=body))


class Webhooks(Resource):
    def create(
        self,
        url: str,
        event_types: Sequence[str],
        *,
        include_content_for: Sequence[str] | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """A new endpoint; the answer holds its signing secret once."""
        body = m.WebhookEndpointCreate(
            url=url,
            event_types=list(event_types),
            include_content_for=list(include_content_for) if include_content_for is not None else None,
            description=description,
        ).body()
        return self._t.request(Call("POST", "/v1/webhook-endpoints", json=body, idempotent=False))

    def list(self) -> Any:
        return self._t.paginate(Call("GET", "/v1/webhook-endpoints"), m.WebhookEndpoint)

    def get(self, endpoint_id: str) -> m.WebhookEndpoint:
        return self._t.request(Call("GET", f"/v1/webhook-endpoints/{_p(endpoint_id)}", cast=m.WebhookEndpoint))

    def update(self, endpoint_id: str, **changes: Any) -> m.WebhookEndpoint:
        call = Call("PATCH", f"/v1/webhook-endpoints/{_p(endpoint_id)}", json=changes, cast=m.WebhookEndpoint)
        return self._t.request(call)

    def delete(self, endpoint_id: str) -> None:
        return self._t.request(Call("DELETE", f"/v1/webhook-endpoints/{_p(endpoint_id)}"))

    def ping(self, endpoint_id: str) -> dict[str, Any]:
        return self._t.request(Call("POST", f"/v1/webhook-endpoints/{_p(endpoint_id)}/ping"))

    def rotate_secret(self, endpoint_id: str, **body: Any) -> dict[str, Any]:
        call = Call("POST", f"/v1/webhook-endpoints/{_p(endpoint_id)}/rotate-secret", json=body, idempotent=False)
        return self._t.request(call)

    def event_types(self) -> Any:
        return self._t.request(Call("GET", "/v1/webhook-event-types"))

    @staticmethod
    def verify(payload: bytes | str, headers: Mapping[str, str], secret: str, *, tolerance_seconds: int = 300) -> Any:
        """The event of a signed delivery (see ``mirix.webhooks.verify``)."""
        from mirix.webhooks import verify

        return verify(payload, headers, secret, tolerance_seconds=tolerance_seconds)


class Jobs(Resource):
    def get(self, job_id: str) -> m.Job:
        return self._t.request(Call("GET", f"/v1/jobs/{_p(job_id)}", cast=m.Job))

    def wait(self, job_id: str, *, timeout: float | None = None) -> m.Job:
        """Poll until the job has succeeded (JobFailed if it failed, WaitTimeout past ``timeout``)."""
        return self._t.wait_job(job_id, timeout=timeout)

    def list(self, *, status: str | None = None, kind: str | None = None, page_size: int | None = None) -> Any:
        call = Call("GET", "/v1/jobs", params={"status": status, "kind": kind, "limit": page_size})
        return self._t.paginate(call, m.Job)


class ApiKeys(Resource):
    def create(
        self,
        name: str,
        scopes: Sequence[str],
        *,
        expires_at: datetime | None = None,
        rate_limit_per_minute: int | None = None,
    ) -> m.IssuedApiKey:
        body = m.ApiKeyCreate.model_validate(
            {
                "name": name,
                "scopes": list(scopes),
                "expires_at": expires_at,
                "rate_limit_per_minute": rate_limit_per_minute,
            }
        ).body()
        return self._t.request(Call("POST", "/v1/api-keys", json=body, cast=m.IssuedApiKey, idempotent=False))

    def list(self) -> Any:
        return self._t.paginate(Call("GET", "/v1/api-keys"), m.ApiKey)

    def revoke(self, api_key_id: str) -> m.ApiKey:
        return self._t.request(Call("POST", f"/v1/api-keys/{_p(api_key_id)}/revoke", cast=m.ApiKey))

    def rotate(self, api_key_id: str, *, overlap_seconds: int | None = None) -> m.IssuedApiKey:
        body = m.ApiKeyRotate(overlap_seconds=overlap_seconds).body()
        call = Call("POST", f"/v1/api-keys/{_p(api_key_id)}/rotate", json=body, cast=m.IssuedApiKey, idempotent=False)
        return self._t.request(call)


class Audit(Resource):
    def list(
        self, *, since: datetime | None = None, until: datetime | None = None, page_size: int | None = None
    ) -> Any:
        call = Call("GET", "/v1/audit-log", params={"since": since, "until": until, "limit": page_size})
        return self._t.paginate(call, m.AuditEntry)

    def verify(self) -> dict[str, Any]:
        return self._t.request(Call("GET", "/v1/audit-log/verify"))


class Usage(Resource):
    def get(self, *, since: datetime | None = None, until: datetime | None = None) -> dict[str, Any]:
        return self._t.request(Call("GET", "/v1/usage", params={"since": since, "until": until}))
