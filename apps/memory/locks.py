"""The per-subject write lock of the evidence plane.

A write reads the subject's current rows (the core block it extends, the semantic row it
supersedes) and appends rows that supersede them. Two writers of one subject that read the
same current row would fork its chain (two "current" versions, one writer's line missing
from each); so from that read to commit, writers of one subject take turns on a
transaction-scoped advisory lock. Writers of other subjects never wait; the slow part of a
write (the language model's calls) runs before the lock. Order of locks everywhere: the
subject row (``FOR KEY SHARE``, consent), then this lock, then evidence rows.
"""

from __future__ import annotations

import uuid

from django.db import connection


def subject_write_lock(*, subject_id: uuid.UUID) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"memory.write:{subject_id}"])
