"""Document parsing: canonical text, paragraphs as exact slices, sections, limits, refusals."""

from __future__ import annotations

import hashlib
import html
import io
import unicodedata
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evidence import parsing
from evidence.parsing import (
    MAX_DOCUMENT_BYTES,
    MAX_MARKDOWN_WORK,
    MAX_PARAGRAPH_CHARS,
    DocumentError,
    DocumentTooLarge,
    ParsedDocument,
    content_hash,
    detect_format,
    markdown_work,
    parse_document,
)

DOCUMENTS = Path(__file__).parent / "documents"


def _sample(name: str) -> ParsedDocument:
    path = DOCUMENTS / name
    return parse_document(path.read_bytes(), filename=path.name)


def _by_text(document: ParsedDocument, needle: str) -> parsing.ParsedParagraph:
    [paragraph] = [p for p in document.paragraphs if needle in p.text]
    return paragraph


def assert_well_formed(document: ParsedDocument) -> None:
    """The invariants every parse keeps, whatever the format."""
    text = document.text
    # Canonical text: NFC, \n newlines, no trailing spaces, no blank lines at either end.
    assert text == text.strip("\n")
    assert "\r" not in text
    assert unicodedata.is_normalized("NFC", text)
    assert all(line == line.rstrip() for line in text.split("\n"))
    assert "\n\n\n" not in text
    previous_end = 0
    for number, paragraph in enumerate(document.paragraphs, 1):
        assert paragraph.number == number
        assert paragraph.text == text[paragraph.start : paragraph.end]
        assert previous_end <= paragraph.start < paragraph.end
        assert paragraph.text.strip() == paragraph.text
        assert len(paragraph.text) <= MAX_PARAGRAPH_CHARS
        previous_end = paragraph.end
    # The canonical text alone gives the paragraphs back: re-parsed as plain text, and again.
    again = parse_document(text, format="text")
    assert again.text == text
    assert [p.text for p in again.paragraphs] == [p.text for p in document.paragraphs]
    assert again.paragraphs == document.paragraphs


# --- sample documents, one per kind and language ----------------------------------------------


def test_english_policy_takes_sections_from_numbered_headings() -> None:
    document = _sample("travel_policy_en.txt")

    assert document.format == "text"
    assert document.title == "Travel and Expense Policy"
    assert _by_text(document, "within 30 days").section == "3.1"
    assert _by_text(document, "every item over 5,000 yen").section == "3.2"
    assert _by_text(document, "boarding pass").section == "3.2"  # a list item of 3.2
    assert _by_text(document, "contractors of the company").section == "2"
    assert _by_text(document, "compliance officer").section == "Article 4"
    # A clause written on one line with its number opens its own section.
    assert _by_text(document, "department head approves").section == "3.3"
    # Headings stay in the text for reviewers, but are not paragraphs.
    assert "2.1 Exclusions" in document.text
    assert not any(p.text in {"2.1 Exclusions", "1. Purpose", "Scope"} for p in document.paragraphs)
    assert_well_formed(document)


def test_english_policy_keeps_lines_of_one_paragraph_together() -> None:
    document = _sample("travel_policy_en.txt")

    paragraph = _by_text(document, "book business travel")
    assert paragraph.text == (
        "This policy sets out how employees book business travel and claim expenses.\n"
        "It applies from 1 April 2024."
    )
    assert paragraph.section == "1"


def test_japanese_contract_is_split_by_article_and_clause() -> None:
    document = _sample("service_contract_ja.txt")

    assert document.title == "業務委託契約書"
    assert _by_text(document, "株式会社ベータ").section == "業務委託契約書"
    assert _by_text(document, "保守業務").section == "第1条"
    payment = _by_text(document, "月額金50万円")
    assert payment.section == "第2条"
    # The full-width indent is canonical text, but not part of the paragraph.
    assert payment.text.startswith("甲は乙に対し")
    assert document.text[payment.start - 1] == "\u3000"
    # "２　..." is the article's second clause: a paragraph of its own, still under 第2条.
    late = _by_text(document, "遅延損害金")
    assert late.text.startswith("２\u3000支払期日")
    assert late.section == "第2条"
    assert late.number == payment.number + 1
    assert _by_text(document, "再委託").section == "第3条"
    assert _by_text(document, "終了後3年間").section == "第4条"
    assert len(document.paragraphs) == 9
    assert_well_formed(document)


def test_english_markdown_minutes_drop_markup_but_keep_structure() -> None:
    document = _sample("board_minutes_en.md")

    assert document.format == "markdown"
    assert document.title == "Board meeting minutes — 12 March 2024"
    text = document.text
    # Inline markup and link targets are not content; the link's words are.
    for markup in ("**", "](", "https://intranet", "|---", "```", "<script", "alert"):
        assert markup not in text
    assert "See the attendance list." in text
    # Headings keep their `#` so the canonical text says what is a heading.
    assert "## 1. Budget" in text
    budget = _by_text(document, "travel budget of 12 million yen")
    assert budget.section == "1"
    assert budget.text.endswith("needs the CFO's approval.")
    # Each table row is a paragraph, header row included.
    assert _by_text(document, "Training").text == "| Training | 3,500,000 | HR |"
    assert _by_text(document, "| Item |").section == "1"
    # List items are paragraphs; a continuation line belongs to its item.
    assert _by_text(document, "compliance training").text == (
        "2. HR schedules the compliance training.\nThe training is mandatory for managers."
    )
    assert _by_text(document, "revised policy").section == "2"
    # A heading may end in a question mark when the markup says it is one.
    assert _by_text(document, "next meeting").section == "What happens next?"
    # Code is kept verbatim, indented in the canonical text.
    assert "    status: draft\n    owner: finance" in text
    assert_well_formed(document)


