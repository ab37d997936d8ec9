"""What a sealed bundle records of its sources (seed 000 §2.2, issue 30): each citation's
document version, pinned at submission, and when the agent retrieved it. Before, a citation
without a version was resolved only at validation, and no retrieval time was kept."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.template.loader import render_to_string
from django.test import Client
from django.utils import timezone

from coordinates.coordinate import parse
from coordinates.models import Role
from decisions.models import Decision
from evidence.models import EvidenceBundle, Paragraph
from evidence.services import bundle_create, bundle_hash
from tests.decisions.conftest import GOOD, answer_body, cite

pytestmark = pytest.mark.django_db

V1 = "# Remote work\n\nEmployees may request to work remotely up to 3 days per week."
DAYS = "Employees may request to work remotely up to 3 days per week."


def _bundle(done: Any) -> EvidenceBundle:
    return Decision.objects.get(pk=done.response.json()["id"]).bundle


def test_a_citation_without_version_is_sealed_with_the_version_current_at_submission(
    ingest: Callable[..., Any],
    agent_client: Callable[[str], Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given version 1 of a policy, cited without a version
    ingest(V1, title="Remote Work Policy", key="remote")
    paragraph = Paragraph.objects.get(text=DAYS)
    client = agent_client("G1.U1.P1.Z1.A1")
    body = answer_body([{"text": DAYS, "citations": [cite(paragraph)]}])
    # when it is submitted, and version 2 arrives before the validation runs
    with django_capture_on_commit_callbacks(execute=False) as pending:
        response = client.post("/api/v1/decisions/", body, format="json")
    assert response.status_code == 201
    ingest(V1.replace("3 days", "2 days"), title="Remote Work Policy", key="remote")
    for callback in pending:
        callback()
    # then the bundle records version 1, and the report judged what was cited then
    decision = Decision.objects.get(pk=response.json()["id"])
    (citation,) = decision.bundle.claims[0]["citations"]
    assert citation["version"] == 1
    (item,) = decision.report.body["claims"][0]["evidence"]
    assert (item["version"], item["superseded"]) == (1, True)
    assert item["current"]["version"] == 2


def test_each_citation_records_its_retrieval_time_given_or_the_submission_time(
    policy_doc: Paragraph, submit: Callable[..., Any]
) -> None:
    # given one citation with the agent's retrieval time (in Tokyo time) and one without
    before = timezone.now()
    given = "2026-11-30T09:15:00+09:00"
    done = submit(
        [
            {"text": GOOD, "citations": [cite(policy_doc, retrieved_at=given)]},
            {"text": "Travel needs approval.", "citations": [cite(policy_doc)]},
        ]
    )
    after = timezone.now()
    # then the sealed bundle holds the first in UTC and the second at the submission time
    first, second = (c["citations"][0] for c in _bundle(done).claims)
    assert first["retrieved_at"] == "2026-11-30T00:15:00+00:00"
    stamped = datetime.fromisoformat(second["retrieved_at"])
    assert before <= stamped <= after
    # and both carry the version cited, though the agent named none
    assert first["version"] == second["version"] == policy_doc.version.version


def test_a_retrieval_time_in_the_future_is_a_400_naming_the_field(
    policy_doc: Paragraph, submit: Callable[..., Any]
) -> None:
    tomorrow = (timezone.now() + timedelta(days=1)).isoformat()
    done = submit([{"text": GOOD, "citations": [cite(policy_doc, retrieved_at=tomorrow)]}])
    assert done.status_code == 400
    error = done.json()["error"]
    assert error["field"] == "claims.0.citations.0.retrieved_at"
    assert "future" in error["message"]
    assert not Decision.objects.exists()


def test_a_retrieval_time_that_is_not_a_time_is_a_400_naming_the_field(
    policy_doc: Paragraph, submit: Callable[..., Any]
) -> None:
    done = submit([{"text": GOOD, "citations": [cite(policy_doc, retrieved_at="yesterday")]}])
    assert done.status_code == 400
    assert done.json()["error"]["field"] == "claims.0.citations.0.retrieved_at"


def test_a_clock_a_minute_ahead_is_not_the_future(
    policy_doc: Paragraph, submit: Callable[..., Any]
) -> None:
    soon = (timezone.now() + timedelta(minutes=1)).isoformat()
    done = submit([{"text": GOOD, "citations": [cite(policy_doc, retrieved_at=soon)]}])
    assert done.status_code == 201


def test_the_decision_page_shows_each_sources_version_and_retrieval_time(
    policy_doc: Paragraph, submit: Callable[..., Any], person: Callable[..., Any]
) -> None:
    done = submit(
        [{"text": GOOD, "citations": [cite(policy_doc, retrieved_at="2026-11-30T00:15:00Z")]}]
    )
    reviewer = Client()
    reviewer.force_login(person("fin", Role.REVIEWER, "G1.U1.P1"))
    page = reviewer.get(f"/queue/decisions/{done.response.json()['id']}/").content.decode()
    assert f"v{policy_doc.version.version} ¶{policy_doc.number}" in page
    assert 'datetime="2026-11-30T00:15:00+00:00"' in page
    assert "retrieved" in page


def test_a_citation_of_a_version_without_a_paragraph_names_no_paragraph() -> None:
    # a graph answer cites a document node: a version and a retrieval time, no paragraph
    item = {"document": 12, "version": 2, "source": {"title": "Memo", "href": ""}}
    shown = render_to_string("decision/_citation.html", {"item": item})
    assert "Memo" in shown
    assert "v2" in shown
    assert "¶" not in shown


def test_a_bundle_sealed_before_retrieval_times_still_verifies(
    policy_doc: Paragraph, org: Any
) -> None:
    # given a bundle as the engine sealed them before §2.2: no version, no retrieval time
    claims = [{"text": GOOD, "citations": [cite(policy_doc)]}]
    old = bundle_create(zone=parse("G1.U1.P1.Z1"), claims=claims)
    # then its hash is the hash of what it holds, as before, and the trail verifies
    assert old.claims == claims
    assert old.content_hash == bundle_hash("G1.U1.P1.Z1", claims)
    call_command("verify_trail")


def test_pinning_keeps_an_agents_own_version_and_time() -> None:
    from evidence.provenance import pin_citations

    at = datetime(2026, 12, 1, tzinfo=UTC)
    claims = [{"text": "x", "citations": [{"document": 1, "version": 1, "paragraph": 1}]}]
    pinned = pin_citations(claims, versions=[[None]], submitted_at=at)
    assert pinned[0]["citations"][0] == {
        "document": 1,
        "version": 1,
        "paragraph": 1,
        "retrieved_at": "2026-12-01T00:00:00+00:00",
    }


def test_a_search_passage_submitted_as_it_came_records_when_it_was_retrieved(
    policy_doc: Paragraph, agent_client: Callable[[str], Any]
) -> None:
    # given a passage from the search API, which says when the engine retrieved it
    client = agent_client("G1.U1.P1.Z1.A1")
    found = client.get("/api/v1/search/", {"q": "Who approves expenses above 500,000 yen?"})
    passage = next(p for p in found.json()["passages"] if "500,000 yen require" in p["text"])
    searched = datetime.fromisoformat(passage["retrieved_at"])
    # when a plain answer cites it as it came
    body = {k: v for k, v in answer_body([]).items() if k != "claims"}
    body |= {"answer": f"{GOOD} [1]", "sources": [passage]}
    response = client.post("/api/v1/decisions/", body, format="json")
    assert response.status_code == 201, response.json()
    # then its citation carries that time, not the submission's
    (claim,) = Decision.objects.get(pk=response.json()["id"]).bundle.claims
    assert datetime.fromisoformat(claim["citations"][0]["retrieved_at"]) == searched


def test_the_python_clients_passage_passes_its_retrieval_time_on() -> None:
    from maria_client.models import Passage

    body = {
        "document": 3, "version": 2, "paragraph": 4, "start": 0, "end": 10, "text": "t",
        "section": "", "title": "T", "kind": "policy", "status": "approved",
        "effective_date": None, "zone": "G1.U1.P1.Z1", "superseded": False, "score": 0.5,
        "retrieved_at": "2026-12-01T09:00:00+00:00",
    }  # fmt: skip
    passage = Passage.from_json(body)
    assert passage.retrieved_at == datetime(2026, 12, 1, 9, tzinfo=UTC)
    assert passage.citation() == {
        "document": 3,
        "version": 2,
        "paragraph": 4,
        "retrieved_at": "2026-12-01T09:00:00+00:00",
    }


def _pinned_on_submit(client: Any, body: dict[str, Any], capture: Any) -> dict[str, Any]:
    with capture(execute=False):
        response = client.post("/api/v1/decisions/", body, format="json")
    assert response.status_code == 201, response.json()
    decision = Decision.objects.get(pk=response.json()["id"])
    (citation,) = decision.bundle.claims[0]["citations"]
    return dict(citation)


def test_pinning_reads_the_versions_and_never_the_paragraphs_on_the_submit_path(
    ingest: Callable[..., Any],
    agent_client: Callable[[str], Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ingest(V1, title="Remote Work Policy", key="remote")
    paragraph = Paragraph.objects.get(text=DAYS)
    client = agent_client("G1.U1.P1.Z1.A1")
    body = answer_body([{"text": DAYS, "citations": [cite(paragraph)]}])
    with CaptureQueriesContext(connection) as asked:
        citation = _pinned_on_submit(client, body, django_capture_on_commit_callbacks)
    assert citation["version"] == 1
    # the paragraphs (and their conflicts) are validation's to read, after the response
    assert not [q["sql"] for q in asked.captured_queries if '"evidence_paragraph"' in q["sql"]]


def test_a_document_the_zone_may_not_cite_or_that_its_own_overrides_stays_unpinned(
    ingest: Callable[..., Any],
    agent_client: Callable[[str], Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    client = agent_client("G1.U1.P1.Z1.A1")
    # another zone's document: the bundle says nothing of it (validation reports it)
    ingest(V1, zone="G1.U1.P1.Z2", title="Remote Work Policy", key="remote")
    theirs = Paragraph.objects.get(text=DAYS, zone="G1.U1.P1.Z2")
    body = answer_body([{"text": DAYS, "citations": [cite(theirs)]}])
    assert "version" not in _pinned_on_submit(client, body, django_capture_on_commit_callbacks)
    # the planet's document, which the zone's own of the same title overrides
    ingest(V1, zone="G1.U1.P1", title="Travel", key="travel-planet")
    ingest(V1, title="Travel", key="travel-zone")
    planets = Paragraph.objects.get(text=DAYS, zone="G1.U1.P1")
    body = answer_body([{"text": DAYS, "citations": [cite(planets)]}])
    assert "version" not in _pinned_on_submit(client, body, django_capture_on_commit_callbacks)
    # and the zone's own is pinned
    own = Paragraph.objects.get(text=DAYS, zone="G1.U1.P1.Z1")
    body = answer_body([{"text": DAYS, "citations": [cite(own)]}])
    assert _pinned_on_submit(client, body, django_capture_on_commit_callbacks)["version"] == 1
