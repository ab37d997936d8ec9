"""Documents and their immutable versions and paragraphs; evidence bundles and the
validation reports that judged them."""

from __future__ import annotations

from typing import Any

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from coordinates.models import Zone
from maria import triggers

EMBEDDING_DIM = 384  # every configured embedder must produce this many dimensions


class DocumentKind(models.TextChoices):
    POLICY = "policy", _("Policy")
    CONTRACT = "contract", _("Contract")
    REPORT = "report", _("Report")
    MINUTES = "minutes", _("Minutes")
    MEMO = "memo", _("Memo")
    EMAIL = "email", _("Email")


class DocumentStatus(models.TextChoices):
    APPROVED = "approved", _("Approved")
    DRAFT = "draft", _("Draft")
    ARCHIVED = "archived", _("Archived")


class Document(models.Model):
    """A named document of a zone; its content lives in versions."""

    zone = models.ForeignKey(Zone, on_delete=models.PROTECT, related_name="documents")
    key = models.CharField(max_length=200)  # stable name within the zone (file name, slug)
    title = models.CharField(max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["zone_id", "key"]
        constraints = [
            models.UniqueConstraint(fields=["zone", "key"], name="document_key_unique_in_zone")
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.zone.coordinate})"


class DocumentVersion(models.Model):
    """One immutable text of a document. A newer version supersedes it; it stays citable."""

    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="versions")
    version = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    kind = models.CharField(max_length=16, choices=DocumentKind.choices)
    status = models.CharField(max_length=16, choices=DocumentStatus.choices)
    effective_date = models.DateField(null=True, blank=True)
    format = models.CharField(max_length=16)
    text = models.TextField()
    content_hash = models.CharField(max_length=64)
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    superseded_at = models.DateTimeField(null=True, blank=True)  # set once, when replaced
    embedded_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["document", "version"], name="document_version_unique"),
            models.CheckConstraint(
                condition=models.Q(version__gte=1), name="document_version_gte_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.document.key} v{self.version}"

    @property
    def is_superseded(self) -> bool:
        return self.superseded_at is not None


class Paragraph(models.Model):
    """A paragraph of one version: an exact slice text == version.text[start:end].

    Zone and currency are copied here from the version so that retrieval filters one table
    (and, on PostgreSQL, one HNSW index scan) instead of joining three.
    """

    version = models.ForeignKey(
        DocumentVersion, on_delete=models.PROTECT, related_name="paragraphs"
    )
    number = models.PositiveIntegerField()  # 1-based, reading order within the version
    section = models.CharField(max_length=200, blank=True)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()
    text_hash = models.CharField(max_length=64)
    zone = models.CharField(max_length=64, db_index=True)
    current = models.BooleanField(default=True)
    embedder = models.CharField(max_length=120, blank=True)
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)

    class Meta:
        ordering = ["version_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["version", "number"], name="paragraph_number_unique"),
            models.CheckConstraint(
                condition=models.Q(end__gt=models.F("start")), name="paragraph_not_empty"
            ),
        ]
        indexes = [models.Index(fields=["current", "zone"], name="paragraph_current_zone")]

    def __str__(self) -> str:
        return f"{self.version} ¶{self.number}"


class CorpusState(models.Model):
    """One row: a counter bumped whenever paragraphs or embeddings change, so that every
    process can tell with one cheap read whether its in-memory indexes are stale."""

    generation = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"corpus generation {self.generation}"


class EvidenceBundle(models.Model):
    """Claims and their citations exactly as submitted; immutable and content-hashed."""

    content_hash = models.CharField(max_length=64, db_index=True)
    zone = models.CharField(max_length=64)
    claims = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"bundle {self.content_hash[:12]}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ValueError("an evidence bundle is immutable")
        super().save(*args, **kwargs)


class ValidationReport(models.Model):
    """Every number the engine computed about one bundle under one policy; immutable."""

    bundle = models.ForeignKey(EvidenceBundle, on_delete=models.PROTECT, related_name="reports")
    policy_label = models.CharField(max_length=400)
    policy = models.JSONField()  # the effective values used
    sufficiency = models.FloatField()
    completeness = models.FloatField()
    cohesion = models.FloatField()
    mode = models.CharField(max_length=16)
    gate = models.CharField(max_length=16)
    body = models.JSONField()  # per claim, per item: signals, verdicts, reasons, dropped items
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"report {self.pk} ({self.gate})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ValueError("a validation report is immutable")
        super().save(*args, **kwargs)


