"""Typed requests and responses of the /v1 API (pydantic v2).

Responses allow fields this version does not know (a newer service may add some); requests
forbid unknown ones, as the service does. ``tests/clients/test_schema_drift.py`` checks every
field declared here against the service's ``/v1/schema``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

MemoryType = Literal["episodic", "semantic", "core", "procedural", "resource"]
SearchMode = Literal["graph", "flat"]
Scope = Literal["memories:read", "memories:write", "memories:delete", "vault:read", "admin"]
Metadata = dict[str, Any]
# {"and": [...]}, {"or": [...]}, {"not": {...}} over conditions {"metadata.k": value} or
# {"created_at": {"gte": "2024-07-01"}} (eq ne in nin gt gte lt lte contains exists).
Filters = dict[str, Any]


class Response(BaseModel):
    model_config = ConfigDict(extra="allow")


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def body(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


T = TypeVar("T")


class Page(Response, Generic[T]):
    results: list[T]
    next_cursor: str | None = None


# Subjects -----------------------------------------------------------------------------------


class SubjectCreate(Request):
    external_id: str = Field(description="Your id for the user or agent whose memory this is.")
    kind: Literal["user", "agent"] = "user"
    display_name: str | None = None
    metadata: Metadata | None = None


class Subject(Response):
    id: str
    external_id: str
    kind: str
    display_name: str | None = None
    metadata: Metadata | None = None
    created_at: datetime


class SubjectUpdate(Request):
    display_name: str | None = Field(default=None, description="What questions and graph facts call the subject.")
    metadata: Metadata | None = Field(default=None, description="Replaces the subject's metadata.")


class SubjectUpdated(Subject):
    graph_reindex_job_id: str | None = None  # set when the new name re-indexes the subject's graph


# Writes -------------------------------------------------------------------------------------


class Message(Request):
    role: Literal["user", "assistant", "system", "tool"] = Field(description="Who said it.")
    content: str = Field(description="What was said.")
    name: str | None = Field(default=None, description="The speaker's display name.")
    id: str | None = Field(default=None, description="Your id for the message (provenance).")
    timestamp: datetime | None = Field(default=None, description="When it was said; default now.")


class MemoryWrite(Request):
    messages: list[Message] | None = Field(default=None, description="A conversation to remember.")
    text: str | None = Field(default=None, description="A passage to remember (instead of messages).")
    timestamp: datetime | None = None
    session_id: str | None = None
    metadata: Metadata | None = Field(default=None, description="Stored on every row the write produces.")


class WrittenRecord(Response):
    type: str
    id: str


class WriteResult(Response):
    """A write's answer. Accepted (202): ``records`` are the rows stored at once (each message's
    episodic row, documents, vault entries) and ``job`` the job that completes the write; once
    that job finished (``wait=True``): every row of the write and the router's ``routed_types``."""

    chunk_id: str
    routed_types: list[str]
    records: list[WrittenRecord]
    job_id: str
    job: Job | None = None


class BatchWrite(Request):
    chunks: list[MemoryWrite]
    session_id: str | None = None


class BatchAccepted(Response):
    batch_id: str
    job_id: str
    chunks_total: int


class MemoryRecord(Response):
    id: str
    type: str
    created_at: datetime
    current: bool
    supersedes: str | None = None
    superseded_by: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    provenance: dict[str, Any] | None = None
    content: dict[str, Any]
    metadata: Metadata = Field(default_factory=dict)
    index_status: str | None = None


class MemoryUpdate(Request):
    changes: dict[str, Any] = Field(description="Field → new value; the old row stays, superseded.")


class RowRef(Request):
    type: MemoryType
    id: str


class MemoryDelete(Request):
    ids: list[RowRef] | None = Field(default=None, description="The rows, as {type, id}; at most 1,000 per call.")
    filters: Filters | None = None


# Search and answer --------------------------------------------------------------------------


class SearchRequest(Request):
    query: str = Field(description="What to look for, in plain words.")
    mode: SearchMode | None = None
    memory_types: list[MemoryType] | None = None
    limit: int | None = Field(default=None, description="At most this many rows.")
    token_budget: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    filters: Filters | None = None


class FactRole(Response):
    role: str
    anchor: str
    name: str


class Fact(Response):
    frame_id: str
    predicate: str
    roles: list[FactRole]
    literals: dict[str, str]
    event_time: datetime | None = None
    event_time_precision: str | None = None
    status: str
    citations: list[str] = Field(description="The ids of the rows the fact rests on.")
    score: float
    current: bool
    superseded_by: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None


