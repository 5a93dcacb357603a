"""The write path of the evidence plane.

Every write runs inside the caller's organization scope (one transaction): evidence rows
commit first, together; graph indexing is published after commit. A failure anywhere
rolls the whole write back, so nothing is ever half-stored.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from django.db import DatabaseError, IntegrityError, transaction
from django.urls import resolve, reverse
from django.utils import timezone

from apps.consent.checks import consent_check_memory_write
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import (
    job_add_chunk,
    job_create,
    job_create_indexing,
    job_create_writing,
    job_enqueue_on_commit,
    jobs_finish_accepted,
)
from apps.language.dates import parse_event_time
from apps.language.facts import (
    ENDED,
    ENDS_ALONE,
    PLAN,
    adds_a_value,
    is_possession,
    normalize_attribute,
    replaced_value,
)
from apps.language.pipeline import PARSES
from apps.memory.core_text import FactChange, restate_superseded
from apps.memory.locks import subject_write_lock
from apps.memory.manager import (
    VERBATIM_EVENT_TYPE,
    IncomingMessage,
    MemoryPlan,
    VaultFinding,
    plan_memories,
    redact_messages,
    verbatim_drafts,
)
from apps.memory.models import (
    STORES,
    CoreBlock,
    EmbeddedRecord,
    EpisodicEvent,
    EvidenceRecord,
    IndexedRecord,
    IngestionBatch,
    IngestionBatchChunk,
    PendingWrite,
    ProceduralItem,
    ResourceItem,
    SemanticItem,
    VaultEntry,
)
from apps.memory.passages import document_title, is_document, is_pasted, split_passages
from apps.memory.revisions import aligned_passages, revised_version
from apps.memory.selectors import current_rows, records_by_chunk
from apps.memory.statements import replaced_fact, semantic_statement
from apps.memory.timing import Stopwatch
from apps.memory.writing.local import LocalMemoryLLM, keep_reason, parse_ahead
from apps.platform.bulk import rows_update
from apps.platform.errors import Conflict, NotFound, Unprocessable, ValidationFailed
from apps.platform.faults import fault_pause
from apps.providers.interfaces import Embedder, MemoryLLM, MeteringContext
from apps.providers.registry import embedder as default_embedder
from apps.providers.registry import llm_for
from apps.providers.schemas import (
    MEMORY_TYPES,
    CoreDraft,
    EpisodicDraft,
    InputMessage,
    ProceduralDraft,
    RouteDecision,
    SemanticDraft,
    WriterInput,
)
from apps.providers.selectors import provider_override
from apps.providers.services import BufferedUsageMeter, request_metering
from apps.resources.storage import object_key, storage
from apps.tenancy.models import Subject
from apps.usage.periods import operation_name
from apps.usage.services import usage_credit_rows
from apps.vault.detect import redact_sensitive
from apps.vault.services import vault_encrypt
from apps.webhooks.events import MEMORY_CREATED
from apps.webhooks.services import webhook_event_emit

logger = logging.getLogger(__name__)

DEFAULT_CORE_CHAR_LIMIT = 5000
RESOURCE_EMBED_CHARS = 2000
PASSAGE_EVENT_TYPE = "document passage"


class NothingToStore(Unprocessable):
    """The router found nothing worth remembering in a write: a 422, and nothing is stored."""

    code = "nothing_to_store"


@dataclass(frozen=True)
class WrittenRecord:
    memory_type: str
    id: uuid.UUID


@dataclass
class WriteResult:
    chunk_id: uuid.UUID
    routed_types: list[str]
    records: list[WrittenRecord] = field(default_factory=list)
    job_id: uuid.UUID | None = None
    job: Job | None = None  # an accepted write's job (ADR 0054)


@dataclass(frozen=True)
class Provenance:
    source_kind: str
    session_id: str
    chunk_id: uuid.UUID
    metadata: dict[str, Any] = field(default_factory=dict)  # the write's tags, on each of its rows


def _mention_time(cited: Sequence[str], messages: Sequence[InputMessage]) -> datetime:
    by_id = {m.message_id: m.timestamp for m in messages}
    times = [by_id[i] for i in cited if i in by_id]
    return min(times) if times else messages[0].timestamp


def _event_time(draft: EpisodicDraft) -> tuple[datetime | None, str]:
    if draft.event_time is None:
        return None, ""
    parsed = parse_event_time(draft.event_time)
    start = parsed.start if parsed.start.tzinfo else parsed.start.replace(tzinfo=UTC)
    return start, parsed.precision.value


def _embed_rows(
    rows: Sequence[EmbeddedRecord],
    texts: Sequence[str],
    embedder: Embedder,
    stopwatch: Stopwatch,
    metering: MeteringContext | None = None,
) -> None:
    if not rows:
        return
    with stopwatch.phase("embedding"):
        vectors = embedder.embed(list(texts), metering=metering)
    for row, vector in zip(rows, vectors, strict=True):
        row.embedding = vector
        row.embedding_model = embedder.model_name


@dataclass
class _SubjectRows:
    """A subject's current core blocks and facts as a write's planning reads them: read once
    per batch (the subject's write lock, held to commit, keeps other writers out) and kept
    current as each write of the batch stores rows, so a batch of n writes to a subject reads
    them once instead of 3n times."""

    core: list[CoreBlock]  # in the order the database lists them, a write's new blocks last
    facts: list[SemanticItem]  # oldest first, as (created_at, id) orders them

    @classmethod
    def read(cls, subject: Subject) -> _SubjectRows:
        return cls(
            core=list(current_rows(CoreBlock, subject=subject)),
            # Their vectors are not read: a subject's facts are many, and planning reads their words.
            facts=list(current_rows(SemanticItem, subject=subject).defer("embedding").order_by("created_at", "id")),
        )

    def stored(self, *, core: Sequence[CoreBlock], facts: Sequence[SemanticItem]) -> None:
        """A write of the batch stored these rows: each replaces the row it supersedes."""
        gone = {getattr(row, "supersedes_id", None) for row in [*core, *facts]}
        self.core = [row for row in self.core if row.id not in gone] + list(core)
        self.facts = sorted([*(row for row in self.facts if row.id not in gone), *facts], key=_created_order)


def _created_order(row: SemanticItem) -> tuple[datetime, uuid.UUID]:
    return row.created_at, row.id


def _core_rows(
    drafts: Sequence[CoreDraft],
    *,
    subject: Subject,
    provenance: Provenance,
    current_blocks: Sequence[CoreBlock],
    superseded: Sequence[FactChange] = (),
) -> list[CoreBlock]:
    """New versions of the core blocks: the drafts' lines appended, and every line that states
    a fact this write superseded replaced by the new value's line (core memory follows the
    facts). A block neither gets new lines nor loses a stale one stays as it is."""
    rows: list[CoreBlock] = []
    current: dict[str, CoreBlock] = {block.label: block for block in current_blocks}
    appended: dict[str, CoreDraft] = {draft.label: draft for draft in drafts}
    for label in dict.fromkeys([*appended, *current]):
        previous, draft = current.get(label), appended.get(label)
        lines, restated = restate_superseded(
            previous.value.splitlines() if previous else [],
            draft.text.splitlines() if draft else [],
            superseded,
        )
        if draft is None and not restated:
            continue
        limit = previous.char_limit if previous else DEFAULT_CORE_CHAR_LIMIT
        # A full block keeps its newest lines: the oldest fall out, as in a rolling context.
        while len("\n".join(lines)) > limit and len(lines) > 1:
            lines.pop(0)
        message_ids = list(draft.source_message_ids) if draft else []
        message_ids += [i for change in restated for i in change.new_message_ids if i not in message_ids]
        block = CoreBlock(
            organization_id=subject.organization_id,
            subject=subject,
            **_provenance_fields(provenance, message_ids),
            label=label,
            value="\n".join(lines)[-limit:],
            char_limit=limit,
            supersedes=previous,
        )
        current[label] = block
        rows.append(block)
    return rows


def _provenance_fields(provenance: Provenance, message_ids: Sequence[str]) -> dict[str, Any]:
    return {
        "source_kind": provenance.source_kind,
        "session_id": provenance.session_id,
        "chunk_id": provenance.chunk_id,
        "source_message_ids": list(message_ids),
        "metadata": provenance.metadata,
    }


def _fact_key(name: str, attribute: str) -> tuple[str, str]:
    return name.casefold(), attribute


def _semantic_rows(
    drafts: Sequence[SemanticDraft], *, subject: Subject, provenance: Provenance, current_facts: Sequence[SemanticItem]
) -> tuple[list[SemanticItem], list[FactChange]]:
    """One row per draft; each supersedes the current row of its key (entity, attribute) only,
    so another fact about the same entity stays current. Returns the rows, and which stored
    facts they superseded (the core blocks follow those). ``current_facts``: oldest first."""
    current = {_fact_key(row.name, row.attribute): row for row in current_facts}  # this write's rows join at the end
    stored = {row.id for row in current.values()}
    replaced: dict[tuple[str, str], SemanticItem] = {}  # key → the stored row this write supersedes
    rows: list[SemanticItem] = []
    for draft in drafts:
        key = _fact_key(draft.name, draft.attribute)
        if key not in current and (old := replaced_value(draft.summary)) is not None:
            # "980 a month instead of 1,100": a new value of the fact that states 1,100
            key = replaced_fact(old, _stated_values(key[0], current)) or key
        elif key not in current and key[1].startswith(ENDED):
            key = _ended_key(key, current)
        elif key in current and adds_a_value(key[1], draft.summary):
            key = _one_more(key, current)  # "I adopted another pup": the first pup stays current
        previous = current.get(key)
        if previous is None and (finer := (key[0], ENDS_ALONE.get(key[1], ""))) in current:
            previous = current.pop(finer)  # "We moved to Porto" after "we live near the river"
        if previous is not None and previous.id in stored:
            replaced.setdefault(key, previous)
        row = SemanticItem(
            organization_id=subject.organization_id,
            subject=subject,
            **_provenance_fields(provenance, draft.source_message_ids),
            name=draft.name,
            attribute=key[1],
            summary=draft.summary,
            details=draft.details,
            source=draft.source,
            supersedes=previous,
        )
        current[key] = row
        rows.append(row)
    return rows, [_fact_change(old, current[key]) for key, old in replaced.items()]


def _one_more(key: tuple[str, str], current: dict[tuple[str, str], SemanticItem]) -> tuple[str, str]:
    """The key of one more value of a kind already held: "pet: pup 2", then "pet: pup 3"."""
    number = 2
    while (key[0], f"{key[1]} {number}") in current:
        number += 1
    return key[0], f"{key[1]} {number}"


def _stated_values(name: str, current: dict[tuple[str, str], SemanticItem]) -> list[tuple[tuple[str, str], str]]:
    """The current facts of ``name`` (case-folded) with their texts, plans left out."""
    return [(k, row.summary) for k, row in current.items() if k[0] == name and not k[1].startswith(PLAN)]


def _ended_key(key: tuple[str, str], current: dict[tuple[str, str], SemanticItem]) -> tuple[str, str]:
    """The key a sentence ending a thing the speaker calls by name ends ("We lost Moose"): the
    speaker's fact that names it ("I have a beagle called Moose"), else the speaker's key of a
    possession stated of the thing itself ((Moose, pet: beagle) → (Kwame, pet: beagle)); else
    its own key ("ended: moose"), which a later end of the same thing supersedes."""
    thing = key[1].removeprefix(ENDED)
    named = replaced_fact(thing, _stated_values(key[0], current))
    if named is not None:
        return named
    owned = [k[1] for k in current if k[0] == thing and is_possession(k[1])]
    return (key[0], owned[-1]) if owned else key


def _fact_change(old: SemanticItem, new: SemanticItem) -> FactChange:
    return FactChange(
        entity=old.name, old_text=old.summary, new_text=new.summary, new_message_ids=tuple(new.source_message_ids)
    )


def _procedural_rows(
    drafts: Sequence[ProceduralDraft], *, subject: Subject, provenance: Provenance
) -> list[ProceduralItem]:
    return [
        ProceduralItem(
            organization_id=subject.organization_id,
            subject=subject,
            **_provenance_fields(provenance, draft.source_message_ids),
            title=draft.title,
            summary=draft.summary,
            steps=list(draft.steps),
            domain=draft.domain,
        )
        for draft in drafts
    ]


def _vault_rows(findings: Sequence[VaultFinding], *, subject: Subject, provenance: Provenance) -> list[VaultEntry]:
    rows = []
    for finding in findings:
        entry_id = uuid.uuid4()
        encrypted = vault_encrypt(
            organization_id=subject.organization_id, entry_id=entry_id, plaintext=finding.detection.value
        )
        rows.append(
            VaultEntry(
                id=entry_id,
                organization_id=subject.organization_id,
                subject=subject,
                **_provenance_fields(provenance, [finding.message_id]),
                entry_type=finding.detection.entry_type.value,
                source=f"{provenance.source_kind} message {finding.message_id}",
                sensitivity=finding.detection.sensitivity.value,
                caption=finding.detection.caption,
                ciphertext=encrypted.ciphertext,
                nonce=encrypted.nonce,
                data_key_version=encrypted.data_key_version,
            )
        )
    return rows


def _save_all(groups: Sequence[Sequence[EvidenceRecord]]) -> None:
    # A savepoint only when a row supersedes another: the unique constraint it can meet is
    # then turned into a 409 with the transaction still usable (an accepted write has none).
    superseding = any(getattr(row, "supersedes_id", None) is not None for rows in groups for row in rows)
    try:
        with transaction.atomic(savepoint=superseding):
            for rows in groups:
                if rows:
                    type(rows[0]).objects.bulk_create(rows)
    except IntegrityError as exc:
        # The only unique constraint a write can meet: two writers superseding the same row.
        raise Conflict("A concurrent write updated the same memory; retry the request.") from exc


def _enqueue_indexing(*, subject: Subject, chunk_id: uuid.UUID, result: WriteResult, job: Job | None) -> None:
    """The write's rows that the graph indexes are the job's to wait on: the write's own job
    (``indexing`` from the start), or the job the write is part of (a batch's)."""
    if not any(r.memory_type in ("episodic", "semantic") for r in result.records):
        return
    if job is None:
        job = job_create_indexing(organization_id=subject.organization_id, chunk_id=chunk_id, subject_id=subject.id)
    # else the batch step adds the chunk to its job as the step's last write (the job row's
    # lock, held to commit, would otherwise stall the job's heartbeat for the whole chunk).
    result.job_id = job.id


def _related_memories(blocks: Sequence[CoreBlock]) -> list[str]:
    return [f"[{block.label}] {block.value}" for block in blocks]


def _episodic_row(
    draft: EpisodicDraft, *, subject: Subject, provenance: Provenance, messages: Sequence[InputMessage]
) -> EpisodicEvent:
    event_time, precision = _event_time(draft)
    return EpisodicEvent(
        organization_id=subject.organization_id,
        subject=subject,
        **_provenance_fields(provenance, draft.source_message_ids),
        actor=draft.actor,
        event_type=draft.event_type,
        summary=draft.summary,
        details=draft.details,
        event_time=event_time,
        event_time_precision=precision,
        mention_time=_mention_time(draft.source_message_ids, messages),
        status=draft.status,
    )


def _message_json(message: InputMessage) -> dict[str, Any]:
    return {
        "id": message.message_id,
        "role": message.role,
        "name": message.name,
        "content": message.content,
        "timestamp": message.timestamp.isoformat(),
    }


def _message_from_json(item: dict[str, Any]) -> InputMessage:
    return InputMessage(
        message_id=item["id"],
        role=item["role"],
        name=item["name"],
        content=item["content"],
        timestamp=datetime.fromisoformat(item["timestamp"]),
    )


def _stored_records(groups: Sequence[tuple[str, Sequence[EvidenceRecord]]]) -> list[WrittenRecord]:
    return [WrittenRecord(memory_type, row.id) for memory_type, rows in groups for row in rows]


def _accept(
    *,
    subject: Subject,
    messages: list[IncomingMessage],
    source_kind: str,
    session_id: str,
    metadata: dict[str, Any] | None,
    api_key_id: uuid.UUID | None,
    stopwatch: Stopwatch,
) -> tuple[WriteResult, PendingWrite]:
    """Store what a write must keep before it is answered: each message as its episodic row
    (in the speaker's words), each pasted document as a resource and its passages, each
    sensitive value in the vault, none of them embedded yet (``index_status = writing``), and
    the write's remainder as a ``PendingWrite`` (unsaved: the caller decides where it runs).
    A write with nothing worth keeping is refused with ``NothingToStore`` before anything is
    written; one without the subject's consent to store it, with ``ConsentRequired``."""
    consent_check_memory_write(subject=subject, texts=[message.content for message in messages])
    provenance = Provenance(
        source_kind=source_kind, session_id=session_id, chunk_id=uuid.uuid4(), metadata=dict(metadata or {})
    )
    redacted, findings = redact_messages(messages)
    # Pasted texts are kept whole and in passages; the writers read the conversation and the
    # pasted texts shorter than a document (ADR 0100).
    pasted = [message for message in redacted if is_pasted(message.content)]
    turns = [message for message in redacted if not is_pasted(message.content)]
    if not (keep_reason(turns) or pasted or findings):
        raise NothingToStore(
            "Nothing in these messages is worth remembering (nothing worth remembering), so nothing was stored. "
            "Greetings, thanks and other small talk alone are not kept; send them together with the "
            "conversation they belong to.",
            details={"reason": "nothing worth remembering", "message_ids": [m.message_id for m in redacted]},
        )
    writing = IndexedRecord.IndexStatus.WRITING
    episodic = [
        _episodic_row(draft, subject=subject, provenance=provenance, messages=redacted)
        for draft in verbatim_drafts(MemoryPlan(route=RouteDecision(memory_types=[], reason="")), turns)
    ]
    resources: list[ResourceItem] = []
    for text in pasted:
        resource, passages = _pasted_document_rows(text, subject=subject, provenance=provenance)
        resources.append(resource)
        episodic += passages
    for row in episodic:
        row.index_status = writing
    blobs = [(row.object_key, row.extracted_text.encode()) for row in resources]
    with _objects_stored(blobs, content_type="text/plain"), stopwatch.phase("database"):
        _link_revisions(subject, resources, episodic)
        vault = _vault_rows(findings, subject=subject, provenance=provenance)
        _save_all([resources, episodic, vault])
        stored = (("episodic", episodic), ("resource", resources), ("vault", vault))
        result = WriteResult(
            chunk_id=provenance.chunk_id,
            routed_types=[name for name, rows in stored if rows],
            records=_stored_records(stored),
        )
        pending = PendingWrite(
            organization_id=subject.organization_id,
            subject=subject,
            chunk_id=provenance.chunk_id,
            source_kind=source_kind,
            session_id=session_id,
            metadata=provenance.metadata,
            api_key_id=api_key_id,
            messages=[_message_json(message) for message in redacted if not is_document(message.content)],
        )
        _emit_memory_created(subject=subject, result=result, source_kind=source_kind, rows=[*episodic, *resources])
    return result, pending


def memory_accept_messages(
    *,
    subject: Subject,
    messages: list[IncomingMessage],
    source_kind: str,
    session_id: str = "",
    metadata: dict[str, Any] | None = None,
    api_key_id: uuid.UUID | None = None,
    stopwatch: Stopwatch | None = None,
) -> WriteResult:
    """A write as the API takes it (ADR 0054): stored durably in the request's transaction
    (``_accept``), answered with those rows and the write's job, and completed by a worker
    (``memory_complete_writes``), which routes, writes the other typed rows, embeds, and then
    indexes; the job is ``succeeded`` once every row is indexed (ADR 0031)."""
    stopwatch = stopwatch or Stopwatch()
    result, pending = _accept(
        subject=subject,
        messages=messages,
        source_kind=source_kind,
        session_id=session_id,
        metadata=metadata,
        api_key_id=api_key_id,
        stopwatch=stopwatch,
    )
    with stopwatch.phase("database"):
        pending.job = job_create_writing(
            organization_id=subject.organization_id, chunk_id=result.chunk_id, subject_id=subject.id
        )
        pending.save()
    result.job_id, result.job = pending.job_id, pending.job
    fault_pause("memory.write.before_commit")
    return result


def memory_write_messages(
    *,
    subject: Subject,
    messages: list[IncomingMessage],
    source_kind: str,
    session_id: str = "",
    metadata: dict[str, Any] | None = None,
    stopwatch: Stopwatch | None = None,
    llm: MemoryLLM | None = None,
    embedder: Embedder | None = None,
    job: Job | None = None,
    api_key_id: uuid.UUID | None = None,
) -> WriteResult:
    """Accept and complete one chunk of messages in one transaction (a batch step, the
    evaluations): the rows ``memory_accept_messages`` stores and what a worker adds to them.
    The rows' indexing belongs to ``job`` (the batch's) if given, else to a job of the
    write's own, ``indexing`` from the start."""
    stopwatch = stopwatch or Stopwatch()
    accepted, pending = _accept(
        subject=subject,
        messages=messages,
        source_kind=source_kind,
        session_id=session_id,
        metadata=metadata,
        api_key_id=api_key_id,
        stopwatch=stopwatch,
    )
    [completed] = _complete([pending], llm=llm, embedder=embedder, stopwatch=stopwatch)
    result = WriteResult(chunk_id=accepted.chunk_id, routed_types=completed.routed_types, records=completed.records)
    _enqueue_indexing(subject=subject, chunk_id=accepted.chunk_id, result=result, job=job)
    fault_pause("memory.write.before_commit")
    logger.info(
        "memory written",
        extra={"subject_id": str(subject.id), "chunk_id": str(accepted.chunk_id), "records": len(result.records)},
    )
    return result


COMPLETE_BATCH = 64  # writes one worker completes in one transaction, with one embedding call


@dataclass
class CompletedWrite:
    job_id: uuid.UUID | None
    chunk_id: uuid.UUID
    routed_types: list[str]
    records: list[WrittenRecord]
    writing_error: str = ""  # the writers failed: the messages' own rows were kept as they were said


def memory_complete_writes(
    *, limit: int = COMPLETE_BATCH, llm: MemoryLLM | None = None, embedder: Embedder | None = None
) -> list[CompletedWrite]:
    """Complete the organization's oldest accepted writes, up to ``limit``, in one transaction
    (the worker's half of ADR 0054): route each, write its other typed rows, embed every
    row of all of them in one model call, and turn each job ``indexing``. Writes another
    worker is completing are skipped (SKIP LOCKED), so concurrent workers share a backlog;
    a worker that dies rolls back, and the writes wait for the next one. Returns what it
    completed, for the caller to index after commit."""
    pending = list(
        # Only the pending rows: locking the joined subject and job too (the default) would
        # hold the subject FOR UPDATE through the batch, and every new write to it, which
        # takes the subject FOR KEY SHARE, would wait for the batch's embedding call.
        PendingWrite.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("subject", "job")
        .order_by("created_at", "id")[:limit]
    )
    if not pending:
        return []
    with PARSES.held():  # a batch of more messages than the recent parses keep reads each parse once
        completed = _complete(pending, llm=llm, embedder=embedder, stopwatch=Stopwatch())
    PendingWrite.objects.filter(id__in=[write.id for write in pending]).delete()
    results: dict[uuid.UUID, dict[str, Any]] = {}
    for done in completed:
        assert done.job_id is not None  # an accepted write has its job
        # The rows it wrote, so that a client that followed the job (a wait that ran out) has
        # every row of its write, as a finished wait answers them.
        result = results[done.job_id] = {
            "routed_types": done.routed_types,
            "records_written": len(done.records),
            "records": [{"type": record.memory_type, "id": str(record.id)} for record in done.records],
        }
        if done.writing_error:
            result["writing_error"] = done.writing_error
    jobs_finish_accepted(results=results)
    return completed


def _complete(
    pending: Sequence[PendingWrite], *, llm: MemoryLLM | None, embedder: Embedder | None, stopwatch: Stopwatch
) -> list[CompletedWrite]:
    """The worker's half of the given writes, in order. A message's episodic row becomes the
    writer's first episode of that message (the row keeps its id; the writer's further
    episodes are rows of their own); the others' rows are added; then every row the writes
    stored unembedded gets its vector from one embedding call and turns ``pending`` for the
    graph. Subjects are locked in id order first (two workers never deadlock)."""
    organization_id = pending[0].organization_id
    llm = llm or llm_for(organization_id, override=provider_override(organization_id=organization_id))
    embedder = embedder or default_embedder()
    for subject_id in sorted({write.subject_id for write in pending}):
        subject_write_lock(subject_id=subject_id)  # held to commit: see apps.memory.locks
    conversations = [[_message_from_json(item) for item in write.messages] for write in pending]
    if isinstance(llm, LocalMemoryLLM):
        with stopwatch.phase("routing"):
            parse_ahead(message.content for conversation in conversations for message in conversation)
    meter = BufferedUsageMeter()  # flushed below, in this transaction: one insert for the batch
    chunk_ids = [write.chunk_id for write in pending]
    stored_episodic = list(EpisodicEvent.objects.filter(chunk_id__in=chunk_ids).order_by("created_at", "id"))
    stored_resources = list(ResourceItem.objects.filter(chunk_id__in=chunk_ids).order_by("created_at", "id"))
    to_embed: list[EmbeddedRecord] = [*stored_episodic, *stored_resources]
    completed = []
    current: dict[uuid.UUID, _SubjectRows] = {}
    for write, conversation in zip(pending, conversations, strict=True):
        stored = [row for row in stored_episodic if row.chunk_id == write.chunk_id]
        try:
            with transaction.atomic():
                if write.subject_id not in current:
                    current[write.subject_id] = _SubjectRows.read(write.subject)
                done, added = _complete_one(
                    write,
                    conversation,
                    stored=stored,
                    current=current[write.subject_id],
                    llm=llm,
                    meter=meter,
                    stopwatch=stopwatch,
                )
        except DatabaseError:
            raise  # the whole batch rolls back and is retried
        except Exception as exc:
            for row in stored:  # as stored: the rolled-back episode may have changed them
                row.refresh_from_db(fields=[*_EPISODE_FIELDS, "source_message_ids"])
            # One write's writers failing (a provider error, a bad draft) must not hold back
            # the others, nor lose it: its messages' rows are kept as they were said, and its
            # job says why it has no other rows.
            logger.warning("write completion failed", extra={"chunk_id": str(write.chunk_id)}, exc_info=True)
            current[write.subject_id] = _SubjectRows.read(write.subject)  # what the rollback left
            done, added = _complete_one(
                write, [], stored=stored, current=current[write.subject_id], llm=llm, meter=meter, stopwatch=stopwatch
            )
            done.writing_error = f"{type(exc).__name__}: the writers failed; the messages were kept as they were said"
        completed.append(done)
        to_embed += added
    # One embedding call per key whose writes these are (usually one): the tokens are its.
    key_of_chunk = {write.chunk_id: write.api_key_id for write in pending}
    by_key: dict[uuid.UUID | None, list[EmbeddedRecord]] = defaultdict(list)
    for embedded_row in to_embed:
        by_key[key_of_chunk.get(embedded_row.chunk_id)].append(embedded_row)
    for api_key_id, rows_of_key in by_key.items():
        metering = request_metering(organization_id=organization_id, api_key_id=api_key_id, meter=meter)
        _embed_rows(rows_of_key, [_embedding_text(r) for r in rows_of_key], embedder, stopwatch, metering)
    with stopwatch.phase("database"):
        meter.flush()
        records = records_by_chunk(chunk_ids=chunk_ids)
        for done in completed:
            done.records = [WrittenRecord(memory_type, row_id) for memory_type, row_id in records[done.chunk_id]]
            if any(record.memory_type == "resource" for record in done.records):
                done.routed_types = [name for name in MEMORY_TYPES if name in {*done.routed_types, "resource"}]
        for row in stored_episodic:
            row.index_status = IndexedRecord.IndexStatus.PENDING
        rows_update(
            stored_episodic,
            [*_EPISODE_FIELDS, "source_message_ids", "embedding", "embedding_model", "index_status"],
            organization_id=organization_id,
        )
        rows_update(stored_resources, ["embedding", "embedding_model"], organization_id=organization_id)
        stored_ids = {row.id for row in stored_episodic}
        by_model: dict[type[EmbeddedRecord], list[EmbeddedRecord]] = defaultdict(list)
        for embedded in to_embed:
            if embedded.id not in stored_ids and not isinstance(embedded, ResourceItem):
                by_model[type(embedded)].append(embedded)
        for rows in by_model.values():
            rows_update(rows, ["embedding", "embedding_model"], organization_id=organization_id)
    return completed


_EPISODE_FIELDS = (
    "actor",
    "event_type",
    "summary",
    "details",
    "event_time",
    "event_time_precision",
    "mention_time",
    "status",
)


def _complete_one(
    write: PendingWrite,
    conversation: list[InputMessage],
    *,
    stored: list[EpisodicEvent],
    current: _SubjectRows,
    llm: MemoryLLM,
    meter: BufferedUsageMeter,
    stopwatch: Stopwatch,
) -> tuple[CompletedWrite, list[EmbeddedRecord]]:
    """One write of ``_complete``'s batch: its plan and other typed rows (``current`` is kept
    up to date with them). Its ``records`` (every row of its chunk) are listed by the caller
    once for the whole batch."""
    subject = write.subject
    provenance = Provenance(
        source_kind=write.source_kind, session_id=write.session_id, chunk_id=write.chunk_id, metadata=write.metadata
    )
    if conversation:
        memory_input = WriterInput(messages=conversation, related_memories=_related_memories(current.core))
        metering = request_metering(organization_id=subject.organization_id, api_key_id=write.api_key_id, meter=meter)
        plan = plan_memories(memory_input=memory_input, llm=llm, metering=metering, stopwatch=stopwatch)
    else:
        plan = MemoryPlan(route=RouteDecision(memory_types=[], reason="only pasted documents"))
    with stopwatch.phase("database"):
        verbatim = {row.source_message_ids[0]: row for row in stored if row.event_type == VERBATIM_EVENT_TYPE}
        pasted = {message.message_id for message in conversation if is_pasted(message.content)}
        episodic: list[EpisodicEvent] = []
        for draft in plan.episodic:
            if _retells_pasted_text(draft, pasted):
                continue  # its passages are its episode (ADR 0100)
            row = _episodic_row(draft, subject=subject, provenance=provenance, messages=conversation)
            mine = next((verbatim.pop(i) for i in draft.source_message_ids if i in verbatim), None)
            if mine is None:
                episodic.append(row)
                continue
            for name in _EPISODE_FIELDS:  # the message's row becomes the writer's episode of it
                setattr(mine, name, getattr(row, name))
            mine.source_message_ids = list(draft.source_message_ids)
        semantic, superseded = _semantic_rows(
            plan.semantic, subject=subject, provenance=provenance, current_facts=current.facts
        )
        procedural = _procedural_rows(plan.procedural, subject=subject, provenance=provenance)
        core = _core_rows(
            plan.core, subject=subject, provenance=provenance, current_blocks=current.core, superseded=superseded
        )
        _save_all([core, episodic, semantic, procedural])
        current.stored(core=core, facts=semantic)
    added = (("core", core), ("episodic", episodic), ("semantic", semantic), ("procedural", procedural))
    if any(rows for _, rows in added):
        _emit_memory_created(
            subject=subject,
            result=WriteResult(chunk_id=write.chunk_id, routed_types=[], records=_stored_records(added)),
            source_kind=write.source_kind,
            rows=[row for _, rows in added for row in rows],
        )
    done = CompletedWrite(
        job_id=write.job_id,
        chunk_id=write.chunk_id,
        routed_types=[name for name in MEMORY_TYPES if name in plan.route.memory_types],
        records=[],
    )
    return done, [*episodic, *semantic, *procedural]


def _retells_pasted_text(draft: EpisodicDraft, pasted: set[str]) -> bool:
    """An episode of pasted text alone: its passages already hold the text verbatim, and pieces
    of it cut by the writer (the local writer's groups of sentences) would rank beside them."""
    cited = set(draft.source_message_ids)
    return bool(cited) and cited <= pasted


@contextmanager
def _objects_stored(blobs: Sequence[tuple[str, bytes]], *, content_type: str) -> Iterator[None]:
    """The blobs are in object storage for the block; if it raises, they are deleted again:
    no object without its row."""
    stored: list[str] = []
    try:
        for key, data in blobs:
            storage().put(key, data, content_type)
            stored.append(key)
        yield
    except BaseException:
        for key in stored:
            storage().delete(key)
        raise


def _passage_rows(
    resource: ResourceItem, *, actor: str, mention_time: datetime, provenance: Provenance, message_ids: Sequence[str]
) -> list[EpisodicEvent]:
    """The resource's text in passages, as episodic rows the graph indexes and search returns,
    each citing the resource and its character offsets in it."""
    passages = split_passages(resource.extracted_text)
    return [
        EpisodicEvent(
            organization_id=resource.organization_id,
            subject_id=resource.subject_id,
            **_provenance_fields(provenance, message_ids),
            actor=actor,
            event_type=PASSAGE_EVENT_TYPE,
            summary=passage.text,
            details=(
                f"Passage {number} of {len(passages)} of “{resource.title}”, characters "
                f"{passage.start}–{passage.end} (resource {resource.id})."
            ),
            mention_time=mention_time,
            status=EpisodicEvent.Status.DONE,
            resource_id=resource.id,
            resource_start=passage.start,
            resource_end=passage.end,
        )
        for number, passage in enumerate(passages, start=1)
    ]


REVISION_CANDIDATES = 20  # the subject's newest current resources of a like size, compared,
REVISION_BYTES = 8 * 1024 * 1024  # ... as long as their texts add up to no more than this


def _link_revisions(subject: Subject, resources: Sequence[ResourceItem], passages: Sequence[EpisodicEvent]) -> None:
    """Each of these new resources that is a changed version of a current resource of the
    subject (a document pasted or uploaded again) supersedes it, and each of its passages
    supersedes the passage of that version it revises (ADR 0101). Set on the unsaved rows,
    under the subject's write lock (held to commit): no other write links the same version."""
    if not resources:
        return
    subject_write_lock(subject_id=subject.id)
    claimed: set[uuid.UUID] = set()  # by an earlier resource of this write
    for resource in resources:
        sizes = (
            current_rows(ResourceItem, subject=subject)
            .filter(size_bytes__gte=resource.size_bytes // 2, size_bytes__lte=resource.size_bytes * 2)
            .exclude(id__in=claimed)
            .order_by("-created_at")
            .values_list("id", "size_bytes")[:REVISION_CANDIDATES]
        )
        compared, total = [], 0
        for row_id, size in sizes:
            total += size
            if total > REVISION_BYTES:
                break
            compared.append(row_id)
        texts = ResourceItem.objects.filter(id__in=compared).order_by("-created_at").values_list("id", "extracted_text")
        previous = revised_version(resource.extracted_text, texts)
        if previous is None:
            continue
        resource.supersedes_id = previous
        claimed.add(previous)
        replaced = list(
            current_rows(EpisodicEvent, subject=subject)
            .filter(resource_id=previous)
            .defer("embedding")
            .order_by("resource_start")
        )
        revising = [row for row in passages if row.resource_id == resource.id]
        pairs = aligned_passages([row.summary for row in replaced], [row.summary for row in revising])
        for new_index, old_index in pairs.items():
            revising[new_index].supersedes_id = replaced[old_index].id


def _pasted_document_rows(
    message: InputMessage, *, subject: Subject, provenance: Provenance
) -> tuple[ResourceItem, list[EpisodicEvent]]:
    """Pasted text (``is_pasted``): its (redacted) text whole, as a resource kept in object
    storage, and its passages."""
    document = replace(provenance, source_kind=EvidenceRecord.SourceKind.DOCUMENT)
    resource_id = uuid.uuid4()
    data = message.content.encode()
    resource = ResourceItem(
        id=resource_id,
        organization_id=subject.organization_id,
        subject=subject,
        **_provenance_fields(document, [message.message_id]),
        title=document_title(message.content),
        summary=" ".join(message.content.split())[:300],
        resource_type="text",
        content_type="text/plain",
        object_key=object_key(organization_id=subject.organization_id, subject_id=subject.id, object_id=resource_id),
        size_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        extracted_text=message.content,
    )
    passages = _passage_rows(
        resource,
        actor=message.name or message.role,
        mention_time=message.timestamp,
        provenance=document,
        message_ids=[message.message_id],
    )
    return resource, passages


# --- documents → Resource -------------------------------------------------------------------

TEXT_CONTENT_TYPES = {
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/csv": "csv",
    "application/json": "json",
}
MAX_DOCUMENT_BYTES = 10 * 1024 * 1024


def _extract_text(data: bytes, content_type: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationFailed(f"The {content_type} document is not valid UTF-8 text.") from exc
    if "\x00" in text:
        # No Postgres text value can hold NUL: refused here, not a database error at insert.
        raise ValidationFailed(
            f"The {content_type} document holds a NUL byte at offset {data.index(0)}; "
            "remove it (a binary file is not a text document)."
        )
    return text


def memory_write_document(
    *,
    subject: Subject,
    filename: str,
    content_type: str,
    data: bytes,
    title: str = "",
    session_id: str = "",
    metadata: dict[str, Any] | None = None,
    stopwatch: Stopwatch | None = None,
    api_key_id: uuid.UUID | None = None,
) -> WriteResult:
    """Store the document in object storage, a Resource row with its (redacted) text, and its
    passages as episodic rows the graph indexes; a worker embeds them (ADR 0054), and the
    write's job is ``succeeded`` once they are indexed."""
    if content_type not in TEXT_CONTENT_TYPES:
        raise ValidationFailed(f"Unsupported document type {content_type!r}; supported: {sorted(TEXT_CONTENT_TYPES)}.")
    if not data:
        raise ValidationFailed("The document is empty.")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ValidationFailed(f"The document is larger than {MAX_DOCUMENT_BYTES} bytes.")
    stopwatch = stopwatch or Stopwatch()
    text = _extract_text(data, content_type)
    consent_check_memory_write(subject=subject, texts=[text])
    redaction = redact_sensitive(text)
    if not redaction.text.strip():
        raise NothingToStore("The document holds only whitespace, so nothing was stored.")
    provenance = Provenance(
        source_kind=EvidenceRecord.SourceKind.DOCUMENT,
        session_id=session_id,
        chunk_id=uuid.uuid4(),
        metadata=dict(metadata or {}),
    )
    resource_id = uuid.uuid4()
    key = object_key(organization_id=subject.organization_id, subject_id=subject.id, object_id=resource_id)
    summary = " ".join(redaction.text.split())[:300]
    resource = ResourceItem(
        id=resource_id,
        organization_id=subject.organization_id,
        subject=subject,
        **_provenance_fields(provenance, []),
        title=(title or filename)[:300],
        summary=summary,
        resource_type=TEXT_CONTENT_TYPES[content_type],
        content_type=content_type,
        object_key=key,
        size_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        extracted_text=redaction.text,
    )
    passages = _passage_rows(
        resource, actor=resource.title, mention_time=timezone.now(), provenance=provenance, message_ids=[]
    )
    for passage in passages:
        passage.index_status = IndexedRecord.IndexStatus.WRITING
    findings = [VaultFinding(f"document:{resource_id}", d) for d in redaction.detections]
    with _objects_stored([(key, data)], content_type=content_type), stopwatch.phase("database"):
        _link_revisions(subject, [resource], passages)
        vault = _vault_rows(findings, subject=subject, provenance=provenance)
        _save_all([[resource], passages, vault])
        result = WriteResult(chunk_id=provenance.chunk_id, routed_types=["episodic", "resource"])
        result.records = [
            WrittenRecord("resource", resource.id),
            *(WrittenRecord("episodic", p.id) for p in passages),
            *(WrittenRecord("vault", v.id) for v in vault),
        ]
        job = job_create_writing(
            organization_id=subject.organization_id, chunk_id=provenance.chunk_id, subject_id=subject.id
        )
        PendingWrite.objects.create(
            organization_id=subject.organization_id,
            subject=subject,
            job=job,
            chunk_id=provenance.chunk_id,
            source_kind=provenance.source_kind,
            session_id=session_id,
            metadata=provenance.metadata,
            api_key_id=api_key_id,
        )
        result.job_id, result.job = job.id, job
        _emit_memory_created(
            subject=subject, result=result, source_kind=provenance.source_kind, rows=[resource, *passages]
        )
    return result


# --- webhooks ---------------------------------------------------------------------------------

_STORE_NAMES = {model: name for name, model in STORES.items()}


def _webhook_text(row: EvidenceRecord) -> str:
    if isinstance(row, CoreBlock):
        return f"[{row.label}] {row.value}"
    if isinstance(row, ResourceItem):
        return f"{row.title}\n{row.summary}"
    assert isinstance(row, EmbeddedRecord)
    return _embedding_text(row)


def _emit_memory_created(
    *, subject: Subject, result: WriteResult, source_kind: str, rows: Sequence[EvidenceRecord]
) -> None:
    """One ``memory.created`` webhook event per write, in the write's transaction. Record text
    reaches only endpoints that opted in to content; vault values are never sent."""
    webhook_event_emit(
        organization_id=subject.organization_id,
        event_type=MEMORY_CREATED,
        subject_id=subject.id,
        payload={
            "subject_id": str(subject.id),
            "subject_external_id": subject.external_id,
            "chunk_id": str(result.chunk_id),
            "source_kind": source_kind,
            "records": [{"type": r.memory_type, "id": str(r.id)} for r in result.records],
        },
        content={
            "records": [
                {"type": _STORE_NAMES[type(row)], "id": str(row.id), "text": _webhook_text(row)} for row in rows
            ]
        },
    )


# --- updates: append a superseding row --------------------------------------------------------

UPDATABLE_FIELDS: dict[str, set[str]] = {
    "core": {"value"},
    "episodic": {"actor", "event_type", "summary", "details", "status"},
    "semantic": {"name", "attribute", "summary", "details", "source"},
    "procedural": {"title", "summary", "steps", "domain"},
}


def memory_supersede(
    *,
    subject: Subject,
    memory_type: str,
    record_id: uuid.UUID,
    changes: dict[str, Any],
    embedder: Embedder | None = None,
    api_key_id: uuid.UUID | None = None,
) -> EvidenceRecord:
    """Append a row that replaces ``record_id`` with ``changes`` applied; the old row stays.
    Its embedding is ``api_key_id``'s."""
    allowed = UPDATABLE_FIELDS.get(memory_type)
    if allowed is None:
        raise ValidationFailed(f"Memories of type {memory_type!r} cannot be updated; write a new one instead.")
    unknown = sorted(set(changes) - allowed)
    if unknown or not changes:
        raise ValidationFailed(
            f"Updatable fields of {memory_type} memories: {sorted(allowed)}; got {unknown or 'none'}."
        )
    model = STORES[memory_type]
    subject_write_lock(subject_id=subject.id)
    old = model.objects.select_for_update().filter(subject=subject, id=record_id).first()
    if old is None:
        raise NotFound(f"No {memory_type} memory {record_id} for this subject.")
    if model.objects.filter(supersedes=old).exists():
        raise Conflict("This memory was already superseded; update the current version.")
    new = model.objects.get(pk=old.pk)
    new.pk = uuid.uuid4()
    new.id = new.pk
    new._state.adding = True
    for name, value in changes.items():
        setattr(new, name, value)
    if isinstance(new, SemanticItem) and "attribute" in changes:
        new.attribute = _attribute_change(changes["attribute"])
    new.supersedes = old
    new.chunk_id = uuid.uuid4()
    new.source_kind = EvidenceRecord.SourceKind.API
    if isinstance(new, (EpisodicEvent, SemanticItem)):
        new.index_status = EpisodicEvent.IndexStatus.PENDING
        new.index_error = ""
    if isinstance(new, EmbeddedRecord):
        embedder = embedder or default_embedder()
        metering = request_metering(organization_id=subject.organization_id, api_key_id=api_key_id)
        _embed_rows([new], [_embedding_text(new)], embedder, Stopwatch(), metering)
    core: list[CoreBlock] = []
    if isinstance(old, SemanticItem) and isinstance(new, SemanticItem):
        provenance = Provenance(
            source_kind=new.source_kind, session_id=new.session_id, chunk_id=new.chunk_id, metadata=new.metadata
        )
        core = _core_rows(
            [],
            subject=subject,
            provenance=provenance,
            current_blocks=list(current_rows(CoreBlock, subject=subject)),
            superseded=[_fact_change(old, new)],
        )
    _save_all([[new], core])
    if isinstance(new, (EpisodicEvent, SemanticItem)):
        result = WriteResult(
            chunk_id=new.chunk_id, routed_types=[memory_type], records=[WrittenRecord(memory_type, new.id)]
        )
        _enqueue_indexing(subject=subject, chunk_id=new.chunk_id, result=result, job=None)
    return new


def _attribute_change(value: Any) -> str:
    if not isinstance(value, str) or not normalize_attribute(value):
        raise ValidationFailed("A semantic memory's attribute is a non-empty name, e.g. 'home city' or 'diet'.")
    return normalize_attribute(value)


def _embedding_text(row: EmbeddedRecord) -> str:
    """What a row's vector stands for. Episodic and semantic rows embed their summary only:
    the details repeat it with metadata, and the encoder's cost grows with length; words in
    the details stay reachable through the keyword lane and the graph."""
    if isinstance(row, EpisodicEvent):
        return row.summary
    if isinstance(row, SemanticItem):
        return semantic_statement(row.name, row.summary)
    if isinstance(row, ProceduralItem):
        return f"{row.title}: {row.summary}\n" + "\n".join(row.steps)
    assert isinstance(row, ResourceItem)
    return f"{row.title}\n{row.extracted_text[:RESOURCE_EMBED_CHARS]}"


# --- batch ingestion ----------------------------------------------------------------------------


def incoming_messages(raw: list[dict[str, Any]]) -> list[IncomingMessage]:
    """Messages as validated by the API (or stored in a batch); ids default to their position."""
    return [
        IncomingMessage(
            message_id=str(item.get("id") or f"msg-{position}"),
            role=item["role"],
            content=item["content"],
            timestamp=item["timestamp"]
            if isinstance(item["timestamp"], datetime)
            else datetime.fromisoformat(item["timestamp"]),
            name=item.get("name") or None,
        )
        for position, item in enumerate(raw, start=1)
    ]


def memory_batch_create(
    *,
    subject: Subject,
    chunks: list[dict[str, Any]],
    session_id: str,
    metadata: dict[str, Any] | None = None,
    api_key_id: uuid.UUID | None = None,
) -> IngestionBatch:
    """Accept a batch of chunks for the worker; a chunk without its own ``metadata`` (or
    ``session_id``) takes the batch's. Refused (``ConsentRequired``, nothing stored)
    without the subject's consent; each chunk's write checks it again when it runs.
    ``api_key_id``, the submitting key, is kept on the job: the rows and model tokens of
    the batch's writes are credited to it."""
    consent_check_memory_write(
        subject=subject, texts=[message["content"] for chunk in chunks for message in chunk["messages"]]
    )
    job = job_create(
        organization_id=subject.organization_id,
        kind="memory.batch_ingest",
        subject_id=subject.id,
        api_key_id=api_key_id,
    )
    job.result = {"chunks_total": len(chunks), "chunks_done": 0, "records_written": 0}
    job.save(update_fields=["result"])
    batch = IngestionBatch.objects.create(
        organization_id=subject.organization_id,
        subject=subject,
        job=job,
        session_id=session_id,
        chunks=[chunk if "metadata" in chunk else {**chunk, "metadata": dict(metadata or {})} for chunk in chunks],
        chunks_total=len(chunks),
    )
    job_enqueue_on_commit(job=job, task_name=task_names.BATCH_INGEST, kwargs={"batch_id": str(batch.id)})
    return batch


def _batch_operation() -> str:
    """The operation that submits a batch, as the usage counters name it."""
    route = resolve(reverse("memories-batch", kwargs={"external_id": "subject"})).route
    return operation_name(method="POST", route=route)


@dataclass(frozen=True)
class BatchProgress:
    chunks_total: int
    chunks_done: int
    records_written: int
    chunk_id: uuid.UUID | None = None  # the chunk this step wrote, if it wrote one
    rejected: str | None = None  # why this step's chunk stored nothing (``NothingToStore``)

    @property
    def finished(self) -> bool:
        return self.chunks_done >= self.chunks_total

    def as_dict(self) -> dict[str, int]:
        return {
            "chunks_total": self.chunks_total,
            "chunks_done": self.chunks_done,
            "records_written": self.records_written,
        }


def memory_batch_step(*, batch_id: uuid.UUID) -> BatchProgress:
    """Write the next unwritten chunk of the batch. The chunk's rows, its record (unique per
    batch and index) and the progress commit together, under the batch row's lock: a worker
    that dies mid-batch leaves the chunk it was writing unwritten, and whatever runs the batch
    again (a redelivery, the jobs sweep) goes on from there; no chunk is written twice.

    The chunk's model tokens and rows are the submitting key's (the job's ``api_key_id``):
    the rows are credited to the batch operation's usage counter in the same transaction."""
    batch = IngestionBatch.objects.select_for_update().select_related("subject").get(id=batch_id)
    api_key_id = Job.objects.filter(id=batch.job_id).values_list("api_key_id", flat=True).first()
    chunk_id, rejected, to_index = None, None, False
    if batch.chunks_done < batch.chunks_total:
        index = batch.chunks_done
        chunk = batch.chunks[index]
        written = 0
        try:
            with transaction.atomic():
                result = memory_write_messages(
                    subject=batch.subject,
                    messages=incoming_messages(chunk["messages"]),
                    source_kind=chunk.get("source_kind", EvidenceRecord.SourceKind.CHAT),
                    session_id=chunk.get("session_id") or batch.session_id,
                    metadata=chunk.get("metadata"),
                    job=batch.job,
                    api_key_id=api_key_id,
                )
        except NothingToStore as exc:  # reported on the job, which then cannot succeed
            rejected = exc.message
        else:
            written = len(result.records)
            batch.records_written += written
            chunk_id, to_index = result.chunk_id, result.job_id is not None
        IngestionBatchChunk.objects.create(
            organization_id=batch.organization_id,
            batch=batch,
            index=index,
            chunk_id=chunk_id,
            records_written=written,
        )
        fault_pause(f"memory.batch.chunk.{index}")
        if chunk_id is not None and to_index:
            job_add_chunk(job=batch.job, chunk_id=chunk_id)
        batch.chunks_done += 1
        if batch.chunks_done == batch.chunks_total:
            batch.chunks = []  # content is not kept past its use
        batch.save(update_fields=["chunks_done", "records_written", "chunks"])
        if api_key_id is not None:
            usage_credit_rows(
                organization_id=batch.organization_id,
                api_key_id=api_key_id,
                operation=_batch_operation(),
                rows_written=written,
            )
    return BatchProgress(
        chunks_total=batch.chunks_total,
        chunks_done=batch.chunks_done,
        records_written=batch.records_written,
        chunk_id=chunk_id,
        rejected=rejected,
    )


# --- re-embedding after a change of embedding model -----------------------------------------------

REEMBED_BATCH = 256
EMBEDDED_STORES: tuple[type[EmbeddedRecord], ...] = (EpisodicEvent, SemanticItem, ProceduralItem, ResourceItem)


def memory_reembed_step(*, embedder: Embedder, batch_size: int = REEMBED_BATCH) -> list[EmbeddedRecord]:
    """Re-embed up to ``batch_size`` rows (of one store) of the organization in scope whose
    vectors come from another model than ``embedder``'s; returns them (empty: done). The
    graph keeps copies of some of these vectors: ``graph_reembed_step`` updates them too."""
    for model in EMBEDDED_STORES:
        rows = list(model.objects.exclude(embedding_model=embedder.model_name).order_by("id")[:batch_size])
        if rows:
            vectors = embedder.embed([_embedding_text(row) for row in rows])
            for row, vector in zip(rows, vectors, strict=True):
                row.embedding, row.embedding_model = vector, embedder.model_name
            rows_update(rows, ["embedding", "embedding_model"], organization_id=rows[0].organization_id)
            return rows
    return []
