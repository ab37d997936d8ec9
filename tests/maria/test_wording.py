"""maria.wording: a message made in English shows in the reader's language, parts and all."""

from __future__ import annotations

from maria.wording import in_language, said

JAPANESE = {
    "chain %(chain)s: intact, %(span)s, head %(head)s": "チェーン %(chain)s: 改ざんなし、%(span)s",
    "events %(first)s..%(last)s": "イベント %(first)s〜%(last)s",
    "no events": "イベントなし",
    "broken %(x)s": "壊れた %(y)s",  # a translation that lost its part
}


def translate(message: str) -> str:
    return JAPANESE.get(message, message)


def test_said_is_the_english_text_the_api_and_the_logs_give() -> None:
    span = said("events %(first)s..%(last)s", {"first": 1, "last": 6})
    line = said(
        "chain %(chain)s: intact, %(span)s, head %(head)s",
        {"chain": "Z", "span": span, "head": "ab"},
    )
    assert line == "chain Z: intact, events 1..6, head ab"
    assert f"{line}" == "chain Z: intact, events 1..6, head ab"


def test_in_language_translates_the_template_and_the_parts_that_were_said() -> None:
    span = said("events %(first)s..%(last)s", {"first": 1, "last": 6})
    line = said(
        "chain %(chain)s: intact, %(span)s, head %(head)s",
        {"chain": "Z", "span": span, "head": "ab"},
    )
    assert in_language(line, translate) == "チェーン Z: 改ざんなし、イベント 1〜6"
    assert in_language(said("no events"), translate) == "イベントなし"


def test_text_not_said_and_a_broken_translation_stay_as_made() -> None:
    assert in_language("no events", translate) == "no events"  # a person's words, say
    assert in_language(said("broken %(x)s", {"x": 1}), translate) == "broken 1"
