"""The documents pages: browse the documents of the zones you hold, each version and its
paragraphs (with the open knowledge-base conflicts they take part in), and upload a document
or a new version into a level you administer (a galaxy, universe, planet or zone, whose
zones beneath all read it; docs/architecture.md, "Documents at every level"). Thin:
`evidence.services.document_ingest` stores, checks the content and seals the version on the
trail."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from coordinates.coordinate import Coordinate, CoordinateError
from coordinates.models import Role, Zone
from coordinates.selectors import has_role, in_scopes, role_scopes
from evidence.models import Document, DocumentKind, DocumentStatus, KnowledgeConflict, Paragraph
from evidence.selectors import documents_visible, reader_scopes, versions_set_aside
from evidence.services import document_ingest
from maria.errors import ApplicationError, NotFound

MAX_UPLOAD_BYTES = 2 * 1024 * 1024


class UploadForm(forms.Form):
    zone = forms.ChoiceField(
        label=gettext_lazy("Zone"),
        help_text=gettext_lazy(
            "A galaxy, universe, planet or zone: every zone beneath it reads the document."
        ),
    )
    title = forms.CharField(label=gettext_lazy("Title"), max_length=300, required=False)
    kind = forms.ChoiceField(label=gettext_lazy("Kind"), choices=DocumentKind.choices)
    status = forms.ChoiceField(label=gettext_lazy("Status"), choices=DocumentStatus.choices)
    effective_date = forms.DateField(
        label=gettext_lazy("Effective from"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    file = forms.FileField(
        label=gettext_lazy("File (text, Markdown, HTML or PDF)"),
        required=False,
    )
    text = forms.CharField(
        label=gettext_lazy("or paste the text"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
    )

    def __init__(self, *args: Any, zones: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused_with = 400  # the status of the page that shows why it was refused
        zone: Any = self.fields["zone"]  # the ChoiceField declared above
        zone.choices = [(z, z) for z in zones]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload, text = data.get("file"), (data.get("text") or "").strip()
        if not upload and not text:
            raise forms.ValidationError(_("Choose a file or paste the text."))
        if upload and upload.size > MAX_UPLOAD_BYTES:
            self.refused_with = 413
            self.add_error("file", _("The file is larger than 2 MB."))
        return data


def _admin_zones(user: Any) -> list[str]:
    """The levels of the tree (G to G.U.P.Z) where the user may add documents: on or beneath
    a zone-admin role, as the REST upload (evidence.api) allows."""
    superuser = getattr(user, "is_superuser", False)
    scopes = None if superuser else role_scopes(user, (Role.ZONE_ADMIN,))
    nodes = Zone.objects.order_by("depth", "coordinate").values_list("coordinate", flat=True)
    return [node for node in nodes if in_scopes(node, scopes)]


def _upload(request: HttpRequest, form: UploadForm, supersedes: Document | None) -> Document | None:
    data = form.cleaned_data
    upload = data.get("file")
    raw: bytes | str = upload.read() if upload else data["text"]
    try:
        ingested = document_ingest(
            zone=Zone.objects.get(coordinate=data["zone"]),
            raw=raw,
            kind=data["kind"],
            status=data["status"],
            title=data.get("title") or None,
            effective_date=data.get("effective_date"),
            filename=upload.name if upload else None,
            format=None if upload else "markdown",
            supersedes=supersedes,
            actor=request.user,  # type: ignore[arg-type]  # login_required
        )
    except ApplicationError as error:
        # A document over a limit (its size, its paragraphs) is 413, as from the REST API.
        form.refused_with = error.status_code
        form.add_error(error.field if error.field in form.fields else None, error.message)
        return None
    if ingested.created:
        messages.success(
            request,
            _("Stored version %(version)s of “%(title)s”.")
            % {"version": ingested.version.version, "title": ingested.version.title},
        )
    else:
        messages.info(request, _("This document is stored already, unchanged."))
    return ingested.document


# The background work on a version, as its zone admin reads it.
_WORK = {
    "evidence.tasks.scan_version_conflicts": gettext_lazy("knowledge-conflict scan"),
    "evidence.tasks.embed_version": gettext_lazy("embedding"),
    "graph.tasks.extract_graph": gettext_lazy("graph extraction"),
    "decisions.tasks.rereview_version": gettext_lazy("re-review of past answers"),
}


def _work_label(run: str) -> str:
    return str(_WORK.get(run, run))


def _is_node(text: str) -> bool:
    try:
        return Coordinate.parse(text).depth <= 4
    except CoordinateError:
        return False


@login_required
@require_http_methods(["GET", "POST"])
def document_list(request: HttpRequest) -> HttpResponse:
    if reader_scopes(request.user) == [] and not _admin_zones(request.user):
        raise NotFound(_("no documents for you here"))
    zones = _admin_zones(request.user)
    form = UploadForm(request.POST or None, request.FILES or None, zones=zones)
    if request.method == "POST":
        if not zones:
            raise NotFound(_("you administer no zone"))
        if form.is_valid() and (document := _upload(request, form, None)) is not None:
            return redirect("document-page", pk=document.pk)
    zone = request.GET.get("zone", "").strip()
    documents = documents_visible(request.user).annotate(versions_count=Count("versions"))
    if zone:
        # What that node reads: its subtree's documents and those of the levels above it.
        above = [str(c) for c in Coordinate.parse(zone).ancestors()] if _is_node(zone) else []
        documents = documents.filter(
            Q(zone__coordinate=zone)
            | Q(zone__coordinate__startswith=f"{zone}.")
            | Q(zone__coordinate__in=above)
        )
    rows = []
    for document in documents[:500]:
        current = document.versions.order_by("-version").first()
        rows.append({"document": document, "current": current})
    return render(
        request,
        "documents/list.html",
        {"rows": rows, "form": form if zones else None, "zone": zone},
        status=form.refused_with if request.method == "POST" else 200,  # after a POST: refused
    )


@login_required
@require_http_methods(["GET", "POST"])
def document_page(request: HttpRequest, pk: int) -> HttpResponse:
    document = get_object_or_404(documents_visible(request.user), pk=pk)
    may_upload = has_role(
        request.user, (Role.ZONE_ADMIN,), Coordinate.parse(document.zone.coordinate)
    )
    form = None
    if may_upload:
        form = UploadForm(
            request.POST or None,
            request.FILES or None,
            zones=[document.zone.coordinate],
            initial={"zone": document.zone.coordinate, "title": document.title},
        )
        if request.method == "POST" and form.is_valid() and _upload(request, form, document):
            return redirect("document-page", pk=document.pk)
    elif request.method == "POST":
        raise NotFound(_("you may not add versions here"))
    versions = list(document.versions.order_by("-version"))
    try:
        shown_number = int(request.GET.get("version") or versions[0].version)
    except (ValueError, IndexError):
        shown_number = versions[0].version if versions else 0
    shown = next(
        (v for v in versions if v.version == shown_number), versions[0] if versions else None
    )
    paragraphs = list(Paragraph.objects.filter(version=shown).order_by("number")) if shown else []
    ids = [p.pk for p in paragraphs]
    disputed: dict[int, int] = {}
    for first, second in KnowledgeConflict.objects.filter(
        Q(first_id__in=ids) | Q(second_id__in=ids), resolved_at__isnull=True
    ).values_list("first_id", "second_id"):
        for side in (first, second):
            if side in ids:
                disputed[side] = disputed.get(side, 0) + 1
    # What the background work set aside on a version (a scan that failed or timed out
    # twice): the zone admins who uploaded it are the ones who can act on it.
    aside = versions_set_aside([v.pk for v in versions]) if may_upload else {}
    set_aside = [
        (version, _work_label(row.run), row)
        for version in versions
        for row in aside.get(version.pk, [])
    ]
    return render(
        request,
        "documents/detail.html",
        {
            "document": document,
            "versions": versions,
            "shown": shown,
            "paragraphs": [(p, disputed.get(p.pk, 0)) for p in paragraphs],
            "form": form,
            "set_aside": set_aside,
        },
        status=form.refused_with if form is not None and request.method == "POST" else 200,
    )
