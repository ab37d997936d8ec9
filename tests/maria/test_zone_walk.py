"""Every URL of the URL conf, walked by the principals of one zone against another zone's
rows: no read shows zone B's ids, keys, texts or coordinate, no write changes anything outside
zone A, nothing answers 500 (issue 14 point 5; DESIGN section 9: "No principal reads or
writes another zone's rows, graph included").

The walk is generated from `django.urls.get_resolver()`: every route must be in ROUTES (what
to substitute for its path converters, which queries and bodies to send) or in SKIPPED (with
the reason), so a new endpoint fails `test_the_walk_knows_every_url` until someone says how
to walk it. The admin is walked on its own: zone principals are not staff.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.core.cache import cache
from django.db import connection
from django.db.models import Q
from django.http import StreamingHttpResponse
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from coordinates.coordinate import parse
from coordinates.models import ApiToken, Role, RoleAssignment, Zone, ZonePolicyVersion
from coordinates.selectors import zone_get
from coordinates.services import policy_update, role_grant, token_issue, user_ensure, zone_add
from decisions import services as decisions
from decisions.calibration import calibration_propose
from decisions.models import (
    Approval,
    ClaimVerdict,
    Comment,
    Decision,
    Outbox,
    PeriodicReview,
    ReReview,
)
from evidence.knowledge import conflict_resolve
from evidence.models import (
    Document,
    DocumentVersion,
    EvidenceBundle,
    KnowledgeConflict,
    Paragraph,
    ZoneCalibration,
)
from evidence.services import document_ingest
from gates.models import SavedFilter
from graph import store
from graph.models import EdgeOrigin, GraphEdge, GraphNode, GraphRiskFlag
from graph.services import graph_risk_scan_all
from trail.ledger import LANE_MARK
from trail.models import TrailEvent

ZONE_A = "G1.U1.P1.Z1"
ZONE_B = "G1.U1.P2.Z9"  # a zone of another planet: A and B share only G1 and G1.U1
PLANET_B = "G1.U1.P2"
AGENT_A = f"{ZONE_A}.A1"
AGENT_B = f"{ZONE_B}.A1"
Answer = Any  # the test client's response (a Django HttpResponse with .json())
MISSING = 987_654_321  # an id no row holds: the answer for B's ids must be the same
B_IDEMPOTENCY_KEY = "quokka-submission-1"

# Zone B's texts carry words nothing of zone A's does ("quokka", "zanzibar"): any of them in
# an answer to a principal of A is a leak, wherever it hides (a label, a paragraph, a title).
A_POLICY = """Travel and Expense Policy

1. Scope
This policy applies to all employees of the finance division.

2. Approval
Expenses above 500,000 yen require prior approval by the division head.
Expenses of 500,000 yen or less are approved by the team manager.
"""
A_GOOD = "Expenses above 500,000 yen require prior approval by the division head."
B_POLICY = """Quokkafund Reimbursement Rules

1. Scope
These rules apply to the quokkafund staff of the Zanzibar office.

2. Approval
Quokkafund claims above 700,000 yen require prior approval by the zanzibar director.
Quokkafund claims of 700,000 yen or less are approved by the office lead.
"""
B_AUDIT = "\n3. Audit\nQuokkafund ledgers are audited by the zanzibar auditors every quarter.\n"
B_GOOD = "Quokkafund claims above 700,000 yen require prior approval by the zanzibar director."
B_WRONG = "Quokkafund claims above 200,000 yen require prior approval by the zanzibar director."
B_QUESTION = "Who approves quokkafund claims in zanzibar?"
# A memo that disagrees with B's policy (a knowledge-base conflict of B's)
B_MEMO = (
    "Quokkafund memo\n\n"
    "Quokkafund claims above 900,000 yen require prior approval by the zanzibar director.\n"
)


# --- the two zones ---------------------------------------------------------------------------


@dataclass
class World:
    """Zone B's rows by kind (what the walk addresses) and the markers that betray them."""

    ids: dict[str, list[int]] = field(default_factory=dict)  # kind -> B's ids the walk sends
    every: dict[str, list[int]] = field(default_factory=dict)  # kind -> all of B's ids
    keys: list[str] = field(default_factory=list)  # zone B's graph node keys
    hashes: list[str] = field(default_factory=list)  # B's version, bundle and report hashes
    a_decision: int = 0
    b_paragraph: int = 0  # the number of B's approval paragraph
    clients: dict[str, Client] = field(default_factory=dict)  # zone A's principals
    b_reviewer: Client | None = None

    def first(self, kind: str) -> int:
        return self.ids[kind][0]


def _zone(coordinate: str) -> Any:
    return zone_add(coordinate=parse(coordinate))


def _policy(coordinate: str, **overrides: Any) -> None:
    zone = zone_get(parse(coordinate))
    policy_update(zone=zone, overrides=overrides, reason="walk set-up", actor=None)


def _person(username: str, role: str, scope: str) -> User:
    user = user_ensure(username=username)
    role_grant(user=user, role=role, scope=parse(scope))
    return user


