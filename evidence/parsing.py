"""Uploaded documents (plain text, Markdown, HTML, PDF) -> canonical plain text and its
numbered paragraphs, each an exact slice of that text, with the section it sits under.

Every format is first rendered to canonical text; one splitter then finds headings and
paragraphs in that text. So paragraphs are a function of the canonical text alone: the
content hash commits to them, and re-parsing the canonical text as plain text gives them
back. Headings stay in the canonical text (reviewers read them there) but are not
paragraphs: they name the `section` of the paragraphs below them.
"""

from __future__ import annotations

import hashlib
import io
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Final

from bs4 import BeautifulSoup
from bs4.element import NavigableString, PreformattedString, Tag
from markdown_it import MarkdownIt

if TYPE_CHECKING:
    from bs4.element import PageElement
    from markdown_it.token import Token
    from pypdf import PageObject

MAX_DOCUMENT_BYTES: Final = 5 * 1024 * 1024  # 5 MiB, of the upload and of the extracted text
MAX_PARAGRAPH_CHARS: Final = 2_000  # longer paragraphs are split at sentence boundaries
MAX_PARAGRAPHS: Final = 50_000  # 5 MiB of one-line paragraphs would be a million rows
MAX_SECTION_CHARS: Final = 200  # a heading used as a section label is cut to this
HEADING_MAX_CHARS: Final = 80  # an unmarked line longer than this is prose, not a heading
# markdown-it parses in pure Python at tens of microseconds per markup character and per line
# (times the depth of the quotes and lists around the line): 5 MB of `*[_` runs took about
# 2 minutes. So a Markdown upload may cost at most this much work, counted before parsing
# (see `markdown_work`): the slowest shapes at the limit parse in 2-6 s on a busy 2-core
# machine (bench/bench_parsing.py), while 5 MB of ordinary lists, tables and links stays
# under it. More is refused (413), and the same text is accepted as plain text or HTML.
MAX_MARKDOWN_WORK: Final = 150_000

FORMATS: Final = ("text", "markdown", "html", "pdf")


class DocumentError(ValueError):
    """A document the engine will not store; `field` names the request field at fault."""

    code = "invalid_document"

    def __init__(self, message: str, *, field: str = "text") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class DocumentTooLarge(DocumentError):
    """Over MAX_DOCUMENT_BYTES (or MAX_PARAGRAPHS, or MAX_MARKDOWN_WORK); the API answers 413."""

    code = "document_too_large"


@dataclass(frozen=True, slots=True)
class ParsedParagraph:
    """One citable paragraph: `text == document.text[start:end]`."""

    number: int
    section: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """Canonical text (NFC, \\n newlines, no trailing spaces) and its paragraphs."""

    text: str
    paragraphs: tuple[ParsedParagraph, ...]
    format: str
    title: str | None


def opening_words(document: ParsedDocument, limit: int = HEADING_MAX_CHARS) -> str:
    """A title for a document that has none and no heading: its first paragraph's opening
    words, at most `limit` characters, cut between words where one ends in reach."""
    words = " ".join(document.paragraphs[0].text.split()) if document.paragraphs else ""
    if len(words) <= limit:
        return words
    reach = words[: limit + 1]
    return reach.rsplit(" ", 1)[0] if " " in reach else words[:limit]


