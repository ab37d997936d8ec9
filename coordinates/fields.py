"""Coordinates in REST bodies and query strings, documented with the pattern of their levels
so that a generated client refuses what the server refuses."""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from coordinates.coordinate import pattern

MAX_LENGTH = 64  # the columns that hold coordinates (and 5 segments take at most 39)


def coordinate_schema(*, shortest: int = 1, longest: int = 5) -> dict[str, Any]:
    return {
        "type": "string",
        "pattern": pattern(shortest=shortest, longest=longest),
        "maxLength": MAX_LENGTH,
    }


class CoordinateField(serializers.CharField):
    """A coordinate of `shortest` to `longest` segments. The field checks only its length;
    the view or serializer parses it (coordinates.selectors.coordinate_from), so that the
    400 says which segment is wrong; the schema shows the pattern."""

    def __init__(self, *, shortest: int = 1, longest: int = 5, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", MAX_LENGTH)
        self.shortest, self.longest = shortest, longest
        super().__init__(**kwargs)


def coordinate_parameter(
    name: str = "zone",
    *,
    shortest: int = 1,
    longest: int = 4,
    location: Literal["query", "path"] = "query",
    required: bool = False,
    description: str = "",
) -> OpenApiParameter:
    """A coordinate in the query string or the path (a zone-tree node by default: G to
    G.U.P.Z). The views read an optional one that is empty (`?zone=`) as left out."""
    required = required or location == OpenApiParameter.PATH
    schema = coordinate_schema(shortest=shortest, longest=longest)
    if not required:
        schema["pattern"] = f"^$|{schema['pattern']}"
        description = f"{description} (empty: no filter)".strip()
    return OpenApiParameter(name, schema, location, required=required, description=description)


class CoordinateFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "coordinates.fields.CoordinateField"

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        field = self.target
        schema = coordinate_schema(shortest=field.shortest, longest=field.longest)
        if field.allow_null:
            schema["nullable"] = True
        return schema
