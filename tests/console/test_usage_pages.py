"""The console's usage overview, readable audit log, signed receipt download and graph
picture, through Django's test client (tests/console/test_browser.py opens them in Chromium)."""

from __future__ import annotations

import json
import re

from django.urls import reverse
from django.utils import timezone

from apps.erasure.receipt import receipt_verify
from apps.erasure.selectors import receipt_public_key
from apps.graph import store
from apps.tenancy.models import ApiKey, Membership
from apps.tenancy.scope import organization_scope
from tests.console.conftest import make_staff
from tests.console.support import World, populate
from tests.erasure.support import run_erasure
from tests.factories import Tenant, make_tenant


def _page(world: World, name: str, **kwargs: object) -> str:
    client = make_staff(world.tenant, role=Membership.Role.VIEWER).client()
    response = client.get(reverse(f"console:{name}", kwargs={"org_id": world.tenant.id, **kwargs}))
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def test_the_overview_shows_the_usage_report_with_a_plot_of_30_days(tenant: Tenant) -> None:
    world = populate(tenant)
    named = tenant.issue_key(["memories:read"])
    for _ in range(3):
        assert tenant.client(named).get("/v1/subjects").status_code == 200
    page = _page(world, "organization")
    bars = re.findall(r'<rect class="bar" data-date="([\d-]+)" data-value="(\d+)"', page)
    assert len(bars) == 30 and bars[-1][0] == timezone.now().date().isoformat()
    report = tenant.client().get("/v1/usage").json()
    assert [(d, int(v)) for d, v in bars] == [(d["date"], d["requests"]) for d in report["days"]]
    assert int(bars[-1][1]) >= 3  # the three reads, besides the writes of populate()
    with organization_scope(tenant.id):
        name = ApiKey.objects.get(lookup_id=named[len("mx_live_") :][:12]).name
    keys = page.split('id="usage-keys"')[1].split("</table>")[0]
    assert name in keys and "GET /v1/subjects" in keys
    assert f"{report['storage']['rows']} (" in page.split('id="usage-storage-rows"')[1][:40]
    assert "of 1000000 used" in page.split('id="usage-quota"')[1][:80]


def test_the_audit_log_names_keys_staff_and_subjects_beside_their_ids(tenant: Tenant) -> None:
    world = populate(tenant)
    staff = make_staff(tenant, role=Membership.Role.ADMIN)
    staff.client().get(reverse("console:subject", kwargs={"org_id": tenant.id, "subject_id": world.subject.id}))
    erased = run_erasure(world.erasure_request_id)
    page = _page(world, "audit")
    with organization_scope(tenant.id):
        key = ApiKey.objects.get(id=world.api_key_id)
    # The API write of the subject's memories: the key's name and the subject's external id.
    assert re.search(rf"key <strong>{key.name}</strong></span><br><span class=\"mono muted\">api_key:{key.id}", page)
    assert re.search(
        rf"<strong>{world.subject.external_id}</strong></span><br><span class=\"mono muted\">{world.subject.id}", page
    )
    assert f"staff <strong>{staff.user.username}</strong>" in page
    # A subject erased since is named as erased, beside its id.
    assert f'<span class="muted">erased</span><br><span class="mono muted">{erased.subject_id}' in page
    assert "maya-gone" not in page


def test_a_receipt_downloads_as_signed_json(tenant: Tenant) -> None:
    world = populate(tenant)
    detail = _page(world, "erasure-detail", request_id=world.erasure_request_id)
    assert "Download the signed receipt" not in detail  # not until the erasure completes
    completed = run_erasure(world.erasure_request_id)
    detail = _page(world, "erasure-detail", request_id=world.erasure_request_id)
    assert 'id="receipt-download"' in detail and receipt_public_key() in detail
    assert "{'" not in detail.split('id="receipt"')[1]  # JSON, not a Python dict
    client = make_staff(tenant, role=Membership.Role.VIEWER).client()
    url = reverse("console:erasure-receipt", kwargs={"org_id": tenant.id, "request_id": world.erasure_request_id})
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="erasure-receipt-{completed.id}.json"'
    document = json.loads(response.content)
    assert document["receipt"] == completed.receipt and document["receipt_sha256"] == completed.receipt_sha256
    assert receipt_verify(document, public_key=receipt_public_key())
    outsider = make_staff(make_tenant(), role=Membership.Role.OWNER).client()
    assert outsider.get(url).status_code == 404


def test_the_graph_page_draws_the_subjects_anchors_and_frames(tenant: Tenant) -> None:
    world = populate(tenant)
    page = _page(world, "subject-graph", subject_id=world.subject.id)
    picture = page.split('<svg id="graph-picture"')[1].split("</svg>")[0]
    with organization_scope(tenant.id):
        frames = store.frame_page(organization_id=tenant.id, subject_id=world.subject.id, after="")[:40]
    drawn_frames = set(re.findall(r'data-kind="frame" data-ref="([^"]+)"', picture))
    drawn_anchors = set(re.findall(r'data-kind="anchor" data-ref="([^"]+)"', picture))
    drawn_rows = set(re.findall(r'data-kind="row" data-ref="([^"]+)"', picture))
    assert drawn_frames == {f["frame_id"] for f in frames}
    assert {key for f in frames for _, key in f["arms"]} & drawn_anchors
    arms = set(re.findall(r'<line class="arm" data-source="([^"]+)" data-target="([^"]+)"', picture))
    cites = set(re.findall(r'<line class="cites" data-source="([^"]+)" data-target="([^"]+)"', picture))
    frame = world.frame
    assert {(frame["frame_id"], key) for _, key in frame["arms"] if key in drawn_anchors} <= arms
    assert {(frame["frame_id"], row) for row in frame["citations"]} <= cites
    assert set(frame["citations"]) <= drawn_rows
