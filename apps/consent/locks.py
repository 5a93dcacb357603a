"""Row locks on the subject that order writes against consent changes and erasure.

A write takes ``FOR KEY SHARE`` on its subject when it checks consent, so writes never wait
for one another; a consent change or an erasure request takes ``FOR UPDATE`` (the ORM's
``select_for_update``), which waits for every write in flight and makes later writes see
the change. Both locks last until the transaction ends.
"""

from __future__ import annotations

import uuid

from django.db import connection


def subject_lock_shared(*, organization_id: uuid.UUID, subject_id: uuid.UUID) -> bool:
    """Returns False when the subject does not exist (or is not visible in the scope)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM tenancy_subject WHERE organization_id = %s AND id = %s FOR KEY SHARE",
            [organization_id, subject_id],
        )
        return cursor.fetchone() is not None
