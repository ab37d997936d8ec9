"""The OpenAPI document tells the truth: schemathesis, with every check it has, against a
live server holding real zones, principals, documents, decisions and graph rows.

Each operation runs as the principal who can reach it (the agent submits, the reviewer
reviews, the zone admin governs, the auditor exports), so the answers are the real ones and
not a wall of 403s; ids in paths are drawn mostly from the seeded rows. The run is bounded
(a few examples per operation, no shrinking) and seeded, so CI sends the same requests each
time; MARIA_SCHEMATHESIS_SEED and MARIA_SCHEMATHESIS_EXAMPLES explore further.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import requests
import schemathesis

from tests.samples import POLICY_EN

pytestmark = pytest.mark.django_db(transaction=True)

ZONE = "G1.U1.P1.Z1"
AGENT = "G1.U1.P1.Z1.A1"
GOOD = "Expenses above 500,000 yen require prior approval by the division head."
WRONG_NUMBER = "Expenses above 300,000 yen require prior approval by the division head."
SEED = int(os.environ.get("MARIA_SCHEMATHESIS_SEED", "20261201"))
MAX_EXAMPLES = int(os.environ.get("MARIA_SCHEMATHESIS_EXAMPLES", "5"))

# Who runs which operation (by operationId); the agent runs the rest.
PRINCIPALS = {
    "reviewer": [
        "decisions_claim_create",
        "decisions_release_create",
        "decisions_approve_create",
        "decisions_reject_create",
        "decisions_send_back_create",
        "graph_query_retrieve",
        "graph_paths_retrieve",
        "graph_risk_retrieve",
        "graph_risk_flags_retrieve",
        "graph_decisions_responsibility_retrieve",
        "graph_nodes_list",
        "graph_nodes_retrieve",
        "graph_edges_list",
        "periodic_reviews_list",
        "periodic_reviews_claim_create",
        "periodic_reviews_release_create",
        "periodic_reviews_close_create",
        "rereviews_retrieve",
        "rereviews_close_create",
        "decisions_comments_list",
        "decisions_comments_create",
        "decisions_assign_create",
        "decisions_bulk_create",
    ],
    "admin": [
        "zones_policy_update",
        "decisions_override_create",
        "graph_nodes_create",
        "graph_nodes_destroy",
        "graph_edges_create",
        "graph_edges_destroy",
        "graph_import_create",
        "graph_risk_flags_resolve_create",
        "zones_conflicts_retrieve",
        "conflicts_resolve_create",
        "zones_calibration_retrieve",
        "zones_calibration_preview_create",
        "zones_calibration_adopt_create",
    ],
    "auditor": ["trail_retrieve", "zones_kpis_retrieve", "reviews_export", "zones_advice_retrieve"],
}

# positive_data_acceptance ("valid by the schema, so not a 400") cannot hold where validity
# is more than a JSON Schema can say. Only these operations go without it:
WITHOUT_POSITIVE_DATA_ACCEPTANCE = {
    # Fields constrain each other (w1..w4 sum to 1, refusal_floor <= tau, floor <= 1/3,
    # tau - 2*delta >= 0) and every zone beneath must still make sense with the change.
    "zones_policy_update",
    # A document must parse to at least one paragraph (a title it always has: its own, its
    # first heading or its opening words): that depends on the text's content and format.
    "documents_create",
    # The body is JSON Lines or CSV: its lines have a schema a text body cannot carry.
    "graph_import_create",
    # A verdict's claim index must be one of the decision's claims, and a rejection must
    # name one claim unsupported: rules of the decision at hand, not of the body's shape.
    "decisions_approve_create",
    "decisions_reject_create",
    # since and until constrain each other (since before until, at most 366 days apart) and
    # a date-time of year 1 or 9999 leaves no room for the window's day: a 400 naming it.
    "zones_kpis_retrieve",
    # The three costs come all together or not at all.
    "zones_advice_retrieve",
    # A source's retrieved_at must not lie ahead of the engine's clock (seed 000 §2.2: the
    # bundle records when it was retrieved): a rule of the moment, not of the body's shape.
    "decisions_create",
    # An assignee must be a reviewer of the decision's zone, and exist.
    "decisions_assign_create",
    "decisions_bulk_create",
}
# The path language of `pattern` nests parentheses, which no JSON Schema pattern describes:
# positive cases draw it from these instead.
EDGE_PATTERNS = ["approved_by", "caused_by* approved_by", "(caused_by|.)+ approved_by?"]
# Refusals of negative data: schemathesis's own list, and 413 for a list over its limit.
REJECTIONS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]


@dataclass
class Stage:
    url: str
    tokens: dict[str, str]
    ids: list[int]


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def stage(live_server: Any, org: dict[str, Any], person: Callable[..., Any]) -> Stage:
    """The organisation, four principals with API tokens, a document, decisions awaiting
    review and one blocked, and a small graph: through the services and the API."""
    from django.contrib.auth.models import Permission

    from coordinates.coordinate import parse
    from coordinates.models import Role
    from coordinates.selectors import zone_get
    from coordinates.services import policy_update, token_issue
    from evidence.services import document_ingest

    reviewer = person("rita", Role.REVIEWER, ZONE)
    admin = person("ada", Role.ZONE_ADMIN, "G1.U1.P1")
    admin.user_permissions.add(Permission.objects.get(codename="override_blocked"))
    auditor = person("otto", Role.AUDITOR, "G1")
    tokens = {
        "agent": token_issue(agent=parse(AGENT))[1],
        "reviewer": token_issue(user=reviewer)[1],
        "admin": token_issue(user=admin)[1],
        "auditor": token_issue(user=auditor)[1],
    }
    zone = zone_get(parse(ZONE))
    ingested = document_ingest(
        zone=zone, raw=POLICY_EN, kind="policy", status="approved", title="Travel", key="travel"
    )
    paragraph = ingested.version.paragraphs.get(text__contains="500,000 yen require")
    # Every answer waits for a reviewer: the queue is what claim, approve and reject act on.
    policy_update(
        zone=zone, overrides={"tau": 0.99, "refusal_floor": 0.05}, reason="live", actor=None
    )

    base = live_server.url
    agent = _bearer(tokens["agent"])
    ids = [ingested.document.pk]
    for index, text in enumerate([GOOD, f"{GOOD} Always.", f"{GOOD} Without fail.", WRONG_NUMBER]):
        body: dict[str, Any] = {
            "question": f"Who approves travel expenses above 500,000 yen? ({index})",
            "answer": text,
            "zone": ZONE,
            "agent": AGENT,
            "claims": [
                {
                    "text": text,
                    "citations": [
                        {"document": ingested.document.pk, "paragraph": paragraph.number}
                    ],
                }
            ],
        }
        response = requests.post(f"{base}/api/v1/decisions/", json=body, headers=agent, timeout=30)
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])

    admin_headers = _bearer(tokens["admin"])
    lines = "\n".join(
        json.dumps(
            {
                "source": f"decision:{decision}",
                "source_type": "decision",
                "target": "person:rita",
                "target_type": "person",
                "type": "approved_by",
            }
        )
        for decision in ids[1:3]
    )
    imported = requests.post(
        f"{base}/api/v1/graph/import/?zone={ZONE}",
        data=lines.encode(),
        headers={**admin_headers, "Content-Type": "application/x-ndjson"},
        timeout=30,
    )
    assert imported.status_code == 201, imported.text
    nodes = requests.get(f"{base}/api/v1/graph/nodes/", headers=admin_headers, timeout=30)
    edges = requests.get(
        f"{base}/api/v1/graph/edges/?zone={ZONE}", headers=admin_headers, timeout=30
    )
    ids += [n["id"] for n in nodes.json()["nodes"]] + [e["id"] for e in edges.json()["edges"]]
    return Stage(url=base, tokens=tokens, ids=sorted(set(ids)))


def _config(stage: Stage) -> Any:
    operations: list[dict[str, Any]] = [
        {"include-operation-id": names, "headers": _bearer(stage.tokens[who])}
        for who, names in PRINCIPALS.items()
    ]
    operations.append(
        {
            "include-operation-id": sorted(WITHOUT_POSITIVE_DATA_ACCEPTANCE),
            "checks": {"positive_data_acceptance": {"enabled": False}},
        }
    )
    return schemathesis.Config.from_dict(
        {
            "seed": SEED,
            # Nothing learnt in one run is replayed in the next: the same requests every time.
            "cache": {"enabled": False},
            "headers": _bearer(stage.tokens["agent"]),
            # No NUL characters: the JSON parser refuses them in every string (maria.parsers).
            # The document says so of every declared field and parameter
            # (maria.openapi.strings_without_nul), but OpenAPI 3.0 cannot say it of the key
            # of a property it does not declare (propertyNames is 3.1), which fuzzers add.
            "generation": {"max-examples": MAX_EXAMPLES, "no-shrink": True, "allow-x00": False},
            # drf-spectacular writes no links: the stateful phase chains the operations it
            # infers from the schema (a created node, then its GET and DELETE), a few steps.
            "phases": {"stateful": {"max-steps": 10}},
            "checks": {"negative_data_rejection": {"expected-statuses": REJECTIONS}},
            "dictionaries": {
                "ids": {"values": stage.ids},
                "zones": {"values": [ZONE]},
                "edge_patterns": {"values": EDGE_PATTERNS},
            },
            "parameters": {
                "path.id": {"dictionary": "ids", "probability": 0.8},
                "query.zone": {"dictionary": "zones", "probability": 0.5},
                "query.pattern": {"dictionary": "edge_patterns", "probability": 1.0},
            },
            "operations": operations,
        }
    )


def _distinct_claims_and_spans(body: dict[str, Any]) -> None:
    """No two claims say the same (spaces and case aside; DecisionIn.validate_claims) and a
    citation's end lies after its start (CitationIn.validate)."""
    claims = body.get("claims")
    seen: set[str] = set()
    for index, claim in enumerate(claims if isinstance(claims, list) else []):
        if not isinstance(claim, dict):
            continue
        text = claim.get("text")
        if isinstance(text, str) and text.strip():
            while " ".join(text.split()).casefold() in seen:
                text = f"{index} {text}"[:4000]
            seen.add(" ".join(text.split()).casefold())
            claim["text"] = text
        citations = claim.get("citations")
        _spans_forward(citations if isinstance(citations, list) else [])


