"""The Japanese catalogue is whole: every entry translated and not fuzzy, each translation
keeps its message's placeholders, and the compiled catalogue Django reads is the one the
source says (a .po that msgfmt refuses leaves a stale .mo behind, untranslated in the UI)."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import polib
import pytest

CATALOGUE = Path(__file__).resolve().parents[2] / "locale" / "ja" / "LC_MESSAGES"
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|\{\w+\}")

ENTRIES = [entry for entry in polib.pofile(str(CATALOGUE / "django.po")) if not entry.obsolete]


def _translations(entry: polib.POEntry) -> list[str]:
    if entry.msgid_plural:
        return [entry.msgstr_plural[form] for form in sorted(entry.msgstr_plural)]
    return [entry.msgstr]


def test_every_entry_is_translated_and_none_is_fuzzy() -> None:
    untranslated = [e.msgid for e in ENTRIES if not all(_translations(e))]
    fuzzy = [e.msgid for e in ENTRIES if "fuzzy" in e.flags]
    assert not untranslated, f"untranslated: {untranslated}"
    assert not fuzzy, f"fuzzy: {fuzzy}"


def test_japanese_has_one_plural_form() -> None:
    two_forms = [e.msgid for e in ENTRIES if e.msgid_plural and len(e.msgstr_plural) != 1]
    assert not two_forms, f"Japanese has one plural form (msgfmt refuses two): {two_forms}"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.msgid[:40])
def test_a_translation_keeps_its_placeholders(entry: polib.POEntry) -> None:
    wanted = sorted(set(PLACEHOLDER.findall(entry.msgid_plural or entry.msgid)))
    for translation in _translations(entry):
        assert sorted(set(PLACEHOLDER.findall(translation))) == wanted, translation


def test_the_compiled_catalogue_is_the_source() -> None:
    with (CATALOGUE / "django.mo").open("rb") as compiled:
        catalogue = gettext.GNUTranslations(compiled)
    stale = []
    for entry in ENTRIES:
        if entry.msgid_plural:
            got = catalogue.ngettext(entry.msgid, entry.msgid_plural, 2)
        else:
            got = catalogue.gettext(entry.msgid)
        if got != _translations(entry)[0]:
            stale.append(entry.msgid)
    assert not stale, f"django.mo is stale (run compilemessages): {stale[:5]}"
