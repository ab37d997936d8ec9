"""A JSON parser that refuses what Python's json module quietly accepts: duplicate keys
(the last one would silently win), NaN and Infinity, lone surrogates and NUL characters."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class BodyError(ParseError):
    """A parse error that can name the field it is in."""

    def __init__(self, detail: str, field: str | None = None) -> None:
        super().__init__(detail)
        self.field = field


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ParseError(f"JSON parse error - duplicate key {key!r}")
        seen[key] = value
    return seen


def _constant(name: str) -> Any:
    raise ParseError(f"JSON parse error - {name} is not a number JSON allows")


def _check_text(value: Any, path: str = "") -> None:
    if isinstance(value, str):
        if "\x00" in value:
            raise BodyError(f"NUL character in {path or 'a string'}", path or None)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BodyError(f"lone surrogate in {path or 'a string'}", path or None) from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_text(key, path)
            _check_text(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_text(item, f"{path}.{index}" if path else str(index))


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            raw = stream.read() if stream is not None else b""
        except Exception as error:
            raise ParseError(f"could not read the body: {error}") from error
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ParseError(f"JSON parse error - invalid UTF-8 at byte {error.start}") from None
        try:
            data = json.loads(text, object_pairs_hook=_object, parse_constant=_constant)
        except ValueError as error:
            if isinstance(error, ParseError):  # pragma: no cover - ParseError is not ValueError
                raise
            raise ParseError(f"JSON parse error - {error}") from None
        _check_text(data)
        return data