class EvidenceRow(Response):
    id: str
    type: str
    text: str
    event_time: datetime | None = None
    mention_time: datetime | None = None
    attribute: str | None = None
    provenance: dict[str, Any] | None = None
    selected_as: str | None = None
    metadata: Metadata = Field(default_factory=dict)
    current: bool
    superseded_by: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None


class BudgetReport(Response):
    anchors_inspected: int
    frames_inspected: int
    rows_inspected: int
    rows_returned: int
    facts_returned: int
    tokens_returned: int


class SearchResult(Response):
    mode: str
    fallback: bool
    plan: dict[str, Any]
    facts: list[Fact]
    rows: list[EvidenceRow]
    typed: dict[str, Any]
    budget: BudgetReport


class AnswerRequest(Request):
    query: str = Field(description="The question, in plain words.")
    mode: SearchMode | None = None
    token_budget: int | None = None


class CitedRow(Response):
    id: str
    metadata: Metadata = Field(default_factory=dict)
    current: bool
    superseded_by: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None


class Answer(Response):
    answer: str
    cited_row_ids: list[str]
    cited_rows: list[CitedRow]
    searches: int
    check: dict[str, Any]
    plan: dict[str, Any]
    fallback: bool


# Jobs ---------------------------------------------------------------------------------------


class Job(Response):
    id: str
    kind: str
    status: Literal["queued", "running", "indexing", "succeeded", "failed"] | str
    subject_id: str | None = None
    attempts: int
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    error: dict[str, Any] | None = None
    result: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self.status in {"succeeded", "failed"}


class JobAccepted(Response):
    job_id: str


# Keys ---------------------------------------------------------------------------------------


class ApiKeyCreate(Request):
    name: str
    scopes: list[Scope]
    expires_at: datetime | None = None
    rate_limit_per_minute: int | None = None


class ApiKey(Response):
    id: str
    name: str
    prefix: str
    scopes: list[str]
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
    rotated_from: str | None = None
    created_at: datetime


class IssuedApiKey(Response):
    api_key: ApiKey
    secret: str = Field(description="The key itself; shown once.")


class ApiKeyRotate(Request):
    overlap_seconds: int | None = None


# Graph, skills, sessions, consent, webhooks, audit, usage ----------------------------------


class Anchor(Response):
    key: str
    name: str
    type: str
    aliases: list[str]
    mention_count: int
    admission_score: float
    episodic_ids: list[str]
    semantic_ids: list[str]


class Frame(Response):
    frame_id: str
    kind: str
    predicate: str
    arms: list[Any]
    literals: dict[str, Any]
    event_time: datetime | None = None
    event_time_precision: str | None = None
    mention_time: datetime | None = None
    status: str
    citations: list[str]


class Step(Request):
    kind: Literal["thought", "action", "tool_call", "tool_result", "message"] = Field(description="What the step was.")
    content: str
    tool: str | None = None


class TaskSession(Request):
    task: str = Field(description="What the agent was asked to do.")
    domain: str | None = None
    steps: list[Step]
    final_output: str
    outcome: Literal["success", "failure"] | None = None


class TaskSessionRecorded(Response):
    id: str
    status: str
    pending_sessions: int | None = None
    dream_job_id: str | None = None


class SkillSearch(Request):
    query: str
    domain: str | None = None
    limit: int | None = None


class ScoredSkill(Response):
    skill: dict[str, Any]
    similarity: float
    score: float
    source_domain: str | None = None


class SkillRetrieval(Response):
    retrieval_id: str
    results: list[ScoredSkill]


class Consent(Response):
    subject: str
    purposes: list[Any]
    history: list[Any]


class ConsentUpdate(Request):
    purposes: dict[str, bool] = Field(description="Purpose → granted (true) or withdrawn (false).")


class ErasureAccepted(Response):
    erasure_request_id: str
    job_id: str
    status: str


class WebhookEndpointCreate(Request):
    url: str
    event_types: list[str]
    include_content_for: list[str] | None = None
    description: str | None = None
    enabled: bool | None = None


class WebhookEndpoint(Response):
    id: str
    url: str
    description: str | None = None
    event_types: list[str]
    include_content_for: list[str]
    enabled: bool
    disabled_reason: str | None = None
    disabled_at: datetime | None = None
    created_at: datetime
    updated_at: datetime


class AuditEntry(Response):
    sequence: int
    organization_id: str
    created_at: datetime
    actor: str
    action: str
    subject_id: str | None = None
    target_ids: list[str]
    request_id: str | None = None
    previous_hash: str
    entry_hash: str


WriteResult.model_rebuild()
