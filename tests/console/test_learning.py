"""What the product learned, in the console: skill versions with the experiences they cite,
and semantic dream merges undone from the console (audited, the graph restored)."""

from __future__ import annotations

import uuid

from django.urls import reverse

from apps.audit.models import AuditEntry
from apps.dream.models import DreamMerge
from apps.dream.services import dream_run
from apps.graph import store
from apps.jobs import task_names
from apps.procedural.models import SkillCitation
from apps.tenancy.models import Membership, Subject
from apps.tenancy.scope import organization_scope
from tests.console.conftest import make_staff
from tests.dream.support import Spec, add_anchors, in_scope
from tests.factories import Tenant
from tests.procedural.support import consenting_subject, harmful, helpful, post_session, run_job


def test_skill_versions_show_their_citations(tenant: Tenant) -> None:
    agent = consenting_subject(tenant, "agent-console")
    for n in (2, 3, 4, 5):
        post_session(tenant, agent, helpful("cooking", n, scec=False))
    fifth = post_session(tenant, agent, harmful("travel", 6, scec=False))
    with organization_scope(tenant.id):
        subject = Subject.objects.get(external_id=agent)
    run_job(task_names.PROCEDURAL_DREAM, tenant, fifth["dream_job_id"], subject_id=str(subject.id))
    with organization_scope(tenant.id):
        citations = list(SkillCitation.objects.select_related("skill_version__skill"))
    assert citations
    page = (
        make_staff(tenant, role=Membership.Role.VIEWER)
        .client()
        .get(reverse("console:subject-skills", kwargs={"org_id": tenant.id, "subject_id": subject.id}))
    )
    assert page.status_code == 200
    body = page.content.decode()
    for citation in citations:
        assert f'id="skill-{citation.skill_version.skill_id}"' in body
        assert str(citation.experience_id) in body


def test_a_dream_merge_is_undone_from_the_console(tenant: Tenant) -> None:
    subject = tenant.subject("caroline")
    with in_scope(subject):
        built = add_anchors(subject, [Spec("steel bottle", "object"), Spec("stainless steel bottle", "object")])
        dream_run(subject=subject, chunk_ids=[built.chunk_id], final=False)
        merge = DreamMerge.objects.get(subject=subject)
    anchors_after_merge = _anchor_keys(tenant, subject)
    assert merge.source_key not in anchors_after_merge
    staff = make_staff(tenant)
    client = staff.client()
    listing = reverse("console:subject-dream-merges", kwargs={"org_id": tenant.id, "subject_id": subject.id})
    assert f'data-merge-id="{merge.id}"' in client.get(listing).content.decode()
    undo = reverse(
        "console:dream-merge-undo", kwargs={"org_id": tenant.id, "subject_id": subject.id, "merge_id": merge.id}
    )
    response = client.post(undo)
    assert response.status_code == 302 and response["Location"] == listing
    assert merge.source_key in _anchor_keys(tenant, subject)
    assert "undone" in client.get(listing).content.decode()
    assert client.post(undo).status_code == 409  # already undone
    missing = reverse(
        "console:dream-merge-undo", kwargs={"org_id": tenant.id, "subject_id": subject.id, "merge_id": uuid.uuid4()}
    )
    assert client.post(missing).status_code == 404
    with organization_scope(tenant.id):
        entry = AuditEntry.objects.for_organization(tenant.id).filter(action="console.dream_merge.undo").get()
    assert entry.actor == f"staff:{staff.user.pk}" and entry.target_ids == [str(merge.id)]


def _anchor_keys(tenant: Tenant, subject: Subject) -> set[str]:
    with organization_scope(tenant.id):
        return {a["key"] for a in store.anchor_page(organization_id=tenant.id, subject_id=subject.id, after="")}
