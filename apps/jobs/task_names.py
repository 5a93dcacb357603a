"""Every Celery task's name, in one place: the task decorators in ``workers/`` and the code
that publishes a task (services, the beat schedule) import these. A name starts with the
queue the task runs on (``CELERY_TASK_ROUTES``). Framework-free, so settings can import it."""

from __future__ import annotations

# indexing
INDEX_CHUNK = "indexing.memory.index"
WRITE_COMPLETE = "indexing.memory.complete_writes"
BATCH_INGEST = "indexing.memory.batch_ingest"
INDEX_SWEEP = "indexing.sweep"

# dream
SEMANTIC_DREAM = "dream.semantic.run"
PROCEDURAL_DREAM = "dream.procedural.run"
PROCEDURAL_DREAM_SWEEP = "dream.procedural.sweep"

# admission
SEDM_REPLAY = "admission.sedm.replay"
SEDM_DECIDE = "admission.sedm.decide"

# webhooks
WEBHOOKS_DRAIN = "webhooks.outbox.drain"
WEBHOOKS_DRAIN_ORGANIZATION = "webhooks.outbox.drain_organization"
WEBHOOKS_SEND = "webhooks.delivery.send"
WEBHOOKS_PRUNE = "webhooks.events.prune"

# maintenance
GRAPH_CHECK = "maintenance.graph.check"
GRAPH_REINDEX = "maintenance.graph.reindex"
JOBS_SWEEP = "maintenance.jobs.sweep"
REEMBED = "maintenance.embeddings.reembed"
ERASURE_RUN = "maintenance.erasure.run"
ERASURE_DRAIN = "maintenance.erasure.drain"
MEMORY_DELETE = "maintenance.memory.delete"
PROCEDURAL_EVOLVE = "maintenance.procedural.evolve"
PROCEDURAL_EVOLVE_SWEEP = "maintenance.procedural.evolve_sweep"
IDEMPOTENCY_PURGE = "maintenance.idempotency.purge"