def content_hash(text: str) -> str:
    """sha256 hex digest of the canonical text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_document(
    raw: bytes | str, *, format: str | None = None, filename: str | None = None
) -> ParsedDocument:
    """Canonical text, paragraphs and title of an upload; DocumentError if it is refused."""
    fmt = format if format is not None else detect_format(filename, None, raw)
    if fmt not in FORMATS:
        raise DocumentError(
            f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}", field="format"
        )
    markup_title: str | None = None
    if fmt == "pdf":
        rendered, markup_title = _pdf_text(raw)
    else:
        source = _decode(raw)
        if fmt == "markdown":
            _check_markdown_work(source)
            rendered = _join(_MarkdownRenderer().render(source))
        elif fmt == "html":
            units, markup_title = _html_units(source)
            rendered = _join(units)
        else:
            rendered = source
    text = _canonical(rendered)
    if not text:
        raise DocumentError("the document has no text")
    _check_size(len(text.encode("utf-8")), "the extracted text")
    paragraphs, heading_title = _split(text)
    if not paragraphs:
        raise DocumentError("the document has no paragraphs, only headings or separators")
    return ParsedDocument(text, paragraphs, fmt, markup_title or heading_title)


def _words(words: str) -> frozenset[str]:
    return frozenset(words.split())


# --- format detection ----------------------------------------------------------------------

_CONTENT_TYPES: Final = {
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "application/pdf": "pdf",
}
_EXTENSIONS: Final = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".mkd": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
}
# Office files, images and archives: refused by name rather than as invalid UTF-8.
_UNSUPPORTED_EXTENSIONS: Final = _words(
    ".doc .docx .dot .dotx .xls .xlsx .ppt .pptx .odt .ods .odp .rtf .pages .key .numbers "
    ".zip .gz .tgz .7z .rar .png .jpg .jpeg .gif .bmp .tif .tiff .webp .heic .mp3 .mp4 .exe"
)
_BINARY_MAGIC: Final = (
    (b"PK\x03\x04", "a ZIP archive (docx, xlsx, ...)"),
    (b"\xd0\xcf\x11\xe0", "an OLE file (doc, xls, ...)"),
    (b"{\\rtf", "an RTF file"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
)
_HTML_START = re.compile(
    r"\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title|p|div|h[1-6]|table|"
    r"ul|ol|section|article|main|header|span|br|a)\b",
    re.IGNORECASE | re.DOTALL,
)
_MARKDOWN_SIGNS = re.compile(
    r"^(?:#{1,6}[ \t]+\S|```|~~~|\s*[-*+][ \t]+\[[ x]\])|\*\*\S[^*\n]*\*\*|\]\([^)\s]+\)",
    re.MULTILINE,
)


def detect_format(filename: str | None, content_type: str | None, raw: bytes | str) -> str:
    """The format of an upload, one of FORMATS: from a specific content type, else the file
    extension, else text/plain, else a look at the first kilobyte."""
    ctype = (content_type or "").split(";", 1)[0].strip().lower()
    by_type = _CONTENT_TYPES.get(ctype)
    # Clients send text/plain or application/octet-stream for nearly anything, so only a
    # specific type outranks the file name.
    if by_type is not None and by_type != "text":
        return by_type
    ext = PurePosixPath((filename or "").replace("\\", "/")).suffix.lower()
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    if ext in _UNSUPPORTED_EXTENSIONS:
        raise DocumentError(
            f"{ext} files are not supported; send text, Markdown, HTML or PDF", field="format"
        )
    if by_type == "text":
        return "text"
    if ctype and ctype != "application/octet-stream" and not ctype.startswith("text/"):
        raise DocumentError(
            f"content type {ctype} is not supported; send text, Markdown, HTML or PDF",
            field="format",
        )
    return _sniff(raw)


def _sniff(raw: bytes | str) -> str:
    head = raw[:1024]
    head_bytes = head if isinstance(head, bytes) else head.encode("utf-8", "replace")
    # The PDF header may sit anywhere in the first kilobyte (some writers prefix junk).
    if b"%PDF-" in head_bytes:
        return "pdf"
    for magic, what in _BINARY_MAGIC:
        if head_bytes.startswith(magic):
            raise DocumentError(
                f"the upload is {what}; send text, Markdown, HTML or PDF", field="format"
            )
    head_text = head_bytes.decode("utf-8", "replace").lstrip("\ufeff")
    if _HTML_START.match(head_text):
        return "html"
    if _MARKDOWN_SIGNS.search(head_text):
        return "markdown"
    return "text"


# --- decoding and canonical text -------------------------------------------------------------

# C0 and C1 controls and DEL, except tab, newline and carriage return (CR is a newline).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _check_size(size: int, what: str) -> None:
    if size > MAX_DOCUMENT_BYTES:
        raise DocumentTooLarge(
            f"{what} is {size:,} bytes; the limit is {MAX_DOCUMENT_BYTES:,} bytes "
            f"({MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB)"
        )


def _decode(raw: bytes | str) -> str:
    """Validated text of an upload: UTF-8 (BOM stripped), no lone surrogates, no controls."""
    if isinstance(raw, str):
        # A character is at least one UTF-8 byte: skip encoding a string that is surely over.
        size = (
            len(raw) if len(raw) > MAX_DOCUMENT_BYTES else len(raw.encode("utf-8", "surrogatepass"))
        )
        _check_size(size, "the document")
        bad = _SURROGATE.search(raw)
        if bad is not None:
            raise DocumentError(
                f"the text contains a lone surrogate U+{ord(bad.group()):04X} "
                f"at character offset {bad.start()}"
            )
        text = raw
    else:
        data = bytes(raw)
        _check_size(len(data), "the document")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocumentError(
                f"the text is not valid UTF-8: byte 0x{data[exc.start]:02x} at byte offset "
                f"{exc.start} ({exc.reason})"
            ) from None
    text = text.removeprefix("\ufeff")
    _refuse_controls(text, "the text")
    if not text.strip():
        raise DocumentError("the document has no text")
    return text


def _refuse_controls(text: str, what: str) -> None:
    bad = _CONTROL.search(text)
    if bad is None:
        return
    pos = bad.start()
    line = text.count("\n", 0, pos) + 1
    column = pos - text.rfind("\n", 0, pos)
    name = "a NUL byte" if bad.group() == "\x00" else "a control character"
    raise DocumentError(
        f"{what} contains {name} (U+{ord(bad.group()):04X}) at line {line}, column {column}; "
        "only tab and newline are allowed"
    )


def _canonical(text: str) -> str:
    """NFC, \\n newlines, no trailing whitespace, no leading BOM, at most one blank line in a
    row, no blank lines at either end. Idempotent, so the canonical text re-parses to itself."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Unicode line and paragraph separators would be line breaks to str.splitlines and to a
    # reader, but not to the splitter: make them the newlines they mean.
    text = text.replace("\u2028", "\n").replace("\u2029", "\n\n")
    _refuse_controls(text, "the extracted text")
    lines = unicodedata.normalize("NFC", text).split("\n")
    out: list[str] = []
    for line in lines:
        # rstrip() also takes the ideographic space U+3000 and other Unicode spaces.
        line = line.rstrip()
        if not out:
            # Decoding strips one BOM; strip any left at the start so a re-parse agrees.
            line = line.lstrip("\ufeff")
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


