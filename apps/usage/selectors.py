"""The usage report: requests and rows written per day and key (the counters), model tokens
per day (provider metering), storage and quota now, in the organization's scope."""

from __future__ import annotations

import datetime
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Sum

from apps.graph.models import AnchorFrame, AnchorRow, AnchorVector
from apps.memory.models import STORES, ResourceItem
from apps.platform.errors import NotFound
from apps.providers.local_embedder import MODEL_NAMES as LOCAL_EMBEDDING_MODELS
from apps.providers.local_usage import LANGUAGE_MODELS as LOCAL_LANGUAGE_MODELS
from apps.providers.selectors import UsageTotals, usage_totals_by_day_key_and_model
from apps.tenancy.models import ApiKey, Organization
from apps.tenancy.throttling import QuotaStatus, quota_status
from apps.usage import adapter
from apps.usage.models import UsageCounter
from apps.usage.periods import Period

# Models that run on our own hosts (the local embedder, the local language pipeline): their
# tokens are counted apart from a provider's (ADR 0049).
LOCAL_MODELS = frozenset({*LOCAL_EMBEDDING_MODELS.values(), *LOCAL_LANGUAGE_MODELS})


@dataclass
class Tokens:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, totals: UsageTotals) -> None:
        self.calls += totals.calls
        self.prompt_tokens += totals.prompt_tokens
        self.completion_tokens += totals.completion_tokens


@dataclass
class KeyUsage:
    api_key_id: uuid.UUID
    name: str
    requests: int = 0
    errors: int = 0
    rows_written: int = 0
    operations: dict[str, int] = field(default_factory=dict)

    def add(self, counter: UsageCounter) -> None:
        self.requests += counter.requests
        self.errors += counter.errors
        self.rows_written += counter.rows_written
        self.operations[counter.operation] = self.operations.get(counter.operation, 0) + counter.requests


@dataclass
class KeyTokens:
    """One key's model tokens on one day; ``api_key_id`` None is background work (a write's
    worker, dreaming, indexing), which no request's key is charged for."""

    api_key_id: uuid.UUID | None
    name: str
    provider_tokens: Tokens = field(default_factory=Tokens)
    local_tokens: Tokens = field(default_factory=Tokens)


@dataclass
class DayUsage:
    date: datetime.date
    keys: list[KeyUsage]
    provider_tokens: Tokens
    local_tokens: Tokens
    key_tokens: list[KeyTokens]

    @property
    def requests(self) -> int:
        return sum(k.requests for k in self.keys)

    @property
    def errors(self) -> int:
        return sum(k.errors for k in self.keys)

    @property
    def rows_written(self) -> int:
        return sum(k.rows_written for k in self.keys)


@dataclass(frozen=True)
class StoreSize:
    name: str
    rows: int
    bytes: int


@dataclass(frozen=True)
class GraphSize:
    anchors: int
    frames: int
    mentions: int  # (anchor, evidence row) pairs
    bytes: int  # the AGE graph's relations and the adjacency tables beside it


@dataclass(frozen=True)
class Storage:
    stores: list[StoreSize]
    object_bytes: int  # resource files in object storage
    graph: GraphSize

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.stores)

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.stores)


@dataclass(frozen=True)
class UsageReport:
    period: Period
    api_key_id: uuid.UUID | None
    days: list[DayUsage]
    totals: list[KeyUsage]
    storage: Storage
    quota: QuotaStatus

    @property
    def provider_tokens(self) -> Tokens:
        return _tokens_sum(day.provider_tokens for day in self.days)

    @property
    def local_tokens(self) -> Tokens:
        return _tokens_sum(day.local_tokens for day in self.days)


def _tokens_sum(parts: Iterable[Tokens]) -> Tokens:
    total = Tokens()
    for part in parts:
        total.add(
            UsageTotals(calls=part.calls, prompt_tokens=part.prompt_tokens, completion_tokens=part.completion_tokens)
        )
    return total


def usage_report(*, organization_id: uuid.UUID, period: Period, api_key_id: uuid.UUID | None = None) -> UsageReport:
    """Every day of ``period``, the quiet ones included (zeros), so a plot needs no gaps filled.
    ``api_key_id`` narrows requests, rows and the per-key tokens to one of the organization's
    keys (another organization's key is a 404); the day's token totals and storage are the
    organization's."""
    names = dict(ApiKey.objects.values_list("id", "name"))
    if api_key_id is not None and api_key_id not in names:
        raise NotFound(f"No API key {api_key_id} in this organization.")
    counters = UsageCounter.objects.filter(day__gte=period.first, day__lte=period.last)
    if api_key_id is not None:
        counters = counters.filter(api_key_id=api_key_id)
    per_day: dict[datetime.date, dict[uuid.UUID, KeyUsage]] = defaultdict(dict)
    totals: dict[uuid.UUID, KeyUsage] = {}
    for counter in counters.order_by("day", "api_key_id", "operation"):
        name = names.get(counter.api_key_id, "")
        day_keys = per_day[counter.day]
        day_keys.setdefault(counter.api_key_id, KeyUsage(api_key_id=counter.api_key_id, name=name)).add(counter)
        totals.setdefault(counter.api_key_id, KeyUsage(api_key_id=counter.api_key_id, name=name)).add(counter)
    since, until = period.bounds()
    tokens = usage_totals_by_day_key_and_model(since=since, until=until)
    days = []
    for day in period.each_day():
        provider, local = Tokens(), Tokens()
        by_key: dict[uuid.UUID | None, KeyTokens] = {}
        for (token_day, token_key, model), used in tokens.items():
            if token_day != day:
                continue
            is_local = model in LOCAL_MODELS
            (local if is_local else provider).add(used)
            if api_key_id is None or token_key == api_key_id:
                entry = by_key.setdefault(
                    token_key, KeyTokens(api_key_id=token_key, name=names.get(token_key, "") if token_key else "")
                )
                (entry.local_tokens if is_local else entry.provider_tokens).add(used)
        days.append(
            DayUsage(
                date=day,
                keys=list(per_day[day].values()),
                provider_tokens=provider,
                local_tokens=local,
                key_tokens=list(by_key.values()),
            )
        )
    organization = Organization.objects.get(id=organization_id)
    return UsageReport(
        period=period,
        api_key_id=api_key_id,
        days=days,
        totals=sorted(totals.values(), key=lambda k: (-k.requests, k.name)),
        storage=storage_size(organization_id=organization_id, graph_name=organization.graph_name),
        quota=quota_status(organization_id=organization_id, monthly_request_quota=organization.monthly_request_quota),
    )


def storage_size(*, organization_id: uuid.UUID, graph_name: str) -> Storage:
    stores = []
    for name, model in STORES.items():
        rows, size = adapter.table_rows_and_bytes(organization_id=organization_id, table=model._meta.db_table)
        stores.append(StoreSize(name=name, rows=rows, bytes=size))
    adjacency_bytes = sum(
        adapter.table_rows_and_bytes(organization_id=organization_id, table=model._meta.db_table)[1]
        for model in (AnchorVector, AnchorFrame, AnchorRow)
    )
    return Storage(
        stores=stores,
        object_bytes=ResourceItem.objects.aggregate(total=Sum("size_bytes"))["total"] or 0,
        graph=GraphSize(
            anchors=AnchorVector.objects.count(),
            frames=AnchorFrame.objects.aggregate(n=Count("frame_id", distinct=True))["n"],
            mentions=AnchorRow.objects.count(),
            bytes=adapter.graph_bytes(graph_name=graph_name) + adjacency_bytes,
        ),
    )