class KnowledgeConflict(models.Model):
    """Two paragraphs of the knowledge base that disagree (evidence.conflicts): work for the
    zone's admins until one of them says which governs. An answer citing either side of an
    open hard or temporal conflict goes to a person (evidence.validation)."""

    class Kind(models.TextChoices):
        HARD = "hard", _("Hard: the values disagree")
        SOFT = "soft", _("Soft: scope or wording differs")
        TEMPORAL = "temporal", _("Temporal: a later version says otherwise")

    class Resolution(models.TextChoices):
        FIRST = "first", _("The first paragraph governs")
        SECOND = "second", _("The second paragraph governs")
        NEW_VERSION = "new_version", _("A new version resolves it")
        NO_CONFLICT = "no_conflict", _("Not a conflict")

    zone = models.CharField(max_length=64)  # the zone whose admins resolve it
    kind = models.CharField(max_length=16, choices=Kind.choices)
    first = models.ForeignKey(Paragraph, on_delete=models.PROTECT, related_name="+")
    second = models.ForeignKey(Paragraph, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField()
    words = models.JSONField(default=list)  # the words that disagree, marked on the page
    found_by = models.CharField(max_length=16)  # "ingest", "nightly" or "validation"
    created_at = models.DateTimeField(auto_now_add=True)
    resolution = models.CharField(max_length=16, choices=Resolution.choices, blank=True)
    resolution_reason = models.TextField(blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["first", "second"], name="conflict_pair_once")
        ]
        indexes = [models.Index(fields=["zone", "resolved_at"], name="conflict_zone_open")]

    def __str__(self) -> str:
        return f"{self.kind} conflict {self.pk} in {self.zone}"

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