def _spans_forward(citations: list[Any]) -> None:
    for citation in citations:
        if not isinstance(citation, dict):
            continue
        start, end = citation.get("start"), citation.get("end")
        if type(start) is int and type(end) is int and end <= start:
            citation["start"] = max(end - 1, 0)


def _plain_answer_rules(body: dict[str, Any]) -> None:
    """A plain answer's sources have their spans forward too, and its [n] markers name one
    of its sources (evidence.passages.answer_claims)."""
    sources = body.get("sources")
    if not isinstance(sources, list):
        return
    _spans_forward(sources)
    answer = body.get("answer")
    if isinstance(answer, str):
        unmarked = re.sub(r"[\[［【][^\]］】]*[\]］】]", "", answer)
        body["answer"] = unmarked if unmarked.strip() else answer


def _submission_rules(body: dict[str, Any]) -> None:
    _distinct_claims_and_spans(body)
    _plain_answer_rules(body)


def _two_different_nodes(body: dict[str, Any]) -> None:
    """An edge joins two different nodes (graph.store.edge_upsert)."""

    def key(end: Any) -> Any:
        return end.get("key") if isinstance(end, dict) else end

    source, target = key(body.get("source")), key(body.get("target"))
    if isinstance(source, str) and source.strip() and source.strip() == str(target).strip():
        other = f"{source.strip()[:190]}.other"
        if isinstance(body["target"], dict):
            body["target"]["key"] = other
        else:
            body["target"] = other


