from __future__ import annotations

from django.db import models

from apps.tenancy.models import TenantModel


class UsageCounter(TenantModel):
    """Requests of one API key for one operation on one day (UTC): a counter row, upserted
    once per request after the response (ADR 0042), never a row per request.

    ``api_key_id`` is not a foreign key: the insert then takes no lock on the key row, which
    every request of that key touches (``api_key_touch``)."""

    id = models.BigAutoField(primary_key=True)
    api_key_id = models.UUIDField()
    day = models.DateField()
    operation = models.CharField(max_length=100)
    requests = models.PositiveBigIntegerField(default=0)
    errors = models.PositiveBigIntegerField(default=0)
    rows_written = models.PositiveBigIntegerField(default=0)

    class Meta:
        db_table = "usage_counter"
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "day", "api_key_id", "operation"], name="usage_counter_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.api_key_id} {self.operation}: {self.requests}"
