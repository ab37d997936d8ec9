"""The documents pages (issue 18.5): browse the documents of the zones you hold, each version
and its paragraphs; a zone admin uploads a document or a new version into their zone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from coordinates.models import Role
from evidence import parsing
from evidence.models import Document, DocumentVersion, KnowledgeConflict
from trail.models import TrailEvent

ZONE = "G1.U1.P1.Z1"
POLICY = "# Remote work\n\nEmployees may request to work remotely up to 3 days per week."


def test_a_reviewer_browses_the_documents_of_their_zone_only(
    ingest: Callable[..., Any], person: Callable[..., Any], client: Any
) -> None:
    mine = ingest(POLICY, title="Remote work policy", key="remote")
    ingest(
        "# Other\n\nSomething else entirely.", title="Other zone's", key="other", zone="G1.U1.P1.Z2"
    )
    client.force_login(person("rui", Role.REVIEWER, ZONE))
    listing = client.get("/documents/").content.decode()
    assert "Remote work policy" in listing
    assert "Other zone&#x27;s" not in listing
    assert 'id="upload"' not in listing  # a reviewer uploads nothing
    detail = client.get(f"/documents/{mine.document.pk}/").content.decode()
    assert "Employees may request to work remotely up to 3 days per week." in detail
    assert client.get(f"/documents/{Document.objects.get(key='other').pk}/").status_code == 404


def test_a_zone_admin_uploads_a_document_and_a_new_version_sealed_on_the_trail(
    org: Any, person: Callable[..., Any], client: Any, django_capture_on_commit_callbacks: Any
) -> None:
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        stored = client.post(
            "/documents/",
            {
                "zone": ZONE,
                "title": "",
                "kind": "policy",
                "status": "approved",
                "file": SimpleUploadedFile(
                    "remote.md", POLICY.encode(), content_type="text/markdown"
                ),
            },
            follow=True,
        )
    assert stored.status_code == 200
    version = DocumentVersion.objects.get()
    assert (version.title, version.created_by, version.document.zone.coordinate) == (
        "Remote work",
        admin,
        ZONE,
    )
    assert "Stored version 1 of “Remote work”." in stored.content.decode()
    assert TrailEvent.objects.filter(kind="evidence.version_stored", actor="ada").exists()

    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/documents/{version.document_id}/",
            {
                "zone": ZONE,
                "title": "Remote work",
                "kind": "policy",
                "status": "approved",
                "text": POLICY.replace("3 days", "2 days"),
            },
        )
    page = client.get(f"/documents/{version.document_id}/").content.decode()
    assert 'data-version="2" class="shown"' in page
    assert "up to 2 days" in page
    assert (
        "up to 3 days"
        in client.get(f"/documents/{version.document_id}/?version=1").content.decode()
    )


def test_an_upload_outside_your_zones_or_without_content_is_refused_with_the_reason(
    org: Any, person: Callable[..., Any], client: Any
) -> None:
    client.force_login(person("ada", Role.ZONE_ADMIN, ZONE))
    empty = client.post("/documents/", {"zone": ZONE, "kind": "policy", "status": "approved"})
    assert empty.status_code == 400
    assert "Choose a file or paste the text." in empty.content.decode()
    elsewhere = client.post(
        "/documents/",
        {"zone": "G1.U1.P1.Z2", "kind": "policy", "status": "approved", "text": POLICY},
    )
    assert elsewhere.status_code == 400
    assert 'data-field="zone"' in elsewhere.content.decode()
    assert not DocumentVersion.objects.exists()


def test_a_paragraph_in_an_open_conflict_says_so_and_links_to_the_conflicts(
    ingest: Callable[..., Any], person: Callable[..., Any], client: Any
) -> None:
    mine = ingest(POLICY, title="Remote work policy", key="remote")
    ingest(
        "# Memo\n\nRemote work: employees may work remotely up to 2 days per week.",
        title="Memo",
        key="memo",
        kind="memo",
    )
    assert KnowledgeConflict.objects.count() == 1
    client.force_login(person("ada", Role.ZONE_ADMIN, ZONE))
    page = client.get(f"/documents/{mine.document.pk}/").content.decode()
    assert "1 open conflict" in page
    assert f"/zones/{ZONE}/conflicts/" in page


def test_an_upload_of_more_paragraphs_than_the_limit_is_413_naming_the_limit(
    org: Any, person: Callable[..., Any], client: Any
) -> None:
    client.force_login(person("ada", Role.ZONE_ADMIN, ZONE))
    many = "\n\n".join(f"Rule {n} applies." for n in range(parsing.MAX_PARAGRAPHS + 1))
    refused = client.post(
        "/documents/",
        {"zone": ZONE, "title": "Rules", "kind": "policy", "status": "approved", "text": many},
    )
    assert refused.status_code == 413
    assert f"the limit is {parsing.MAX_PARAGRAPHS:,} paragraphs" in refused.content.decode()
    assert not DocumentVersion.objects.exists()
