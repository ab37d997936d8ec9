"""Documents at every level of the tree: a galaxy's, universe's or planet's document is read,
searched and cited from every zone beneath it and nowhere else; the nearest level's document
of a title overrides an ancestor's; only zone admins of a level upload there."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from coordinates.coordinate import parse
from coordinates.models import Role
from coordinates.selectors import effective_policy
from evidence import reasons as why
from evidence import search as search_module
from evidence.models import Document, Paragraph
from evidence.retrieval import PlacedDocument, in_view, overrides
from evidence.search import search_paragraphs
from evidence.services import bundle_create
from evidence.validation import validate_bundle
from graph.models import GraphEdge
from tests.samples import POLICY_EN

ZONE = "G1.U1.P1.Z1"
AGENT = "G1.U1.P1.Z1.A1"
SIBLING = "G1.U1.P1.Z2"  # the same planet
OTHER_PLANET = "G1.U1.P2.Z1"
OTHER_GALAXY = "G2.U1.P1.Z1"
TITLE = "Remote work policy"
QUESTION = "How many days a week may employees work remotely?"
CLAIM = "Employees may work remotely up to three days a week."

GALAXY_REMOTE = """Remote Work Policy

1. Allowance
Employees may work remotely up to three days a week with their manager's approval.
"""
ZONE_REMOTE = """Remote Work Policy

1. Allowance
Employees of the treasury desk may work remotely up to one day a week.
"""
PLANET_REMOTE = """Remote Work Policy

1. Allowance
Employees of the finance planet may work remotely up to two days a week.
"""

URL = "/api/v1/documents/"


@pytest.fixture(autouse=True)
def _fresh_counts() -> Iterator[None]:
    """The search rate limits count in the cache, which outlives each test's database."""
    cache.clear()
    yield
    cache.clear()


def paragraph_of(document: Document) -> Paragraph:
    return Paragraph.objects.get(version__document=document, current=True, text__contains="remote")


def cited_in(zone: str, paragraph: Paragraph) -> dict[str, Any]:
    """The report's evidence item when a bundle of `zone` cites `paragraph`."""
    bundle = bundle_create(
        zone=parse(zone),
        claims=[
            {
                "text": CLAIM,
                "citations": [
                    {"document": paragraph.version.document_id, "paragraph": paragraph.number}
                ],
            }
        ],
    )
    report = validate_bundle(bundle, effective_policy(parse(zone)))
    item: dict[str, Any] = report.body["claims"][0]["evidence"][0]
    return item


