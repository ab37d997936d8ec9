"""The client and the API cannot drift apart: every field a `maria_client` model reads is
in `/api/v1/schema/` with a compatible type (and nullable only where the model allows None),
each endpoint the client calls answers with the component its model names, and every
request the client sends (path, method, query parameters, body fields) is one the schema
declares."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

import httpx
import pytest
from rest_framework.test import APIClient

from maria_client import ClaimVerdict, Maria, models

pytestmark = pytest.mark.django_db

Schema = dict[str, Any]


@pytest.fixture(scope="module")
def openapi(django_db_blocker: Any) -> Schema:
    with django_db_blocker.unblock():
        response = APIClient().get(
            "/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json"
        )
    assert response.status_code == 200
    return dict(json.loads(response.content))


def resolve(spec: Schema, node: Schema) -> Schema:
    while "$ref" in node:
        node = spec["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def alternatives(spec: Schema, node: Schema) -> list[Schema]:
    """A property's possible schemas: its oneOf/anyOf/allOf members (refs resolved), or it."""
    node = resolve(spec, node)
    members = node.get("oneOf") or node.get("anyOf") or node.get("allOf")
    if not members:
        return [node]
    return [leaf for member in members for leaf in alternatives(spec, member)]


def nullable(spec: Schema, node: Schema) -> bool:
    return bool(resolve(spec, node).get("nullable")) or any(
        alt.get("nullable") or alt.get("type") == "null" or alt.get("enum") == [None]
        for alt in alternatives(spec, node)
    )


def json_type(spec: Schema, node: Schema) -> set[tuple[str, str | None]]:
    """(type, format) pairs a property may carry, null members left out."""
    found = set()
    for alt in alternatives(spec, node):
        if alt.get("enum") == [None] or alt.get("type") == "null":
            continue
        kind = alt.get("type") or ("string" if alt.get("enum") else "object")
        found.add((kind, alt.get("format")))
    return found


