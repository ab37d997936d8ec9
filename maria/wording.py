"""Messages made in English and shown in the reader's language.

The engine writes some text before anyone reads it (a policy's problems, the trail's
verification report): the REST API, the logs and the command line give it in English. A
message made with `said` is that English text and also keeps the template it was made from
and its parts, so a page can translate the template and put the parts back (`in_language`).
Pure: no Django; the translation function is the caller's (Django's gettext on a page).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


def gettext_noop(message: str) -> str:
    """Marks a template for the catalogue (makemessages reads this name), as Django's does."""
    return message


class Said(str):
    """English text that remembers its template and parts."""

    template: str
    parts: Mapping[str, object]

    def __new__(cls, template: str, parts: Mapping[str, object] | None = None) -> Said:
        text = super().__new__(cls, template % parts if parts else template)
        text.template = template
        text.parts = dict(parts or {})
        return text


def said(template: str, parts: Mapping[str, object] | None = None) -> Said:
    """The English of `template % parts`, which a page can show in its reader's language."""
    return Said(template, parts)


def in_language(text: object, translate: Callable[[str], str]) -> str:
    """`text` in the reader's language when it was `said` (its parts that were said too);
    any other text as it is."""
    if not isinstance(text, Said):
        return str(text)
    parts = {name: in_language(value, translate) for name, value in text.parts.items()}
    try:
        return translate(text.template) % parts if parts else translate(text.template)
    except (KeyError, ValueError, TypeError):
        return str(text)  # a translation whose parts do not match its template: as made
