"""The Japanese catalogue is whole: every entry translated and not fuzzy, each translation
keeps its message's placeholders, and the compiled catalogue Django reads is the one the
source says (a .po that msgfmt refuses leaves a stale .mo behind, untranslated in the UI)."""

from __future__ import annotations

import ast
import gettext
import io
import re
import tokenize
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.template.base import Lexer, TokenType
from django.utils.translation.template import templatize

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


# --- what the code and the templates ask the catalogue for ------------------------------

ROOT = CATALOGUE.parents[2]
APPS = ("maria", "coordinates", "trail", "evidence", "decisions", "graph", "gates", "audit")
TEMPLATES = ROOT / "templates"
# The names makemessages reads (its xgettext keywords), and which argument is the msgid.
SINGULAR = {"gettext", "gettext_lazy", "gettext_noop", "_", "ngettext", "ngettext_lazy"}
CONTEXTUAL = {"pgettext", "pgettext_lazy", "npgettext", "npgettext_lazy"}


def _python_msgids() -> dict[str, str]:
    """Each msgid the apps' Python marks (a literal first argument of gettext and its kin),
    with the file that marks it."""
    found: dict[str, str] = {}
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                at = 1 if name in CONTEXTUAL else 0 if name in SINGULAR else None
                if at is None or len(node.args) <= at:
                    continue
                for arg in node.args[at : at + (2 if name.startswith(("n", "np")) else 1)]:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        found.setdefault(arg.value, str(path.relative_to(ROOT)))
    return found


def _template_msgids() -> dict[str, str]:
    """Each msgid the templates mark ({% translate %}, {% blocktranslate %}, _("...")), read
    as makemessages reads them: through Django's templatize, then its gettext calls."""
    found: dict[str, str] = {}
    for path in sorted(TEMPLATES.rglob("*.html")):
        source = templatize(path.read_text(encoding="utf-8"), origin=str(path))
        # Python-like lines, each call on one line; their indents mean nothing.
        source = "\n".join(line.lstrip() for line in source.splitlines())
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        for i, token in enumerate(tokens[:-2]):
            if token.type != tokenize.NAME or tokens[i + 1].string != "(":
                continue
            if token.string not in SINGULAR | CONTEXTUAL:
                continue
            strings = [t for t in tokens[i + 2 : i + 8] if t.type == tokenize.STRING]
            skip = 1 if token.string in CONTEXTUAL else 0
            for literal in strings[skip : skip + (2 if token.string.startswith("n") else 1)]:
                found.setdefault(ast.literal_eval(literal.string), str(path.relative_to(ROOT)))
    return found


def test_every_message_the_code_and_templates_use_has_japanese() -> None:
    # given what the catalogue translates (a plural's msgid_plural counts as its msgid's)
    translated = {e.msgid for e in ENTRIES if all(_translations(e)) and "fuzzy" not in e.flags}
    translated |= {e.msgid_plural for e in ENTRIES if e.msgid_plural and e.msgid in translated}
    used = {**_python_msgids(), **_template_msgids()}
    # then each message a page or the engine can show has its Japanese: none is left out
    missing = sorted(
        f"{where}: {msgid!r}" for msgid, where in used.items() if msgid not in translated
    )
    assert len(used) > 500, "the extraction found almost nothing: is it still reading the code?"
    assert not missing, "no Japanese (add it to django.po):\n" + "\n".join(missing)


# --- literal text a template shows without asking the catalogue ---------------------------

# Words a template may show as they are, each with why. Matched against a text node or
# attribute value as a whole (stripped), after template tags were taken out.
ALLOWED_LITERALS = {
    "MARIA": "the product's name, the same in every language",
    "MARIA Governance Engine": "the product's name (the page title)",
    "API": "a technical name, written so in Japanese too",
    "JSON": "a format's name",
    "τ": "the threshold's symbol (Greek, not English)",
    "h": "the hop count's symbol in the graph form (the papers' h)",
    "PPR": "personalised PageRank's abbreviation, a method's name",
    "v": "the prefix of a version number (v2), as the papers write it",
    "auto": "the placeholder of the hop count: the API's own word for it",
    "S": "sufficiency's symbol in a claim's header (S = 0.82), as the papers write it",
    "P": "the engine's probability's symbol (P = 0.91), as the papers write it",
    # keyboard keys, as printed on the keys and typed (the shortcuts sheet, the buttons)
    "j / k": "keys",
    "Enter": "a key's name, as printed on the key",
    "c": "a key",
    "a": "a key",
    "r": "a key",
    "l": "a key",
    "g q": "keys",
}
# What edges a literal may have that are no words: the separators between template tags.
EDGES = " ·,:;=()[]—–-|→¶"
# What shows: text between tags, and these attributes.
SHOWN_ATTRIBUTES = {"placeholder", "title", "aria-label", "alt"}
# Code-ish words that are not prose: an identifier, a coordinate, a URL, a file name.
CODE_LIKE = re.compile(r"^[\w.:/#-]*[_./:#\d][\w.:/#-]*$")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


