"""The per-subject write lock of the evidence plane.

A write reads the subject's current rows (the core block it extends, the semantic row it
supersedes) and appends rows that supersede them. Two writers of one subject that read the
same current row would fork its chain (two "current" versions, one writer's line missing
from each); so from that read to commit, writers of one subject take turns on a
transaction-scoped advisory lock. Writers of other subjects never wait; the slow part of a
write (the language model's calls) runs before the lock.

The lock order of the write path and the indexer (every transaction takes the locks it
needs in this order, advisory locks before the rows they protect, so that no two wait for
each other in a cycle):

1. the subject row, ``FOR KEY SHARE`` (consent and erasure take it ``FOR UPDATE``);
2. this lock, ``memory.write:<subject>``, from the read of the current rows to commit;
3. evidence rows: the writer's inserts and the updates of the rows it supersedes; the
   indexer's claim of a chunk's rows ``FOR NO KEY UPDATE`` (``SKIP LOCKED``), which never
   blocks a writer's check of the foreign key to a row it supersedes (``FOR KEY SHARE``);
4. the graph's identity keys (``apps.graph.store.lock_keys``), sorted, by the indexer only;
5. the deferred foreign keys, checked (``SET CONSTRAINTS ALL IMMEDIATE``) before
6. the organization's audit chain lock, ``audit:<organization>``, last: the audit entry is
   the last write of a transaction, and nothing after it takes a lock.

Before step 5 existed, a writer holding the audit lock waited at commit for a row the
indexer held while the indexer waited for the audit lock (docs/reliability.md).
"""

from __future__ import annotations

import uuid

from django.db import connection


def subject_write_lock(*, subject_id: uuid.UUID) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"memory.write:{subject_id}"])
