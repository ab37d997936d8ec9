"""Web pages of the knowledge graph: the explorer and the responsibility fragment that the
decision page includes. Thin: the pages draw what the REST API returns."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from coordinates.coordinate import Level
from coordinates.selectors import in_scopes, visible_zones
from decisions.models import Decision
from evidence.selectors import reader_scopes
from maria.errors import NotFound


@login_required
def explorer(request: HttpRequest) -> HttpResponse:
    """Ask the graph a question in a zone; see the evidence subgraph, its cohesion against the
    zone's threshold, the gate outcome, structural gaps and risk concentration. `?zone=&q=`
    (the links from the queue's risk hotspots) fill the form in and ask at once."""
    # A zone, or a level the reader reads whole (a planet's reviewer asks the planet: its
    # zones' graphs together); levels above the reader's scopes are seen but not read.
    scopes = reader_scopes(request.user)
    places = sorted(
        z.coordinate
        for z in visible_zones(request.user)
        if z.level != Level.AGENT and (z.level == Level.ZONE or in_scopes(z.coordinate, scopes))
    )
    zones = [p for p in places if p.count(".") == 3]
    return render(
        request,
        "graph/explorer.html",
        {
            "zones": places,
            "zone": request.GET.get("zone") or (zones[0] if zones else ""),
            "q": request.GET.get("q", "")[:2000],
        },
    )


@login_required
def responsibility_fragment(request: HttpRequest, pk: int) -> HttpResponse:
    """The responsibility chain of one decision as a picture (for the decision page)."""
    zone = Decision.objects.filter(pk=pk).values_list("zone", flat=True).first()
    if zone is None or not in_scopes(zone, reader_scopes(request.user)):
        raise NotFound("no such decision")
    return render(request, "graph/_responsibility.html", {"decision_id": pk})
