"""The graph explorer, in headless Chromium, draws a planet's answer whose zones hold nodes of
one key as that many nodes, each zone's edge between its own two: the drawing tells nodes
apart by their id, as the API does, never by their key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest

from coordinates.models import Role
from tests.graph.conftest import ZONE
from tests.graph.test_risk_levels import PLANET, SISTER, lease_rows, post_lines, sister_admin
from tests.web.test_browser import CHROMIUM, LiveASGI, browser, committed_trail, live_asgi, log_in

__all__ = ["browser", "committed_trail", "live_asgi", "sister_admin"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]


def test_a_planet_answer_is_drawn_with_each_zones_nodes_of_one_key_apart(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    admin_api: Any,
    sister_admin: Any,
    person: Callable[..., Any],
) -> None:
    # given two zones of the planet, each with its own decision:lease approved by its own
    # person:officer, and the planet's reviewer
    post_lines(admin_api, ZONE, lease_rows("Tokyo"))
    post_lines(sister_admin, SISTER, lease_rows("Osaka"))
    person("pia", Role.REVIEWER, PLANET)
    # when she asks the planet's graph about printers in the explorer
    pia = log_in(browser, live_asgi.url, "pia")
    pia.goto(f"{live_asgi.url}/graph/?" + urlencode({"zone": PLANET, "q": "printer"}))
    pia.wait_for_selector("#graph-gate:not(:empty)")
    drawn = pia.evaluate(
        "() => { const cy = document.getElementById('graph-canvas')._cyreg.cy;"
        " const label = id => cy.getElementById(id).data('label');"
        " const ends = e => label(e.data('source')) + ' > ' + label(e.data('target'));"
        " return { nodes: cy.nodes().map(n => n.data('label')).sort(),"
        " edges: cy.edges('[line = \"solid\"]').map(ends).sort(),"
        " gaps: cy.edges('[line = \"dashed\"]').map(e => [e.data('source'), e.data('target')]) }; }"
    )
    # then four nodes are drawn, and each office's edge joins its own two
    assert drawn["nodes"] == [
        "printer lease Osaka", "printer lease Tokyo",
        "printer officer Osaka", "printer officer Tokyo",
    ]  # fmt: skip
    assert drawn["edges"] == [
        "printer lease Osaka > printer officer Osaka",
        "printer lease Tokyo > printer officer Tokyo",
    ]
    # and a structural gap, where the answer has one, joins two different nodes
    assert all(source != target for source, target in drawn["gaps"]), drawn["gaps"]
