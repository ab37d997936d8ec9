"""Display shaping: the claim's failed words marked without changing its text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gates.presenters import marked


def test_a_failed_number_and_actor_are_marked_in_the_claim() -> None:
    parts = marked("Finance must approve requests over 300 dollars.", ["300", "finance approve"])
    assert ("300", True) in parts
    assert ("Finance", True) in parts
    assert ("approve", True) in parts
    assert "".join(piece for piece, _ in parts) == "Finance must approve requests over 300 dollars."


def test_nothing_failed_leaves_the_text_whole() -> None:
    assert marked("All good.", []) == [("All good.", False)]
    assert marked("All good.", ["missing"]) == [("All good.", False)]


@given(st.text(max_size=80), st.lists(st.text(max_size=8), max_size=4))
def test_the_parts_always_join_to_the_text(text: str, words: list[str]) -> None:
    assert "".join(piece for piece, _ in marked(text, words)) == text