def _session(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _bearer(**owner: Any) -> Client:
    _, key = token_issue(**owner)
    return Client(HTTP_AUTHORIZATION=f"Bearer {key}")


def _body(zone: str, agent: str, claims: list[tuple[str, int, int]], question: str) -> Any:
    return {
        "question": question,
        "answer": " ".join(text for text, _, _ in claims),
        "zone": zone,
        "agent": agent,
        "claims": [
            {"text": text, "citations": [{"document": document, "paragraph": number}]}
            for text, document, number in claims
        ],
    }


def _submit(client: Client, body: Any, on_commit: Any, key: str = "") -> int:
    headers: dict[str, Any] = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    with on_commit(execute=True):
        response = client.post(
            "/api/v1/decisions/", json.dumps(body), content_type="application/json", **headers
        )
    assert response.status_code == 201, response.content
    return int(response.json()["id"])


def _import(client: Client, zone: str, rows: list[dict[str, str]], on_commit: Any) -> None:
    body = "\n".join(json.dumps(row) for row in rows)
    with on_commit(execute=True):
        response = client.post(
            f"/api/v1/graph/import/?zone={zone}", body, content_type="application/x-ndjson"
        )
    assert response.status_code == 201, response.content


def _edge(source: str, target: str, kind: str, label: str, tt: str = "person") -> dict[str, str]:
    return {
        "source": source,
        "source_type": "decision",
        "source_label": label,
        "target": target,
        "target_type": tt,
        "target_label": f"{label}: {target}",
        "type": kind,
    }


def _one_of_each(rows: Any, *fields: str) -> list[int]:
    """The lowest id of each combination of `fields` among `rows`."""
    first: dict[tuple[Any, ...], int] = {}
    for pk, *kind in rows.order_by("pk").values_list("pk", *fields):
        first.setdefault(tuple(kind), pk)
    return sorted(first.values())


def build_world(on_commit: Any) -> World:
    """Both zones through the real services and endpoints: documents with versions, decisions
    in every state, graph nodes, edges and risk flags, saved filters, tokens with a webhook;
    zone A's principals as clients."""
    world = World()
    for coordinate in (ZONE_A, ZONE_B):
        _zone(coordinate)
    _policy(ZONE_A, tau=0.3, refusal_floor=0.2, floor=0.05)
    _policy(ZONE_B, tau=0.3, refusal_floor=0.2, floor=0.05, risk_threshold=0.6)

    def ingest(coordinate: str, text: str, title: str, key: str) -> Document:
        with on_commit(execute=True):
            zone = zone_get(parse(coordinate))
            done = document_ingest(
                zone=zone, raw=text, kind="policy", status="approved", title=title, key=key
            )
        return done.document

    # documents: A's one version; B's two (the second supersedes the first)
    a_doc = ingest(ZONE_A, A_POLICY, "Travel policy", "travel")
    ingest(ZONE_B, B_POLICY, "Quokkafund rules", "quokkafund-rules")
    b_doc = ingest(ZONE_B, B_POLICY + B_AUDIT, "Quokkafund rules", "quokkafund-rules")
    a_par = Paragraph.objects.get(text__contains="500,000 yen require", current=True)
    b_par = Paragraph.objects.get(text__contains="700,000 yen require", current=True)
    world.b_paragraph = b_par.number

    # people: zone B's, who make B's rows, and zone A's, who walk
    # (people are shared graph nodes by design, "person:<username>": their names are no
    # zone's marker)
    b_reviewer = _person("bianca", Role.REVIEWER, ZONE_B)
    b_second = _person("bruno", Role.REVIEWER, ZONE_B)
    b_admin = _person("basil", Role.ZONE_ADMIN, ZONE_B)
    _person("berta", Role.AUDITOR, ZONE_B)
    a_reviewer = _person("alma-reviewer", Role.REVIEWER, ZONE_A)
    a_admin = _person("arno-admin", Role.ZONE_ADMIN, ZONE_A)
    a_auditor = _person("aida-auditor", Role.AUDITOR, ZONE_A)
    override = Permission.objects.get(codename="override_blocked")
    a_admin.user_permissions.add(override)  # the strongest zone principal A has
    b_agent = _bearer(agent=parse(AGENT_B))
    _bearer(agent=parse(f"{ZONE_B}.A2"), webhook_url="http://127.0.0.1:9/quokka-hooks")
    _bearer(user=b_reviewer, label="bianca's laptop")
    b_api = _session(b_admin)

    # decisions: A's one completed, one waiting; B's in every state
    a_agent = _bearer(agent=parse(AGENT_A))
    claims_a = [(A_GOOD, a_doc.pk, a_par.number)]
    world.a_decision = _submit(
        a_agent, _body(ZONE_A, AGENT_A, claims_a, "Who approves travel?"), on_commit
    )
    good = [(B_GOOD, b_doc.pk, b_par.number)]
    completed = _submit(
        b_agent, _body(ZONE_B, AGENT_B, good, B_QUESTION), on_commit, key=B_IDEMPOTENCY_KEY
    )
    blocked = _submit(
        b_agent, _body(ZONE_B, AGENT_B, [(B_WRONG, b_doc.pk, b_par.number)], B_QUESTION), on_commit
    )
    _policy(ZONE_A, tau=0.99, refusal_floor=0.05)
    _submit(a_agent, _body(ZONE_A, AGENT_A, claims_a, "Who approves travel, again?"), on_commit)
    _policy(ZONE_B, tau=0.99, refusal_floor=0.05, risk_threshold=0.6)
    waiting = [
        _submit(b_agent, _body(ZONE_B, AGENT_B, good, f"{B_QUESTION} ({n})"), on_commit)
        for n in range(4)
    ]
    with on_commit(execute=True):
        decisions.decision_claim(decision_id=waiting[1], user=b_reviewer)
        # Their verdicts per claim carry B's words too: the reviews export must not leak them.
        decisions.decision_reject(
            decision_id=waiting[2],
            user=b_second,
            reason="quokka no",
            claims=[{"index": 0, "supported": False, "note": "quokka unsupported"}],
        )
        decisions.decision_approve(
            decision_id=waiting[3],
            user=b_reviewer,
            reason="quokka ok",
            claims=[{"index": 0, "supported": True, "note": "quokka fine"}],
        )
    states = set(Decision.objects.filter(zone=ZONE_B).values_list("state", "gate"))
    assert {s for s, _ in states} >= {"completed", "failed", "approval_required"}, states
    assert ("failed", "blocked") in states
    assert Decision.objects.get(pk=completed).state == "completed"
    assert Decision.objects.get(pk=blocked).gate == "blocked"

    # graph: the pipeline fed both zones; B also gets an import, a node, an edge by hand, a
    # shared person with an edge from each zone, and a hotspot flagged for review
    busy = [
        _edge(f"decision:quokka-{n}", "person:quokka-busy", "approved_by", f"Quokka call {n}")
        for n in range(3)
    ] + [_edge("decision:quokka-3", "person:quokka-idle", "approved_by", "Quokka call 3")]
    _import(b_api, ZONE_B, busy, on_commit)
    with on_commit(execute=True):
        assert (
            b_api.post(
                "/api/v1/graph/nodes/",
                {"key": "risk:zanzibar-fx", "type": "risk", "label": "Zanzibar FX", "zone": ZONE_B},
                content_type="application/json",
            ).status_code
            == 201
        )
        assert (
            b_api.post(
                "/api/v1/graph/edges/",
                {
                    "source": "decision:quokka-0",
                    "target": "risk:zanzibar-fx",
                    "type": "caused_by",
                    "zone": ZONE_B,
                },
                content_type="application/json",
            ).status_code
            == 201
        )
        shared = store.node_ensure(key="person:walk-shared", node_type="person", label="Shared")
        for coordinate, source in (
            (ZONE_A, f"decision:{world.a_decision}"),
            (ZONE_B, "decision:quokka-0"),
        ):
            store.edge_upsert(
                source=GraphNode.objects.get(key=source),
                target=shared,
                edge_type="approved_by",
                zone=coordinate,
                origin=EdgeOrigin.PIPELINE,
            )
        graph_risk_scan_all(zones=[ZONE_B])
    assert GraphRiskFlag.objects.filter(zone=ZONE_B).exists()

    # a saved filter of B's reviewer, made on the queue page
    b_queue = _session(b_reviewer)
    saved = b_queue.post("/queue/filters/", {"name": "quokka queue", "zone": ZONE_B})
    assert saved.status_code == 302

    # the reviewers' other work in B: a knowledge-base conflict (resolved against the policy,
    # which opens a re-review of B's answer on it), a comment, a periodic review and a
    # calibration fitted on B's verdicts
    ingest(ZONE_B, B_MEMO, "Quokkafund memo", "quokkafund-memo")
    conflict = KnowledgeConflict.objects.get(zone=ZONE_B)
    with on_commit(execute=True):
        conflict_resolve(
            conflict_id=conflict.pk,
            user=b_admin,
            resolution="second" if conflict.first_id == b_par.pk else "first",
            reason="quokka memo governs",
        )
    assert ReReview.objects.filter(zone=ZONE_B).exists()
    ingest(ZONE_B, B_MEMO.replace("900,000", "950,000"), "Quokkafund note", "quokkafund-note")
    assert KnowledgeConflict.objects.filter(zone=ZONE_B, resolved_at=None).exists()
    with on_commit(execute=True):
        decisions.decision_comment(decision_id=completed, user=b_reviewer, text="quokka comment")
    PeriodicReview.objects.get_or_create(
        decision_id=completed, defaults={"zone": ZONE_B, "reason": "quokka flagged for review"}
    )
    ClaimVerdict.objects.bulk_create(
        ClaimVerdict(
            decision_id=waiting[2],
            reviewer=b_second,
            action=ClaimVerdict.Action.REJECT,
            claim=n + 1,
            supported=n % 3 == 0,
            engine_supported=True,
            engine_probability=0.5 + n / 200,
            zone=ZONE_B,
        )
        for n in range(60)
    )
    calibration_propose(zone=zone_get(parse(ZONE_B)), fitted_by="walk set-up")
    assert ZoneCalibration.objects.filter(zone__coordinate=ZONE_B).exists()

    b_nodes = GraphNode.objects.filter(Q(zone=ZONE_B) | Q(zone__startswith=f"{ZONE_B}."))
    b_decisions = Decision.objects.filter(zone=ZONE_B)
    world.ids = {
        "document": list(
            Document.objects.filter(zone__coordinate=ZONE_B).values_list("pk", flat=True)
        ),
        "decision": list(b_decisions.order_by("pk").values_list("pk", flat=True)),
        # one node of each type and one edge of each origin and type: the walk sends ten
        # requests per row and principal, and rows of one kind answer alike
        "node": _one_of_each(b_nodes, "node_type"),
        "edge": _one_of_each(GraphEdge.objects.filter(zone=ZONE_B), "origin", "edge_type"),
        "flag": list(GraphRiskFlag.objects.filter(zone=ZONE_B).values_list("pk", flat=True)),
        "saved_filter": list(
            SavedFilter.objects.filter(user=b_reviewer).values_list("pk", flat=True)
        ),
        "role": list(RoleAssignment.objects.filter(scope=ZONE_B).values_list("pk", flat=True)),
        "conflict": list(
            KnowledgeConflict.objects.filter(zone=ZONE_B).values_list("pk", flat=True)
        ),
        "rereview": list(ReReview.objects.filter(zone=ZONE_B).values_list("pk", flat=True)),
        "periodic": list(PeriodicReview.objects.filter(zone=ZONE_B).values_list("pk", flat=True)),
        "version": list(
            ZoneCalibration.objects.filter(zone__coordinate=ZONE_B).values_list(
                "version", flat=True
            )
        ),
    }
    assert all(world.ids.values()), world.ids
    world.every = {
        **world.ids,
        "node": list(b_nodes.values_list("pk", flat=True)),
        "edge": list(GraphEdge.objects.filter(zone=ZONE_B).values_list("pk", flat=True)),
    }
    world.keys = list(b_nodes.values_list("key", flat=True))
    world.hashes = [
        *DocumentVersion.objects.filter(document__zone__coordinate=ZONE_B).values_list(
            "content_hash", flat=True
        ),
        *EvidenceBundle.objects.filter(zone=ZONE_B).values_list("content_hash", flat=True),
        *b_decisions.exclude(report=None).values_list("report__content_hash", flat=True),
    ]
    world.clients = {
        "agent": a_agent,
        "reviewer": _session(a_reviewer),
        "reviewer-token": _bearer(user=a_reviewer, label="alma's token"),
        "zone-admin": _session(a_admin),
        "auditor": _session(a_auditor),
    }
    world.b_reviewer = b_queue
    return world


# --- what counts as zone B ------------------------------------------------------------------


@dataclass(frozen=True)
class Marker:
    what: str
    pattern: re.Pattern[str]


def markers(world: World) -> list[Marker]:
    """What only zone B's rows say: its coordinate (and its planet's), its words, its node
    keys (exactly: decision:12 is not decision:123) and its content hashes."""
    found = [
        Marker("zone B's coordinate", re.compile(r"G1\.U1\.P2(?![0-9])")),
        Marker("zone B's words", re.compile(r"quokka|zanzibar", re.IGNORECASE)),
    ]
    found += [
        Marker(f"node key {k}", re.compile(rf"(?<![\w:-]){re.escape(k)}(?![\w-])"))
        for k in world.keys
    ]
    found += [Marker(f"hash {h[:12]}", re.compile(re.escape(h))) for h in world.hashes]
    return found


def b_links(world: World) -> list[str]:
    """Every path of the URL conf that names one of B's rows: a page linking one shows it."""
    links = []
    for route in walked_routes():
        spec = ROUTES[route.route]
        kinds = [k for k in spec.params.values() if k in world.ids]
        if len(kinds) != 1 or len(spec.params) != 1:
            continue
        (name,) = spec.params
        for pk in world.every[kinds[0]]:
            links.append("/" + route.route.replace(f"<int:{name}>", str(pk)))
    return links


def _text(response: Answer) -> str:
    if isinstance(response, StreamingHttpResponse):
        return b"".join(response.streaming_content).decode(errors="replace")  # type: ignore[arg-type]
    return response.content.decode(errors="replace")


def _json_ids(body: Any, list_key: str) -> list[int]:
    rows = body.get(list_key, []) if isinstance(body, dict) else []
    return [row["id"] for row in rows if isinstance(row, dict) and "id" in row]


# --- the routes ----------------------------------------------------------------------------

Body = Callable[[World], Any]


@dataclass(frozen=True)
class Own:
    """A write into the caller's own zone that names B's rows: it may succeed (it is A's
    zone), but it must change nothing outside A and show nothing of B."""

    method: str
    body: Body
    query: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Spec:
    """How to walk one route. `writes`: "refused" (a write naming B's rows must get a 4xx),
    "own" (every write lands in the caller's own rows: it may succeed, B must not change) or
    "read" (the view answers every method with the same page: a read)."""

    params: Mapping[str, str] = field(default_factory=dict)  # converter -> kind of B's rows
    queries: Callable[[World], Sequence[str]] = lambda w: ("",)  # for GET
    body: Body = lambda w: {}  # for POST, PUT, PATCH (JSON for the API, a form for pages)
    write_query: str = ""  # on every write (DELETE's reason, the import's zone)
    lists: str | None = None  # the key of the JSON list whose ids must not be B's
    own: tuple[Own, ...] = ()
    content_type: str | None = None  # of the write body, when not JSON or a form
    writes: str = "refused"


ALL_ZONES = (ZONE_B, PLANET_B, "G1.U1", "G1")  # B, B's planet, and the levels both share


def zone_queries() -> Callable[[World], Sequence[str]]:
    return lambda w: ["", *(f"?zone={z}" for z in ALL_ZONES)]


def decision_body(zone: str, agent: str, text: str = B_GOOD) -> Body:
    def make(w: World) -> Any:
        return _body(zone, agent, [(text, w.first("document"), w.b_paragraph)], "Who approves?")

    return make


# A's own agent citing B's paragraph, in words of its own: whatever of B comes back is B's.
CITING_B = "Claims above 700,000 yen require prior approval by the director."


def import_rows(w: World) -> str:
    rows = [_edge("decision:walk-a", k, "references", "Walk") for k in w.keys[:3]]
    return "\n".join(json.dumps(row) for row in rows)


def own_import_rows(w: World) -> str:
    """A's import naming B's keys bare: keys are unique per zone, so for A they are unknown
    (typed, they would be new nodes of A's own, whose keys then read like B's)."""
    rows = [
        {"source": "decision:walk-a", "source_type": "decision", "target": k, "type": "references"}
        for k in w.keys[:3]
    ]
    return "\n".join(json.dumps(row) for row in rows)


def plain_answer_body(answer: str) -> Body:
    """A's own agent's plain answer with B's paragraphs (current and superseded) as sources."""

    def make(w: World) -> Any:
        source = {"document": w.first("document"), "paragraph": w.b_paragraph}
        return {
            "question": "Who approves?",
            "answer": answer,
            "zone": ZONE_A,
            "agent": AGENT_A,
            "sources": [source, {**source, "version": 1}],
        }

    return make


REVIEW = {"reason": "walk", "action": "dismiss", "note": "walk"}
POLICY = {"reason": "walk", "tau": 0.11, "risk_threshold": 0.9}
ZONE_FORM = {**POLICY, "username": "alma-reviewer", "role": "reviewer"}

ROUTES: dict[str, Spec] = {
    "": Spec(writes="read"),  # the landing page, for every method
    # --- coordinates
    "api/v1/zones/": Spec(),
    "api/v1/zones/<str:coordinate>/policy/": Spec(
        params={"coordinate": "coordinate"}, body=lambda w: POLICY
    ),
    "api/v1/zones/<str:coordinate>/kpis/": Spec(
        params={"coordinate": "coordinate"}, queries=lambda w: ["", "?since=2026-01-01"]
    ),
    # --- evidence
    "api/v1/documents/": Spec(
        queries=zone_queries(),
        lists="documents",
        body=lambda w: {
            "title": "Walk",
            "kind": "policy",
            "status": "approved",
            "zone": ZONE_B,
            "text": "Walk text.\n",
        },
        own=(
            Own(
                "POST",
                lambda w: {
                    "kind": "policy",
                    "status": "approved",
                    "zone": ZONE_A,
                    "supersedes": w.first("document"),
                    "text": "A takes over B's document.\n",
                },
            ),
        ),
    ),
    "api/v1/documents/<int:pk>/": Spec(
        params={"pk": "document"}, queries=lambda w: ("", "?version=1", "?version=2")
    ),
    "api/v1/search/": Spec(
        queries=lambda w: [
            f"?q={q}{z}{s}"
            for q in ("quokkafund+claims+approval", "Who+approves+claims+above+700,000+yen")
            for z in ("", *(f"&zone={z}" for z in (*ALL_ZONES, ZONE_A)))
            for s in ("", "&include_superseded=1")
        ]
    ),
    # --- decisions
    "api/v1/decisions/": Spec(
        queries=lambda w: [
            *zone_queries()(w),
            "?state=approval_required",
            "?state=failed&gate=blocked",
            "?state=completed",
        ],
        lists="results",
        body=decision_body(ZONE_B, AGENT_B),
        own=(
            Own("POST", decision_body(ZONE_A, AGENT_A, CITING_B)),
            Own(
                "POST",
                decision_body(ZONE_A, AGENT_A, CITING_B),
                headers={"HTTP_IDEMPOTENCY_KEY": B_IDEMPOTENCY_KEY},
            ),
            Own("POST", plain_answer_body(f"{CITING_B} [1]")),  # a marker names B's paragraph
            Own("POST", plain_answer_body(CITING_B)),  # B's paragraph offered for alignment
        ),
    ),
    "api/v1/decisions/<int:pk>/": Spec(params={"pk": "decision"}),
    "api/v1/ask/": Spec(
        body=lambda w: {"question": "Who approves claims above 700,000 yen?", "zone": ZONE_B},
        own=(
            Own(
                "POST",
                lambda w: {"question": "Who approves claims above 700,000 yen?", "zone": ZONE_A},
            ),
        ),
    ),
    **{
        f"api/v1/decisions/<int:pk>/{action}/": Spec(
            params={"pk": "decision"}, body=lambda w: {"reason": "walk"}
        )
        for action in ("claim", "release", "approve", "reject", "override", "send-back")
    },
    # --- the trail (audit/api.py)
    "api/v1/trail/": Spec(
        queries=lambda w: [
            *zone_queries()(w),
            "?include=evidence",
            f"?zone={ZONE_A}&include=evidence",
        ]
    ),
    "api/v1/trail/public-key/": Spec(),
    # --- the reviews export (decisions/api_reviews.py)
    "api/v1/reviews/export/": Spec(queries=lambda w: [*zone_queries()(w), "?since=2026-01-01"]),
    # --- the graph API
    "api/v1/graph/query/": Spec(
        queries=lambda w: [
            f"?q={q}&zone={z}{m}"
            for q in ("Who+approves+large+claims", "policy")
            for z in (*ALL_ZONES, ZONE_A)
            for m in ("", "&method=ppr")
        ]
    ),
    "api/v1/graph/paths/": Spec(
        queries=lambda w: [
            f"?source={w.keys[0]}&target={w.keys[-1]}",
            "?source=decision:quokka-0&target=person:quokka-busy",
            f"?source=decision:{w.a_decision}&target=person:walk-shared",
            f"?source={w.first('node')}&target={w.ids['node'][-1]}",
        ]
    ),
    "api/v1/graph/risk/": Spec(queries=lambda w: [f"?zone={z}" for z in (*ALL_ZONES, ZONE_A)]),
    "api/v1/graph/risk/flags/": Spec(
        queries=lambda w: [*zone_queries()(w), "?status=open", "?status=dismissed"],
        lists="flags",
    ),
    "api/v1/graph/risk/flags/<int:pk>/resolve/": Spec(params={"pk": "flag"}, body=lambda w: REVIEW),
    "api/v1/graph/decisions/<int:pk>/responsibility/": Spec(params={"pk": "decision"}),
    "api/v1/graph/nodes/": Spec(
        queries=lambda w: [*zone_queries()(w), "?q=quokka", "?type=risk", "?type=policy"],
        lists="nodes",
        body=lambda w: {"key": "risk:walk", "type": "risk", "label": "Walk", "zone": ZONE_B},
        own=(
            Own(
                "POST",
                # A's own key (B's keys are another zone's: the answer of a free key, see
                # tests/maria/test_zone_oracles.py, and a node of A's own under it)
                lambda w: {"key": "risk:walk-a", "type": "risk", "label": "Mine", "zone": ZONE_A},
            ),
            Own(
                "POST",
                lambda w: {
                    "key": "person:walk-shared",
                    "type": "person",
                    "label": "Mine",
                    "zone": ZONE_A,
                },
            ),
        ),
    ),
    "api/v1/graph/nodes/<int:pk>/": Spec(params={"pk": "node"}, write_query="?reason=walk"),
    "api/v1/graph/edges/": Spec(
        queries=lambda w: [f"?zone={z}" for z in (*ALL_ZONES, ZONE_A)],
        lists="edges",
        body=lambda w: {
            "source": {"key": "decision:walk-b", "type": "decision"},
            "target": {"key": "risk:walk-b", "type": "risk"},
            "type": "caused_by",
            "zone": ZONE_B,
        },
        own=(
            Own(
                "POST",
                lambda w: {
                    "source": {"key": "decision:walk-a", "type": "decision"},
                    "target": w.keys[0],
                    "type": "references",
                    "zone": ZONE_A,
                },
            ),
            Own(
                "POST",
                lambda w: {
                    "source": w.keys[0],
                    "target": "person:walk-shared",
                    "type": "approved_by",
                    "zone": ZONE_A,
                },
            ),
        ),
    ),
    "api/v1/graph/edges/<int:pk>/": Spec(params={"pk": "edge"}, write_query="?reason=walk"),
    "api/v1/graph/import/": Spec(
        body=import_rows,
        write_query=f"?zone={ZONE_B}",
        content_type="application/x-ndjson",
        own=(Own("POST", own_import_rows, query=f"?zone={ZONE_A}"),),
    ),
    # --- the graph pages
    "graph/": Spec(  # the explorer page, for every method; it asks the API from the browser
        queries=lambda w: ["", *(f"?zone={z}&q=claims" for z in ALL_ZONES)], writes="read"
    ),
    "graph/decisions/<int:pk>/responsibility/": Spec(params={"pk": "decision"}),
    # --- the reviewer's and zone admin's pages (gates)
    "queue/": Spec(queries=lambda w: [*zone_queries()(w), "?q=quokka", "?state=claimed"]),
    "queue/rows/": Spec(queries=lambda w: [*zone_queries()(w), "?q=quokka"]),
    "queue/bulk/": Spec(  # per decision it says why not: B's must stay as they are
        body=lambda w: {"action": "assign", "decisions": w.ids["decision"], "assignee": ""},
        writes="own",
    ),
    "queue/filters/": Spec(  # the caller's own saved filter: B's must stay as they are
        body=lambda w: {"name": "walk", "zone": ZONE_A}, writes="own"
    ),
    "queue/filters/<int:pk>/delete/": Spec(params={"pk": "saved_filter"}),
    "queue/decisions/<int:pk>/": Spec(params={"pk": "decision"}),
    "queue/decisions/<int:pk>/<slug:action>/": Spec(
        params={"pk": "decision", "action": "action"}, body=lambda w: {"reason": "walk"}
    ),
    "queue/risk-flags/<int:pk>/resolve/": Spec(params={"pk": "flag"}, body=lambda w: REVIEW),
    "zones/": Spec(),
    "zones/<str:coordinate>/": Spec(params={"coordinate": "coordinate"}, body=lambda w: POLICY),
    "zones/<str:coordinate>/dashboard/": Spec(  # the governance figures of B's levels
        params={"coordinate": "coordinate"}, queries=lambda w: ["", "?since=2026-01-01"]
    ),
    "zones/<str:coordinate>/learning/": Spec(  # what B's levels' answers teach
        params={"coordinate": "coordinate"}, queries=lambda w: ["", "?since=2026-01-01"]
    ),
    "zones/<str:coordinate>/preview/": Spec(
        params={"coordinate": "coordinate"}, body=lambda w: POLICY
    ),
    "zones/<str:coordinate>/roles/": Spec(
        params={"coordinate": "coordinate"}, body=lambda w: ZONE_FORM
    ),
    "zones/<str:coordinate>/roles/<int:pk>/revoke/": Spec(
        params={"coordinate": "any_coordinate", "pk": "role"}
    ),
    # --- the reviewers' other work: periodic review, re-review, comments, assignment
    # (its ids are the reviews', not the decisions': B's words and coordinate betray a leak)
    "api/v1/periodic-reviews/": Spec(queries=lambda w: [*zone_queries()(w), "?state=closed"]),
    **{
        f"api/v1/periodic-reviews/<int:pk>/{action}/": Spec(
            params={"pk": "periodic"}, body=lambda w: {"verdict": "ok", "note": "walk"}
        )
        for action in ("claim", "release", "close")
    },
    "reviews/periodic/": Spec(queries=lambda w: [*zone_queries()(w), "?state=closed"]),
    "reviews/periodic/<int:pk>/": Spec(params={"pk": "periodic"}),
    "reviews/periodic/<int:pk>/<slug:action>/": Spec(
        params={"pk": "periodic", "action": "periodic_action"},
        body=lambda w: {"verdict": "ok", "note": "walk"},
    ),
    "api/v1/rereviews/": Spec(queries=lambda w: ["", "?state=closed"], lists="rereviews"),
    "api/v1/rereviews/<int:pk>/close/": Spec(
        params={"pk": "rereview"}, body=lambda w: {"verdict": "still_correct"}
    ),
    "reviews/changed/": Spec(queries=lambda w: ["", "?state=closed"]),
    "reviews/changed/<int:pk>/close/": Spec(
        params={"pk": "rereview"}, body=lambda w: {"verdict": "still_correct"}
    ),
    "api/v1/decisions/<int:pk>/comments/": Spec(
        params={"pk": "decision"}, body=lambda w: {"text": "walk"}
    ),
    "api/v1/decisions/<int:pk>/assign/": Spec(
        params={"pk": "decision"}, body=lambda w: {"assignee": "alma-reviewer"}
    ),
    "api/v1/decisions/bulk/": Spec(  # per decision it says why not: B's must stay as they are
        body=lambda w: {"action": "release", "decisions": w.ids["decision"]},
        own=(
            Own(
                "POST",
                lambda w: {
                    "action": "assign",
                    "decisions": w.ids["decision"],
                    "assignee": "alma-reviewer",
                },
            ),
        ),
        writes="own",
    ),
    # --- the zone admin's knowledge: conflicts, calibration, advice, documents
    "api/v1/zones/<str:coordinate>/conflicts/": Spec(
        params={"coordinate": "coordinate"}, queries=lambda w: ["", "?state=resolved"]
    ),
    "api/v1/conflicts/<int:pk>/resolve/": Spec(
        params={"pk": "conflict"}, body=lambda w: {"resolution": "first", "reason": "walk"}
    ),
    "zones/<str:coordinate>/conflicts/": Spec(
        params={"coordinate": "coordinate"}, queries=lambda w: ["", "?state=resolved"]
    ),
    "zones/<str:coordinate>/conflicts/<int:pk>/resolve/": Spec(
        params={"coordinate": "any_coordinate", "pk": "conflict"},
        body=lambda w: {"resolution": "first", "reason": "walk"},
    ),
    "api/v1/zones/<str:coordinate>/calibration/": Spec(params={"coordinate": "coordinate"}),
    **{
        f"{prefix}zones/<str:coordinate>/calibration/<int:version>/{step}/": Spec(
            params={"coordinate": "coordinate", "version": "version"},
            body=lambda w: {"reason": "walk"},
        )
        for prefix in ("api/v1/", "")
        for step in ("preview", "adopt")
    },
    "zones/<str:coordinate>/calibration/": Spec(params={"coordinate": "coordinate"}),
    "zones/<str:coordinate>/calibration/propose/": Spec(params={"coordinate": "coordinate"}),
    # learned confidence weights and the requery model (issue 30 point 2)
    "api/v1/zones/<str:coordinate>/confidence-weights/": Spec(params={"coordinate": "coordinate"}),
    **{
        f"{prefix}/adopt/": Spec(
            params={"coordinate": "coordinate"},
            body=lambda w: {"reason": "walk", "fingerprint": "walk"},
        )
        for prefix in (
            "api/v1/zones/<str:coordinate>/confidence-weights",
            "zones/<str:coordinate>/learned/weights",
        )
    },
    **{
        f"{prefix}/rollback/": Spec(
            params={"coordinate": "coordinate"}, body=lambda w: {"reason": "walk", "version": 1}
        )
        for prefix in (
            "api/v1/zones/<str:coordinate>/confidence-weights",
            "zones/<str:coordinate>/learned/weights",
        )
    },
    "zones/<str:coordinate>/learned/": Spec(params={"coordinate": "coordinate"}),
    # the graph gate's tau_c adapted to the reviewers' verdicts (seed 002 §9.4)
    "api/v1/zones/<str:coordinate>/graph-tau/": Spec(params={"coordinate": "coordinate"}),
    **{
        f"{prefix}/adopt/": Spec(
            params={"coordinate": "coordinate"},
            body=lambda w: {"reason": "walk", "fingerprint": "walk"},
        )
        for prefix in (
            "api/v1/zones/<str:coordinate>/graph-tau",
            "zones/<str:coordinate>/learned/graph-tau",
        )
    },
    "api/v1/zones/<str:coordinate>/requery-model/": Spec(params={"coordinate": "coordinate"}),
    "zones/<str:coordinate>/reviews/download/": Spec(
        params={"coordinate": "coordinate"}, queries=lambda w: ["?format=csv", "?format=jsonl"]
    ),
    "api/v1/zones/<str:coordinate>/learning/": Spec(
        params={"coordinate": "coordinate"}, queries=lambda w: ["", "?since=2026-01-01"]
    ),
    "api/v1/zones/<str:coordinate>/advice/": Spec(
        params={"coordinate": "coordinate"},
        queries=lambda w: ["", "?target=0.1&cost_hallucination=100&cost_requery=1&cost_abandon=5"],
    ),
    "documents/": Spec(
        queries=zone_queries(),
        body=lambda w: {"zone": ZONE_B, "kind": "policy", "status": "approved", "text": "Walk."},
    ),
    "documents/<int:pk>/": Spec(
        params={"pk": "document"},
        queries=lambda w: ["", "?version=1", "?version=2"],
        body=lambda w: {"zone": ZONE_A, "kind": "policy", "status": "approved", "text": "Walk."},
    ),
    # --- the auditor's pages
    "audit/": Spec(queries=lambda w: [*zone_queries()(w), "?q=quokka", "?reviewer=bianca"]),
    "audit/decisions/<int:pk>/": Spec(params={"pk": "decision"}),
    "audit/verify/": Spec(queries=zone_queries()),
    "audit/export/": Spec(queries=zone_queries()),
    # the checkpoints seal every chain at once: seq, time, hash, counts and key, no zone rows
    "audit/checkpoints/": Spec(queries=lambda w: ["", "?page=2"]),
}

# Routes with no zone rows behind them, and why the walk leaves them out.
SKIPPED: dict[str, str] = {
    "healthz": "reachability of the database, channel layer and broker; no rows",
    "metrics": (
        "the operator's Prometheus scrape, not a principal's read: queue depth per zone for "
        "every zone by design (decisions/metrics.py); kept off the public network, not scoped"
    ),
    "api/v1/schema/": "the OpenAPI document: the same for everyone, no rows",
    "api/v1/docs/": "Swagger UI over the schema: no rows",
    "^api/": "the JSON 404 of every path under /api/ that no API URL matches: no rows",
    "accounts/login/": "signs in; no zone rows (and axes counts failures)",
    "accounts/logout/": "signs the walking principal out",
    "accounts/password_change/": "the principal's own password; no zone rows",
    "accounts/password_change/done/": "a static page",
    "accounts/password_reset/": "mails a reset link; no zone rows",
    "accounts/password_reset/done/": "a static page",
    "accounts/reset/<uidb64>/<token>/": "a signed reset link of one user; no zone rows",
    "accounts/reset/done/": "a static page",
    "i18n/setlang/": "sets the language cookie",
}
ADMIN_PREFIX = "admin/"  # walked by test_the_admin_refuses_every_zone_principal
# The admin's own sign-in and sign-out answer anyone (and signing out would end the walk);
# unnamed admin routes only redirect to a named one.
OPEN = ("login", "logout")


@dataclass(frozen=True)
class Route:
    route: str
    pattern: URLPattern
    namespace: str | None


def all_routes(
    patterns: Sequence[URLPattern | URLResolver] | None = None,
    prefix: str = "",
    namespace: str | None = None,
) -> Iterator[Route]:
    """Every URL pattern of the URL conf, includes followed, with its full route."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            yield from all_routes(
                entry.url_patterns, prefix + str(entry.pattern), entry.namespace or namespace
            )
        else:
            yield Route(prefix + str(entry.pattern), entry, namespace)


def walked_routes() -> list[Route]:
    return [r for r in all_routes() if not r.route.startswith(ADMIN_PREFIX) and r.route in ROUTES]


# --- the requests ----------------------------------------------------------------------------

ACTIONS = ("claim", "release", "approve", "reject", "override", "send-back", "comment", "assign")
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def values(kind: str, world: World) -> list[str]:
    if kind == "coordinate":  # B, its planet, and the level A and B share
        return [ZONE_B, PLANET_B, "G1.U1"]
    if kind == "any_coordinate":  # A's own zone too, with B's row in the other converter
        return [ZONE_B, ZONE_A]
    if kind == "action":
        return list(ACTIONS)
    if kind == "periodic_action":
        return ["claim", "release", "close"]
    return [str(pk) for pk in world.ids[kind]]


@dataclass(frozen=True)
class Call:
    route: str
    method: str
    path: str
    query: str = ""
    body: Any = None
    content_type: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    own: bool = False  # a write into A's own zone: it may succeed
    missing_path: str | None = None  # the same call for a row that does not exist

    @property
    def url(self) -> str:
        return self.path + self.query

    def sent(self) -> str:
        return self.url + " " + (self.body if isinstance(self.body, str) else json.dumps(self.body))


def _is_api(route: str) -> bool:
    return route.startswith("api/")


def calls(world: World) -> Iterator[Call]:
    for route in walked_routes():
        spec = ROUTES[route.route]
        names = list(spec.params)
        choices = [values(spec.params[n], world) for n in names]
        api = _is_api(route.route)
        for combo in product(*choices):
            path = "/" + route.route
            missing = "/" + route.route
            for name, value in zip(names, combo, strict=True):
                converter = re.search(rf"<(\w+:)?{name}>", path)
                assert converter is not None
                path = path.replace(converter.group(0), value)
                stand_in = str(MISSING) if spec.params[name] in world.ids else value
                missing = missing.replace(converter.group(0), stand_in)
            has_row = any(spec.params[n] in world.ids for n in names)
            twin = missing if has_row else None
            for query in spec.queries(world):
                yield Call(route.route, "GET", path, query, missing_path=twin)
            body = spec.body(world)
            content_type = spec.content_type or ("application/json" if api else None)
            for method in WRITES:
                yield Call(
                    route.route,
                    method,
                    path,
                    spec.write_query,
                    body,
                    content_type,
                    missing_path=twin,
                )
            for own in spec.own:
                yield Call(
                    route.route,
                    own.method,
                    path,
                    own.query,
                    own.body(world),
                    content_type,
                    headers=own.headers,
                    own=True,
                )


def send(client: Client, call: Call, path: str | None = None) -> Answer:
    url = (path or call.path) + call.query
    headers: dict[str, Any] = dict(call.headers)
    if call.method == "GET":
        return client.get(url, **headers)
    if call.content_type is None:  # a page's form
        if call.method == "POST":
            return client.post(url, call.body, **headers)
        return client.generic(call.method, url, **headers)
    data = call.body if isinstance(call.body, str) else json.dumps(call.body)
    return client.generic(call.method, url, data, content_type=call.content_type, **headers)


# --- what must not change ------------------------------------------------------------------


def _outside_a(field_name: str = "zone") -> Q:
    """Rows on no level of zone A's lineage and not beneath A: another zone's."""
    inside = Q(**{field_name: ZONE_A}) | Q(**{f"{field_name}__startswith": f"{ZONE_A}."})
    return ~inside


LINEAGE = ("G1", "G1.U1", "G1.U1.P1", ZONE_A)


def _elsewhere(field_name: str = "zone") -> Q:
    """Outside zone A and off its lineage: a reader of A may leave a record of a question it
    asked at a level above A (a graph answer at G1.U1 is filed there), never elsewhere."""
    return _outside_a(field_name) & ~Q(**{f"{field_name}__in": LINEAGE})


def _other_chains() -> Q:
    """Chains of no level of A's lineage, lanes included ("G1.U1.P1.Z1/3" is A's)."""
    lanes = Q(pk__in=[])
    for level in LINEAGE:
        lanes |= Q(chain__startswith=f"{level}{LANE_MARK}")
    return _elsewhere("chain") & ~lanes


def fingerprint() -> dict[str, Any]:
    """Everything a principal of zone A must not change: every row outside zone A (zone B's,
    the shared levels' policies and the shared graph nodes) and every chain but A's own and
    its ancestors' (a graph question asked at G1.U1 is recorded on G1.U1's chain)."""
    walkers = ("alma-reviewer", "arno-admin", "aida-auditor", f"agent:{AGENT_A}")
    return {
        "zones": list(Zone.objects.values_list("coordinate", "name", "parent_id").order_by("pk")),
        "policies": list(
            ZonePolicyVersion.objects.filter(_outside_a("zone__coordinate"))
            .values_list("zone__coordinate", "version", "overrides")
            .order_by("pk")
        ),
        "roles": list(
            RoleAssignment.objects.filter(_outside_a("scope"))
            .values_list("user_id", "role", "scope")
            .order_by("pk")
        ),
        "users": list(
            User.objects.exclude(username__in=walkers)
            .values_list("username", "password", "is_active", "is_staff", "is_superuser")
            .order_by("pk")
        ),
        "permissions": list(
            User.user_permissions.through.objects.values_list("user_id", "permission_id").order_by(
                "pk"
            )
        ),
        "tokens": list(
            ApiToken.objects.exclude(user__username__in=walkers)
            .values_list("pk", "agent", "label", "webhook_url", "revoked_at", "last_used_at")
            .order_by("pk")
        ),
        "documents": list(
            Document.objects.filter(_outside_a("zone__coordinate"))
            .values_list("pk", "key", "title", "zone_id")
            .order_by("pk")
        ),
        "versions": list(
            DocumentVersion.objects.filter(_outside_a("document__zone__coordinate"))
            .values_list("pk", "version", "status", "content_hash", "superseded_at")
            .order_by("pk")
        ),
        "paragraphs": list(
            Paragraph.objects.filter(_outside_a()).values_list("pk", "text_hash", "current")
        ),
        "bundles": list(EvidenceBundle.objects.filter(_elsewhere()).values_list("pk", flat=True)),
        "decisions": list(
            Decision.objects.filter(_outside_a())
            .values_list(
                "pk",
                "state",
                "gate",
                "claimed_by_id",
                "claimed_until",
                "outcome_reason",
                "escalated_to",
                "due_at",
                "report_id",
                "assigned_to_id",
                "updated_at",
            )
            .order_by("pk")
        ),
        "approvals": list(
            Approval.objects.filter(_outside_a("decision__zone")).values_list("pk", flat=True)
        ),
        "outbox": list(
            Outbox.objects.filter(_outside_a("decision__zone"))
            .values_list("pk", "kind", "sent_at")
            .order_by("pk")
        ),
        "nodes": list(
            # A graph answer escalated from zone A goes up to its planet's authority, a
            # node of the planet (seed 002 §9.3): the one write above A that is by design.
            GraphNode.objects.filter(_outside_a())
            .exclude(key=f"authority:{parse(ZONE_A).parent}")
            .values_list("pk", "key", "node_type", "label", "zone", "attributes", "updated_at")
            .order_by("pk")
        ),
        "edges": list(
            GraphEdge.objects.filter(_outside_a())
            .values_list(
                "pk",
                "source_id",
                "target_id",
                "edge_type",
                "weight",
                "confidence",
                "stale",
                "zone",
                "origin",
                "updated_at",
            )
            .order_by("pk")
        ),
        "flags": list(
            GraphRiskFlag.objects.filter(_outside_a())
            .values_list("pk", "status", "note", "resolved_by_id", "ended_at")
            .order_by("pk")
        ),
        "saved_filters": list(
            SavedFilter.objects.exclude(user__username__in=walkers)
            .values_list("pk", "user_id", "name", "query")
            .order_by("pk")
        ),
        "conflicts": list(
            KnowledgeConflict.objects.filter(_outside_a())
            .values_list("pk", "resolution", "resolved_by_id", "resolved_at")
            .order_by("pk")
        ),
        "rereviews": list(
            ReReview.objects.filter(_outside_a())
            .values_list("pk", "verdict", "closed_by_id", "closed_at")
            .order_by("pk")
        ),
        "periodic_reviews": list(
            PeriodicReview.objects.filter(_outside_a())
            .values_list("pk", "verdict", "claimed_by_id", "claimed_until", "reviewed_at")
            .order_by("pk")
        ),
        "comments": list(
            Comment.objects.filter(_outside_a("decision__zone")).values_list("pk", flat=True)
        ),
        "verdicts": list(
            ClaimVerdict.objects.filter(_outside_a()).values_list("pk", "supported", "note")
        ),
        "calibrations": list(
            ZoneCalibration.objects.filter(_outside_a("zone__coordinate"))
            .values_list("pk", "status", "adopted_by_id")
            .order_by("pk")
        ),
        "trail": list(
            TrailEvent.objects.filter(_other_chains())
            .values_list("chain", "seq", "kind")
            .order_by("chain", "seq")
        ),
    }


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    return [name for name in before if before[name] != after[name]]


# --- the judge -------------------------------------------------------------------------------


# Principals with a bearer token and no session: a page sees nobody signed in.
BEARER_ONLY = ("agent", "reviewer-token")


def _refused(status: int, response: Answer, anonymous_page: bool) -> bool:
    if 400 <= status < 500 and status != 429:
        return True
    # A page's login_required answer to a principal with no session (the agent's bearer
    # token signs in nobody on a page): a refusal too.
    location = str(response.get("Location", ""))
    return anonymous_page and status == 302 and location.startswith(settings.LOGIN_URL)


def judge(
    who: str, call: Call, response: Answer, seen: list[Marker], links: list[str]
) -> list[str]:
    """What is wrong with one answer: a 500, a leak of B, a write that was not refused."""
    status = response.status_code
    where = f"{who} {call.method} {call.url}"
    if status >= 500 or status == 429:
        return [f"{where}: {status}"]
    problems = []
    text = _text(response)
    sent = call.sent()
    for marker in seen:
        # An echo of what the caller sent (a zone it asked for, a key it named) is no leak.
        if marker.pattern.search(text) and not marker.pattern.search(sent):
            problems.append(f"{where}: {status} shows {marker.what}")
    for link in links:
        if link in text and link not in sent:
            problems.append(f"{where}: {status} links {link}")
    anonymous_page = who in BEARER_ONLY and not _is_api(call.route)
    refusable = call.method != "GET" and not call.own and ROUTES[call.route].writes == "refused"
    if refusable and not _refused(status, response, anonymous_page):
        problems.append(f"{where}: a write addressing zone B answered {status}")
    return problems


def _list_leaks(world: World, who: str, call: Call, response: Answer) -> list[str]:
    spec = ROUTES[call.route]
    if spec.lists is None or response.status_code != 200 or call.method != "GET":
        return []
    kind = {
        "documents": "document",
        "results": "decision",
        "nodes": "node",
        "edges": "edge",
        "flags": "flag",
        "rereviews": "rereview",
    }[spec.lists]
    leaked = set(_json_ids(response.json(), spec.lists)) & set(world.every[kind])
    return [f"{who} GET {call.url}: lists zone B's {kind} ids {sorted(leaked)}"] if leaked else []


WRITE_SQL = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


@dataclass
class WriteSpy:
    """Notes whether any statement sent to the database wrote (an execute wrapper)."""

    wrote: bool = False

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.wrote = self.wrote or bool(WRITE_SQL.match(sql))
        return execute(sql, params, many, context)


def a_ids() -> dict[str, list[str]]:
    """Zone A's own rows now, the ones the walk's own-zone writes made (citing B) included."""
    mine = Q(zone=ZONE_A)
    rows = {
        "decision": list(Decision.objects.filter(mine).values_list("pk", flat=True)),
        "document": list(
            Document.objects.filter(zone__coordinate=ZONE_A).values_list("pk", flat=True)
        ),
        "node": _one_of_each(GraphNode.objects.filter(mine), "node_type"),
        "edge": _one_of_each(GraphEdge.objects.filter(mine), "origin", "edge_type"),
        "flag": list(GraphRiskFlag.objects.filter(mine).values_list("pk", flat=True)),
        "coordinate": [ZONE_A],
    }
    return {kind: [str(v) for v in values] for kind, values in rows.items()}


def read_back(world: World) -> Iterator[Call]:
    """Every GET of the walk again, on zone A's own rows: a row of A that names one of B's
    (a decision citing B's paragraph) must not show B through A's pages either."""
    mine = a_ids()
    for route in walked_routes():
        spec = ROUTES[route.route]
        kinds = [spec.params[name] for name in spec.params]
        if any(kind not in mine for kind in kinds):
            continue  # the saved filters, roles and actions: no page to read back
        for combo in product(*(mine[kind] for kind in kinds)):
            path = "/" + route.route
            for name, value in zip(spec.params, combo, strict=True):
                path = re.sub(rf"<(\w+:)?{name}>", value, path)
            for query in spec.queries(world):
                yield Call(route.route, "GET", path, query)


def walk(
    world: World, clients: Mapping[str, Client], on_commit: Any, plan: Iterator[Call]
) -> tuple[list[str], int]:
    """Send every call of `plan` as every principal; the problems found, and how many
    requests.

    Each request runs its after-commit work (tasks, scans) as a commit would; the rows
    outside zone A are compared whenever a request wrote anything at all (most write
    nothing: comparing after every one would triple the walk).
    """
    problems: list[str] = []
    seen, links = markers(world), b_links(world)
    sent = 0
    last = fingerprint()
    for call in plan:
        for who, client in clients.items():
            cache.clear()  # the rate limits count per principal; the walk is no flood
            spy = WriteSpy()
            with connection.execute_wrapper(spy), on_commit(execute=True):
                response = send(client, call)
                twin = None
                if call.missing_path is not None and not call.own:
                    twin = send(client, call, call.missing_path)
            sent += 1 + (twin is not None)
            problems += judge(who, call, response, seen, links)
            problems += _list_leaks(world, who, call, response)
            if spy.wrote:
                now = fingerprint()
                if now != last:
                    what = ", ".join(changed(last, now))
                    problems.append(
                        f"{who} {call.method} {call.url}: changed {what} outside zone A"
                    )
                last = now
            if twin is not None and twin.status_code != response.status_code:
                problems.append(
                    f"{who} {call.method} {call.url}: {response.status_code} for zone B's "
                    f"row but {twin.status_code} for a missing one (an existence oracle)"
                )
    return problems, sent


# --- the tests -------------------------------------------------------------------------------


def test_the_walk_knows_every_url() -> None:
    """A new URL fails here until ROUTES says how to walk it or SKIPPED why not to."""
    routes = [r.route for r in all_routes() if not r.route.startswith(ADMIN_PREFIX)]
    unknown = [r for r in routes if r not in ROUTES and r not in SKIPPED]
    stale = [r for r in [*ROUTES, *SKIPPED] if r not in routes]
    both = [r for r in ROUTES if r in SKIPPED]
    assert unknown == [], f"routes the zone walk does not know (add them to ROUTES): {unknown}"
    assert stale == [], f"ROUTES or SKIPPED name routes the URL conf no longer has: {stale}"
    assert both == []
    for route in routes:
        if route in ROUTES:
            converters = set(re.findall(r"<(?:\w+:)?(\w+)>", route))
            assert converters == set(ROUTES[route].params), route


@pytest.mark.django_db
def test_no_principal_of_zone_a_reads_or_writes_zone_b_through_any_url(
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given two zones full of rows, and zone A's agent, reviewer (by session and by personal
    # token), zone admin and auditor
    world = build_world(django_capture_on_commit_callbacks)
    seen, links = markers(world), b_links(world)
    # (the judge can fail: zone B's own reviewer reading B's rows is seen as B)
    b_sees = world.b_reviewer
    assert b_sees is not None
    own = b_sees.get(f"/queue/decisions/{world.first('decision')}/")
    assert judge("b", Call("queue/", "GET", "/queue/"), own, seen, links) != []
    # (and zone A's principals do read their own zone's rows)
    reviewer = world.clients["reviewer"]
    assert "Travel policy" in _text(reviewer.get("/api/v1/documents/"))
    assert f"decision:{world.a_decision}" in _text(reviewer.get("/api/v1/graph/nodes/"))
    # when each of them sends every call of the walk
    problems, sent = walk(world, world.clients, django_capture_on_commit_callbacks, calls(world))
    # and reads of zone A's own rows afterwards (some now cite B's) show nothing of B either
    again, read = walk(world, world.clients, django_capture_on_commit_callbacks, read_back(world))
    problems, sent = problems + again, sent + read
    # then nothing of zone B was shown, and nothing outside zone A changed
    assert sent > 1000, sent
    if problems:
        pytest.fail(f"{len(problems)} problems in {sent} requests:\n" + "\n".join(problems))


@pytest.mark.django_db
def test_the_admin_refuses_every_zone_principal() -> None:
    """Zone principals are not staff: every admin URL sends them to the admin's login."""
    _zone(ZONE_A)
    _zone(ZONE_B)
    clients = {}
    for username, role in (
        ("alma-reviewer", Role.REVIEWER),
        ("arno-admin", Role.ZONE_ADMIN),
        ("aida-auditor", Role.AUDITOR),
    ):
        user = user_ensure(username=username)
        role_grant(user=user, role=role, scope=parse(ZONE_A))
        clients[username] = _session(user)
    clients["agent"] = _bearer(agent=parse(AGENT_A))
    sample = {"app_label": "coordinates", "url": "anything/", "id": "1"}
    walked = 0
    before = fingerprint()
    for route in all_routes():
        if not route.route.startswith(ADMIN_PREFIX) or route.pattern.name in (None, *OPEN):
            continue
        groups = route.pattern.pattern.regex.groupindex
        kwargs = {name: sample.get(name, "1") for name in groups}
        url = reverse(f"{route.namespace}:{route.pattern.name}", kwargs=kwargs)
        for who, client in clients.items():
            for method in ("GET", "POST"):
                response = client.generic(method, url)
                walked += 1
                location = str(response.get("Location", ""))
                assert response.status_code in (302, 403), (who, method, url)
                if response.status_code == 302:
                    assert location.startswith("/admin/login/"), (who, method, url, location)
    assert walked > 100
    assert fingerprint() == before