def searched(client: APIClient, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/api/v1/search/", {"q": QUESTION, **params})
    assert response.status_code == 200, response.content
    passages: list[dict[str, Any]] = response.json()["passages"]
    return passages


def documents_found(passages: list[dict[str, Any]]) -> set[int]:
    return {p["document"] for p in passages}


# --- the rule itself (pure) -------------------------------------------------------------


def test_a_node_is_in_view_of_its_subtree_and_its_ancestors_never_a_sibling() -> None:
    assert in_view("G1", [ZONE])  # inherited from the galaxy
    assert in_view("G1.U1.P1", [ZONE])
    assert in_view(ZONE, [ZONE])
    assert in_view(ZONE, ["G1.U1"])  # held beneath a scope
    assert not in_view("G1.U1.P2", [ZONE])  # another planet
    assert not in_view("G2", [ZONE])  # another galaxy
    assert not in_view("G1.U10", ["G1.U1.P1"])  # by whole levels, not by characters
    assert in_view("G9", None)


def test_the_nearest_level_of_a_title_wins_and_a_scope_that_still_sees_one_keeps_it() -> None:
    galaxy = PlacedDocument(1, TITLE, "G1")
    planet = PlacedDocument(2, TITLE, "G1.U1.P1")
    zone = PlacedDocument(3, TITLE, ZONE)
    other = PlacedDocument(4, "Travel policy", "G1")
    everything = [galaxy, planet, zone, other]
    # In the zone its own document wins over its planet's and its galaxy's
    assert overrides(everything, [ZONE]) == {1: zone, 2: zone}
    # Under the planet (a zone without its own) the planet's wins over the galaxy's
    assert overrides(everything, [SIBLING]) == {1: planet}
    # A scope holding both zones still sees the planet's document through the sibling
    assert overrides(everything, [ZONE, SIBLING]) == {1: zone}
    # The planet's and the galaxy's own levels override nothing of theirs
    assert overrides(everything, ["G1.U1.P1"]) == {1: planet}
    assert overrides(everything, ["G1"]) == {}
    assert overrides(everything, None) == {}


# --- inheritance --------------------------------------------------------------------------


def test_a_galaxy_policy_is_searchable_and_citable_beneath_it_and_not_from_another_galaxy(
    ingest: Callable[..., Any], agent_client: Callable[..., APIClient]
) -> None:
    # given a policy of the galaxy G1
    galaxy = ingest(GALAXY_REMOTE, zone="G1", title=TITLE, key="remote").document
    paragraph = paragraph_of(galaxy)
    assert paragraph.zone == "G1"
    # when an agent of a zone beneath it searches, and asks as `ask` does (scopes=[zone])
    found = searched(agent_client(AGENT))
    # then the galaxy's passage is there, named by its level, and resolves when cited
    assert documents_found(found) == {galaxy.pk}
    assert {p["zone"] for p in found} == {"G1"}
    assert paragraph.pk in {hit.id for hit in search_paragraphs(QUESTION, scopes=[parse(ZONE)])}
    item = cited_in(ZONE, paragraph)
    assert item["fabricated"] is False, item
    assert item["supported"] is True, item["reasons"]
    # and from another galaxy it is neither found nor citable: it reads as no document at all
    assert searched(agent_client("G2.U1.P1.Z1.A1")) == []
    assert search_paragraphs(QUESTION, scopes=[parse(OTHER_GALAXY)]) == []
    foreign = cited_in(OTHER_GALAXY, paragraph)
    assert foreign["fabricated"] is True
    assert foreign["dropped"] == why.say(why.NOT_IN_ZONE, document=galaxy.pk, zone=OTHER_GALAXY)


def test_a_planet_document_is_invisible_to_a_zone_under_another_planet(
    ingest: Callable[..., Any],
    agent_client: Callable[..., APIClient],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    # given a document of the finance planet G1.U1.P1
    planet = ingest(GALAXY_REMOTE, zone="G1.U1.P1", title=TITLE, key="remote").document
    paragraph = paragraph_of(planet)
    # then a zone of the legal planet neither finds, cites nor reads it
    assert searched(agent_client("G1.U1.P2.Z1.A1")) == []
    assert cited_in(OTHER_PLANET, paragraph)["fabricated"] is True
    legal = client_for(person("lex", Role.REVIEWER, OTHER_PLANET))
    assert legal.get(f"{URL}{planet.pk}/").status_code == 404
    assert legal.get(URL).json()["documents"] == []
    # while both zones of the finance planet do
    assert documents_found(searched(agent_client(AGENT))) == {planet.pk}
    assert documents_found(searched(agent_client("G1.U1.P1.Z2.A1"))) == {planet.pk}
    finance = client_for(person("fin", Role.REVIEWER, ZONE))
    assert finance.get(f"{URL}{planet.pk}/").json()["zone"] == "G1.U1.P1"
    assert [d["id"] for d in finance.get(URL).json()["documents"]] == [planet.pk]
    # and a reviewer of the galaxy above reads it too (it lies beneath their scope)
    assert (
        client_for(person("gus", Role.REVIEWER, "G1")).get(f"{URL}{planet.pk}/").status_code == 200
    )


# --- override by title --------------------------------------------------------------------


def test_a_zones_own_document_of_the_same_title_overrides_the_galaxys(
    ingest: Callable[..., Any], agent_client: Callable[..., APIClient]
) -> None:
    # given the galaxy's remote-work policy and the zone's own, of the same title
    galaxy = ingest(GALAXY_REMOTE, zone="G1", title=TITLE, key="remote").document
    own = ingest(ZONE_REMOTE, zone=ZONE, title=TITLE, key="remote").document
    # when the zone searches (the API, and as `ask` does)
    # then it finds only its own document's paragraphs
    assert documents_found(searched(agent_client(AGENT))) == {own.pk}
    hits = search_paragraphs(QUESTION, scopes=[parse(ZONE)], k=50)
    found = Paragraph.objects.filter(pk__in=[h.id for h in hits])
    assert hits
    assert set(found.values_list("version__document_id", flat=True)) == {own.pk}
    # while the sibling zone, which has none of its own, still reads the galaxy's
    assert documents_found(searched(agent_client("G1.U1.P1.Z2.A1"))) == {galaxy.pk}
    # and citing the overridden galaxy document from the zone says why it counts for nothing
    item = cited_in(ZONE, paragraph_of(galaxy))
    assert item["supported"] is False
    assert item["dropped"] == (
        f"document {galaxy.pk} is overridden in zone {ZONE} by its own document {own.pk} '{TITLE}'"
    )
    assert item["reasons"] == [item["dropped"]]
    assert cited_in(SIBLING, paragraph_of(galaxy))["supported"] is True


def test_a_planets_document_overrides_the_galaxys_for_every_zone_beneath_the_planet(
    ingest: Callable[..., Any],
    agent_client: Callable[..., APIClient],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    galaxy = ingest(GALAXY_REMOTE, zone="G1", title=TITLE, key="remote").document
    planet = ingest(PLANET_REMOTE, zone="G1.U1.P1", title=TITLE, key="remote").document
    # the finance planet's zones read the planet's; the legal planet's still the galaxy's
    assert documents_found(searched(agent_client("G1.U1.P1.Z2.A1"))) == {planet.pk}
    assert documents_found(searched(agent_client("G1.U1.P2.Z1.A1"))) == {galaxy.pk}
    assert cited_in(SIBLING, paragraph_of(galaxy))["dropped"] == why.say(
        why.OVERRIDDEN_BY_LEVEL,
        document=galaxy.pk,
        zone=SIBLING,
        overriding=planet.pk,
        title=TITLE,
        node="G1.U1.P1",
    )
    # a reviewer of the planet, searching it, reads the planet's and not the galaxy's
    reviewer = client_for(person("pat", Role.REVIEWER, "G1.U1.P1"))
    assert documents_found(searched(reviewer)) == {planet.pk}
    assert documents_found(searched(reviewer, zone="G1.U1.P1")) == {planet.pk}


# --- who may upload where -----------------------------------------------------------------


def body(zone: str, **overrides: Any) -> dict[str, Any]:
    return {
        "title": TITLE,
        "kind": "policy",
        "status": "approved",
        "zone": zone,
        "text": GALAXY_REMOTE,
        **overrides,
    }


def test_uploading_above_a_zone_needs_a_zone_admin_of_that_level(
    org: Any,
    agent_client: Callable[..., APIClient],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    # a reviewer of the whole galaxy is refused, naming the field
    reviewer = client_for(person("rita", Role.REVIEWER, "G1"))
    refused = reviewer.post(URL, body("G1"), format="json")
    assert refused.status_code == 403
    assert refused.json()["error"]["field"] == "zone"
    # an agent writes into its zone only, never a level above it
    agent = agent_client(AGENT)
    for level in ("G1", "G1.U1", "G1.U1.P1"):
        response = agent.post(URL, body(level), format="json")
        assert response.status_code == 400, response.json()
        assert response.json()["error"]["field"] == "zone"
    # a zone admin of a zone, or of the planet, may not write to the universe above them
    planet_admin = client_for(person("pia", Role.ZONE_ADMIN, "G1.U1.P1"))
    above = planet_admin.post(URL, body("G1.U1"), format="json")
    assert above.status_code == 403
    assert above.json()["error"]["field"] == "zone"
    zone_admin = client_for(person("zed", Role.ZONE_ADMIN, ZONE))
    assert zone_admin.post(URL, body("G1.U1.P1"), format="json").status_code == 403
    assert Document.objects.count() == 0
    # while the planet's admin writes to the planet, and a galaxy admin to the galaxy
    stored = planet_admin.post(URL, body("G1.U1.P1"), format="json")
    assert stored.status_code == 201, stored.json()
    galaxy_admin = client_for(person("gail", Role.ZONE_ADMIN, "G1"))
    assert galaxy_admin.post(URL, body("G1", key="galaxy-remote"), format="json").status_code == 201
    assert sorted(Document.objects.values_list("zone__coordinate", flat=True)) == [
        "G1",
        "G1.U1.P1",
    ]
    # an agent coordinate is no level a document belongs to
    assert galaxy_admin.post(URL, body(AGENT), format="json").json()["error"]["field"] == "zone"


def test_an_agent_cannot_upload_into_another_zone(agent_client: Callable[..., APIClient]) -> None:
    agent = agent_client(AGENT)
    for zone in (SIBLING, OTHER_PLANET, OTHER_GALAXY):
        response = agent.post(URL, body(zone), format="json")
        # not its to see: answered as a zone that does not exist
        assert response.status_code == 404, response.json()
        assert response.json()["error"]["field"] == "zone"
    assert Document.objects.count() == 0
    assert agent.post(URL, body(ZONE), format="json").status_code == 201


def test_the_documents_page_uploads_to_the_levels_a_person_administers_only(
    org: Any, person: Callable[..., Any], client: Any, django_capture_on_commit_callbacks: Any
) -> None:
    def upload(zone: str) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(
                "/documents/",
                {
                    "zone": zone,
                    "title": TITLE,
                    "kind": "policy",
                    "status": "approved",
                    "file": SimpleUploadedFile(
                        "remote.md", GALAXY_REMOTE.encode(), content_type="text/markdown"
                    ),
                },
            )

    client.force_login(person("pia", Role.ZONE_ADMIN, "G1.U1.P1"))
    page = client.get("/documents/").content.decode()
    assert 'value="G1.U1.P1"' in page  # the planet itself is offered ...
    assert 'value="G1.U1"' not in page  # ... the universe above it is not
    refused = upload("G1.U1")
    assert refused.status_code == 400
    assert 'data-field="zone"' in refused.content.decode()
    assert Document.objects.count() == 0
    assert upload("G1.U1.P1").status_code == 302
    assert Document.objects.get().zone.coordinate == "G1.U1.P1"
    # and the list filtered to a zone beneath shows what that zone inherits
    assert TITLE in client.get("/documents/", {"zone": ZONE}).content.decode()
    assert TITLE not in client.get("/documents/", {"zone": OTHER_PLANET}).content.decode()


def test_a_scopes_overridden_documents_are_read_once_per_corpus_state(
    ingest: Callable[..., Any], django_assert_num_queries: Any
) -> None:
    # given the galaxy's policy, overridden in the zone by its own
    galaxy = ingest(GALAXY_REMOTE, zone="G1", title=TITLE, key="remote")
    ingest(ZONE_REMOTE, zone=ZONE, title=TITLE, key="remote")
    loaded = search_module.corpus()
    # when the zone's overrides are asked for, then once more
    first = search_module.hidden_versions(loaded, [parse(ZONE)])
    assert first == (galaxy.version.pk,)
    with django_assert_num_queries(0):
        assert search_module.hidden_versions(loaded, [parse(ZONE)]) is first
        # and a scope with no paragraph on a level above it asks nothing at all
        assert search_module.hidden_versions(loaded, [parse(OTHER_GALAXY)]) == ()
    # and the candidate mask leaves out exactly the galaxy version's rows (of those in the
    # store: on PostgreSQL the corpus may still index earlier tests' rolled-back rows)
    mask = search_module.candidate_mask(loaded, [parse(ZONE)], False)
    overridden = loaded.versions == galaxy.version.pk
    assert overridden.any()
    assert not mask[overridden].any()
    assert mask[loaded.live & ~overridden].all()


def test_a_decision_citing_an_inherited_document_links_it_in_the_graph(
    ingest: Callable[..., Any],
    agent_client: Callable[..., APIClient],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given the travel policy of the galaxy, cited by an answer of a zone beneath it
    galaxy = ingest(POLICY_EN, zone="G1", title="Travel policy", key="travel").document
    paragraph = Paragraph.objects.get(
        version__document=galaxy, text__contains="500,000 yen require"
    )
    claim = "Expenses above 500,000 yen require prior approval by the division head."
    body = {
        "question": "Who approves travel expenses above 500,000 yen?",
        "answer": claim,
        "zone": ZONE,
        "agent": AGENT,
        "claims": [
            {
                "text": claim,
                "citations": [{"document": galaxy.pk, "paragraph": paragraph.number}],
            }
        ],
    }
    # when the pipeline and the graph feed carry it
    with django_capture_on_commit_callbacks(execute=True):
        made = agent_client(AGENT).post("/api/v1/decisions/", body, format="json")
    assert made.status_code == 201, made.json()
    # then the decision references the galaxy's document, which stays a node of its level
    decision = f"decision:{made.json()['id']}"
    link = GraphEdge.objects.select_related("target").get(
        source__key=decision, edge_type="references"
    )
    assert (link.target.key, link.target.zone) == (f"document:{galaxy.pk}", "G1")
    # and a reader of the zone sees that node in its graph, one of another galaxy does not
    from coordinates.coordinate import parse
    from graph.queries import visible_rows
    from graph.store import snapshot

    graph = snapshot()
    (row,) = graph.rows_of_key(f"document:{galaxy.pk}")
    (decision_row,) = graph.rows_of_key(decision)
    assert visible_rows(graph, [parse(ZONE)])[row]
    assert not visible_rows(graph, [parse("G2.U1.P1.Z1")])[row]
    # while the zone's own decision stays out of view from the galaxy's other zones
    assert not visible_rows(graph, [parse("G1.U1.P1.Z2")])[decision_row]
