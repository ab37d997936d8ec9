"""Document parsing throughput: seconds and MB/s for documents near MAX_DOCUMENT_BYTES in each
format, and for hostile shapes (one huge line, long punctuation runs, deep nesting).

Markdown is also bounded by MAX_MARKDOWN_WORK (markup characters and nested lines, counted
before parsing): the "at the work limit" rows are the slowest shapes still accepted, so their
seconds are the worst a Markdown upload costs.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence.parsing import (
    MAX_DOCUMENT_BYTES,
    MAX_MARKDOWN_WORK,
    DocumentError,
    markdown_work,
    parse_document,
)

EN = (
    "Employees must submit travel expense reports within 30 days of returning from a trip. "
    "Receipts are required for every item over 5,000 yen, and business class flights are not "
    "permitted for trips shorter than 6 hours."
)
JA = "甲は乙に対し、本件業務の対価として金50万円を、納品の翌月末日までに支払う。" * 3


def _fill(unit: Callable[[int], str], head: str = "", tail: str = "") -> str:
    """Repeat unit(i) until the UTF-8 size is just under the limit."""
    parts = [head]
    size = len(head.encode()) + len(tail.encode())
    i = 0
    while True:
        piece = unit(i)
        grow = len(piece.encode())
        if size + grow > MAX_DOCUMENT_BYTES:
            break
        parts.append(piece)
        size += grow
        i += 1
    parts.append(tail)
    return "".join(parts)


def _at_work_limit(unit: str, head: str = "") -> str:
    """head + unit repeated as often as MAX_MARKDOWN_WORK allows."""
    step = markdown_work(head + unit * 2) - markdown_work(head + unit)
    n = max(1, (MAX_MARKDOWN_WORK - markdown_work(head + unit)) // max(step, 1) + 1)
    while n > 1 and markdown_work(head + unit * n) > MAX_MARKDOWN_WORK:
        n -= 1
    return head + unit * n


def _text(i: int) -> str:
    if i % 10 == 0:
        return f"{i // 10 + 1}.{i % 7 + 1} Section heading\n\n"
    return (EN if i % 2 else JA) + "\n\n"


def _markdown(i: int) -> str:
    if i % 10 == 0:
        return f"## {i // 10 + 1}. Section\n\n"
    if i % 10 == 5:
        return "| item | amount |\n|---|---|\n| travel | 12,000,000 |\n\n"
    return f"- **{EN}** [link](https://example.com/{i})\n\n" if i % 2 else JA + "\n\n"


def _html(i: int) -> str:
    if i % 10 == 0:
        return f"<h2>{i // 10 + 1}. Section</h2>\n"
    if i % 10 == 5:
        return (
            "<script>var x = 1;</script><table><tr><td>travel</td><td>12,000,000</td></tr></table>"
        )
    return f"<p>{EN} <b>bold</b> <a href='#'>link</a></p>\n" if i % 2 else f"<div>{JA}</div>\n"


CASES: list[tuple[str, str, str]] = [
    ("text, EN/JA paragraphs", "text", _fill(_text)),
    ("markdown, lists/tables/links", "markdown", _fill(_markdown)),
    ("html, p/div/table/script", "html", _fill(_html, "<html><body>", "</body></html>")),
    ("text, one 5 MB line with spaces", "text", _fill(lambda i: "word ")),
    ("text, one 5 MB line, no spaces", "text", _fill(lambda i: "承認")),
    ("text, runs of '!' and ')'", "text", _fill(lambda i: "!" * 998 + ")a")),
    ("text, '# ' then spaces", "text", "# " + " " * (MAX_DOCUMENT_BYTES - 10) + "x"),
    ("text, one-line paragraphs", "text", _fill(lambda i: f"Rule {i} applies.\n\n")),
    ("markdown, '*' and '[' runs", "markdown", _fill(lambda i: "*[_" if i % 50 else "\n\n")),
    ("html, 100k nested divs", "html", "<div>" * 100_000 + "deep" + "</div>" * 100_000),
    ("markdown, '*[_' at the work limit", "markdown", _at_work_limit("*[_" * 49 + "\n\n")),
    ("markdown, '![' at the work limit", "markdown", _at_work_limit("![a")),
    ("markdown, '[' at the work limit", "markdown", _at_work_limit("[a")),
    ("markdown, lines at the work limit", "markdown", _at_work_limit("a\n")),
    ("markdown, headings at the work limit", "markdown", _at_work_limit("# a\n")),
    ("markdown, autolinks at the work limit", "markdown", _at_work_limit("<http://a.b> ")),
    ("markdown, deep quote, lazy lines", "markdown", _at_work_limit("a\n", ">" * 30 + " a\n")),
    (
        "markdown, lists/tables at the limit",
        "markdown",
        _at_work_limit(_markdown(1) + _markdown(5)),
    ),
]


def main() -> None:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"limit {MAX_DOCUMENT_BYTES:,} bytes; Markdown at most {MAX_MARKDOWN_WORK:,} steps of "
        f"work; load average {load} on {os.cpu_count()} cores"
    )
    print(f"{'case':40} {'MB':>6} {'seconds':>8} {'MB/s':>6} {'paragraphs':>10}")
    for name, fmt, raw in CASES:
        data = raw.encode()
        start = time.perf_counter()
        try:
            paragraphs: int | str = len(parse_document(data, format=fmt).paragraphs)
        except DocumentError as exc:
            paragraphs = type(exc).__name__
        seconds = time.perf_counter() - start
        mb = len(data) / 1e6
        print(f"{name:40} {mb:6.2f} {seconds:8.2f} {mb / seconds:6.1f} {paragraphs!s:>10}")


if __name__ == "__main__":
    main()
