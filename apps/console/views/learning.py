"""What the product learned about a subject: procedural skills with their versions and the
experiences each version cites, and semantic dream merges with undo."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from apps.console.selectors import subject_by_id
from apps.console.views.base import OrganizationView
from apps.dream.selectors import dream_merges_list
from apps.dream.services import dream_merge_undo
from apps.procedural.selectors import skill_list, skill_versions

MERGE_PAGE = 100


class SubjectSkillsView(OrganizationView):
    template_name = "console/subject_skills.html"
    section = "subjects"

    def get(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        skills = [(skill, skill_versions(skill=skill)) for skill in skill_list(subject=subject, include_archived=True)]
        return self.page(request, {"subject": subject, "skills": skills})


class SubjectDreamMergesView(OrganizationView):
    template_name = "console/subject_dream_merges.html"
    section = "subjects"

    def get(self, request: HttpRequest, subject_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        merges = list(dream_merges_list(subject=subject, limit=MERGE_PAGE))
        return self.page(request, {"subject": subject, "merges": merges})


class DreamMergeUndoView(OrganizationView):
    audit_actions = {"POST": "console.dream_merge.undo"}

    def post(self, request: HttpRequest, subject_id: uuid.UUID, merge_id: uuid.UUID) -> HttpResponse:
        subject = subject_by_id(subject_id=subject_id)
        merge = dream_merge_undo(subject=subject, merge_id=merge_id)
        self.audit_subject_id, self.audit_targets = subject.id, [str(merge.id)]
        messages.success(request, f"Merge of {merge.source_name} into {merge.target_name} undone.")
        return redirect("console:subject-dream-merges", org_id=self.organization_id, subject_id=subject.id)
