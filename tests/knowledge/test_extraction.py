"""Text out of each kind of file, cut into passages under their headings."""

from __future__ import annotations

import pytest

from knowledge.extraction import (
    BrokenFile,
    EmptyDocument,
    UnsupportedFile,
    detect_format,
    extract,
)
from knowledge.splitting import split_passages
from tests.knowledge.conftest import pdf, under

GUIDE_LIKE = """# Handbook

Welcome to the handbook.

## Limits

### Iterations

An iteration is one model call.

### Tokens
Tokens are counted per run.

Setext title
------------

Under a setext heading.

```
# a comment in code, not a heading
```
"""


def passages(text: str, **kwargs: object) -> list[tuple[str, str]]:
    extracted = extract(text.encode(), filename="doc.md")
    spans = split_passages(extracted.text, extracted.sections, **kwargs)  # type: ignore[arg-type]
    return [(s.location, extracted.text[s.start : s.start + s.length]) for s in spans]


def test_markdown_passages_sit_under_their_nearest_heading() -> None:
    found = passages(GUIDE_LIKE)

    assert [location for location, _ in found] == [
        "Handbook",
        under("Limits", "Iterations"),
        under("Limits", "Tokens"),
        "Setext title",
    ]
    # A heading with nothing under it yet stays with what follows.
    assert found[1][1] == "## Limits\n\n### Iterations\n\nAn iteration is one model call."
    assert "# a comment in code" in found[3][1]


def test_a_lone_top_heading_is_the_title_and_not_part_of_every_location() -> None:
    extracted = extract(GUIDE_LIKE.encode(), filename="doc.md")

    assert extracted.title == "Handbook"
    assert extracted.format == "markdown"


def test_paragraphs_are_packed_up_to_the_passage_size_and_cover_the_text() -> None:
    paragraphs = [f"Paragraph {n} " + "word " * 60 for n in range(30)]  # ~320 chars each
    text = "## Notes\n\n" + "\n\n".join(p.strip() for p in paragraphs)
    extracted = extract(text.encode(), filename="notes.md")

    spans = split_passages(extracted.text, extracted.sections)

    assert all(500 <= s.length <= 1000 for s in spans[:-1]), [s.length for s in spans]
    covered = "".join(extracted.text[s.start : s.start + s.length] for s in spans)
    assert covered.replace("\n", "") == extracted.text.replace("\n", "")
    assert [s.start for s in spans] == sorted(s.start for s in spans)


def test_a_long_paragraph_is_cut_at_sentences_not_in_words() -> None:
    text = " ".join(f"Sentence number {n} says something." for n in range(200))
    extracted = extract(text.encode(), filename="long.txt")

    spans = split_passages(extracted.text, extracted.sections)

    assert len(spans) > 5
    for span in spans:
        piece = extracted.text[span.start : span.start + span.length]
        assert len(piece) <= 1000
        assert piece.startswith("Sentence") and piece.endswith("something.")


def test_plain_text_is_kept_as_it_is() -> None:
    extracted = extract("Line one\r\nLine two\r\n\r\nLast — ünïcode".encode(), filename="a.txt")

    assert extracted.text == "Line one\nLine two\n\nLast — ünïcode"
    assert extracted.sections == ()


def test_html_keeps_the_text_and_headings_and_drops_scripts_and_styles() -> None:
    html = b"""<!doctype html><html><head><title>Team page</title>
    <style>body { color: red }</style><script>var secret = 1;</script></head>
    <body><nav>Home</nav><h1>Team</h1><p>We build <b>Oracle</b>,
    a chat.</p><!-- a comment --><h2>Members</h2><ul><li>Alice</li><li>Bob</li></ul>
    <script>alert("x")</script><pre>line 1
      line 2</pre><table><tr><td>a</td><td>b</td></tr></table></body></html>"""

    extracted = extract(html, filename="team.html")

    assert extracted.title == "Team page"
    assert "We build Oracle, a chat." in extracted.text
    assert "Alice\nBob" in extracted.text
    assert "line 1\n      line 2" in extracted.text
    assert "a b" in extracted.text
    for hidden in ("secret", "alert", "color: red", "a comment", "Home"):
        assert hidden not in extracted.text
    spans = split_passages(extracted.text, extracted.sections)
    # The lone <h1> names the page: it is left out of the locations under it.
    assert [s.location for s in spans] == ["Team", "Members"]


def test_a_pdf_gives_its_text_page_by_page() -> None:
    data = pdf(["First page, first line", "and its second line"], ["The second page"])

    extracted = extract(data, filename="report.pdf")

    assert extracted.format == "pdf"
    assert "First page, first line\nand its second line" in extracted.text
    spans = split_passages(extracted.text, extracted.sections)
    assert [s.location for s in spans] == ["Page 1", "Page 2"]


def test_a_compressed_pdf_is_read_too() -> None:
    extracted = extract(pdf(["Squeezed words"], compress=True), filename="small.pdf")

    assert extracted.text == "Squeezed words"


@pytest.mark.parametrize(
    ("name", "content_type", "expected"),
    [
        ("notes.md", "", "markdown"),
        ("NOTES.MARKDOWN", "", "markdown"),
        ("a.txt", "application/octet-stream", "text"),
        ("page.htm", "", "html"),
        ("paper.pdf", "", "pdf"),
        ("no-extension", "application/pdf", "pdf"),
    ],
)
def test_the_format_comes_from_the_extension_else_the_content_type(
    name: str, content_type: str, expected: str
) -> None:
    assert detect_format(name, content_type) == expected


@pytest.mark.parametrize(
    ("name", "data", "error", "message"),
    [
        (
            "slides.pptx",
            b"PK\x03\x04",
            UnsupportedFile,
            "slides.pptx is not a file Oracle can read",
        ),
        ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00", UnsupportedFile, "not a text file"),
        ("latin1.txt", "café".encode("latin-1"), UnsupportedFile, "is not UTF-8 text"),
        ("empty.md", b"", EmptyDocument, "empty.md is empty."),
        ("blank.txt", b"  \n\n  ", EmptyDocument, "blank.txt is empty."),
        ("tags.html", b"<html><script>x()</script></html>", EmptyDocument, "no text to search"),
        ("scan.pdf", pdf([]), EmptyDocument, "a scanned PDF"),
        ("broken.pdf", b"%PDF-1.4\nnot really", BrokenFile, "the PDF is damaged"),
        ("cut.pdf", pdf(["Some text"])[:150], BrokenFile, "the PDF is damaged"),
    ],
)
def test_a_file_that_cannot_be_read_says_why(
    name: str, data: bytes, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as raised:
        extract(data, filename=name)

    assert isinstance(raised.value, ValueError)


def test_headings_with_nothing_under_them_take_the_last_ones_location() -> None:
    found = passages("# T\n\nIntro.\n\n## Limits\n\n### Iterations\n")

    assert found == [
        ("T", "# T\n\nIntro."),
        (under("Limits", "Iterations"), "## Limits\n\n### Iterations"),
    ]
