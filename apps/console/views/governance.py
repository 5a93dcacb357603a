"""The audit log (entries with filters, chain status), erasure requests and receipts, jobs."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from apps.audit.selectors import audit_chain_status
from apps.console.forms import AuditFilterForm, JobFilterForm
from apps.console.selectors import audit_entry_search, audit_rows, failed_index_rows, job_list
from apps.console.views.base import OrganizationView
from apps.console.views.organizations import receipt_context, receipt_download
from apps.erasure.selectors import erasure_request_get, erasure_request_list
from apps.graph.services import index_retry_failed
from apps.jobs.models import Job
from apps.jobs.selectors import job_get
from apps.jobs.services import WRITE_JOB_KIND
from apps.platform.errors import Conflict
from apps.tenancy.models import Subject

# A write's job (ADR 0054) and a re-indexing job: both end failed when rows fail to index.
INDEXING_JOB_KINDS = frozenset({"memory.index", WRITE_JOB_KIND})


def _subject_id(value: str) -> uuid.UUID | None:
    """A subject by external id, or by id (an erased subject is known only by its id)."""
    subject = Subject.objects.filter(external_id=value).first()
    if subject is not None:
        return subject.id
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


class AuditLogView(OrganizationView):
    template_name = "console/audit.html"
    section = "audit"

    def get(self, request: HttpRequest) -> HttpResponse:
        form = AuditFilterForm(request.GET or None)
        filters: dict[str, object] = {}
        if form.is_bound:
            if not form.is_valid():
                return self.page(request, {"form": form, "entries": []}, status=400)
            data = form.cleaned_data
            if data["subject"]:
                subject_id = _subject_id(data["subject"])
                if subject_id is None:
                    form.add_error("subject", "No subject with that external id or id.")
                    return self.page(request, {"form": form, "entries": []}, status=400)
                filters["subject_id"] = subject_id
            filters.update(action=data["action"], since=data["since"], until=data["until"])
        entries = audit_entry_search(organization_id=self.organization_id, **filters)  # type: ignore[arg-type]
        return self.page(request, {"form": form, "entries": audit_rows(entries=entries)})


class AuditChainView(OrganizationView):
    template_name = "console/audit_chain.html"
    section = "audit"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, {"status": audit_chain_status(organization_id=self.organization_id)})


class ErasureListView(OrganizationView):
    template_name = "console/erasures.html"
    section = "erasure"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, {"requests": list(erasure_request_list()[:100])})


class ErasureDetailView(OrganizationView):
    template_name = "console/receipt.html"
    section = "erasure"

    def get(self, request: HttpRequest, request_id: uuid.UUID) -> HttpResponse:
        context = receipt_context(erasure_request_get(erasure_request_id=request_id))
        return self.page(request, {**context, "download_url_name": "console:erasure-receipt"})


class ErasureReceiptView(OrganizationView):
    """The receipt, signed, as a file to keep or hand on."""

    def get(self, request: HttpRequest, request_id: uuid.UUID) -> HttpResponse:
        return receipt_download(erasure_request_get(erasure_request_id=request_id))


class JobListView(OrganizationView):
    template_name = "console/jobs.html"
    section = "jobs"

    def get(self, request: HttpRequest) -> HttpResponse:
        form = JobFilterForm(request.GET or None)
        filters = form.cleaned_data if form.is_valid() else {}
        context = {"form": form, "jobs": job_list(**filters), "failed_rows": failed_index_rows()}
        return self.page(request, context)


class IndexingRetryView(OrganizationView):
    """Every failed indexing row of the organization, or of one job's subject, gets a new round."""

    audit_actions = {"POST": "console.indexing.retry"}

    def post(self, request: HttpRequest) -> HttpResponse:
        job_ids = index_retry_failed(organization_id=self.organization_id)
        self.audit_targets = [str(job_id) for job_id in job_ids]
        messages.success(request, f"Queued {len(job_ids)} indexing jobs for the failed rows.")
        return redirect("console:jobs", org_id=self.organization_id)


class JobRetryView(OrganizationView):
    audit_actions = {"POST": "console.job.retry"}

    def post(self, request: HttpRequest, job_id: uuid.UUID) -> HttpResponse:
        job = job_get(job_id=job_id)
        if job.kind not in INDEXING_JOB_KINDS or job.status != Job.Status.FAILED:
            raise Conflict("Only failed indexing jobs can be retried from the console.")
        job_ids = index_retry_failed(organization_id=self.organization_id, subject_id=job.subject_id)
        self.audit_subject_id = job.subject_id
        self.audit_targets = [str(job.id), *(str(j) for j in job_ids)]
        messages.success(request, f"Queued {len(job_ids)} indexing jobs for the failed rows of this subject.")
        return redirect("console:jobs", org_id=self.organization_id)
