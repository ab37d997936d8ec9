"""What every operation of the OpenAPI document shares: the error shape of maria.errors as
one component, the refusals each status stands for, the bounds of ids in paths, and two
rules DRF enforces that drf-spectacular leaves out (blank text, the length of lists).

The views name the statuses they can answer with (`error_responses(400, 404)`); 401 and 429
come with every operation, since every one needs a principal and every one is rate limited
(maria/throttles.py). tests/maria/test_schema_live.py holds the server to the document.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

# PostgreSQL bigint: the widest integer a row holds, so the largest id or offset there is.
DATABASE_INT_MAX = 2**63 - 1

# Somewhere a character that str.strip() keeps: what a text that must not be blank needs.
# ECMA's \S is not it (it keeps U+001C-U+001F and U+0085, which Python strips), so these
# are the characters str.isspace() is true of, spelled out (tests/maria/test_openapi.py).
NOT_BLANK = (
    r"[^\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f"
    r"\u205f\u3000]"
)

# No NUL character anywhere (maria.parsers refuses it in every JSON string; PostgreSQL holds
# none in text, so the views refuse it in the query string too), and, for NOT_BLANK, no NUL
# and somewhere a character str.strip() keeps.
NO_NUL = r"^[^\u0000]*$"
NOT_BLANK_NO_NUL = r"^[^\u0000]*" + NOT_BLANK.replace("[^", r"[^\u0000", 1) + r"[^\u0000]*$"


class ApiErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="machine-readable, e.g. invalid, not_found, conflict")
    message = serializers.CharField(help_text="what went wrong, for people")
    field = serializers.CharField(
        allow_null=True, help_text="the field at fault as a dotted path (claims.2.text), or null"
    )
    details = serializers.JSONField(
        required=False, help_text="validation errors: every field at fault, as DRF reports them"
    )


class ApiErrorSerializer(serializers.Serializer):
    """`{"error": {"code", "message", "field"}}`, as maria.errors.error_body writes it."""

    error = ApiErrorDetailSerializer()


ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "invalid input; `field` names the field at fault",
    401: "no credentials, or a token that is unknown or revoked",
    403: "the principal may not do this here",
    404: "no such row, or one outside the zones the principal reads",
    409: "the row changed first (another reviewer acted, a request with the key is running)",
    413: "the body, or a list in it, is over its limit",
    422: "well formed, but it contradicts what is stored (an Idempotency-Key's first body)",
    429: "over a rate limit; Retry-After says how many seconds to wait",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """The error responses of an operation: the given statuses, and 401 and 429 always."""
    wanted = sorted({*statuses, 401, 429})
    return {
        status: OpenApiResponse(ApiErrorSerializer, description=ERROR_DESCRIPTIONS[status])
        for status in wanted
    }


def or_empty(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter the view reads as left out when it is empty (`?state=`)."""
    return {"anyOf": [schema, {"type": "string", "enum": [""]}]}


def one_of(values: list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": sorted(values)}


def id_schema(*, minimum: int = 1) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum, "maximum": DATABASE_INT_MAX}


def path_id(name: str = "id", description: str = "") -> OpenApiParameter:
    """An `<int:pk>` in the path: digits only, and no id beyond what a bigint holds."""
    return OpenApiParameter(
        name, id_schema(), OpenApiParameter.PATH, required=True, description=description
    )


class BoundedListExtension(OpenApiSerializerFieldExtension):
    """`ListSerializer(child=..., allow_empty=False, max_length=N)` (or `many=True` with
    those) as minItems and maxItems: DRF enforces the bounds of a list of objects, but
    drf-spectacular leaves them out."""

    target_class = "rest_framework.serializers.ListSerializer"

    @classmethod
    def _matches(cls, target: Any) -> bool:
        return (
            super()._matches(target)
            and getattr(target, "parent", None) is not None  # a field, not a whole body
            and (not target.allow_empty or target.max_length is not None or target.min_length)
        )

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        field = self.target
        schema: dict[str, Any] = {
            "type": "array",
            "items": auto_schema._unwrap_list_serializer(field.child, direction),
        }
        minimum = max(field.min_length or 0, 0 if field.allow_empty else 1)
        if minimum:
            schema["minItems"] = minimum
        if field.max_length is not None:
            schema["maxItems"] = field.max_length
        return schema


class TrimmedCharFieldExtension(OpenApiSerializerFieldExtension):
    """A CharField that trims and refuses blanks (DRF's default) refuses "   " too: in a
    request body it says so with NOT_BLANK, where drf-spectacular says only minLength 1."""

    target_class = "rest_framework.fields.CharField"

    @classmethod
    def _matches(cls, target: Any) -> bool:
        return super()._matches(target) and target.trim_whitespace and not target.allow_blank

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer_field(
            self.target, direction, bypass_extensions=True
        )
        if direction == "request" and "pattern" not in schema:
            schema["pattern"] = NOT_BLANK
        return schema


def bodies_required(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """A postprocessing hook: a request body whose every shape has required fields, or is
    text of at least one character, is itself required. drf-spectacular says so of a plain
    serializer but not of a `oneOf` of several (the decision intake's claims or plain
    answer) nor of a text body (the graph import's lines), so generated clients and
    schemathesis took a missing body for a valid one."""
    schemas = result.get("components", {}).get("schemas", {})

    def has_required(schema: dict[str, Any]) -> bool:
        if "$ref" in schema:
            schema = schemas.get(schema["$ref"].rsplit("/", 1)[-1], {})
        shapes = schema.get("oneOf")
        if shapes:
            return all(has_required(shape) for shape in shapes)
        if schema.get("type") == "string":
            return int(schema.get("minLength", 0)) > 0
        return bool(schema.get("required"))

    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if not body or body.get("required"):
                continue
            shapes = [media.get("schema", {}) for media in body.get("content", {}).values()]
            if shapes and all(has_required(shape) for shape in shapes):
                body["required"] = True
    return result


def _strings_without_nul(schema: Any) -> None:
    if isinstance(schema, list):
        for item in schema:
            _strings_without_nul(item)
        return
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "string" and "enum" not in schema and "format" not in schema:
        pattern = schema.get("pattern")
        if pattern is None:
            schema["pattern"] = NO_NUL
        elif pattern == NOT_BLANK:
            schema["pattern"] = NOT_BLANK_NO_NUL
        # Any other pattern (coordinates, Idempotency-Key) names the characters it allows.
    for key in ("properties", "additionalProperties", "items", "oneOf", "anyOf", "allOf"):
        value = schema.get(key)
        if key == "properties" and isinstance(value, dict):
            _strings_without_nul(list(value.values()))
        elif value is not None:
            _strings_without_nul(value)


def strings_without_nul(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """A postprocessing hook: every string a client sends (request bodies and parameters)
    says it holds no NUL character, which the server refuses everywhere (maria.parsers for
    JSON bodies, the views for the query string). Schema-driven clients and fuzzers sent
    NUL in `q`, node keys and a `reason`, valid by the document and refused with a 400."""
    for name, schema in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request"):  # COMPONENT_SPLIT_REQUEST: what clients send
            _strings_without_nul(schema)
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                _strings_without_nul(parameter.get("schema"))
            body = operation.get("requestBody") or {}
            for media in body.get("content", {}).values():
                _strings_without_nul(media.get("schema"))
    return result
