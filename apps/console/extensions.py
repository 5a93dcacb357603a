"""The console's navigation: an organization's sections, and the extension point for pages
added later. A new page is a view subclassing ``OrganizationView`` (access, scope and audit
come with it) routed in ``apps/console/urls.py`` under ``orgs/<org_id>/`` — the
cross-organization test iterates those patterns, so it is covered at once — plus, for a
top-level page, a ``Section`` in ``SECTIONS`` with its URL name (taking only ``org_id``); for a
subject's page, a ``SubjectTab`` in ``SUBJECT_TABS``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    key: str  # the ``section`` a view declares, to mark it current
    title: str
    url_name: str


SECTIONS: list[Section] = [
    Section("overview", "Overview", "console:organization"),
    Section("keys", "API keys", "console:api-keys"),
    Section("subjects", "Subjects", "console:subjects"),
    Section("consent", "Consent", "console:consent"),
    Section("audit", "Audit log", "console:audit"),
    Section("erasure", "Erasure", "console:erasures"),
    Section("jobs", "Jobs", "console:jobs"),
    Section("webhooks", "Webhooks", "console:webhooks"),
]


@dataclass(frozen=True)
class SubjectTab:
    key: str
    title: str
    url_name: str  # a console URL taking ``org_id`` and ``subject_id``


SUBJECT_TABS: list[SubjectTab] = [
    SubjectTab("memory", "Memory", "console:subject"),
    SubjectTab("graph", "Graph", "console:subject-graph"),
    SubjectTab("skills", "Skills", "console:subject-skills"),
    SubjectTab("dream", "Dream merges", "console:subject-dream-merges"),
    SubjectTab("consent", "Consent", "console:subject-consent"),
    SubjectTab("erase", "Erasure", "console:subject-erase"),
]
