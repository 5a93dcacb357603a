from __future__ import annotations

from apps.jobs.models import Job
from apps.jobs.services import job_create
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.providers.registry import embedder
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.memory.conversation import SESSIONS
from workers.maintenance import reembed_organization


def test_a_change_of_model_re_embeds_every_row_through_a_job() -> None:
    tenant = make_tenant()
    other = make_tenant()
    for owner in (tenant, other):
        owner.subject("maya")
        owner.write("maya", {"messages": SESSIONS[0]})
    with organization_scope(tenant.id):
        # As if these rows had been embedded by a previous deployment's model.
        EpisodicEvent.objects.update(embedding_model="old-model", embedding=[0.0] * 3)
        SemanticItem.objects.update(embedding_model="old-model")
        stale = EpisodicEvent.objects.count() + SemanticItem.objects.count()
        job = job_create(organization_id=tenant.id, kind="embeddings.reembed")
    reembed_organization.apply(kwargs={"organization_id": str(tenant.id), "job_id": str(job.id)})
    current = embedder().model_name
    with organization_scope(tenant.id):
        assert Job.objects.get(id=job.id).result == {"reembedded": stale, "model": current}
        rows = list(EpisodicEvent.objects.all())
        assert all(r.embedding_model == current and len(r.embedding) == embedder().dimension for r in rows)
    # The other organization was neither touched nor counted.
    with organization_scope(other.id):
        assert set(EpisodicEvent.objects.values_list("embedding_model", flat=True)) == {current}
