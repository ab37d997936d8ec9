"""A JSON parser that refuses what Python's json module quietly accepts: duplicate keys
(the last one would silently win), NaN and Infinity, lone surrogates, NUL characters and
nesting deeper than any request of this API needs; and the body limit for every parser."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from maria.errors import TooLarge

# No request of this API nests deeper than a few levels (claims -> citations -> fields); a
# body nested hundreds deep is an attack on the parser, and would overflow the stack later.
MAX_DEPTH = 32


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


def _finite(text: str) -> float:
    # `1e400` is valid JSON but overflows to inf: Infinity by the back door (found by
    # tests/maria/test_fuzz.py), which no renderer can write back.
    value = float(text)
    if not math.isfinite(value):
        raise ParseError(f"JSON parse error - {text[:40]} is too large for a number")
    return value


def read_body(stream: Any) -> bytes:
    """The request body, refused (413) when it is over MARIA_MAX_BODY_BYTES: DRF's parsers
    read the stream themselves, past Django's own check of request.body."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        raw = stream.read(limit + 1 if limit is not None else -1) if stream is not None else b""
    except Exception as error:
        raise ParseError(f"could not read the body: {error}") from error
    if limit is not None and len(raw) > limit:
        raise TooLarge(f"the body is over {limit} bytes, the most this server accepts")
    return bytes(raw)


def check_text(value: Any, path: str = "", depth: int = 0) -> None:
    """Refuse a NUL character or a lone surrogate anywhere in `value`, or nesting deeper
    than MAX_DEPTH: a BodyError naming the field (`claims.2.text`)."""
    if depth > MAX_DEPTH:
        raise BodyError(f"JSON nested deeper than {MAX_DEPTH} levels", path or None)
    if isinstance(value, str):
        if "\x00" in value:
            raise BodyError(f"NUL character in {path or 'a string'}", path or None)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BodyError(f"lone surrogate in {path or 'a string'}", path or None) from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_text(key, path, depth + 1)
            check_text(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_text(item, f"{path}.{index}" if path else str(index), depth + 1)


def strict_loads(text: str) -> Any:
    """One JSON document read as strictly as a request body (see the module docstring); a
    ParseError, or a BodyError naming the field, for anything this API refuses. The graph
    import reads each of its JSON Lines with it."""
    try:
        data = json.loads(
            text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_finite
        )
    except RecursionError:
        raise BodyError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        if isinstance(error, ParseError):  # pragma: no cover - ParseError is not ValueError
            raise
        raise ParseError(f"JSON parse error - {error}") from None
    check_text(data)
    return data


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = read_body(stream)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ParseError(f"JSON parse error - invalid UTF-8 at byte {error.start}") from None
        return strict_loads(text)
