from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "apps.graph"
    label = "graph"
    verbose_name = "Provenance hypergraph"

    def ready(self) -> None:
        from apps.graph.adapter import organization_graph_hooks
        from apps.tenancy.lifecycle import organization_hooks_register

        organization_hooks_register(organization_graph_hooks)
