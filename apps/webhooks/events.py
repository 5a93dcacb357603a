"""The webhook event types customers can subscribe to. Framework-free.

Each capability emits its events with ``apps.webhooks.services.webhook_event_emit`` inside the
transaction of the change it reports. ``payload`` carries ids, counts and short machine
summaries, never memory text; memory text goes in ``content``, which only endpoints that
opted in for the event type receive (``include_content_for``).
"""

from __future__ import annotations

from collections.abc import Iterable

MEMORY_CREATED = "memory.created"
MEMORY_INDEXED = "memory.indexed"
MEMORY_INDEX_FAILED = "memory.index_failed"
MEMORY_DELETED = "memory.deleted"
DREAM_COMPLETED = "dream.completed"
SKILL_CREATED = "skill.created"
SKILL_UPDATED = "skill.updated"
SKILL_ARCHIVED = "skill.archived"
SKILL_WEIGHT_CHANGED = "skill.weight_changed"
CONSENT_CHANGED = "consent.changed"
SUBJECT_ERASED = "subject.erased"
JOB_FAILED = "job.failed"

# Sent only by the ping endpoint, to the one endpoint pinged; nobody subscribes to it.
PING = "webhook.ping"
ALL = "*"

EVENT_TYPES: dict[str, str] = {
    MEMORY_CREATED: (
        "A write stored evidence records (emitted by the memory write path, one event per write). "
        "payload: subject_id, subject_external_id, chunk_id, source_kind, records [{type, id}]; "
        "content: records [{type, id, text}] (vault values never)."
    ),
    MEMORY_INDEXED: (
        "The graph indexed a chunk's episodic and semantic records (graph indexing job). "
        "payload: subject_id, chunk_id, records [{type, id}], frames, anchors."
    ),
    MEMORY_INDEX_FAILED: (
        "Graph indexing of a chunk failed; the records stay stored and citable (graph indexing job). "
        "payload: subject_id, chunk_id, job_id, error_code."
    ),
    MEMORY_DELETED: (
        "Rows were deleted by DELETE …/memories/{type}/{id} or POST …/memories/delete (one event per call). "
        "payload: subject_id, subject_external_id, records [{type, id}], counts per store and graph, receipt_sha256."
    ),
    DREAM_COMPLETED: (
        "An AutoDream consolidation round finished (dream jobs). "
        "payload: subject_id, kind (semantic|procedural), job_id, merges, skills_changed."
    ),
    SKILL_CREATED: "A procedural skill was admitted (curator, SEDM admission). payload: subject_id, skill_id, version, weight.",
    SKILL_UPDATED: "A skill was edited; the new version supersedes the old one. payload: subject_id, skill_id, version.",
    SKILL_ARCHIVED: "A skill fell below the archive threshold or was retired. payload: subject_id, skill_id, version, weight.",
    SKILL_WEIGHT_CHANGED: (
        "A skill's weight changed from outcome feedback. payload: subject_id, skill_id, previous_weight, weight."
    ),
    CONSENT_CHANGED: "A subject's consent for a purpose was granted or withdrawn. payload: subject_id, purpose, granted, version.",
    SUBJECT_ERASED: "Every trace of a subject was erased. payload: subject_external_id, receipt_id, counts per store.",
    JOB_FAILED: "A background job failed terminally (the job runner). payload: job_id, kind, subject_id, error_code.",
}


def is_known(event_type: str) -> bool:
    return event_type in EVENT_TYPES


def matches(filters: Iterable[str], event_type: str) -> bool:
    """Whether an endpoint's filter (event types, or ``["*"]``) selects ``event_type``."""
    return any(item in (ALL, event_type) for item in filters)