# --- the splitter: headings, paragraphs, sections ---------------------------------------------

_DIGITS = "0-9０-９"
_KANJI_NUMERALS = "〇一二三四五六七八九十百千"
_JA_NUMBER = f"[{_DIGITS}{_KANJI_NUMERALS}]+"
# 第5条, 第十条, 第5条の2, 第1章, 第2節, 第2項, 第3号.
_JA_MARKER = rf"第{_JA_NUMBER}[編章節款条項号](?:の{_JA_NUMBER})?"
_EN_MARKER = (
    r"(?i:article|section|chapter|clause|part|schedule|annex|appendix)[ \t]+"
    r"(?:[0-9]+(?:\.[0-9]+)*|[IVXLCDM]+|[A-Z])(?!\w|\.\d)"
)
_JA_HEADING = re.compile(_JA_MARKER)
_EN_HEADING = re.compile(_EN_MARKER)
# 1. / 1.2 / 1.2.3 / １．: a single level needs its dot ("2 乙は..." is a clause line). A
# space follows, except after a full-width dot ("１．目的").
_NUMBERED = re.compile(
    rf"([{_DIGITS}]{{1,3}}(?:[.．][{_DIGITS}]{{1,3}})*)([.．]?)"
    rf"(?:(?=[ \t\u3000])|(?<=．)(?![{_DIGITS}]))"
)
_MULTI_LEVEL = re.compile(rf"[{_DIGITS}]{{1,3}}(?:[.．][{_DIGITS}]{{1,3}})+")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
_LIST_ITEM = re.compile(
    r"[ \t]*(?:"
    r"(?:[-*+•●○◦▪■□]|[0-9]{1,3}[.)]|[０-９]{1,3}[.)．）])[ \t\u3000]"  # needs a space after
    r"|[・①-⑳]"  # Japanese bullets and circled numbers are enough on their own
    r"|[(（](?:[0-9０-９]{1,3}|[a-zａ-ｚ]|[一二三四五六七八九十]{1,3}|[イロハニホヘト])[)）]"
    r"|[a-z]\)[ \t]"
    # Japanese clause numbers: "２　前項の..." (a 項 of the current 条).
    r"|[0-9０-９]{1,2}\u3000|[０-９]{1,2}[ \t]"
    r")"
)
_TABLE_ROW = re.compile(r"[ \t]*\|")
# "To: All staff", "Date: 2024-04-01", URLs: field lines, not headings.
_FIELD = re.compile(r"[^:：]{1,40}[:：][ \t\u3000]*\S")
_TERMINAL = frozenset(".,;:!?。、，．；：！？…‥")
_CLOSERS = ")]}）」』】〕〉》\"'”’»"
_OPENERS = frozenset("(（[［【「『〔〈《")
# Possessive quantifiers and the look-behind keep a long run of "!!!" or ")))" linear.
_SENTENCE_END = re.compile(
    r"(?:[。！？]|．(?![0-9０-９]))[」』）)】〕\"'”’]*+"
    r"|(?<![.!?])[.!?]++[)\]」』）\"'”’]*+(?=\s)"
)


@dataclass(slots=True)
class _Outline:
    """Where the splitter is: the current section and the document's first heading."""

    section: str = ""
    title: str | None = None
    paragraphs: list[ParsedParagraph] = field(default_factory=list)

    def heading(self, label: str, line: str) -> None:
        self.section = _compose(self.section, label)[:MAX_SECTION_CHARS]
        if self.title is None:
            self.title = line.strip()[:MAX_SECTION_CHARS]


