from __future__ import annotations

import pytest
from django.db import connections

from apps.graph import adapter
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant

CREATE_ANCHOR = "CREATE (a:Anchor {subject_id: $subject_id, key: $key, name: $name}) RETURN a"
NAMES = "MATCH (a:Anchor) WHERE a.subject_id = $subject_id RETURN a.name"


def test_injection_payload_is_stored_verbatim_and_never_executed() -> None:
    tenant = make_tenant()
    payload = "x'}) RETURN 1 $$) AS (a agtype); DROP TABLE tenancy_subject; -- \" $x \\ ::vertex"
    with organization_scope(tenant.id):
        adapter.cypher(
            organization_id=tenant.id,
            query=CREATE_ANCHOR,
            params={"subject_id": "s1", "key": "k", "name": payload},
            returns=["a"],
        )
        rows = adapter.cypher(organization_id=tenant.id, query=NAMES, params={"subject_id": "s1"}, returns=["name"])
    assert rows == [(payload,)]
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT to_regclass('public.tenancy_subject')")
        assert cursor.fetchone() == ("tenancy_subject",)


def test_organization_a_cannot_reach_bs_graph() -> None:
    a, b = make_tenant(), make_tenant()
    with organization_scope(b.id):
        adapter.cypher(
            organization_id=b.id,
            query=CREATE_ANCHOR,
            params={"subject_id": "s", "key": "secret", "name": "B's secret"},
            returns=["a"],
        )
    with organization_scope(a.id):
        with pytest.raises(adapter.CrossTenantGraphAccess):
            adapter.cypher(organization_id=b.id, query=NAMES, params={"subject_id": "s"}, returns=["name"])
        assert adapter.cypher(organization_id=a.id, query=NAMES, params={"subject_id": "s"}, returns=["name"]) == []


def test_graph_calls_require_a_scope_and_constant_text() -> None:
    tenant = make_tenant()
    with pytest.raises(Exception, match="organization"):
        adapter.cypher(organization_id=tenant.id, query=NAMES, params={"subject_id": "s"}, returns=["name"])
    with organization_scope(tenant.id):
        with pytest.raises(ValueError):
            adapter.cypher(organization_id=tenant.id, query="RETURN 1 $$", params={}, returns=["x"])
        with pytest.raises(ValueError):
            adapter.cypher(organization_id=tenant.id, query=NAMES, params={}, returns=["bad name"])


def test_identity_index_rejects_a_duplicate_anchor() -> None:
    tenant = make_tenant()
    params = {"subject_id": "s", "key": "same", "name": "one"}
    with organization_scope(tenant.id):
        adapter.cypher(organization_id=tenant.id, query=CREATE_ANCHOR, params=params, returns=["a"])
    with pytest.raises(Exception, match="duplicate key"), organization_scope(tenant.id):
        adapter.cypher(organization_id=tenant.id, query=CREATE_ANCHOR, params=params, returns=["a"])


def test_offboarding_drops_the_graph_and_rows() -> None:
    from apps.tenancy.models import Organization, Subject
    from apps.tenancy.services import organization_offboard

    tenant = make_tenant()
    tenant.subject("gone")
    graph = tenant.graph()
    assert adapter.graph_exists(graph, using="owner")
    organization_offboard(organization_id=tenant.id)
    assert not adapter.graph_exists(graph, using="owner")
    assert not Organization.objects.dangerously_across_organizations().filter(id=tenant.id).exists()
    assert not Subject.objects.dangerously_across_organizations().filter(organization_id=tenant.id).exists()


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"id": 1, "label": "Anchor", "properties": {"name": "a::vertex"}}::vertex',
            {"id": 1, "label": "Anchor", "properties": {"name": "a::vertex"}},
        ),
        ('"quote \\" ::edge"', 'quote " ::edge'),
        ("3", 3),
        (None, None),
    ],
)
def test_decode_agtype_strips_type_suffixes_outside_strings(text: str | None, expected: object) -> None:
    assert adapter.decode_agtype(text) == expected