def test_japanese_markdown_minutes() -> None:
    document = _sample("board_minutes_ja.md")

    assert document.title == "取締役会議事録（2024年3月12日）"
    assert "**" not in document.text
    approval = _by_text(document, "1,200万円を承認した")
    assert approval.section == "第1号議案\u3000出張予算"
    assert _by_text(document, "| 研修 | 350万円 | 人事部 |").section == "第1号議案\u3000出張予算"
    assert _by_text(document, "管理職").text == "- 研修は管理職には必須とする。"
    assert _by_text(document, "4月9日").section == "次回"
    # In a document with `#` headings, the short line under the title is a paragraph.
    assert _by_text(document, "出席者").section == "取締役会議事録（2024年3月12日）"
    assert_well_formed(document)


def test_english_html_memo_drops_scripts_styles_and_attributes() -> None:
    document = _sample("security_memo_en.html")

    assert document.format == "html"
    assert document.title == "Memo: Laptop encryption"
    text = document.text
    for unsafe in (
        "alert",
        "onerror",
        "onclick",
        "javascript:",
        "cookie",
        "evil.example.com",
        "font-family",
        "enable JavaScript",
        "template text",
        "internal comment",
        "company logo",
    ):
        assert unsafe not in text
    requirement = _by_text(document, "full-disk encryption")
    assert requirement.section == "Requirement"
    # Source line breaks and indentation collapse as a browser shows them.
    assert requirement.text == (
        "All company laptops must use full-disk encryption by 30 June 2024. Laptops without "
        "encryption will be blocked from the network."
    )
    assert _by_text(document, "IT help desk").text == "Questions go to the IT help desk."
    assert _by_text(document, "Loan laptops").text == "- Loan laptops kept in the IT office."
    assert _by_text(document, "Tablet").text == "| Tablet | 30 September 2024 |"
    assert _by_text(document, "Tablet").section == "Exceptions"
    # <br> is a line break inside the paragraph.
    assert _by_text(document, "All staff").text == "To: All staff\nFrom: IT Security"
    assert_well_formed(document)


def test_japanese_html_memo() -> None:
    document = _sample("security_memo_ja.html")

    assert document.title == "情報セキュリティに関するお知らせ"
    assert "alert" not in document.text
    # A source line break between two Japanese characters is no space.
    assert _by_text(document, "ディスク暗号化").text == (
        "全従業員は、2024年6月30日までに業務用パソコンのディスク暗号化を完了しなければならない。"
    )
    assert _by_text(document, "貸出用端末").text == "2. 情報システム部で保管する貸出用端末"
    assert _by_text(document, "貸出用端末").section == "例外"
    # Ruby readings are not interleaved with the base text.
    assert _by_text(document, "読み").text == "漢字の読みは表示しない。"
    assert_well_formed(document)


# --- PDF ----------------------------------------------------------------------------------------