def _split(text: str) -> tuple[tuple[ParsedParagraph, ...], str | None]:
    """Paragraphs and first heading of canonical text; see the module docstring for the rules.

    Blocks are runs of non-blank lines. In a block: Markdown-style `#` lines, 第N条 and
    Article/Section N lines are headings anywhere; a numbered first line ("1. Purpose",
    "3.2 Scope") or, when the text has no `#` headings, a short unpunctuated line standing
    alone is a heading; list items and table rows are paragraphs of their own; other lines
    continue the paragraph. Blocks indented four spaces (code) are taken verbatim.
    """
    blocks = _blocks(text)
    # A text that marks headings with `#` (Markdown, HTML) declares them: a short line there
    # is a short paragraph, not a guessed heading.
    explicit = any(
        _atx_title(text[s:e]) for block in blocks if not _verbatim(text, block) for s, e in block
    )
    outline = _Outline()
    for index, block in enumerate(blocks):
        last_block = index == len(blocks) - 1
        if _verbatim(text, block):
            _add(outline, text, block[0][0], block[-1][1], marker=False)
            continue
        unit: list[tuple[int, int]] = []
        for i, (s, e) in enumerate(block):
            line = text[s:e]
            label = _heading_label(line, i, block, text, explicit=explicit, last=last_block)
            if label is not None:
                _flush(outline, text, unit)
                unit = []
                outline.heading(label, _atx_title(line) or line)
                continue
            # List items and table rows start a paragraph; a line after a table row too.
            starts = _LIST_ITEM.match(line) or _TABLE_ROW.match(line)
            if unit and (starts or _TABLE_ROW.match(text[unit[0][0] : unit[0][1]])):
                _flush(outline, text, unit)
                unit = []
            unit.append((s, e))
        _flush(outline, text, unit)
    return tuple(outline.paragraphs), outline.title


def _blocks(text: str) -> list[list[tuple[int, int]]]:
    blocks: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        if line:
            current.append((pos, pos + len(line)))
        elif current:
            blocks.append(current)
            current = []
        pos += len(line) + 1
    if current:
        blocks.append(current)
    return blocks


def _verbatim(text: str, block: list[tuple[int, int]]) -> bool:
    # Four spaces or a tab, as Markdown's indented code: the renderers write code this way.
    return all(text.startswith(("    ", "\t"), s) for s, _ in block)


def _atx_title(line: str) -> str:
    m = _ATX.match(line)
    if m is None:
        return ""
    title = line[m.end() :].strip()
    # An optional closing run of #s ("## Scope ##") is markup, "C#" is not. String methods,
    # not a regex: a regex here backtracks quadratically over long runs of spaces.
    bare = title.rstrip("#")
    if bare != title and (not bare or bare[-1] in " \t"):
        title = bare.rstrip(" \t")
    return title


def _heading_label(
    line: str,
    i: int,
    block: list[tuple[int, int]],
    text: str,
    *,
    explicit: bool,
    last: bool,
) -> str | None:
    """The section label if this line is a heading, else None."""
    if _ATX.match(line):
        title = _atx_title(line)
        # "## 3.2 Scope" -> "3.2"; "## Payment terms" -> the words.
        return (_marker(title, single_level=True) or title) if title else None
    stripped = line.strip()
    if len(stripped) > HEADING_MAX_CHARS or _ends_sentence(stripped):
        return None
    strong = _strong_marker(stripped)
    if strong is not None:
        return strong
    alone = len(block) == 1 and not last  # a line followed by a blank line and more text
    next_line = text[block[i + 1][0] : block[i + 1][1]] if i + 1 < len(block) else ""
    if i == 0 and (alone or (next_line and not _LIST_ITEM.match(next_line))):
        m = _NUMBERED.match(stripped)
        title = stripped[m.end() :].strip() if m else ""
        # "1. Purpose" and "3.2 Scope" are headings; "2 乙は" and "1. submit the form" not.
        if m and ("." in m.group(1) or "．" in m.group(1) or m.group(2)) and _title_case(title):
            return m.group(1)
    if i == 0 and alone and not explicit and _short_heading(line):
        return stripped
    return None


def _strong_marker(line: str) -> str | None:
    """第5条 / Article 5 at the start of a heading-like line, followed by nothing, a title or
    a bracketed title; "第5条に基づき" and "Section 4 of the Act" are prose."""
    m = _JA_HEADING.match(line)
    if m is not None:
        rest = line[m.end() :]
        if not rest or rest[0].isspace() or rest[0] in _OPENERS:
            return m.group()
        return None
    m = _EN_HEADING.match(line)
    if m is not None:
        rest = line[m.end() :].lstrip(" \t\u3000.:：-–—")
        if not rest or _title_case(rest) or rest[0] in _OPENERS:
            return " ".join(m.group().split())
    return None


