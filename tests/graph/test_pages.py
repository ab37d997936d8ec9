"""The graph explorer page and the responsibility fragment of the decision page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from tests.graph.conftest import ZONE

pytestmark = pytest.mark.django_db


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_explorer_offers_the_readers_zones_and_serves_its_own_graph_library(
    person: Callable[..., Any], org: Any
) -> None:
    from coordinates.models import Role

    page = logged_in(person("rita", Role.REVIEWER, ZONE)).get("/graph/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'<option value="{ZONE}"' in html
    assert "G2.U1.P1.Z1" not in html
    assert "/static/graph/vendor/cytoscape.min.js" in html
    assert "https://" not in html.split("<main>", 1)[1]  # no CDN
    assert "/api/v1/graph/query/" in html


def test_the_explorer_fills_in_a_question_from_its_address_escaped(
    person: Callable[..., Any], org: Any
) -> None:
    from coordinates.models import Role

    reader = logged_in(person("rita", Role.REVIEWER, ZONE))
    html = reader.get("/graph/", {"zone": ZONE, "q": 'Who approved "it"? <b>'}).content.decode()
    assert 'value="Who approved &quot;it&quot;? &lt;b&gt;"' in html
    assert "<b>" not in html.split('name="q"', 1)[1].split(">", 1)[0]


def test_the_explorer_needs_a_login(org: Any) -> None:
    response = Client().get("/graph/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_the_responsibility_fragment_draws_the_decisions_chain(
    person: Callable[..., Any], decided: Callable[..., dict[str, Any]]
) -> None:
    from coordinates.models import Role

    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    reader = logged_in(person("rita", Role.REVIEWER, ZONE))
    fragment = reader.get(f"/graph/decisions/{made['id']}/responsibility/")
    assert fragment.status_code == 200
    url = f"/api/v1/graph/decisions/{made['id']}/responsibility/"
    assert f'data-responsibility-url="{url}"' in fragment.content.decode()
    assert reader.get(url).json()["root"] == f"decision:{made['id']}"
    outsider = logged_in(person("otto", Role.REVIEWER, "G1.U1.P2.Z1"))
    assert outsider.get(f"/graph/decisions/{made['id']}/responsibility/").status_code == 404
