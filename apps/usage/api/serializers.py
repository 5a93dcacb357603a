from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.usage.periods import DEFAULT_DAYS, MAX_DAYS


class UsageQuerySerializer(serializers.Serializer[dict[str, Any]]):
    to = serializers.DateField(required=False, help_text="The last day reported (UTC, YYYY-MM-DD); today by default.")
    key = serializers.UUIDField(required=False, help_text="Only this API key's requests and rows (its id).")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # ``from`` is a Python keyword: declared here rather than as an attribute.
        first = serializers.DateField(
            required=False,
            help_text=f"The first day reported (UTC, YYYY-MM-DD); {DEFAULT_DAYS} days before `to` by default, "
            f"at most {MAX_DAYS} days in all.",
        )
        return {"from": first, **super().get_fields()}


class TokensSerializer(serializers.Serializer[Any]):
    calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()


class ModelTokensSerializer(serializers.Serializer[Any]):
    provider = TokensSerializer(source="provider_tokens", help_text="Calls to the model provider (billed).")
    local = TokensSerializer(source="local_tokens", help_text="Models run on the service's own hosts.")


class KeyUsageSerializer(serializers.Serializer[Any]):
    api_key_id = serializers.UUIDField()
    name = serializers.CharField(help_text="Blank for a key that no longer exists.")
    requests = serializers.IntegerField()
    # A declared field (the metaclass moves it off the class), not Serializer.errors.
    errors = serializers.IntegerField(  # type: ignore[assignment]
        help_text="Requests answered with a 4xx or 5xx after authorization."
    )
    rows_written = serializers.IntegerField()
    operations = serializers.DictField(
        child=serializers.IntegerField(), help_text='Requests per operation, e.g. "POST /v1/subjects".'
    )


class DayUsageSerializer(serializers.Serializer[Any]):
    date = serializers.DateField()
    requests = serializers.IntegerField()
    errors = serializers.IntegerField()  # type: ignore[assignment]
    rows_written = serializers.IntegerField()
    keys = KeyUsageSerializer(many=True)
    model_tokens = ModelTokensSerializer(source="*", help_text="The organization's, whichever key is asked for.")


class StoreSizeSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    rows = serializers.IntegerField()
    bytes = serializers.IntegerField()


class GraphSizeSerializer(serializers.Serializer[Any]):
    anchors = serializers.IntegerField()
    frames = serializers.IntegerField()
    mentions = serializers.IntegerField(help_text="(anchor, evidence row) pairs.")
    bytes = serializers.IntegerField()


class StorageSerializer(serializers.Serializer[Any]):
    rows = serializers.IntegerField()
    bytes = serializers.IntegerField(help_text="The stored size of the memory rows.")
    object_bytes = serializers.IntegerField(help_text="Resource files in object storage.")
    stores = StoreSizeSerializer(many=True)
    graph = GraphSizeSerializer()


class QuotaSerializer(serializers.Serializer[Any]):
    monthly_limit = serializers.IntegerField(source="limit")
    used = serializers.IntegerField(help_text="Requests counted against the quota this UTC month.")
    left = serializers.IntegerField()
    resets_at = serializers.DateTimeField()


class UsageReportSerializer(serializers.Serializer[Any]):
    from_ = serializers.DateField(source="period.first")
    to = serializers.DateField(source="period.last")
    key = serializers.UUIDField(source="api_key_id", allow_null=True)
    days = DayUsageSerializer(many=True)
    keys = KeyUsageSerializer(source="totals", many=True, help_text="Each key's totals over the range.")
    storage = StorageSerializer(help_text="Now, for the whole organization.")
    quota = QuotaSerializer()

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        return {"from": fields.pop("from_"), **fields}