class ZoneCalibration(models.Model):
    """One fitted recalibration of the claim verifier for a zone (evidence.calibration),
    versioned like a zone policy (coordinates.ZonePolicyVersion). It judges nothing until a
    zone admin adopts it; adopting retires the one adopted before. What it was fitted on and
    how it did on the zone's held-back verdicts stay with it."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", _("Proposed")
        ADOPTED = "adopted", _("Adopted")
        RETIRED = "retired", _("Retired")

    zone = models.ForeignKey(Zone, on_delete=models.PROTECT, related_name="calibrations")
    version = models.PositiveIntegerField()
    method = models.CharField(max_length=32)
    params = models.JSONField()
    verdicts = models.PositiveIntegerField()  # how many verdicts it was fitted on
    window_from = models.DateTimeField()  # the first and last verdict it learned from
    window_until = models.DateTimeField()
    fitted_by = models.CharField(max_length=150)  # "manage.py calibrate", "weekly job", a user
    # evidence.calibration.Reliability.as_dict() on the held-back verdicts: the global
    # probability (before) and this calibration's (after).
    reliability_before = models.JSONField()
    reliability_after = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    adopted_at = models.DateTimeField(null=True, blank=True)
    adopted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    adopt_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["zone_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["zone", "version"], name="calibration_version_unique"),
            models.CheckConstraint(
                condition=models.Q(version__gte=1), name="calibration_version_gte_1"
            ),
            # At most one calibration judges a zone's answers at a time.
            models.UniqueConstraint(
                fields=["zone"],
                condition=models.Q(status="adopted"),
                name="calibration_one_adopted",
            ),
        ]

    def __str__(self) -> str:
        return f"calibration {self.zone.coordinate}@{self.version} ({self.status})"


# --- database protection ------------------------------------------------------------------
#
# What a report judged must stay what it judged (docs/architecture.md, "The trail"): bundles
# and reports never change and are never deleted; a version and its paragraphs keep their
# text, hashes, place and zone, and change only where the store moves them on: a version is
# superseded once and embedded, a paragraph stops being current once and gets (new)
# embeddings. A document keeps its zone and key. PostgreSQL: compiled by django-pgtrigger and
# installed by migration 0010 (registered here, not in Meta.triggers, like the trail's);
# SQLite: the twins in that migration. `manage.py verify_trail` re-hashes what bypasses them.

_VERSION_FIXED = (
    "document_id",
    "version",
    "title",
    "kind",
    "status",
    "effective_date",
    "format",
    "text",
    "content_hash",
    "supersedes_id",
    "created_by_id",
    "created_at",
)
_PARAGRAPH_FIXED = ("version_id", "number", "section", "start", "end", "text", "text_hash", "zone")
_DOCUMENT_FIXED = ("zone_id", "key", "created_at")


def _changed(fields: tuple[str, ...]) -> pgtrigger.Q:
    condition = pgtrigger.Q()
    for name in fields:
        condition |= pgtrigger.Q(**{f"old__{name}__df": pgtrigger.F(f"new__{name}")})
    return condition


BUNDLE_TRIGGERS = (
    pgtrigger.Protect(name="bundle_append_only", operation=pgtrigger.Update | pgtrigger.Delete),
)
REPORT_TRIGGERS = (
    pgtrigger.Protect(name="report_append_only", operation=pgtrigger.Update | pgtrigger.Delete),
)
VERSION_TRIGGERS = (
    pgtrigger.Protect(name="version_no_delete", operation=pgtrigger.Delete),
    pgtrigger.Protect(
        name="version_fixed",
        operation=pgtrigger.Update,
        condition=_changed(_VERSION_FIXED)
        | pgtrigger.Q(
            old__superseded_at__isnull=False,
            old__superseded_at__df=pgtrigger.F("new__superseded_at"),
        ),
    ),
)
PARAGRAPH_TRIGGERS = (
    pgtrigger.Protect(name="paragraph_no_delete", operation=pgtrigger.Delete),
    pgtrigger.Protect(
        name="paragraph_fixed",
        operation=pgtrigger.Update,
        condition=_changed(_PARAGRAPH_FIXED) | pgtrigger.Q(old__current=False, new__current=True),
    ),
)
DOCUMENT_TRIGGERS = (
    pgtrigger.Protect(name="document_no_delete", operation=pgtrigger.Delete),
    pgtrigger.Protect(
        name="document_fixed", operation=pgtrigger.Update, condition=_changed(_DOCUMENT_FIXED)
    ),
)

pgtrigger.register(*BUNDLE_TRIGGERS)(EvidenceBundle)
pgtrigger.register(*REPORT_TRIGGERS)(ValidationReport)
pgtrigger.register(*VERSION_TRIGGERS)(DocumentVersion)
pgtrigger.register(*PARAGRAPH_TRIGGERS)(Paragraph)
pgtrigger.register(*DOCUMENT_TRIGGERS)(Document)


# Every governance row is append-only or on the chain (docs/architecture.md): a calibration
# keeps what it was fitted on and how it did, and a conflict what it is about; a
# calibration's status and a conflict's resolution change only with an event on the zone's
# chain that `verify_trail` replays (audit.rows), and a resolved conflict stays resolved.
# None is deleted, and no evidence table may be truncated. PostgreSQL: compiled by
# django-pgtrigger and installed by migration 0013; SQLite: the twins in that migration.

_CALIBRATION_FIXED = (
    "zone_id",
    "version",
    "method",
    "params",
    "verdicts",
    "window_from",
    "window_until",
    "fitted_by",
    "reliability_before",
    "reliability_after",
)
_CONFLICT_FIXED = (
    "zone",
    "kind",
    "first_id",
    "second_id",
    "reason",
    "words",
    "found_by",
)
_CONFLICT_RESOLVED = ("resolution", "resolution_reason", "resolved_by_id", "resolved_at")

CALIBRATION_TRIGGERS = triggers.fixed("calibration", _CALIBRATION_FIXED)
CONFLICT_TRIGGERS = triggers.fixed(
    "conflict",
    _CONFLICT_FIXED,
    once=pgtrigger.Q(old__resolved_at__isnull=False) & triggers.changed(_CONFLICT_RESOLVED),
)
EVIDENCE_TRUNCATE_TRIGGERS = {
    model: (triggers.truncate_guard(f"{name}_no_truncate"),)
    for model, name in (
        (EvidenceBundle, "bundle"),
        (ValidationReport, "report"),
        (DocumentVersion, "version"),
        (Paragraph, "paragraph"),
        (Document, "document"),
    )
}

pgtrigger.register(*CALIBRATION_TRIGGERS)(ZoneCalibration)
pgtrigger.register(*CONFLICT_TRIGGERS)(KnowledgeConflict)
for _model, _guards in EVIDENCE_TRUNCATE_TRIGGERS.items():
    pgtrigger.register(*_guards)(_model)