def _pdf(
    pages: list[list[str | None]], *, title: str | None = None, deflate: bool = False
) -> bytes:
    """A minimal PDF, one text line per string (None: a gap), in a Type0 font whose CIDs are
    UTF-16 code units with a ToUnicode map saying so, so any BMP text can be extracted."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def "
        b"/CMapName /Adobe-Identity-UCS def /CMapType 2 def "
        b"1 begincodespacerange <0000> <FFFF> endcodespacerange "
        b"1 beginbfrange <0000> <FFFF> <0000> endbfrange "
        b"endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    to_unicode = add(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(cmap), cmap))
    descriptor = add(
        b"<< /Type /FontDescriptor /FontName /Test /Flags 4 /FontBBox [0 0 1000 1000] "
        b"/ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >>"
    )
    cid_font = add(
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
        b"/FontDescriptor %d 0 R /DW 1000 >>" % descriptor
    )
    font = add(
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H "
        b"/DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>" % (cid_font, to_unicode)
    )
    pages_id = len(objects) + 2 * len(pages) + 1
    page_ids = []
    for lines in pages:
        ops = [b"BT /F1 12 Tf 14 TL 72 720 Td"]
        for line in lines:
            ops.append(
                b"T*" if line is None else b"<%s> Tj T*" % line.encode("utf-16-be").hex().encode()
            )
        ops.append(b"ET")
        stream = b"\n".join(ops)
        flate = b""
        if deflate:
            stream, flate = zlib.compress(stream), b" /Filter /FlateDecode"
        content = add(b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(stream), flate, stream))
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
                b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
                % (pages_id, font, content)
            )
        )
    kids = b" ".join(b"%d 0 R" % page for page in page_ids)
    add(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages)))
    catalog = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 2, catalog)
    if title is not None:
        info = add(b"<< /Title <FEFF%s> >>" % title.encode("utf-16-be").hex().encode())
        trailer += b" /Info %d 0 R" % info
    else:
        add(b"<< >>")
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n%s >>\nstartxref\n%d\n%%%%EOF\n" % (trailer, xref)
    return bytes(out)


def test_english_pdf_paragraphs_follow_vertical_gaps() -> None:
    raw = _pdf(
        [
            [
                "Expense Policy",
                None,
                "1. Purpose",
                "Receipts are required",
                "for items over 5,000 yen.",
            ],
            ["2. Scope", "All staff and contractors."],
        ],
        title="Expense Policy 2024",
    )

    document = parse_document(raw, filename="policy.pdf")

    assert document.format == "pdf"
    assert document.title == "Expense Policy 2024"
    assert [(p.section, p.text) for p in document.paragraphs] == [
        ("1", "Receipts are required\nfor items over 5,000 yen."),
        ("2", "All staff and contractors."),
    ]
    assert_well_formed(document)


def test_japanese_pdf() -> None:
    raw = _pdf([["第2条（支払）", "甲は乙に対し、月額金50万円を支払う。"]])

    document = parse_document(raw)

    assert document.format == "pdf"
    assert [(p.section, p.text) for p in document.paragraphs] == [
        ("第2条", "甲は乙に対し、月額金50万円を支払う。")
    ]
    assert document.title == "第2条（支払）"


def test_pdf_must_come_as_bytes() -> None:
    with pytest.raises(DocumentError) as error:
        parse_document("%PDF-1.7 ...", format="pdf")
    assert error.value.field == "format"


def test_unreadable_pdf_is_a_document_error() -> None:
    with pytest.raises(DocumentError, match="the PDF could not be read"):
        parse_document(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage", format="pdf")


def test_encrypted_pdf_is_refused() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_pdf([["Secret text."]]))))
    writer.encrypt(user_password="secret", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)

    with pytest.raises(DocumentError, match="encrypted"):
        parse_document(buffer.getvalue(), format="pdf")


def test_pdf_text_over_the_limit_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsing, "MAX_DOCUMENT_BYTES", 2_000)
    # Compressed, the page is smaller than the limit; its text is not.
    raw = _pdf([["Receipts are required for every item. " * 2] * 60], deflate=True)
    assert len(raw) < 2_000

    with pytest.raises(DocumentTooLarge, match="extracted from the PDF"):
        parse_document(raw, format="pdf")


# --- canonical text -----------------------------------------------------------------------------


def test_canonical_text_normalises_newlines_spaces_and_composition() -> None:
    raw = "\ufeffTitle  \r\n\r\n\r\n\r\nCafe\u0301 opens\u3000\u3000\rat 9.\u2028Closes at 5.\n\n\n"

    document = parse_document(raw.encode("utf-8"), format="text")

    assert document.text == "Title\n\nCafé opens\nat 9.\nCloses at 5."
    assert document.title == "Title"
    assert [p.text for p in document.paragraphs] == ["Café opens\nat 9.\nCloses at 5."]
    assert_well_formed(document)


def test_a_line_of_full_width_spaces_is_a_blank_line() -> None:
    document = parse_document("最初の段落です。\n\u3000\u3000\n次の段落です。", format="text")

    assert [p.text for p in document.paragraphs] == ["最初の段落です。", "次の段落です。"]


def test_content_hash_is_sha256_of_the_canonical_text() -> None:
    crlf = parse_document(b"Rule one.\r\n\r\nRule two.  \r\n", format="text")
    lf = parse_document("Rule one.\n\nRule two.", format="text")

    assert crlf.text == lf.text
    assert content_hash(crlf.text) == content_hash(lf.text)
    assert content_hash("abc") == hashlib.sha256(b"abc").hexdigest()
    assert content_hash("契約") == hashlib.sha256("契約".encode()).hexdigest()


def test_markup_only_edits_keep_the_content_hash() -> None:
    plain = parse_document("# Scope\n\nAll staff must comply.", format="markdown")
    bold = parse_document("Scope\n=====\n\nAll staff **must** comply.\n", format="markdown")

    assert content_hash(plain.text) == content_hash(bold.text)


# --- headings and sections ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "section"),
    [
        ("1. Purpose", "1"),
        ("1.2 Scope", "1.2"),
        ("1.2.3 Reporting lines", "1.2.3"),
        ("１．目的", "１"),
        ("Article 5", "Article 5"),
        ("ARTICLE 7 - PAYMENT", "ARTICLE 7"),
        ("Section 4 — Termination", "Section 4"),
        ("Section 4.2: Notice", "Section 4.2"),
        ("Appendix A: Forms", "Appendix A"),
        ("第5条（支払）", "第5条"),
        ("第十条　解除", "第十条"),
        ("第5条の2（再委託）", "第5条の2"),
        ("第1章 総則", "第1章"),
        ("第2項", "第2項"),
        ("Scope", "Scope"),
        ("Roles and responsibilities", "Roles and responsibilities"),
        ("支払条件", "支払条件"),
        ("# What is covered?", "What is covered?"),
        ("## 3.2 Scope", "3.2"),
        ("### 第5条（支払）", "第5条"),
    ],
)
def test_heading_lines_set_the_section_and_are_not_paragraphs(heading: str, section: str) -> None:
    document = parse_document(f"Intro text.\n\n{heading}\n\nThe rule applies.", format="text")

    assert [(p.section, p.text) for p in document.paragraphs] == [
        ("", "Intro text."),
        (section, "The rule applies."),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "1. submit the form",
        "To: All staff",
        "Alice, Bob, Carol",
        "The rule applies.",
        "本規程は全従業員に適用する。",
        "What is covered?",
        "- a list item",
        "| a | b |",
        "i",
        "https://example.com/policy",
    ],
)
def test_lines_that_are_not_headings_are_paragraphs(line: str) -> None:
    document = parse_document(f"{line}\n\nThe rule applies.", format="text")

    assert [p.text for p in document.paragraphs] == [line, "The rule applies."]
    assert all(p.section == "" for p in document.paragraphs)


@pytest.mark.parametrize(
    "line", ["Section 4 of the Act applies", "第5条に基づき請求する", "1.2 million yen was paid"]
)
def test_prose_starting_with_a_section_number_is_not_a_heading(line: str) -> None:
    document = parse_document(f"{line}\nto this contract.\n\nThe rule applies.", format="text")

    assert [p.text for p in document.paragraphs] == [
        f"{line}\nto this contract.",
        "The rule applies.",
    ]
    assert all(p.section == "" for p in document.paragraphs)


def test_a_short_last_line_is_a_paragraph_not_a_heading() -> None:
    document = parse_document("The rule applies.\n\nApproved by the board", format="text")

    assert [p.text for p in document.paragraphs] == ["The rule applies.", "Approved by the board"]


def test_article_headings_are_found_inside_a_block() -> None:
    raw = (
        "第1条（目的）\n本契約は保守を目的とする。\n"
        "第2条（定義）\n本契約において用語の定義は次のとおり。"
    )

    document = parse_document(raw, format="text")

    assert [(p.section, p.text) for p in document.paragraphs] == [
        ("第1条", "本契約は保守を目的とする。"),
        ("第2条", "本契約において用語の定義は次のとおり。"),
    ]


def test_a_clause_heading_composes_with_its_article() -> None:
    raw = "第5条（秘密保持）\n\n第2項\n\n前項の規定は3年間有効とする。\n\n第3号\n\n例外とする。"

    document = parse_document(raw, format="text")

    assert [p.section for p in document.paragraphs] == ["第5条第2項", "第5条第2項第3号"]


def test_a_numbered_list_is_not_a_heading() -> None:
    document = parse_document("1. Submit the form\n2. Wait for approval\n\nDone.", format="text")

    assert [(p.section, p.text) for p in document.paragraphs] == [
        ("", "1. Submit the form"),
        ("", "2. Wait for approval"),
        ("", "Done."),
    ]


def test_a_numbered_item_in_a_paragraph_does_not_open_a_section() -> None:
    raw = "3.2 Receipts\n\n1. Employees must keep receipts.\n\n2. Receipts are scanned."

    document = parse_document(raw, format="text")

    assert {p.section for p in document.paragraphs} == {"3.2"}


def test_markdown_headings_are_explicit_so_short_lines_stay_paragraphs() -> None:
    document = parse_document("# Minutes\n\nApproved\n\nThe budget passed.", format="markdown")

    assert [(p.section, p.text) for p in document.paragraphs] == [
        ("Minutes", "Approved"),
        ("Minutes", "The budget passed."),
    ]


def test_text_that_only_looks_like_a_heading_in_markup_is_escaped() -> None:
    document = parse_document("<h1>Memo</h1><p># 5 is the ticket number</p>", format="html")

    assert document.text == "# Memo\n\n\\# 5 is the ticket number"
    assert [p.text for p in document.paragraphs] == ["\\# 5 is the ticket number"]
    assert_well_formed(document)


def test_separators_are_not_paragraphs() -> None:
    document = parse_document("First.\n\n---\n\n* * *\n\nSecond.", format="text")

    assert [p.text for p in document.paragraphs] == ["First.", "Second."]


def test_indented_code_is_verbatim() -> None:
    document = parse_document("Config:\n\n    # not a heading\n    - not a list", format="text")

    assert [p.text for p in document.paragraphs] == ["Config:", "# not a heading\n    - not a list"]


# --- long paragraphs ----------------------------------------------------------------------------


def test_long_english_paragraph_is_split_at_sentence_ends() -> None:
    sentence = "Receipts are required for every item over 5,000 yen, e.g. taxis and meals. "
    source = (sentence * 60).strip()

    document = parse_document(f"3.2 Receipts\n\n{source}", format="text")

    # The pieces lose only the space between them.
    assert " ".join(p.text for p in document.paragraphs) == source
    assert len(document.paragraphs) == 3
    assert all(p.text.endswith("meals.") for p in document.paragraphs)
    assert all(p.section == "3.2" for p in document.paragraphs)


def test_long_japanese_paragraph_is_split_after_the_full_stop() -> None:
    sentence = (
        "乙は、甲の事前の書面による承諾なく、"
        "本件業務を第三者に再委託してはならない！本当か？そうだ。"
    )
    source = sentence * 60

    document = parse_document(f"第3条（再委託）\n{source}", format="text")

    assert "".join(p.text for p in document.paragraphs) == source
    assert all(p.text.endswith("そうだ。") for p in document.paragraphs)
    assert all(p.section == "第3条" for p in document.paragraphs)
    assert all(len(p.text) <= MAX_PARAGRAPH_CHARS for p in document.paragraphs)
    assert_well_formed(document)


def test_long_text_without_sentence_ends_is_cut_at_spaces_then_hard() -> None:
    words = " ".join(["approval"] * 600)
    runs = "承認" * 1_500

    by_words = parse_document(words, format="text")
    hard = parse_document(runs, format="text")

    assert " ".join(p.text for p in by_words.paragraphs) == words
    assert "".join(p.text for p in hard.paragraphs) == runs
    assert [len(p.text) for p in hard.paragraphs] == [2_000, 1_000]
    assert_well_formed(by_words)
    assert_well_formed(hard)


def test_a_hard_cut_does_not_separate_a_combining_mark() -> None:
    text = ("e" + "\u0324") * 1_500  # no precomposed form: stays two code points under NFC

    document = parse_document(text, format="text")

    assert all(not unicodedata.combining(p.text[0]) for p in document.paragraphs)
    assert "".join(p.text for p in document.paragraphs) == text


# --- format detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "content_type", "raw", "expected"),
    [
        ("policy.txt", None, b"Rules", "text"),
        ("minutes.md", "text/plain", b"Rules", "markdown"),
        ("minutes.markdown", None, b"Rules", "markdown"),
        ("memo.HTML", None, b"Rules", "html"),
        ("C:\\docs\\memo.htm", "application/octet-stream", b"Rules", "html"),
        ("scan.pdf", None, b"%PDF-1.7", "pdf"),
        (None, "text/markdown; charset=utf-8", b"Rules", "markdown"),
        ("memo.txt", "text/html", b"Rules", "html"),
        (None, "application/pdf", b"", "pdf"),
        (None, "text/plain", b"<html><p>x</p></html>", "text"),
        (None, None, b"<!DOCTYPE html><html><p>x</p></html>", "html"),
        (None, "application/octet-stream", b"  <!-- memo -->\n<div>x</div>", "html"),
        (None, None, b"junk\n%PDF-1.4\n", "pdf"),
        (None, None, "# 議事録\n\n- 承認した", "markdown"),
        (None, None, b"See [the policy](https://x.example/p).", "markdown"),
        ("notes", None, b"Plain words.\n\n- a dash list", "text"),
        (None, None, "第1条（目的）", "text"),
    ],
)
def test_detect_format(
    filename: str | None, content_type: str | None, raw: bytes | str, expected: str
) -> None:
    assert detect_format(filename, content_type, raw) == expected


@pytest.mark.parametrize(
    ("filename", "content_type", "raw"),
    [
        ("contract.docx", None, b"PK\x03\x04"),
        (None, "image/png", b"\x89PNG"),
        (None, None, b"PK\x03\x04\x14\x00"),
        (None, "application/octet-stream", b"\xd0\xcf\x11\xe0\xa1\xb1"),
    ],
)
def test_unsupported_formats_are_refused_on_the_format_field(
    filename: str | None, content_type: str | None, raw: bytes
) -> None:
    with pytest.raises(DocumentError) as error:
        detect_format(filename, content_type, raw)
    assert error.value.field == "format"


def test_parse_document_detects_from_the_file_name() -> None:
    assert parse_document(b"# Title\n\nBody.", filename="notes.md").format == "markdown"
    assert parse_document(b"<p>Body.</p>", filename="memo.html").format == "html"


def test_unknown_format_is_refused_on_the_format_field() -> None:
    with pytest.raises(DocumentError) as error:
        parse_document("Body.", format="docx")
    assert error.value.field == "format"


# --- refusals -----------------------------------------------------------------------------------


def test_invalid_utf8_names_the_byte_offset() -> None:
    with pytest.raises(DocumentError, match=r"byte 0xff at byte offset 7") as error:
        parse_document(b"Rules: \xff\xfe", format="text")
    assert error.value.field == "text"


def test_a_truncated_utf8_sequence_is_invalid() -> None:
    with pytest.raises(DocumentError, match=r"byte offset 3"):
        parse_document("契約".encode()[:-1] + b"x", format="text")


def test_utf8_encoded_surrogates_are_invalid() -> None:
    with pytest.raises(DocumentError, match="not valid UTF-8"):
        parse_document(b"ok \xed\xa0\x80", format="text")


def test_a_bom_is_stripped() -> None:
    document = parse_document("\ufeff規程".encode(), format="text")

    assert document.text == "規程"


def test_nul_bytes_are_refused_with_their_position() -> None:
    with pytest.raises(DocumentError, match=r"NUL byte \(U\+0000\) at line 2, column 3"):
        parse_document(b"Rules\nab\x00c", format="text")


@pytest.mark.parametrize("control", ["\x07", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\x9f"])
@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_control_characters_are_refused(control: str, fmt: str) -> None:
    with pytest.raises(DocumentError, match="control character"):
        parse_document(f"Rules{control}apply.", format=fmt)


def test_tabs_are_allowed() -> None:
    assert parse_document("Item\tAmount", format="text").text == "Item\tAmount"


def test_control_characters_from_markup_entities_are_refused() -> None:
    with pytest.raises(DocumentError, match="control character"):
        parse_document("Rules &#12; apply.", format="markdown")


def test_lone_surrogates_in_str_input_are_refused() -> None:
    with pytest.raises(DocumentError, match=r"lone surrogate U\+D800 at character offset 3"):
        parse_document("abc\ud800", format="text")


@pytest.mark.parametrize(
    ("raw", "fmt"),
    [
        (b"", "text"),
        ("", "text"),
        (" \n\t\n\u3000\u3000 \r\n", "text"),
        ("\ufeff", "text"),
        (b"\xef\xbb\xbf  \n", "markdown"),
        ("<script>var x = 1;</script><style>p {}</style>", "html"),
        ("<!-- only a comment -->", "html"),
        ("![logo](logo.png)", "markdown"),
    ],
)
def test_a_document_without_text_is_refused(raw: bytes | str, fmt: str) -> None:
    with pytest.raises(DocumentError, match=r"^the document has no text$") as error:
        parse_document(raw, format=fmt)
    assert error.value.field == "text"


@pytest.mark.parametrize(
    ("raw", "fmt"), [("# Title\n\n## Part", "markdown"), ("---\n\n***", "text")]
)
def test_a_document_of_only_headings_or_separators_is_refused(raw: str, fmt: str) -> None:
    with pytest.raises(DocumentError, match="no paragraphs"):
        parse_document(raw, format=fmt)


def test_a_document_over_the_limit_is_too_large() -> None:
    raw = b"a" * (MAX_DOCUMENT_BYTES + 1)

    with pytest.raises(DocumentTooLarge) as error:
        parse_document(raw, format="text")

    assert isinstance(error.value, DocumentError)
    assert error.value.field == "text"
    assert "5,242,880 bytes" in error.value.message


def test_the_limit_counts_utf8_bytes_of_str_input() -> None:
    # 1,747,627 Japanese characters are under the limit in characters, over it in bytes.
    raw = "契" * (MAX_DOCUMENT_BYTES // 3 + 1)

    with pytest.raises(DocumentTooLarge):
        parse_document(raw, format="text")


def test_a_document_at_the_limit_is_accepted() -> None:
    paragraph = "Receipts are required for every item over 5,000 yen. " * 4 + "\n\n"
    raw = (paragraph * (MAX_DOCUMENT_BYTES // len(paragraph))).encode()
    raw += b"x" * (MAX_DOCUMENT_BYTES - len(raw))

    document = parse_document(raw, format="text")

    assert len(document.paragraphs) == MAX_DOCUMENT_BYTES // len(paragraph) + 1
    assert document.paragraphs[-1].text.startswith("xxx")


def test_too_many_paragraphs_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsing, "MAX_PARAGRAPHS", 3)

    with pytest.raises(DocumentTooLarge, match="more than 3 paragraphs"):
        parse_document("a.\n\nb.\n\nc.\n\nd.", format="text")


# --- Markdown work bound -----------------------------------------------------------------------


def _refused_before_parsing(monkeypatch: pytest.MonkeyPatch, raw: str) -> DocumentTooLarge:
    """Parse `raw` as Markdown with markdown-it forbidden: it must be refused before it."""

    def no_parser() -> None:
        raise AssertionError("markdown-it was started on a document over the work limit")

    monkeypatch.setattr(parsing, "_markdown", no_parser)
    with pytest.raises(DocumentTooLarge) as error:
        parse_document(raw, format="markdown")
    return error.value


def test_a_hostile_run_of_markup_is_refused_before_markdown_it_sees_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 5 MB of `*[_` runs (markdown-it needed about two minutes for it)
    raw = "".join("*[_" if i % 50 else "\n\n" for i in range(MAX_DOCUMENT_BYTES // 3))

    error = _refused_before_parsing(monkeypatch, raw)

    assert f"the limit is {MAX_MARKDOWN_WORK:,}" in error.message
    assert "plain text or HTML" in error.message
    assert error.field == "text"


def test_lines_inside_deep_quotes_count_once_per_level(monkeypatch: pytest.MonkeyPatch) -> None:
    # A quote nested past markdown-it's limit, then lazy lines that every level re-checks:
    # few markup characters, but each line costs the parser 20 steps.
    lines = MAX_MARKDOWN_WORK // 20
    raw = ">" * 1000 + " a\n" + "a\n" * lines

    assert markdown_work(raw) > MAX_MARKDOWN_WORK > lines + 1000
    _refused_before_parsing(monkeypatch, raw)


@pytest.mark.parametrize(
    ("source", "work"),
    [
        ("Plain prose, no markup at all.", 1),
        ("**Bold** and [a link](x).", 4 + 2 + 1),  # * * * * [ ] and one line
        ("a\nb\n\nc", 4),
        ("> quoted\nlazy line", 2 + 2 + 1),  # > counts; both lines sit at depth 1
        ("- item\n  - nested\n    text", (1 + 1) + (1 + 2) + (1 + 2)),  # depth: indent // 2 + 1
        (">" * 30 + " deep", 30 + 1 + 20),  # depth capped at markdown-it's nesting limit
    ],
)
def test_markdown_work_counts_markup_and_lines_times_their_depth(source: str, work: int) -> None:
    assert markdown_work(source) == work


def test_markdown_just_under_the_work_limit_is_parsed_and_the_same_text_as_text_always() -> None:
    unit = "Item **7** of [the list](https://x.example).\n\n"  # 6 markup, 2 lines
    raw = unit * ((MAX_MARKDOWN_WORK - 1) // 8)
    assert MAX_MARKDOWN_WORK - 10 < markdown_work(raw) <= MAX_MARKDOWN_WORK

    document = parse_document(raw, format="markdown")

    assert document.paragraphs[0].text == "Item 7 of the list."
    with pytest.raises(DocumentTooLarge):
        parse_document(raw + unit * 10, format="markdown")
    assert parse_document(raw + unit * 10, format="text").format == "text"


# --- HTML and Markdown edge cases ---------------------------------------------------------------


def test_an_unclosed_script_swallows_the_rest_as_a_browser_would() -> None:
    document = parse_document("<p>Visible.</p><script>alert(1)<p>hidden</p>", format="html")

    assert document.text == "Visible."


def test_inline_html_script_in_markdown_is_dropped() -> None:
    raw = (
        "Pay within 30 days <script>steal()</script>of delivery.\n\n"
        "<script>\n\nx()\n\n</script>\n\nEnd."
    )

    document = parse_document(raw, format="markdown")

    assert "steal" not in document.text
    assert "x()" not in document.text
    assert [p.text for p in document.paragraphs] == ["Pay within 30 days of delivery.", "End."]


def test_html_block_in_markdown_is_rendered_as_html() -> None:
    document = parse_document(
        "Intro.\n\n<div><img src=x onerror=alert(1)>Kept <b>text</b></div>\n", format="markdown"
    )

    assert [p.text for p in document.paragraphs] == ["Intro.", "Kept text"]


def test_deeply_nested_html_does_not_recurse() -> None:
    raw = "<div>" * 20_000 + "Deep text." + "</div>" * 20_000

    document = parse_document(raw, format="html")

    assert [p.text for p in document.paragraphs] == ["Deep text."]


def test_html_ordered_list_start_and_nested_lists() -> None:
    raw = '<ol start="3"><li>Third<ul><li>detail</li></ul></li><li>Fourth</li></ol>'

    document = parse_document(raw, format="html")

    assert document.text == "3. Third\n  - detail\n4. Fourth"
    assert [p.text for p in document.paragraphs] == ["3. Third", "- detail", "4. Fourth"]


def test_html_pre_is_verbatim() -> None:
    document = parse_document("<p>Run:</p><pre>\nmake run\n  --fast\n</pre>", format="html")

    assert document.text == "Run:\n\n    make run\n      --fast"
    assert [p.text for p in document.paragraphs] == ["Run:", "make run\n      --fast"]


def test_html_title_falls_back_to_the_first_heading() -> None:
    document = parse_document(
        "<svg><title>icon</title></svg><h2>Notice</h2><p>Text.</p>", format="html"
    )

    assert document.title == "Notice"


# --- properties ---------------------------------------------------------------------------------


def _words(words: str) -> st.SearchStrategy[str]:
    return st.sampled_from(words.split())


SECRET = "\u2603SECRET"  # planted in scripts, styles, attributes and comments; never in the text
_PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

_en_words = _words(
    "the buyer shall pay seller within days receipts are required for every item over yen "
    "approval board policy employees must submit travel expense reports"
)
_ja_words = _words(
    "甲 乙 は 、 に対し 支払う 承認 が 必要 である 本契約 第三者 再委託 研修 ５０万円 3%"
)
_free_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029"),
    min_size=1,
    max_size=30,
)
_number = st.integers(1, 30).map(str)


@st.composite
def _sentence(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        words = draw(st.lists(_en_words, min_size=1, max_size=12))
        return " ".join(words).capitalize() + draw(st.sampled_from([".", "!", "?", "", ","]))
    return "".join(draw(st.lists(_ja_words, min_size=1, max_size=12))) + draw(
        st.sampled_from(["。", "！", "？", "", "、"])
    )


_title = st.builds(" ".join, st.lists(_en_words, min_size=1, max_size=4)) | st.builds(
    "".join, st.lists(_ja_words, min_size=1, max_size=4)
)
_heading_line = st.one_of(
    st.builds("{}. {}".format, _number, _title.map(str.capitalize)),
    st.builds("{}.{} {}".format, _number, _number, _title),
    st.builds("Article {} - {}".format, _number, _title),
    st.builds("Section {}".format, _number),
    st.builds("第{}条（{}）".format, _number, _title),
    st.builds("第{}章 {}".format, _number, _title),
    st.builds("第{}項".format, _number),
    st.builds("{} {}".format, st.sampled_from(["#", "##", "###"]), _title),
    _title,
)
_line = st.one_of(
    _sentence(),
    st.builds(" ".join, st.lists(_sentence(), min_size=1, max_size=4)),
    _heading_line,
    st.builds(
        "{} {}".format, st.sampled_from(["-", "*", "1.", "2)", "・", "①", "２\u3000"]), _sentence()
    ),
    st.builds("| {} | {} |".format, _title, _number),
    st.builds("    {}".format, _sentence()),
    st.sampled_from(["---", "* * *", "|---|---|", "\u3000", "  ", "\t"]),
    _free_text,
)
_newline = st.sampled_from(["\n", "\r\n", "\r", " \n", "\u3000\n", "\t\n"])
_blank = st.sampled_from(["\n\n", "\r\n\r\n", "\n \n", "\n\u3000\n", "\n\n\n\n", "\u2029"])


@st.composite
def _plain_document(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(st.lists(_line, min_size=1, max_size=5), min_size=1, max_size=10))
    text = draw(_blank).join(draw(_newline).join(block) for block in blocks)
    return draw(st.sampled_from(["", "\ufeff", "\n"])) + text


# Without code fences, code spans and escapes, which show markup (and planted secrets) as
# the literal text they are.
_MARKDOWN_LITERALS = dict.fromkeys(map(ord, "`~\\"))
_markdown_free_text = _free_text.map(lambda t: t.translate(_MARKDOWN_LITERALS)).filter(bool)


@st.composite
def _markdown_document(draw: st.DrawFn) -> str:
    inline = st.one_of(
        _sentence(),
        _title.map("**{}**".format),
        _title.map("_{}_".format),
        _title.map("`{}`".format),
        _title.map("[{}](https://example.com/p?q=1)".format),
        _title.map("![{}](logo.png)".format),
        st.just(f"<script>{SECRET}</script>"),
        st.just(f'<img src=x onerror="{SECRET}">'),
        _markdown_free_text,
    )
    # A line opening with <script> would be a raw HTML block, where Markdown is not parsed.
    paragraph = st.builds("{} {}".format, _sentence(), st.lists(inline, max_size=6).map(" ".join))
    block = st.one_of(
        paragraph,
        st.builds("{} {}".format, st.sampled_from(["#", "##", "###"]), paragraph),
        st.builds("{}\n===".format, _title),
        st.lists(paragraph, min_size=1, max_size=4).map(lambda ps: "\n".join(f"- {p}" for p in ps)),
        st.lists(paragraph, min_size=1, max_size=4).map(
            lambda ps: "\n".join(f"{i}. {p}" for i, p in enumerate(ps, 1))
        ),
        st.lists(st.tuples(_title, _number), min_size=1, max_size=4).map(
            lambda rows: "| a | b |\n|---|---|\n" + "\n".join(f"| {t} | {n} |" for t, n in rows)
        ),
        # Code is content shown as written: markup inside it stays (the planted secret is not).
        _sentence().map("```\n{}\n\n  more <b>bold</b>\n```".format),
        paragraph.map("> {}".format),
        st.just(f"<script>\n{SECRET}\n</script>"),
        st.just(f"<div><style>{SECRET}</style>kept</div>"),
        st.just("---"),
        _markdown_free_text,
    )
    return "\n\n".join(draw(st.lists(block, min_size=1, max_size=8)))


def _element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    tags = st.sampled_from(
        ["p", "div", "span", "b", "li", "h1", "h3", "td", "blockquote", "pre", "section", "a"]
    )
    return st.one_of(
        st.builds(lambda tag, body: f"<{tag}>{body}</{tag}>", tags, children),
        st.builds("<ul>{}</ul>".format, children.map("<li>{}</li>".format)),
        st.builds("<ol start=2>{}</ol>".format, children.map("<li>{}</li>".format)),
        st.builds("<table><tr><th>{}</th><td>{}</td></tr></table>".format, children, children),
        st.builds("{}{}".format, children, children),
    )


_html_leaf = st.one_of(
    _sentence().map(html.escape),
    _free_text.map(html.escape),
    st.just("<br>"),
    st.just(f"<script>{SECRET}</script>"),
    st.just(f"<style>p {{ content: '{SECRET}' }}</style>"),
    st.just(f'<img src="x" onerror="{SECRET}">'),
    st.just(f"<!-- {SECRET} -->"),
    st.just(f"<noscript>{SECRET}</noscript><template>{SECRET}</template>"),
    st.just("漢字<rp>(</rp><rt>かんじ</rt><rp>)</rp>"),
)
_html_document = st.recursive(_html_leaf, _element, max_leaves=30)


def _parsed_or_refused(raw: bytes | str, fmt: str | None) -> ParsedDocument | None:
    try:
        return parse_document(raw, format=fmt)
    except DocumentError:
        return None


@_PROPERTY
@given(_plain_document())
def test_property_plain_text_paragraphs_are_exact_slices(raw: str) -> None:
    document = _parsed_or_refused(raw, "text")
    assume(document is not None)
    assert document is not None
    assert_well_formed(document)
    assert parse_document(raw, format="text") == document


@_PROPERTY
@given(_plain_document())
def test_property_plain_text_keeps_every_word(raw: str) -> None:
    # Nothing is lost: canonical text differs from the input only in whitespace and NFC.
    document = _parsed_or_refused(raw.encode(), "text")
    assume(document is not None)
    assert document is not None
    source = unicodedata.normalize("NFC", raw).removeprefix("\ufeff").split()
    assert document.text.split() == source


@_PROPERTY
@given(_markdown_document())
def test_property_markdown_paragraphs_are_exact_slices(raw: str) -> None:
    document = _parsed_or_refused(raw, "markdown")
    assume(document is not None)
    assert document is not None
    assert SECRET not in document.text
    assert_well_formed(document)
    assert parse_document(raw, format="markdown") == document


@_PROPERTY
@given(_html_document)
def test_property_html_paragraphs_are_exact_slices_without_scripts(raw: str) -> None:
    document = _parsed_or_refused(raw, "html")
    assume(document is not None)
    assert document is not None
    assert SECRET not in document.text
    assert "かんじ" not in document.text
    assert_well_formed(document)
    assert parse_document(raw, format="html") == document


@settings(_PROPERTY, max_examples=40)  # large examples: fewer of them
@given(st.lists(_sentence(), min_size=60, max_size=150), st.sampled_from([" ", "", "\n"]))
def test_property_long_paragraphs_are_split_within_the_limit(
    sentences: list[str], separator: str
) -> None:
    raw = "Heading\n\n" + separator.join(sentences)
    document = _parsed_or_refused(raw, "text")
    assume(document is not None)
    assert document is not None
    assert_well_formed(document)
    # Splitting only drops the white space between pieces.
    assert "".join("".join(p.text.split()) for p in document.paragraphs) == "".join(
        separator.join(sentences).split()
    )


@_PROPERTY
@given(st.text(max_size=300), st.sampled_from(["text", "markdown", "html"]))
def test_property_any_text_is_parsed_or_refused_with_a_document_error(raw: str, fmt: str) -> None:
    document = _parsed_or_refused(raw, fmt)
    if document is not None:
        assert_well_formed(document)


@_PROPERTY
@given(st.binary(max_size=300), st.sampled_from([None, "text", "markdown", "html", "pdf"]))
def test_property_any_bytes_are_parsed_or_refused_with_a_document_error(
    raw: bytes, fmt: str | None
) -> None:
    try:
        document = _parsed_or_refused(raw, fmt)
    except DocumentError:  # detection refused the format
        return
    if document is not None:
        assert_well_formed(document)