class _ShownText(HTMLParser):
    """The text a template shows (data outside script and style, and the attributes a person
    reads), from a template whose tags were replaced by SEAM."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.shown: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"script", "style"}:
            self._hidden += 1
        self.shown += [value for name, value in attrs if name in SHOWN_ATTRIBUTES and value]

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style"}:
            self._hidden = max(0, self._hidden - 1)

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.shown.append(data)


SEAM = "\u2063"  # where a template tag stood: it ends a literal, as the tag's text would


def _untranslated_literals(source: str) -> list[str]:
    """The pieces of literal text with English words in them that `source` (a template)
    shows outside {% translate %} and {% blocktranslate %}."""
    kept: list[str] = []
    inside = 0  # blocktranslate or comment: its text is not a literal on the page
    attributes_open = False
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            word = token.contents.split()[0] if token.contents else ""
            # {% block body_attrs %} holds attributes of a tag in the base template: no text
            attributes = word == "block" and token.contents.split()[-1].endswith("attrs")
            if word in {"blocktranslate", "blocktrans", "comment"} or attributes:
                inside += 1
            elif word in {"endblocktranslate", "endblocktrans", "endcomment"}:
                inside -= 1
            elif word == "endblock" and inside and attributes_open:
                inside -= 1
                attributes_open = False
            attributes_open = attributes_open or attributes
            # A translation stands for text; other tags (if, for) may stand inside a tag's
            # attributes, where they must leave the markup whole.
            kept.append(SEAM if word in {"translate", "trans", "blocktranslate"} else "")
        elif token.token_type == TokenType.TEXT and not inside:
            kept.append(token.contents)
        elif token.token_type == TokenType.VAR:
            kept.append(SEAM)
    parser = _ShownText()
    parser.feed("".join(kept))
    parser.close()
    found = []
    for text in parser.shown:
        for piece in text.split(SEAM):
            piece = " ".join(piece.split()).strip(EDGES)
            words = [w for w in LATIN_WORD.findall(piece) if not CODE_LIKE.match(w)]
            if words and piece not in ALLOWED_LITERALS and not CODE_LIKE.match(piece):
                found.append(piece)
    return found


def test_the_literal_scan_finds_english_outside_translate_tags() -> None:
    template = (
        '{% load i18n %}<p title="Open it">{% translate "Queue" %} · floor {{ x }}</p>'
        "{% blocktranslate %}a {{ n }} b{% endblocktranslate %}<b>prev</b> MARIA"
        '<span class="mono">G1.U1.P1</span><script>const word = "ok";</script>'
    )
    assert _untranslated_literals(template) == ["Open it", "floor", "prev"]


@pytest.mark.parametrize(
    "template", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: str(p.relative_to(TEMPLATES))
)
def test_a_template_shows_no_english_outside_translate_tags(template: Path) -> None:
    literals = _untranslated_literals(template.read_text(encoding="utf-8"))
    assert not literals, f"wrap in {{% translate %}} (or allow with a reason): {literals}"


# A person's judgement (判断) is not the engine's decision (決定): one word for the record.
JUDGEMENT_NOT_DECISION = {"Ended without a person's decision"}


def test_a_decision_is_called_one_thing_in_japanese() -> None:
    named = [
        e.msgid
        for e in ENTRIES
        if re.search(r"\bdecisions?\b", e.msgid, re.IGNORECASE)
        and e.msgid not in JUDGEMENT_NOT_DECISION
        and any("判断" in t for t in _translations(e))
    ]
    assert not named, f"a decision is 決定, as on every page: {named}"