def _marker(line: str, *, single_level: bool) -> str | None:
    """The section number a heading or paragraph begins with, if any. A paragraph's "1." is
    a list item, not a section: single levels count only in headings."""
    strong = _strong_marker(line)
    if strong is not None:
        return strong
    m = _MULTI_LEVEL.match(line)
    if m is not None and line[m.end() : m.end() + 1] in (" ", "\t", "\u3000", "．", "."):
        rest = line[m.end() :].lstrip(" \t\u3000.．")
        if _title_case(rest):
            return m.group()
    m = _NUMBERED.match(line) if single_level else None
    if m is not None and m.group(2) and _title_case(line[m.end() :].strip()):
        return m.group(1)
    return None


def _title_case(rest: str) -> bool:
    # A title after a number does not start in lower case ("1.2 million yen" is prose).
    return bool(rest) and not ("a" <= rest[0] <= "z")


def _ends_sentence(line: str) -> bool:
    return line.rstrip(_CLOSERS)[-1:] in _TERMINAL


def _short_heading(line: str) -> bool:
    stripped = line.strip()
    return (
        # "i", "A": page numbers and list letters, not headings.
        len(stripped) > 1
        and any(c.isalpha() for c in stripped)
        and not _LIST_ITEM.match(line)
        and not _TABLE_ROW.match(line)
        and not _FIELD.match(stripped)
        # Headings rarely hold commas; lists of names ("Alice, Bob") do.
        and not any(c in stripped for c in ",、，")
    )


_ARTICLE = re.compile(rf"第{_JA_NUMBER}条(?:の{_JA_NUMBER})?")
_ARTICLE_CLAUSE = re.compile(rf"{_ARTICLE.pattern}(?:第{_JA_NUMBER}項)?")


def _compose(current: str, label: str) -> str:
    """第2項 under 第5条 is 第5条第2項 (第3号 under that, 第5条第2項第3号), as Japanese
    citations name them; every other heading replaces the section."""
    if label[-1:] == "項":
        parent = _ARTICLE.match(current)
    elif label[-1:] == "号":
        parent = _ARTICLE_CLAUSE.match(current)
    else:
        return label
    return parent.group() + label if parent is not None else label


def _flush(outline: _Outline, text: str, unit: list[tuple[int, int]]) -> None:
    if unit:
        _add(outline, text, unit[0][0], unit[-1][1], marker=True)


def _add(outline: _Outline, text: str, start: int, end: int, *, marker: bool) -> None:
    """Add the paragraph text[start:end] (trimmed), split if it is too long."""
    while start < end and text[start].isspace():
        start += 1
    body = text[start:end]
    # Separators ("---", "* * *", "|---|") hold no letter or digit: nothing to cite.
    if not any(c.isalnum() for c in body):
        return
    if marker:
        # "第3条　乙は..." or "3.2 The supplier shall..." opens its own section.
        label = _marker(body.split("\n", 1)[0], single_level=False)
        if label is not None:
            outline.section = _compose(outline.section, label)[:MAX_SECTION_CHARS]
    for s, e in _pieces(text, start, end):
        if len(outline.paragraphs) >= MAX_PARAGRAPHS:
            raise DocumentTooLarge(
                f"the document has more than {MAX_PARAGRAPHS:,} paragraphs; the limit is "
                f"{MAX_PARAGRAPHS:,} paragraphs of at most {MAX_PARAGRAPH_CHARS:,} characters"
            )
        number = len(outline.paragraphs) + 1
        outline.paragraphs.append(ParsedParagraph(number, outline.section, s, e, text[s:e]))


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """text[start:end] cut into pieces of at most MAX_PARAGRAPH_CHARS: at the last sentence
    end that fits, else the last line break, else the last space, else hard."""
    pieces: list[tuple[int, int]] = []
    while end - start > MAX_PARAGRAPH_CHARS:
        limit = start + MAX_PARAGRAPH_CHARS
        cut = _cut(text, start, limit)
        piece_end = cut
        while text[piece_end - 1].isspace():
            piece_end -= 1
        pieces.append((start, piece_end))
        start = cut
        while text[start].isspace():
            start += 1
    pieces.append((start, end))
    return pieces


def _cut(text: str, start: int, limit: int) -> int:
    # endpos one past the limit lets the "followed by a space" look-ahead see that space.
    cut = 0
    for m in _SENTENCE_END.finditer(text, start + 1, limit + 1):
        if m.end() <= limit:
            cut = m.end()
    if cut:
        return cut
    newline = text.rfind("\n", start + 1, limit + 1)
    if newline > start:
        return newline
    for pos in range(limit, start, -1):
        if text[pos].isspace():
            return pos
    # No space at all (long Japanese runs without 。): cut, but not before a combining mark.
    cut = limit
    while cut > start + 1 and unicodedata.combining(text[cut]):
        cut -= 1
    return cut


# --- rendering: Markdown and HTML to canonical text -------------------------------------------