# The rules between the fields of a body that a JSON Schema cannot state. A case that breaks
# one is moved back inside it before it is sent, whatever else it tests.
RULES_BETWEEN_FIELDS = {
    "POST /api/v1/decisions/": _submission_rules,
    "POST /api/v1/graph/edges/": _two_different_nodes,
}


def _rules_between_fields(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    rule = RULES_BETWEEN_FIELDS.get(case.operation.label)
    if rule is not None and isinstance(case.body, dict):
        rule(case.body)


def _failures(events: Any) -> tuple[int, Counter[tuple[str, str]], dict[tuple[str, str], str]]:
    """Scenarios run, failures by (check, operation), and one example of each."""
    from schemathesis.engine import Status
    from schemathesis.engine import events as engine_events

    scenarios = 0
    counts: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], str] = {}
    for event in events:
        if isinstance(event, engine_events.FatalError):
            raise AssertionError(f"schemathesis stopped: {event.exception!r}")
        if isinstance(event, engine_events.NonFatalError):
            counts[("error", event.label)] += 1
            examples[("error", event.label)] = event.info.message
        if not isinstance(event, engine_events.ScenarioFinished):
            continue
        scenarios += 1
        recorder = event.recorder
        for case_id, checks in recorder.checks.items():
            for check in checks:
                if check.status != Status.FAILURE or check.failure_info is None:
                    continue
                key = (check.name, recorder.label)
                counts[key] += 1
                response = recorder.find_response(case_id=case_id)
                answer = "" if response is None else f"{response.status_code} {response.text[:300]}"
                examples.setdefault(
                    key,
                    f"{check.failure_info.failure.message[:500]}\n"
                    f"{check.failure_info.code_sample[:500]}\n-> {answer}",
                )
    return scenarios, counts, examples


def test_every_operation_answers_as_the_openapi_document_says(stage: Stage) -> None:
    from schemathesis.engine import from_schema
    from schemathesis.hooks import GLOBAL_HOOK_DISPATCHER

    schema = schemathesis.openapi.from_url(f"{stage.url}/api/v1/schema/", config=_config(stage))
    # Global: schemathesis runs before_call hooks from its global registry only.
    schemathesis.hook("before_call")(_rules_between_fields)
    started = time.monotonic()
    try:
        scenarios, counts, examples = _failures(from_schema(schema).execute())
    finally:
        GLOBAL_HOOK_DISPATCHER.unregister(_rules_between_fields)
    elapsed = time.monotonic() - started
    print(f"schemathesis: {scenarios} scenarios in {elapsed:.0f}s (seed {SEED})")
    report = "\n\n".join(
        f"{count} x {name} on {label}\n{examples[(name, label)]}"
        for (name, label), count in sorted(counts.items())
    )
    assert not counts, report
