"""A JSON parser that refuses what Python's json module quietly accepts: duplicate keys
(the last one would silently win), NaN and Infinity, lone surrogates, NUL characters and
nesting deeper than any request of this API needs; and the body limit for every parser."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.utils.translation import gettext
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


class SyntaxRefused(ParseError):
    """Text that is not JSON, or JSON this API refuses: "JSON parse error - `reason`" in the
    active language. The reason is kept apart for callers that say where it was (the graph
    import's "line 3 is not JSON: ..."), since the translated prefix cannot be cut off."""

    def __init__(self, reason: str) -> None:
        super().__init__(gettext("JSON parse error - %(reason)s") % {"reason": reason})
        self.reason = reason


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise SyntaxRefused(gettext("duplicate key %(key)s") % {"key": repr(key)})
        seen[key] = value
    return seen


def _constant(name: str) -> Any:
    raise SyntaxRefused(gettext("%(name)s is not a number JSON allows") % {"name": name})


def _finite(text: str) -> float:
    # `1e400` is valid JSON but overflows to inf: Infinity by the back door (found by
    # tests/maria/test_fuzz.py), which no renderer can write back.
    value = float(text)
    if not math.isfinite(value):
        raise SyntaxRefused(gettext("%(number)s is too large for a number") % {"number": text[:40]})
    return value


def read_body(stream: Any) -> bytes:
    """The request body, refused (413) when it is over MARIA_MAX_BODY_BYTES: DRF's parsers
    read the stream themselves, past Django's own check of request.body."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        raw = stream.read(limit + 1 if limit is not None else -1) if stream is not None else b""
    except Exception as error:
        raise ParseError(
            gettext("could not read the body: %(error)s") % {"error": error}
        ) from error
    if limit is not None and len(raw) > limit:
        raise TooLarge(
            gettext("the body is over %(limit)s bytes, the most this server accepts")
            % {"limit": limit}
        )
    return bytes(raw)


def _too_deep() -> str:
    return gettext("JSON nested deeper than %(depth)s levels") % {"depth": MAX_DEPTH}


def check_text(value: Any, path: str = "", depth: int = 0) -> None:
    """Refuse a NUL character or a lone surrogate anywhere in `value`, or nesting deeper
    than MAX_DEPTH: a BodyError naming the field (`claims.2.text`)."""
    if depth > MAX_DEPTH:
        raise BodyError(_too_deep(), path or None)
    if isinstance(value, str):
        if "\x00" in value:
            raise BodyError(
                gettext("NUL character in %(field)s") % {"field": path}
                if path
                else gettext("NUL character in a string"),
                path or None,
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BodyError(
                gettext("lone surrogate in %(field)s") % {"field": path}
                if path
                else gettext("lone surrogate in a string"),
                path or None,
            ) from None
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
        raise BodyError(_too_deep()) from None
    except ValueError as error:
        if isinstance(error, ParseError):  # pragma: no cover - ParseError is not ValueError
            raise
        # Python's own words for the syntax error (not translated: they name its position).
        raise SyntaxRefused(str(error)) from None
    check_text(data)
    return data


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = read_body(stream)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SyntaxRefused(
                gettext("invalid UTF-8 at byte %(offset)s") % {"offset": error.start}
            ) from None
        return strict_loads(text)
