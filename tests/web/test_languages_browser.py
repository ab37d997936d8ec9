"""The reviewer's, zone admin's and auditor's day in headless Chromium, once in English and
once in Japanese (issue 18.8): every page each role uses renders and its actions work; in
Japanese no English is left on screen, in English no Japanese.

The oracle reads each page's visible text (`document.body.innerText`). In Japanese it finds
(a) no catalogue msgid verbatim (each piece between placeholders of two words or more and 8
characters at least), and (b) no run of two English words (issue 29: "floor · refusal",
"prev", a document's kind were each one or two words), except inside the text this test
seeded itself (documents, claims, questions, reasons, notes) and the names in NAMES. In
English it finds no Japanese msgstr of the catalogue. A page that fails says which fragments
leaked. The graph's edge labels, drawn on a canvas, are read from the drawing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import polib
import pytest
from django.conf import settings

from coordinates.models import Role, ZonePolicyVersion
from decisions.delivery import delivery_of
from decisions.models import Decision, ReReview, State
from evidence.models import KnowledgeConflict, Paragraph
from tests.decisions.conftest import GOOD, cite, submit
from tests.web.test_browser import (
    CHROMIUM,
    ZONE,
    LiveASGI,
    browser,
    committed_trail,
    live_asgi,
    log_in,
    policy_doc,
    set_policy,
)
from tests.web.test_periodic_browser import sampled
from tests.web.test_review_day_browser import in_japanese
from trail.checkpoints import checkpoint_create

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy", "submit"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]

REMOTE = (
    "# Remote work\n\n"
    "Employees may request to work remotely up to 3 days per week.\n\n"
    "Requests for remote work are approved by the line manager."
)
DAYS = "Employees may request to work remotely up to 3 days per week."
MEMO = "# Memo\n\nRemote work: employees may work remotely up to 4 days per week."
QUESTION = "Who approves travel expenses above 500,000 yen?"
REMOTE_QUESTION = "How many days a week may employees work remotely?"
APPROVE_REASON = "checked against section 2 of the travel policy"
PERIODIC_NOTE = "the evidence still says so"
CONFLICT_REASON = "the policy governs over the older text"
THRESHOLD_REASON = "fewer answers wait for a person"
# Two words of Latin letters in a row; a line break, a tab (between table cells), a digit or
# punctuation ends a run.
ENGLISH_RUN = re.compile(
    r"(?<!\w)(?<!\w\.)[A-Za-z]+(?:'[a-z]+)?(?:[ \u00a0]+[A-Za-z]+(?:'[a-z]+)?)+(?!\w|\.\w)"
)
# Names a Japanese page shows as they are, each with why (runs of two words or more).
NAMES = {
    "MARIA Governance Engine": "the product's name",
    "REST API": "a technical name, written so in Japanese",
    "JSON Lines": "a file format's name (the export)",
}
# What parts a message into pieces that show verbatim: placeholders and markup.
PLACEHOLDER = re.compile(r"%\([a-z_]+\)[-+ #0-9.]*[a-z]|%[sd]|<[^>]*>")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@cache
def catalogue() -> tuple[frozenset[str], frozenset[str]]:
    """The English of the catalogue that a page could leak (each msgid's pieces between
    placeholders, of two words and 8 characters at least) and its Japanese (each msgstr's
    pieces of 3 characters at least)."""
    # The catalogue the server translates with (locale/ unless the settings say otherwise).
    path = Path(settings.LOCALE_PATHS[0]) / "ja" / "LC_MESSAGES" / "django.po"
    entries = [e for e in polib.pofile(str(path)) if not e.obsolete]
    translations = [t for e in entries for t in (e.msgstr, *e.msgstr_plural.values())]
    msgids: set[str] = set()
    msgstrs: set[str] = set()
    for entry in entries:
        for english in (entry.msgid, entry.msgid_plural):
            # A msgid with placeholders is looked for piece by piece, the pieces a
            # translation keeps as they are (a product name, a header) left out.
            for piece in PLACEHOLDER.split(english.replace("%%", "%")):
                piece = piece.strip()
                long_enough = len(piece) >= 8 and len(piece.split()) >= 2
                if long_enough and not any(piece in t for t in translations):
                    msgids.add(piece)
        for japanese in (entry.msgstr, *entry.msgstr_plural.values()):
            for piece in PLACEHOLDER.split(japanese.replace("%%", "%")):
                if len(piece.strip()) >= 3 and JAPANESE.search(piece):
                    msgstrs.add(piece.strip())
    return frozenset(msgids), frozenset(msgstrs)


def leaks(text: str, language: str, seeded: tuple[str, ...]) -> list[str]:
    """The fragments of `text` in the wrong language (the module docstring's oracle)."""
    msgids, msgstrs = catalogue()
    if language == "en":
        return sorted(s for s in msgstrs if s in text)
    found = {m for m in msgids if m in text}
    found |= set(ENGLISH_RUN.findall(text))
    return sorted(
        fragment
        for fragment in found
        if not any(fragment in s for s in seeded) and not any(fragment in n for n in NAMES)
    )


def test_the_oracle_finds_the_other_language_and_spares_the_seeded_text() -> None:
    # a sentence of the catalogue, and two English words, in a Japanese page
    found = leaks("根拠の変更\nNothing to review again.\nstill says so here", "ja", ())
    assert found == ["Nothing to review again", "Nothing to review again.", "still says so here"]
    found = leaks(
        "τ 0.2 · δ 0.1 · floor 0.3 · cohesion τ 0.4\nprev hash 0a1b\nG1.U1.P1 Z1", "ja", ()
    )
    # one English word alone ("floor") is the catalogue test's to find, in the templates
    assert found == ["cohesion τ", "prev hash"]
    assert leaks("MARIA Governance Engine · G1.U1.P1.Z1 · v2 ¶3 · ann", "ja", ()) == []
    # but not the seeded text, nor a run inside it
    assert leaks("回答: the evidence still says so", "ja", (PERIODIC_NOTE,)) == []
    # and the catalogue's Japanese in an English page
    assert "定期レビュー" in leaks("Queue\n定期レビュー", "en", ())
    assert leaks("Queue\nPeriodic review", "en", ()) == []


@dataclass
class Walk:
    """The pages visited in one language and what each leaked."""

    base: str
    language: str
    seeded: tuple[str, ...]
    leaked: dict[str, list[str]] = field(default_factory=dict)
    console: list[str] = field(default_factory=list)

    def page(self, browser: Any, username: str) -> Any:
        page = log_in(browser, self.base, username)
        # Whatever a page says to the console (a script error, a failed load, a warning) is
        # something a person's day should not meet (issue 29's "no console message").
        page.on("console", lambda m: self.console.append(f"{username} {page.url}: {m.text}"))
        page.on("pageerror", lambda e: self.console.append(f"{username} {page.url}: {e}"))
        return in_japanese(page, self.base) if self.language == "ja" else page

    def read(self, page: Any, name: str) -> None:
        """Check the page on screen now; record what leaked under `name`."""
        page.wait_for_load_state("load")
        text = page.evaluate("document.body.innerText")
        found = leaks(text, self.language, self.seeded)
        if found:
            self.leaked[f"{name} ({page.url.removeprefix(self.base)})"] = found

    def visit(self, page: Any, name: str, path: str) -> None:
        response = page.goto(f"{self.base}{path}")
        assert response is not None
        assert response.status == 200, f"{name}: {path} answered {response.status}"
        self.read(page, name)


@pytest.mark.parametrize("language", ["en", "ja"])
def test_each_role_walks_its_pages_in_one_language_with_none_of_the_other_on_screen(
    language: str,
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    ingest: Callable[..., Any],
) -> None:
    # given a released travel answer sampled for a look back; a released answer on the
    # remote-work policy whose paragraph a new version then changed; a memo that disagrees
    # with the new version
    person("ann", Role.REVIEWER, "G1.U1.P1")
    person("ben", Role.REVIEWER, "G1.U1.P1")
    person("zed", Role.ZONE_ADMIN, "G1.U1.P1")
    person("olga", Role.AUDITOR, "G1")
    set_policy(tau=0.2, refusal_floor=0.1, floor=0.33)
    weak = submit([{"text": GOOD, "citations": [cite(policy_doc)]}], question=QUESTION)
    periodic = sampled(weak.json()["id"])
    ingest(REMOTE, title="Remote work policy", key="remote")
    days = Paragraph.objects.get(text=DAYS, current=True)
    remote = submit([{"text": DAYS, "citations": [cite(days)]}], question=REMOTE_QUESTION)
    released = remote.json()["id"]
    ingest(REMOTE.replace("3 days", "2 days"), title="Remote work policy", key="remote")
    ingest(MEMO, title="Memo", key="memo", kind="memo")
    rereview = ReReview.objects.get(decision_id=released)
    conflict = KnowledgeConflict.objects.filter(resolved_at__isnull=True).earliest("pk")
    # and two travel answers waiting for a person
    set_policy(tau=0.99, refusal_floor=0.05)
    first, second = (
        submit([{"text": GOOD, "citations": [cite(policy_doc)]}], question=QUESTION).json()["id"]
        for _ in range(2)
    )
    assert Decision.objects.get(pk=first).state == State.APPROVAL_REQUIRED
    seeded = (
        *Paragraph.objects.values_list("text", flat=True),
        *("Travel policy", "Remote work policy", "Memo"),
        QUESTION,
        REMOTE_QUESTION,
        APPROVE_REASON,
        PERIODIC_NOTE,
        CONFLICT_REASON,
        THRESHOLD_REASON,
        GOOD,
        # what the asker receives is answer text, in the answer's language whatever the
        # page's (a hedged English answer opens with an English hedge)
        *(delivery_of(d).answer or "" for d in Decision.objects.filter(pk__in=[first, second])),
    )
    walk = Walk(live_asgi.url, language, seeded)
    zone = f"/zones/{ZONE}"

    # when ann, a reviewer, works her queue: claims the first answer and approves it
    ann = walk.page(browser, "ann")
    walk.visit(ann, "home", "/")
    walk.visit(ann, "queue", "/queue/")
    # the second answer she hands to ben with the queue's bulk form (her tick outlives the
    # live refresh that redraws the rows)
    ann.wait_for_selector("#live[data-state=live]")
    ann.check(f'input[name=decisions][value="{second}"]')
    ann.select_option("#bulk-action", "assign")
    ann.fill("#bulk-assignee", "ben")
    with ann.expect_navigation():
        ann.click("#bulk-apply")
    ann.wait_for_selector("ul.messages li.success")
    assert Decision.objects.get(pk=second).assigned_to.username == "ben"
    walk.read(ann, "queue, bulk assigned")
    walk.visit(ann, "decision", f"/queue/decisions/{first}/")
    ann.click("#claim")
    ann.wait_for_selector("#approve")
    walk.read(ann, "decision, claimed")
    ann.fill('form[data-key="a"] input[name=reason]', APPROVE_REASON)
    ann.click("#approve")
    ann.wait_for_url(f"{walk.base}/queue/decisions/{second}/")
    walk.read(ann, "next decision")
    # and her look-backs: the periodic review, closed as right, and the changed evidence
    walk.visit(ann, "periodic reviews", "/reviews/periodic/")
    walk.visit(ann, "periodic review", f"/reviews/periodic/{periodic.pk}/")
    ann.click("#claim")
    ann.wait_for_selector("#close-form")
    ann.check("#verdict-ok")
    ann.fill("#note", PERIODIC_NOTE)
    ann.click("#close")
    ann.wait_for_url(f"{walk.base}/reviews/periodic/")
    walk.read(ann, "periodic reviews, closed")
    walk.visit(ann, "closed periodic review", f"/reviews/periodic/{periodic.pk}/")
    walk.visit(ann, "re-reviews", "/reviews/changed/")
    assert ann.query_selector(f"#rereview-{rereview.pk}") is not None
    walk.visit(ann, "documents", "/documents/")
    walk.visit(ann, "document", f"/documents/{days.version.document_id}/")
    walk.visit(ann, "graph explorer", "/graph/?" + urlencode({"zone": ZONE, "q": QUESTION}))
    ann.wait_for_selector("#graph-gate:not(:empty)")
    walk.read(ann, "graph explorer, answered")
    # the edges' labels, drawn on the canvas: in Japanese none is the API's English name
    labels = ann.evaluate(
        "() => { const reg = document.getElementById('graph-canvas')._cyreg;"
        " return reg && reg.cy ? reg.cy.edges().map(e => e.data('label')) : []; }"
    )
    english_labels = [label for label in labels if re.search(r"[a-z]", label)]
    if language == "ja" and english_labels:
        walk.leaked["graph explorer, edge labels"] = english_labels
    # and ben sees the second answer, waiting
    ben = walk.page(browser, "ben")
    walk.visit(ben, "decision (another reviewer)", f"/queue/decisions/{second}/")

    # when zed, the zone admin, reads the zone and previews a lower tau
    zed = walk.page(browser, "zed")
    walk.visit(zed, "zones", "/zones/")
    walk.visit(zed, "zone", f"{zone}/")
    zed.fill("#id_tau", "0.6")
    zed.click("#preview")
    zed.wait_for_selector("#whatif-table")
    walk.read(zed, "zone, what-if")
    # and saves it as a new version, with its reason
    zed.fill("#id_reason", THRESHOLD_REASON)
    zed.click("#save")
    zed.wait_for_selector("ul.messages li")
    walk.read(zed, "zone, saved")
    # and resolves a conflict: a blank reason is refused with the reason why, a reason is taken
    walk.visit(zed, "conflicts", f"{zone}/conflicts/")
    resolve = f"#conflict-{conflict.pk} form.resolve"
    # nothing is preset (issue 29.6): the admin chooses the side that governs
    zed.select_option(f"{resolve} select[name=resolution]", "first")
    zed.fill(f"{resolve} input[name=reason]", "   ")  # the browser's `required` lets it by
    zed.click(f"{resolve} button[type=submit]")
    zed.wait_for_selector("ul.messages li.error")
    walk.read(zed, "conflicts, no reason")
    zed.select_option(f"{resolve} select[name=resolution]", "first")
    zed.fill(f"{resolve} input[name=reason]", CONFLICT_REASON)
    zed.click(f"{resolve} button[type=submit]")
    zed.wait_for_selector("ul.messages li.success")
    walk.read(zed, "conflicts, resolved")
    walk.visit(zed, "resolved conflicts", f"{zone}/conflicts/?state=resolved")
    walk.visit(zed, "calibration", f"{zone}/calibration/")
    zed.click("#propose")  # too few verdicts yet: the page says how many it needs
    zed.wait_for_load_state("load")
    walk.read(zed, "calibration, proposed")
    walk.visit(zed, "dashboard", f"{zone}/dashboard/")
    zed.wait_for_selector("#kpi-trust svg")
    walk.read(zed, "dashboard, drawn")
    zed.click("#learning-link")
    zed.wait_for_selector("#hallucinations")
    walk.read(zed, "what the answers teach")

    # when olga, the auditor, searches the trail and verifies it
    olga = walk.page(browser, "olga")
    walk.visit(olga, "audit search", "/audit/")
    walk.visit(olga, "audited decision", f"/audit/decisions/{first}/")
    olga.wait_for_selector('li[data-kind="decision.approved"]')
    olga.click("#verify")
    olga.wait_for_selector('#verdict[data-intact="1"]')
    walk.read(olga, "verify")
    checkpoint_create()
    walk.visit(olga, "checkpoints", "/audit/checkpoints/")

    # then the actions took effect, and no page showed the other language
    assert Decision.objects.get(pk=first).state == State.COMPLETED
    assert Decision.objects.get(pk=second).assigned_to.username == "ben"
    assert ZonePolicyVersion.objects.filter(reason=THRESHOLD_REASON).exists()
    periodic.refresh_from_db()
    assert periodic.verdict == "ok"
    conflict.refresh_from_db()
    assert conflict.resolution_reason == CONFLICT_REASON
    report = "\n".join(f"{name}: {found}" for name, found in walk.leaked.items())
    print(report or f"{language}: nothing leaked")
    assert not walk.leaked, f"{language} pages show the other language:\n{report}"
    assert not walk.console, "\n".join(walk.console)
