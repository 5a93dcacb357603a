"""Subjects: the list, the memory browser (rows by store, graph anchors and frames with the rows
they cite), consent (registry, history, changes) and erasure of one subject."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect

from apps.consent import selectors as consent_selectors
from apps.consent import services as consent_services
from apps.consent.purposes import PURPOSES
from apps.console.forms import ConsentForm, SubjectEraseForm
from apps.console.selectors import (
    MEMORY_TYPES,
    subject_by_id,
    subject_graph_picture,
    subject_memory_counts,
    subject_memory_rows,
    subject_search,
)
from apps.console.views.base import OrganizationView
from apps.erasure import services as erasure_services
from apps.erasure.selectors import erasure_request_list, subject_export
from apps.graph import selectors as graph_selectors
from apps.platform.errors import ValidationFailed
from apps.tenancy.models import Subject

GRAPH_PAGE = 50


class SubjectListView(OrganizationView):
    template_name = "console/subjects.html"
    section = "subjects"

    def get(self, request: HttpRequest) -> HttpResponse:
        query = request.GET.get("q", "").strip()[:200]
        return self.page(request, {"subjects": list(subject_search(query=query)), "q": query})


class SubjectMemoryView(OrganizationView):
    """Reading a subject's evidence is audited like the API's reads."""

    template_name = "console/subject_memory.html"
    section = "subjects"
    audit_actions = {"GET": "console.memory.read"}

    def get(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        memory_type = request.GET.get("type", "episodic")
        if memory_type not in MEMORY_TYPES:
            raise ValidationFailed(f"type must be one of {list(MEMORY_TYPES)}.")
        rows = subject_memory_rows(subject=subject, memory_type=memory_type)
        self.audit_subject_id = subject.id
        context = {
            "subject": subject,
            "memory_type": memory_type,
            "memory_types": MEMORY_TYPES,
            "counts": subject_memory_counts(subject=subject),
            "rows": rows,
            "superseded": {row.supersedes_id for row in rows if row.supersedes_id},
        }
        return self.page(request, context)


class SubjectGraphView(OrganizationView):
    template_name = "console/subject_graph.html"
    section = "subjects"
    audit_actions = {"GET": "console.graph.read"}

    def get(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        anchor_key = request.GET.get("anchor") or None
        anchors, _ = graph_selectors.anchors_list(subject=subject, after="", limit=GRAPH_PAGE)
        frames, more = graph_selectors.frames_list(subject=subject, after="", limit=GRAPH_PAGE, anchor_key=anchor_key)
        self.audit_subject_id = subject.id
        context = {
            "subject": subject,
            "anchors": anchors,
            "frames": frames,
            "anchor_key": anchor_key,
            "picture": subject_graph_picture(subject=subject, anchors=anchors, frames=frames),
            "more_frames": more is not None,
        }
        return self.page(request, context)


class FrameDetailView(OrganizationView):
    template_name = "console/frame.html"
    section = "subjects"
    audit_actions = {"GET": "console.graph.read"}

    def get(self, request: HttpRequest, subject_id: uuid.UUID, frame_id: str) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        frame, rows = graph_selectors.frame_get(subject=subject, frame_id=frame_id)
        self.audit_subject_id, self.audit_targets = subject.id, [frame_id]
        return self.page(request, {"subject": subject, "frame": frame, "rows": rows})


class ConsentRegistryView(OrganizationView):
    template_name = "console/consent_registry.html"
    section = "consent"

    def get(self, request: HttpRequest) -> HttpResponse:
        query = request.GET.get("q", "").strip()[:200]
        subjects: list[Subject] = list(subject_search(query=query))
        registry = [(s, consent_selectors.consent_state(subject=s)) for s in subjects]
        return self.page(request, {"registry": registry, "purposes": list(PURPOSES), "q": query})


class SubjectConsentView(OrganizationView):
    template_name = "console/subject_consent.html"
    section = "consent"
    audit_actions = {"POST": "console.consent.update"}

    def _page(self, request: HttpRequest, subject: Subject, form: ConsentForm, *, status: int = 200) -> HttpResponse:
        context = {
            "subject": subject,
            "form": form,
            "states": consent_selectors.consent_state(subject=subject),
            "history": consent_selectors.consent_history(subject=subject),
            "purposes": PURPOSES,
        }
        return self.page(request, context, status=status)

    def get(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        states = consent_selectors.consent_state(subject=subject)
        return self._page(request, subject, ConsentForm(initial={name: s.granted for name, s in states.items()}))

    def post(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        form = ConsentForm(request.POST)
        if not form.is_valid():
            return self._page(request, subject, form, status=400)
        change = consent_services.consent_update(subject=subject, changes=dict(form.cleaned_data))
        self.audit_subject_id = subject.id
        self.audit_targets = [str(record.id) for record in change.records]
        if change.erasure_request is not None:
            self.audit_targets.append(str(change.erasure_request.id))
        changed = ", ".join(f"{r.purpose}={'granted' if r.granted else 'withdrawn'}" for r in change.records)
        messages.success(request, f"Consent changed: {changed}." if changed else "Nothing changed.")
        return redirect("console:subject-consent", org_id=self.organization_id, subject_id=subject.id)


class SubjectEraseView(OrganizationView):
    template_name = "console/subject_erase.html"
    section = "subjects"
    audit_actions = {"POST": "console.subject.erase"}

    def get(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        form = SubjectEraseForm(external_id=subject.external_id)
        requests = list(erasure_request_list(subject_id=subject.id))
        return self.page(request, {"subject": subject, "form": form, "requests": requests})

    def post(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        form = SubjectEraseForm(request.POST, external_id=subject.external_id)
        if not form.is_valid():
            return self.page(request, {"subject": subject, "form": form, "requests": []}, status=400)
        erasure = erasure_services.subject_erase_request(
            organization_id=self.organization_id, external_id=subject.external_id
        )
        self.audit_subject_id, self.audit_targets = subject.id, [str(erasure.request.id)]
        messages.success(request, f"Erasure of {subject.external_id} requested.")
        return redirect("console:erasure-detail", org_id=self.organization_id, request_id=erasure.request.id)


class SubjectExportView(OrganizationView):
    """Everything stored about the subject, for an access request: vault values and uploaded
    documents' bytes are left out (captions only), as for an API key without ``vault:read``."""

    audit_actions = {"GET": "console.subject.export"}

    def get(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        export = subject_export(subject=subject, include_secrets=False)
        self.audit_subject_id = subject.id
        response = JsonResponse(export.data, encoder=DjangoJSONEncoder, json_dumps_params={"indent": 2})
        response["Content-Disposition"] = f'attachment; filename="subject-{subject.id}.json"'
        return response
