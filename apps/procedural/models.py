"""Verified procedural memory: task sessions, SCECs, experiences, versioned skills with their
citations, SEDM admissions and their replays, retrievals, feedback, and the event log of every
weight change (see docs/adr/0012-verified-procedural-memory.md).

Skills are not rows of the Procedural store (``memory.ProceduralItem``): those are how-tos a
writer extracted from what a subject said, immutable evidence. A skill is learned and mutable
by design — versioned, weighted, demoted, merged, archived — so it lives here with its history.
"""

from __future__ import annotations

import uuid

from django.db import models
from pgvector.django import VectorField

from apps.tenancy.models import Subject, TenantModel


class TaskSession(TenantModel):
    class Status(models.TextChoices):
        PENDING = "pending"  # waiting for procedural AutoDream
        DISTILLED = "distilled"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    task = models.TextField()
    domain = models.CharField(max_length=100)
    steps = models.JSONField()  # [{kind, content, tool}]
    final_output = models.TextField()
    claimed_outcome = models.CharField(max_length=16, blank=True, default="")
    outcome = models.CharField(max_length=16, blank=True, default="")  # the distiller's judgement
    outcome_quote = models.TextField(blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "procedural_session"
        indexes = [models.Index(fields=["organization", "subject", "status", "created_at"], name="psession_pending")]


class Scec(TenantModel):
    """A self-contained execution context: immutable, addressed by its content hash. Packages
    above ``PROCEDURAL_SCEC_INLINE_BYTES`` live in object storage, the row keeps the key."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    session = models.OneToOneField(TaskSession, on_delete=models.CASCADE, related_name="scec")
    content_hash = models.CharField(max_length=64)
    reward_spec = models.JSONField()
    package = models.JSONField(null=True, blank=True)  # inline when small
    object_key = models.CharField(max_length=500, blank=True, default="")
    size_bytes = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "procedural_scec"


class Experience(TenantModel):
    class Kind(models.TextChoices):
        LESSON = "lesson"
        MISTAKE = "mistake"

    class Curation(models.TextChoices):
        PENDING = "pending"
        USED = "used"  # cited by a skill
        COVERED = "covered"
        NOT_WORTH = "not_worth"
        DEFERRED = "deferred"

    class Verification(models.TextChoices):
        UNVERIFIED = "unverified"  # no SCEC (or none replayable): neutral prior
        VERIFYING = "verifying"
        ADMITTED = "admitted"
        REJECTED = "rejected"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(TaskSession, on_delete=models.CASCADE, related_name="experiences")
    domain = models.CharField(max_length=100)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    text = models.TextField()
    quote = models.TextField()
    curation = models.CharField(max_length=16, choices=Curation.choices, default=Curation.PENDING)
    verification = models.CharField(max_length=16, choices=Verification.choices)
    weight = models.FloatField()  # w0 when admitted, the neutral prior when unverified
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "procedural_experience"
        indexes = [models.Index(fields=["organization", "subject", "curation"], name="pexp_curation")]


class Skill(TenantModel):
    class Form(models.TextChoices):
        SPECIFIC = "specific"
        GENERAL = "general"

    class Status(models.TextChoices):
        ACTIVE = "active"
        DEMOTED = "demoted"  # consistently harmful; still retrievable at its lowered weight
        ARCHIVED = "archived"
        MERGED = "merged"  # archived into ``merged_into``
        DELETED = "deleted"  # by the curator

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=300)
    domain = models.CharField(max_length=100)
    text = models.TextField()  # the current version's text
    version = models.PositiveIntegerField(default=1)
    form = models.CharField(max_length=16, choices=Form.choices, default=Form.SPECIFIC)
    general_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    verified = models.BooleanField()  # its weight rests on A/B replay, not the neutral prior
    weight = models.FloatField()
    negative_streak = models.PositiveIntegerField(default=0)
    uses = models.PositiveIntegerField(default=0)
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "procedural_skill"
        indexes = [models.Index(fields=["organization", "subject", "status"], name="pskill_status")]


class SkillVersion(TenantModel):
    """One version of a skill. A curator's edit is a candidate first: with an SCEC of the
    subject it is A/B-replayed (``verification`` verifying → admitted, or rejected and never
    the skill's text); without one it is applied unverified at the neutral prior."""

    class Verification(models.TextChoices):
        NOT_A_CANDIDATE = ""  # create, merge, abstract: rests on what it cites or derives from
        UNVERIFIED = "unverified"
        VERIFYING = "verifying"
        ADMITTED = "admitted"
        REJECTED = "rejected"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    name = models.CharField(max_length=300)
    text = models.TextField()
    change = models.CharField(max_length=16)  # create | edit | merge | abstract | delete
    verification = models.CharField(max_length=16, choices=Verification.choices, blank=True, default="")
    job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "procedural_skill_version"
        constraints = [models.UniqueConstraint(fields=["skill", "version"], name="pskill_version_unique")]


class SkillCitation(TenantModel):
    """An experience a skill version rests on, with the text it added (verified to be in it)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    skill_version = models.ForeignKey(SkillVersion, on_delete=models.CASCADE, related_name="citations")
    experience = models.ForeignKey(Experience, on_delete=models.CASCADE, related_name="+")
    quote = models.TextField()

    class Meta:
        db_table = "procedural_skill_citation"
        constraints = [
            models.UniqueConstraint(fields=["skill_version", "experience"], name="pcitation_unique"),
        ]


class SkillEvent(TenantModel):
    """One change of a skill's weight or status: numbered per skill, reversible by a later
    event that restores ``previous_*``."""

    class Kind(models.TextChoices):
        ADMITTED = "admitted"
        WEIGHT_CHANGED = "weight_changed"
        DEMOTED = "demoted"
        ARCHIVED = "archived"
        MERGED = "merged"
        REVERTED = "reverted"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="events")
    sequence = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    previous_weight = models.FloatField()
    weight = models.FloatField()
    previous_status = models.CharField(max_length=16)
    status = models.CharField(max_length=16)
    details = models.JSONField(default=dict)  # ids and numbers: Ū, f_use, merged ids, reverted event
    reverted_by = models.OneToOneField("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "procedural_skill_event"
        constraints = [models.UniqueConstraint(fields=["skill", "sequence"], name="pskill_event_sequence")]


class Admission(TenantModel):
    """SEDM admission of one candidate by A/B replay inside an SCEC: an experience, or a
    curator's skill edit (a candidate ``SkillVersion``) — exactly one of the two."""

    class Status(models.TextChoices):
        RUNNING = "running"
        ADMITTED = "admitted"
        REJECTED = "rejected"
        UNVERIFIABLE = "unverifiable"  # the provider could not replay the SCEC

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    experience = models.OneToOneField(
        Experience, null=True, blank=True, on_delete=models.CASCADE, related_name="admission"
    )
    skill_version = models.OneToOneField(
        SkillVersion, null=True, blank=True, on_delete=models.CASCADE, related_name="admission"
    )
    scec = models.ForeignKey(Scec, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    runs_per_arm = models.PositiveIntegerField()
    replays_total = models.PositiveIntegerField()
    replays_done = models.PositiveIntegerField(default=0)
    lambda_latency = models.FloatField()
    lambda_tokens = models.FloatField()
    eta = models.FloatField()
    delta_reward = models.FloatField(null=True)
    delta_latency = models.FloatField(null=True)
    delta_tokens = models.FloatField(null=True)
    score = models.FloatField(null=True)
    initial_weight = models.FloatField(null=True)
    item_hash = models.CharField(max_length=64)
    provider_version = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "procedural_admission"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(experience__isnull=False, skill_version__isnull=True)
                | models.Q(experience__isnull=True, skill_version__isnull=False),
                name="padmission_one_candidate",
            )
        ]

    @property
    def item_text(self) -> str:
        """The candidate's text: the B arm's memory."""
        if self.experience is not None:
            return self.experience.text
        assert self.skill_version is not None  # the check constraint: exactly one candidate
        return self.skill_version.text

    @property
    def domain(self) -> str:
        if self.experience is not None:
            return self.experience.domain
        assert self.skill_version is not None
        return self.skill_version.skill.domain


class Replay(TenantModel):
    """One arm of one paired run; its job is the replay's job record."""

    class Arm(models.TextChoices):
        WITHOUT = "A"
        WITH_ITEM = "B"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    admission = models.ForeignKey(Admission, on_delete=models.CASCADE, related_name="replays")
    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="+")
    arm = models.CharField(max_length=1, choices=Arm.choices)
    run = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    reward = models.FloatField(null=True)
    latency_seconds = models.FloatField(null=True)
    tokens = models.PositiveIntegerField(null=True)
    output_hash = models.CharField(max_length=64, blank=True, default="")
    fingerprint = models.CharField(max_length=64, blank=True, default="")  # hash of prompt inputs + config
    model = models.CharField(max_length=200, blank=True, default="")
    error = models.CharField(max_length=200, blank=True, default="")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "procedural_replay"
        constraints = [models.UniqueConstraint(fields=["admission", "arm", "run"], name="preplay_unique")]


class Retrieval(TenantModel):
    """One procedural retrieval: what was returned, at which weights (feedback names it)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    domain = models.CharField(max_length=100, blank=True, default="")
    items = models.JSONField()  # [{skill_id, similarity, weight, score}]
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "procedural_retrieval"


class Feedback(TenantModel):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    retrieval = models.ForeignKey(Retrieval, on_delete=models.CASCADE, related_name="feedback")
    items_used = models.JSONField()  # skill ids
    reward = models.FloatField()
    latency_ms = models.PositiveIntegerField()
    tokens = models.PositiveIntegerField()
    applied = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "procedural_feedback"
        indexes = [models.Index(fields=["organization", "applied", "created_at"], name="pfeedback_pending")]
