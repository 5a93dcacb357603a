from __future__ import annotations

from django.db.models import Count

from apps.vault.models import OrganizationDataKey


def vault_master_key_usage() -> dict[str, int]:
    """How many data keys each master key wraps, across organizations (owner connection).

    A retired master key can leave the keyring once it wraps none.
    """
    rows = (
        OrganizationDataKey.objects.dangerously_across_organizations()
        .values("master_key_id")
        .annotate(data_keys=Count("id"))
        .order_by("master_key_id")
    )
    return {row["master_key_id"]: row["data_keys"] for row in rows}