# A rendered unit: (kind, text). kind is heading | para | item | row | code.
_Unit = tuple[str, str]
_ESCAPE_ATX = re.compile(r"#{1,6}(?:[ \t]|$)")
# Elements whose content is never document text. Documents are untrusted: scripts, styles
# and templates go entirely; ruby readings (rt, rp) would interleave with the base text.
_DROPPED = _words(
    "script style noscript template head title iframe frame frameset object embed applet "
    "param svg canvas video audio picture source track img map area button select option "
    "optgroup datalist textarea input meta link base rt rp"
)
_BLOCKS = _words(
    "address article aside blockquote body caption center dd details dialog dir div dl dt "
    "fieldset figcaption figure footer form header hgroup hr html legend li main menu nav ol "
    "p section summary table tbody tfoot thead ul"
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")
# CSS Text: a line break between two East Asian wide characters is dropped, not a space.
_WIDE = r"\u2e80-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_WIDE_BREAK = re.compile(rf"(?<=[{_WIDE}])[ \t\r\f]*\n[ \t\n\r\f]*(?=[{_WIDE}])")
_SKIPPED_INLINE = re.compile(r"<(script|style|noscript|template|textarea|title|iframe)\b", re.I)


def _join(units: list[_Unit]) -> str:
    """Units one per block; list items and table rows of one run share a block."""
    parts: list[str] = []
    previous = ""
    for kind, body in units:
        if not body.strip():
            continue
        if parts:
            parts.append("\n" if kind == previous and kind in ("item", "row") else "\n\n")
        parts.append(body)
        previous = kind
    return "".join(parts)


def _lines(text: str) -> str:
    """Paragraph text as lines without indentation; a line that would read as a `#` heading
    keeps Markdown's escape, so the splitter sees what the markup meant."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        out.append("\\" + line if _ESCAPE_ATX.match(line) else line)
    return "\n".join(out).strip("\n")


def _code(text: str) -> str:
    lines = text.strip("\n").split("\n")
    return "\n".join("    " + line if line.strip() else "" for line in lines)


def _heading(level: int, text: str) -> _Unit:
    title = " ".join(text.split("\n")).strip()
    return ("heading", f"{'#' * level} {title}" if title else "")


# Characters that start an inline rule of markdown-it (emphasis, links, images, code, HTML,
# entities, escapes, strikethrough, table cells): each is a step of the Python parser.
_INLINE_MARKUP: Final = "*_[]!`<>&\\~|"
# What opens a container at the start of a line: a quote, or a list item (after its indent).
_CONTAINER = re.compile(r"[ \t]*(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))")
_MAX_NESTING: Final = 20  # markdown-it's commonmark preset (maxNesting)


def markdown_work(source: str) -> int:
    """Parsing cost of a Markdown source in steps: its inline markup characters, plus for every
    line 1 + the depth of the quotes and lists it sits in (each level checks the line again).

    Depth: containers opened at the start of the line plus indentation // 2, kept for the
    lines of a block that open none (lazy continuation), capped at markdown-it's nesting limit.
    """
    work = sum(source.count(c) for c in _INLINE_MARKUP)
    lines = source.count("\n") + 1
    if work + lines > MAX_MARKDOWN_WORK:
        return work + lines  # over already: no need to look at every line
    depth = 0
    for line in source.split("\n"):
        if not line.strip():
            depth = 0
            work += 1
            continue
        opened, at = 0, 0
        while (marker := _CONTAINER.match(line, at)) is not None:
            opened, at = opened + 1, marker.end()
        if opened:
            indent = len(line) - len(line.lstrip(" \t"))
            depth = min(_MAX_NESTING, opened + indent // 2)
        work += 1 + depth
    return work


def _check_markdown_work(source: str) -> None:
    work = markdown_work(source)
    if work > MAX_MARKDOWN_WORK:
        raise DocumentTooLarge(
            f"the Markdown is too intricate to parse: {work:,} steps of markup and nested "
            f"lines; the limit is {MAX_MARKDOWN_WORK:,}. Send it as plain text or HTML"
        )


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # CommonMark plus GFM tables and strikethrough; raw HTML is parsed (then rendered through
    # the HTML path) so that <script> in a Markdown file is dropped, not shown as text.
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


class _MarkdownRenderer:
    """Markdown -> units: `#` headings, text without inline markup or link URLs, list items
    with their marker, table rows as `| a | b |`, code indented four spaces."""

    def __init__(self) -> None:
        self.units: list[_Unit] = []
        self.depth = 0
        self.prefix: str | None = None
        # An inline <script> (or style, ...) swallows text until it closes, as in a browser.
        self.skipping: str | None = None

    def render(self, source: str) -> list[_Unit]:
        tokens = _markdown().parse(source)
        i = 0
        while i < len(tokens):
            i = self._block(tokens, i)
        return self.units

    def _block(self, tokens: list[Token], i: int) -> int:
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            self.units.append(_heading(int(token.tag[1]), self._inline(tokens[i + 1], " ")))
            return i + 3
        if kind == "paragraph_open":
            text = _lines(self._inline(tokens[i + 1], "\n"))
            if self.prefix is not None and text:
                self.units.append(("item", self.prefix + text))
                self.prefix = None
            else:
                self.units.append(("para", text))
            return i + 3
        if kind in ("bullet_list_open", "ordered_list_open"):
            self.depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.depth -= 1
        elif kind == "list_item_open":
            marker = f"{token.info}." if token.info else "-"
            self.prefix = ("  " if self.depth > 1 else "") + marker + " "
        elif kind == "list_item_close":
            self.prefix = None
        elif kind == "tr_open":
            return self._row(tokens, i)
        elif kind in ("fence", "code_block"):
            if self.skipping is None:
                self.units.append(("code", _code(token.content)))
        elif kind == "html_block":
            self._html(token.content)
        elif kind == "inline":
            self.units.append(("para", _lines(self._inline(token, "\n"))))
        return i + 1

    def _row(self, tokens: list[Token], i: int) -> int:
        cells: list[str] = []
        i += 1
        while tokens[i].type != "tr_close":
            if tokens[i].type == "inline":
                cells.append(self._inline(tokens[i], " ").strip())
            i += 1
        if any(cells):
            self.units.append(("row", "| " + " | ".join(cells) + " |"))
        return i + 1

    def _html(self, content: str) -> None:
        if self.skipping is not None:
            close = re.search(rf"</{self.skipping}\s*>", content, re.IGNORECASE)
            if close is None:
                return
            content = content[close.end() :]
            self.skipping = None
        units, _ = _html_units(content)
        self.units.extend(units)
        # A block that opens a script and never closes it swallows what follows.
        opened = _SKIPPED_INLINE.findall(content)
        if opened and not re.search(rf"</{opened[-1]}\s*>", content, re.IGNORECASE):
            self.skipping = opened[-1].lower()

    def _inline(self, token: Token, newline: str) -> str:
        out: list[str] = []
        for child in token.children or []:
            kind = child.type
            if self.skipping is not None:
                if kind == "html_inline" and re.fullmatch(
                    rf"</{self.skipping}\s*>", child.content, re.IGNORECASE
                ):
                    self.skipping = None
                continue
            if kind in ("text", "text_special", "code_inline"):
                out.append(child.content)
            elif kind in ("softbreak", "hardbreak"):
                out.append(newline)
            elif kind == "html_inline":
                opened = _SKIPPED_INLINE.match(child.content)
                if opened and not child.content.rstrip().endswith("/>"):
                    self.skipping = opened.group(1).lower()
                elif re.fullmatch(r"<br\s*/?>", child.content, re.IGNORECASE):
                    out.append(newline)
            # Images (alt text is a description, not content), link and emphasis markers and
            # other tags add nothing.
        return "".join(out)


@dataclass(slots=True)
class _List:
    ordered: bool
    next: int


class _HtmlRenderer:
    """HTML -> units, by an explicit-stack walk (deeply nested input must not recurse):
    block elements become paragraphs, h1-h6 `#` headings, li items, tr rows, pre code."""

    def __init__(self) -> None:
        self.units: list[_Unit] = []
        self.lines: list[list[str]] = [[]]
        self.lists: list[_List] = []
        self.prefix: str | None = None

    def walk(self, root: Tag) -> None:
        stack: list[tuple[PageElement, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self._leave(node)
                continue
            if isinstance(node, NavigableString):
                # Comments, CDATA, doctypes and processing instructions are not text.
                if not isinstance(node, PreformattedString):
                    self.lines[-1].append(str(node))
                continue
            if not isinstance(node, Tag):
                continue
            name = node.name.lower()
            if name in _DROPPED:
                continue
            if name in _HEADINGS:
                self._flush()
                self.units.append(_heading(int(name[1]), _flat_text(node)))
            elif name == "tr":
                self._flush()
                cells = [_flat_text(c) for c in node.find_all(["td", "th"], recursive=False)]
                if any(cells):
                    self.units.append(("row", "| " + " | ".join(cells) + " |"))
            elif name == "pre":
                self._flush()
                self.units.append(("code", _code("".join(_strings(node, "\n", "")))))
            elif name == "br":
                self.lines.append([])
            else:
                if name in _BLOCKS:
                    self._enter(node, name)
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node.contents))
        self._flush()

    def _enter(self, node: Tag, name: str) -> None:
        self._flush()
        if name in ("ul", "ol", "menu", "dir"):
            start = node.get("start") if name == "ol" else None
            digits = start.strip() if isinstance(start, str) else ""
            first = int(digits) if digits.isdigit() and len(digits) < 10 else 1
            self.lists.append(_List(ordered=name == "ol", next=first))
        elif name == "li":
            current = self.lists[-1] if self.lists else None
            if current is not None and current.ordered:
                marker = f"{current.next}."
                current.next += 1
            else:
                marker = "-"
            self.prefix = ("  " if len(self.lists) > 1 else "") + marker + " "

    def _leave(self, node: PageElement) -> None:
        if not isinstance(node, Tag):
            return
        name = node.name.lower()
        if name in _BLOCKS:
            self._flush()
        if name in ("ul", "ol", "menu", "dir") and self.lists:
            self.lists.pop()
        elif name == "li":
            self.prefix = None

    def _flush(self) -> None:
        text = _lines("\n".join(_collapse("".join(parts)) for parts in self.lines))
        self.lines = [[]]
        if not text.strip():
            return
        if self.prefix is not None:
            self.units.append(("item", self.prefix + text))
            self.prefix = None
        else:
            self.units.append(("para", text))


def _collapse(text: str) -> str:
    """HTML white space as a browser shows it: runs are one space (none between two wide
    characters across a line break); the ideographic space is text and stays."""
    return _HTML_SPACE.sub(" ", _WIDE_BREAK.sub("", text))


def _strings(node: Tag, br: str, block: str) -> Iterator[str]:
    """The text under a node, skipping dropped elements; <br> and block edges as given."""
    stack: list[PageElement] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, NavigableString):
            if not isinstance(current, PreformattedString):
                yield str(current)
            continue
        if not isinstance(current, Tag):
            continue
        name = current.name.lower()
        if name in _DROPPED:
            continue
        if name == "br":
            yield br
            continue
        if current is not node and (name in _BLOCKS or name in _HEADINGS or name in ("td", "th")):
            yield block
        stack.extend(reversed(current.contents))


def _flat_text(node: Tag) -> str:
    """One line of text: headings, table cells and titles."""
    return _collapse("".join(_strings(node, " ", " "))).strip()


def _html_units(source: str) -> tuple[list[_Unit], str | None]:
    # The newline is white space to HTML; it keeps BeautifulSoup from warning that a short
    # upload such as "memo.html" or a bare URL looks like a file name rather than markup.
    soup = BeautifulSoup(source + "\n", "html.parser")
    title = None
    for candidate in soup.find_all("title"):
        # An <svg> carries its own <title>: that is an image caption, not the page's title.
        if candidate.find_parent(["svg", "math"]) is None:
            title = _clean_title(_flat_text(candidate))
            break
    renderer = _HtmlRenderer()
    renderer.walk(soup)
    return renderer.units, title


# --- PDF ------------------------------------------------------------------------------------


def _clean_title(title: str) -> str | None:
    """A <title> or PDF /Title as one NFC line, without controls, at most MAX_SECTION_CHARS."""
    title = _SURROGATE.sub("", _CONTROL.sub("", title))
    title = " ".join(unicodedata.normalize("NFC", title).split())
    return title[:MAX_SECTION_CHARS] or None


def _pdf_text(raw: bytes | str) -> tuple[str, str | None]:
    """The text of each page (pypdf), pages apart by a blank line, and the /Title."""
    if isinstance(raw, str):
        raise DocumentError("a PDF must be uploaded as bytes, not text", field="format")
    data = bytes(raw)
    _check_size(len(data), "the document")
    # Imported here: only PDF uploads pay for loading pypdf.
    from pypdf import PdfReader

    pages: list[str] = []
    size = 0
    title: str | None = None
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError("the PDF is encrypted; upload it without a password")
        for page in reader.pages:
            text = _page_text(page)
            # Compressed streams can expand far past the upload: stop at the limit.
            size += len(text.encode("utf-8", "surrogatepass"))
            _check_size(size, "the text extracted from the PDF")
            pages.append(text)
        metadata = reader.metadata
        if metadata is not None and isinstance(metadata.title, str):
            title = _clean_title(metadata.title)
    except DocumentError:
        raise
    except Exception as exc:
        # pypdf reads untrusted bytes and can fail in many ways (KeyError, ValueError,
        # RecursionError, its own PdfReadError ...): all mean the same thing to the uploader.
        raise DocumentError(f"the PDF could not be read ({type(exc).__name__})") from None
    # Extracted text is ours, not the uploader's: drop font junk (controls, surrogates).
    text = "\n\n".join(pages)
    text = _SURROGATE.sub("", _CONTROL.sub("", text))
    return text, title


def _page_text(page: PageObject) -> str:
    # Layout mode writes vertical gaps as blank lines, which is how a PDF shows paragraph
    # breaks; its column alignment (runs of spaces, margins) means nothing here, so each line
    # is collapsed to single spaces. The plain mode is the fallback for pages it cannot lay out.
    try:
        text = page.extract_text(extraction_mode="layout")
    except Exception:
        text = page.extract_text()
    return "\n".join(" ".join(line.split()) for line in (text or "").split("\n"))
