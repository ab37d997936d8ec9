"""The engine's reasons are stored in English and shown in the reader's language: every
template comes back from its own sentence, parts and all; a reason that quotes another is
translated through; text from no template (a judge's words, a reviewer's note) is left."""

from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest
from django.utils import translation
from hypothesis import given
from hypothesis import strategies as st

from evidence import reasons as why
from evidence.conflicts import Passage, compare
from evidence.grounding import check_claim
from gates.templatetags.maria_tags import reason as reason_filter

PART = re.compile(r"%\((\w+)\)s")
CATALOGUE = Path(__file__).resolve().parents[2] / "locale" / "ja" / "LC_MESSAGES" / "django.po"


def _upper_template(template: str) -> str:
    # Upper-case the literal text only: the parts' names must stay as they are.
    pieces = PART.split(template)
    return "".join(p.upper() if i % 2 == 0 else f"%({p})s" for i, p in enumerate(pieces))


def translate(template: str) -> str:
    """A stand-in translation that shows which template was used and keeps its parts."""
    return "<" + _upper_template(template) + ">"


@pytest.mark.parametrize("template", why.TEMPLATES, ids=lambda t: t[:40])
def test_each_template_comes_back_from_its_own_sentence(template: str) -> None:
    parts = {name: f"v{k}-{name}" for k, name in enumerate(PART.findall(template))}
    stored = why.say(template, **parts)
    # one-word parts (a kind, a gate) are words of the catalogue too
    shown = {n: translate(v) if n in ("kind", "gate") else v for n, v in parts.items()}
    assert why.localise(stored, translate) == translate(template) % shown
    # with no translation the stored sentence is what is shown
    assert why.localise(stored, lambda t: t) == stored


@given(
    document=st.integers(min_value=1, max_value=10_000),
    version=st.integers(min_value=1, max_value=99),
    zone=st.sampled_from(["G1.U1.P1.Z1", "G2.U3.P1.Z7"]),
)
def test_a_template_that_begins_another_never_takes_the_longer_ones_sentence(
    document: int, version: int, zone: str
) -> None:
    longer = why.say(why.VERSION_NOT_IN_ZONE, document=document, version=version, zone=zone)
    shown = why.localise(longer, translate)
    assert shown == translate(why.VERSION_NOT_IN_ZONE) % {
        "document": document,
        "version": version,
        "zone": zone,
    }


def test_a_reason_quoting_another_is_translated_through() -> None:
    inner = why.say(why.VALUES_DISAGREE, one="3 days", other="2 days")
    outer = why.say(why.VERSION_CHANGES, newer=2, older=1, reason=inner)
    shown = why.localise(outer, translate)
    assert shown == translate(why.VERSION_CHANGES) % {
        "newer": "2",
        "older": "1",
        "reason": translate(why.VALUES_DISAGREE) % {"one": "3 days", "other": "2 days"},
    }


@pytest.mark.parametrize(
    "text",
    [
        "the clause on page 4 looks outdated to me",  # a reviewer's note
        "The paragraph supports the claim.",  # an LLM judge's words
        "",
    ],
)
def test_text_from_no_template_is_shown_as_written(text: str) -> None:
    assert why.localise(text, translate) == text


def test_a_translation_that_lost_a_part_shows_the_stored_sentence() -> None:
    stored = why.say(why.SUPERSEDED, version=1)
    assert why.localise(stored, lambda t: "版 %(missing)s") == stored


def test_what_the_verifier_and_the_conflict_scan_say_is_made_from_the_templates() -> None:
    # the producers' sentences are the templates' (or the page would show them in English)
    said = check_claim(
        "Trips over 900,000 yen require approval.", "Trips over 500,000 yen require approval."
    ).reasons
    said += check_claim(
        "The buyer pays the seller.", "The seller pays the buyer within 30 days."
    ).reasons
    conflict = compare(
        Passage(1, document=7, version=1, text="Employees may work remotely 3 days a week."),
        Passage(2, document=7, version=2, text="Employees may work remotely 2 days a week."),
    )
    assert conflict is not None
    said.append(conflict.reason)
    for text in said:
        assert why.localise(text, translate) != text, f"made from no template: {text!r}"


@pytest.mark.parametrize("template", why.TEMPLATES, ids=lambda t: t[:40])
def test_each_template_is_in_the_japanese_catalogue(template: str) -> None:
    entries = {e.msgid: e for e in polib.pofile(str(CATALOGUE)) if not e.obsolete}
    assert template in entries, "run makemessages: the template is not in the catalogue"
    assert entries[template].msgstr
    assert "fuzzy" not in entries[template].flags


def test_a_page_shows_a_stored_reason_in_japanese() -> None:
    stored = why.say(why.NUMBER_MISSING, number="900,000 yen", says="500,000 yen")
    with translation.override("ja"):
        shown = reason_filter(stored)
    assert shown != stored
    assert "900,000 yen" in shown
    assert "500,000 yen" in shown
    assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", shown)
    with translation.override("en"):
        assert reason_filter(stored) == stored