def compatible(spec: Schema, annotation: Any, node: Schema) -> str | None:
    """Why the Python annotation cannot hold what the schema describes, or None."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [arg for arg in args if arg is not type(None)]
        if type(None) not in args and nullable(spec, node):
            return "the schema allows null; the model does not"
        if len(rest) != 1:
            return f"cannot check the union {annotation}"
        annotation, args = rest[0], typing.get_args(rest[0])
    elif nullable(spec, node):
        return "the schema allows null; the model does not"
    origin = typing.get_origin(annotation) or annotation
    found = json_type(spec, node)
    kinds = {kind for kind, _ in found}
    formats = {fmt for _, fmt in found}
    wanted: dict[Any, set[str]] = {
        bool: {"boolean"},
        int: {"integer"},
        float: {"number", "integer"},
        str: {"string"},
        dict: {"object"},
        list: {"array"},
        datetime: {"string"},
        date: {"string"},
    }
    if origin not in wanted:
        return f"no rule for {annotation}"
    if not kinds or not kinds <= wanted[origin]:
        return f"{annotation} cannot hold {sorted(kinds)}"
    if origin is datetime and formats != {"date-time"}:
        return f"a datetime, but the schema's format is {formats}"
    if origin is date and formats != {"date"}:
        return f"a date, but the schema's format is {formats}"
    if origin is str and formats & {"date", "date-time"}:
        return "a str where the schema has a date: read it as one"
    if origin is list and args and dataclasses.is_dataclass(args[0]):
        items = resolve(spec, node)["items"]
        component = items.get("$ref", "").rsplit("/", 1)[-1]
        if component != args[0].SCHEMA:  # type: ignore[union-attr]
            return f"items are {component or items}, the model reads {args[0].SCHEMA}"  # type: ignore[union-attr]
    return None


def drift(spec: Schema, model: type) -> list[str]:
    """Every way `model` reads something its component does not promise."""
    name = model.SCHEMA  # type: ignore[attr-defined]
    component = spec["components"]["schemas"].get(name)
    if component is None:
        return [f"{model.__name__}: no component {name} in the schema"]
    component = resolve(spec, component)
    properties, required = component.get("properties", {}), set(component.get("required", []))
    hints = typing.get_type_hints(model)
    problems = []
    for item in dataclasses.fields(model):
        if item.name == "raw":
            continue
        where = f"{model.__name__}.{item.name} ({name})"
        if item.name not in properties:
            problems.append(f"{where}: not in the schema")
            continue
        if item.name not in required:
            problems.append(f"{where}: the schema does not promise it")
        if why := compatible(spec, hints[item.name], properties[item.name]):
            problems.append(f"{where}: {why}")
    return problems


def response_component(spec: Schema, method: str, path: str, status: str) -> Schema:
    operation = spec["paths"][path][method]
    return dict(operation["responses"][status]["content"]["application/json"]["schema"])


@pytest.mark.parametrize("model", models.MODELS, ids=lambda model: model.__name__)
def test_every_field_a_client_model_reads_is_in_the_schema_with_its_type(
    openapi: Schema, model: type
) -> None:
    assert drift(openapi, model) == []


@pytest.mark.parametrize(
    ("method", "path", "status", "model", "under"),
    [
        ("post", "/api/v1/documents/", "201", models.UploadedDocument, None),
        ("get", "/api/v1/search/", "200", models.Passage, "passages"),
        ("post", "/api/v1/decisions/", "201", models.Decision, None),
        ("get", "/api/v1/decisions/{id}/", "200", models.Decision, None),
        ("post", "/api/v1/decisions/{id}/claim/", "200", models.DecisionRow, None),
        ("post", "/api/v1/decisions/{id}/approve/", "200", models.DecisionRow, None),
        ("post", "/api/v1/decisions/{id}/reject/", "200", models.DecisionRow, None),
    ],
)
def test_each_endpoint_the_client_reads_answers_with_its_models_component(
    openapi: Schema, method: str, path: str, status: str, model: type, under: str | None
) -> None:
    # An endpoint the client calls that leaves the schema is drift, not a reason to skip.
    assert path in openapi["paths"], f"the client calls {path}; the schema no longer has it"
    assert method in openapi["paths"][path], f"the client calls {method.upper()} {path}"
    node = response_component(openapi, method, path, status)
    if under is not None:
        node = resolve(openapi, node)["properties"][under]["items"]
    assert node.get("$ref", "").rsplit("/", 1)[-1] == model.SCHEMA  # type: ignore[attr-defined]


def recorded_requests() -> Iterator[httpx.Request]:
    """Every kind of request the client sends, captured by a transport that answers each
    with a minimal body of the shape the client reads."""
    sent: list[httpx.Request] = []
    decision = {
        "id": 1, "state": "completed", "gate": "auto", "mode": None, "zone": "G1.U1.P1.Z1",
        "agent": "G1.U1.P1.Z1.A1", "question": "q", "answer": "a", "sufficiency": None,
        "completeness": None, "cohesion": None, "policy_version": None, "claims": [],
        "contradictions": [], "refusal": None, "outcome_reason": None, "bundle_hash": "",
        "events": [], "due_at": None, "claimed_by": None, "created_at": None, "updated_at": None,
    }  # fmt: skip
    document = {"id": 1, "key": "k", "version": 1, "paragraphs": 1, "content_hash": "h"}

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        path = request.url.path
        if path.endswith("/trail/"):
            return httpx.Response(200, text='{"type": "trail.export"}\n')
        if path.endswith("/reviews/export/"):
            return httpx.Response(200, text='{"type": "review.claim"}\n')
        if path.endswith("/search/"):
            return httpx.Response(200, json={"passages": []})
        if path.endswith("/documents/"):
            return httpx.Response(201, json={**document, "created": True})
        return httpx.Response(200, json=decision)

    zone, agent = "G1.U1.P1.Z1", "G1.U1.P1.Z1.A1"
    cited = [{"text": "a", "citations": [{"document": 1, "paragraph": 1}]}]
    http = httpx.Client(transport=httpx.MockTransport(answer))
    with Maria("http://engine.test", "t", http=http) as c:
        c.upload_document(
            "text", zone=zone, title="t", key="k", effective_date=date(2025, 1, 1), supersedes=1,
            format="text",
        )  # fmt: skip
        c.search("q", zone=zone, k=5, include_superseded=True)
        c.submit(question="q", answer="a", zone=zone, agent=agent, claims=cited)
        c.submit(
            question="q", answer="a [1]", zone=zone, agent=agent,
            sources=[{"document": 1, "version": 1, "paragraph": 1}],
        )  # fmt: skip
        c.decision(1)
        c.wait(1, timeout=1)
        c.claim(1)
        c.release(1)
        c.approve(1, "ok", claims=[ClaimVerdict(0, True, "as cited")], replacement="written")
        c.reject(1, "no", claims=[{"index": 0, "supported": False}])
        list(c.trail(zone=zone, since=date(2025, 1, 1), include_evidence=True))
        assert list(c.reviews(zone=zone, since=date(2025, 1, 1))) == [{"type": "review.claim"}]
    yield from sent


def test_every_request_the_client_sends_is_declared_by_the_schema(openapi: Schema) -> None:
    problems = []
    for request in recorded_requests():
        path = request.url.path
        template = next((p for p in openapi["paths"] if p.replace("{id}", "1") == path), None)
        if template is None:
            problems.append(f"{request.method} {path}: no such path")
            continue
        operation = openapi["paths"][template].get(request.method.lower())
        if operation is None:
            problems.append(f"{request.method} {path}: no such operation")
            continue
        declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        if extra := set(request.url.params.keys()) - declared:
            problems.append(f"{request.method} {path}: undeclared parameters {sorted(extra)}")
        if request.content:
            body = json.loads(request.content)
            node = operation["requestBody"]["content"]["application/json"]["schema"]
            shapes = [set(alt.get("properties", {})) for alt in alternatives(openapi, node)]
            if not any(set(body) <= shape for shape in shapes):
                problems.append(f"{request.method} {path}: fields {sorted(body)} fit no {shapes}")
    assert problems == []


def test_the_check_finds_a_model_that_drifted(openapi: Schema) -> None:
    # given a model that reads a field the schema lacks, one of the wrong type, and one that
    # cannot hold the null the schema allows
    @dataclasses.dataclass
    class Drifted:
        SCHEMA: typing.ClassVar[str] = "DocumentIngested"
        id: str
        version: int
        paragraphs: int
        content_hash: str
        created: bool
        colour: str

    @dataclasses.dataclass
    class NotNullable:
        SCHEMA: typing.ClassVar[str] = "Decision"
        gate: str

    # then the check names each
    assert drift(openapi, Drifted) == [
        "Drifted.id (DocumentIngested): <class 'str'> cannot hold ['integer']",
        "Drifted.colour (DocumentIngested): not in the schema",
    ]
    assert drift(openapi, NotNullable) == [
        "NotNullable.gate (Decision): the schema allows null; the model does not"
    ]
