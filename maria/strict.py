"""Request serializers that take JSON types as the OpenAPI document states them: DRF's fields
quietly turn 0 into "0", "5" into 5 and false into 0.0; these refuse them with a 400 that
names the field, as maria.parsers refuses what Python's json module quietly accepts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers


def type_problem(field: serializers.Field, value: Any) -> str | None:
    """Why `value` is not of the JSON type `field` is documented with, or None."""
    if value is None:
        return None  # allow_null decides
    if isinstance(field, serializers.CharField | serializers.DateField | serializers.DateTimeField):
        return None if isinstance(value, str) else "must be a string"
    if isinstance(field, serializers.ChoiceField) and not isinstance(
        field, serializers.MultipleChoiceField
    ):
        # Every choice of this API is a string; DRF would answer an object with its Python
        # repr: "{'key': 'x'}" is not a valid choice.
        return None if isinstance(value, str) else "must be a string"
    if isinstance(field, serializers.IntegerField):
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        return None if whole and not isinstance(value, bool) else "must be a whole number"
    if isinstance(field, serializers.FloatField):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return None if number else "must be a number"
    return None


class StrictSerializer(serializers.Serializer):
    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            errors: dict[str, Any] = {
                str(field.field_name): [problem]
                for field in self.fields.values()
                if not field.read_only
                and field.field_name in data
                and (problem := type_problem(field, data[field.field_name])) is not None
            }
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
