"""Hostile input for the fuzz tests: what the open internet sends, and in particular the
values SQLite stores but PostgreSQL refuses (NUL, lone surrogates, integers past 64
bits, NaN in JSON), so that the suite's PostgreSQL run finds them.

An input is built from parts (an HTTP request's credentials, URL parameters and body
fields; a command line's flags). Each part has a good and a hostile strategy, and
`mixed` makes one part hostile at a time (sometimes none, now and then all): a hostile
value then gets past the other checks to where it could do harm (a NUL in a document's
title reaches the INSERT only if the rest of the upload is fine)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from agents.config import FIELDS, FieldSpec

Part = tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]  # good values, hostile ones
Parts = dict[str, Part]


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()  # a part left out (a JSON field not sent, a flag not given)

LONG = 300_000  # past the API's 256 KiB body limit and a WebSocket frame's 4 KiB
DEEP = "[" * 5_000 + "]" * 5_000  # past Python's recursion limit
# Numbers to str.isdigit(), str.isnumeric() or int(), but not in ASCII digits.
UNICODE_DIGITS = ["²", "٣", "١٢", "\U0001d7d9\U0001d7da", "߁", "Ⅻ", "½", "⁹⁹"]
# What PostgreSQL's text refuses (NUL) and no UTF-8 can hold (lone surrogates; Python
# reads the byte 0xff of a command-line argument as "\udcff").
UNSTORABLE = ["\x00", "\ud800", "\udfff", "\udcff"]
TRICKY_TEXT = [
    "",
    " ",
    "a\x00b",
    "\u202e",
    "\ufeff",
    "Robert'); DROP TABLE chat_conversation;--",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "NaN",
    "-Infinity",
    "1e400",
    "-1",
    "0",
    "9" * 30,
    *UNSTORABLE,
    *UNICODE_DIGITS,
]


def fuzzing(examples: int) -> settings:
    """Hypothesis settings for `examples` examples of a test that takes fixtures."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@st.composite
def mixed(draw: st.DrawFn, parts: Parts, calm: float = 0.25) -> dict[str, Any]:
    """A value for each part: good ones, but for one part a hostile one (or, in a share
    `calm` of the examples, for none; or now and then for all of them)."""
    # Hypothesis starts from (and shrinks towards) the first choice: the calm one.
    nones = max(1, round(len(parts) * calm / (1 - calm)))
    everything = draw(st.integers(0, 9)) == 9
    hostile = draw(st.sampled_from([*[None] * nones, *parts]), label="hostile part")
    return {
        name: draw(bad if everything or name == hostile else good, label=name)
        for name, (good, bad) in parts.items()
    }


unstorable_text = st.builds(
    lambda before, char, after: before + char + after,
    st.text(max_size=8),
    st.sampled_from(UNSTORABLE),
    st.text(max_size=8),
)
# Text of every kind, lone surrogates and NUL often (st.text leaves surrogates out).
hostile_text = st.one_of(
    unstorable_text,
    unstorable_text,
    st.text(max_size=30),
    st.text(st.characters() | st.characters(categories=["Cs"]), max_size=12),
    st.sampled_from(TRICKY_TEXT),
    st.sampled_from(["x" * LONG, "9" * 5_000]),
)
# Header values arrive as Latin-1 text (WSGI and ASGI decode the bytes so).
header_text = st.text(st.characters(max_codepoint=255), max_size=30) | st.sampled_from(
    ["", "\x00", "ÿ", "-1", "1.5", " 1", "9" * 30, "0x10", "1e3"]
)
huge_ints = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([2**31, 2**63 - 1, 2**63, -(2**63) - 1, 10**400, -(10**400)]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-100, max_value=100),
    huge_ints,
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=6,
)
# Whole bodies that are not a JSON object at all.
raw_bodies = st.one_of(
    st.binary(max_size=40),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.sampled_from(
        [
            b"",
            b"{",
            b"null",
            b"[]",
            b"\xff\xfe{\x00}",
            b'{"a": NaN, "b": -Infinity}',
            b'{"a": 1e99999}',
            DEEP.encode(),
            b'{"a": ' + DEEP.encode() + b"}",
            b'{"a": "' + b"x" * LONG + b'"}',
            b"title=x&content=y",
        ]
    ),
)


def encode_json(value: Any, how: str) -> bytes:
    """`value` as a client could send it: ASCII with escapes, or raw UTF-8 (where a lone
    surrogate becomes bytes that are not UTF-8 at all)."""
    if how == "ascii":
        return json.dumps(value).encode()
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class Body:
    """A request body as parts (mixed with the request's own), put together by `write`."""

    content_type: str
    parts: Parts
    write: Callable[[dict[str, Any]], bytes]


def json_body(**fields: st.SearchStrategy[Any]) -> Body:
    """A JSON object with these fields (good values given; hostile: any JSON at all),
    maybe other keys, or a body that is no JSON object."""
    parts: Parts = {name: (good | st.just(ABSENT), json_values) for name, good in fields.items()}
    parts["other keys"] = (st.just({}), st.dictionaries(hostile_text, json_values, max_size=2))
    parts["encoding"] = (st.just("ascii"), st.just("utf-8"))
    parts["whole body"] = (st.just(None), raw_bodies)

    def write(values: dict[str, Any]) -> bytes:
        if values["whole body"] is not None:
            return bytes(values["whole body"])
        sent = {name: values[name] for name in fields if values[name] is not ABSENT}
        return encode_json({**values["other keys"], **sent}, values["encoding"])

    return Body("application/json", parts, write)


NO_BODY = json_body()


def setting_values(spec: FieldSpec) -> st.SearchStrategy[Any]:
    """Values a setting accepts (its bounds and choices, declared once in FIELDS)."""
    if spec.kind == "int":
        return st.integers(int(spec.min or 0), int(spec.max or 0))
    if spec.kind == "float":
        return st.floats(spec.min, spec.max).map(lambda value: round(value, 2))
    if spec.kind == "choice":
        return st.sampled_from(spec.choices)
    if spec.kind == "bool":
        return st.booleans()
    return st.just(spec.default)


SETTINGS_BODY = json_body(**{spec.name: setting_values(spec) for spec in FIELDS})
BOUNDARY = "fuzzboundary"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"
CONTENT_TYPES = [
    "application/json",
    "application/json; charset=latin-1",
    "text/plain",
    "application/x-www-form-urlencoded",
    MULTIPART,
    "multipart/form-data",
    "application/octet-stream",
    "",
    "\x00/\x00",
    "application/json; charset=nonsense",
]


def multipart(fields: dict[str, str], file: tuple[str, str, bytes] | None) -> bytes:
    """A multipart/form-data body written by hand: any filename or content type (test
    helpers refuse the hostile ones)."""

    def raw(text: str) -> bytes:
        return text.encode("utf-8", "surrogatepass")

    parts = [
        b'Content-Disposition: form-data; name="' + raw(name) + b'"\r\n\r\n' + raw(value)
        for name, value in fields.items()
    ]
    if file is not None:
        filename, content_type, data = file
        parts.append(
            b'Content-Disposition: form-data; name="file"; filename="'
            + raw(filename)
            + b'"\r\nContent-Type: '
            + raw(content_type)
            + b"\r\n\r\n"
            + data
        )
    dash = b"--" + BOUNDARY.encode()
    return b"".join(dash + b"\r\n" + part + b"\r\n" for part in parts) + dash + b"--\r\n"


UPLOADS = [
    ("notes.md", "text/markdown", "# Notes\n\nOwls fly {}."),
    ("a.txt", "text/plain", "Plain {}"),
    ("page.html", "text/html", "<html><title>Page</title><body><p>{}</p></body></html>"),
]


def _upload(values: dict[str, Any]) -> bytes:
    filename, content_type, template = values["kind"]
    fields = {**values["other fields"]}
    if values["title"] is not ABSENT:
        fields["title"] = values["title"]
    content = values["content"]
    data = template.format(content).encode() if isinstance(content, str) else content
    file = (values["filename"] or filename, values["file type"] or content_type, data)
    return multipart(fields, file if values["file"] else None)


UPLOAD_BODY = Body(
    MULTIPART,
    {
        "kind": (st.sampled_from(UPLOADS), st.just(("doc.pdf", "application/pdf", "%PDF {}"))),
        "filename": (
            st.just(""),  # the kind's own
            st.sampled_from(["x.exe", "../.md", "a/b.md", 'a".md', "noextension", "doc.pdf"])
            | st.builds(
                lambda stem, ext: stem + ext, hostile_text, st.sampled_from([".md", ".txt"])
            ),
        ),
        "file type": (
            st.just(""),  # the kind's own
            st.sampled_from(["image/png", "text/plain; charset=\x00", "text/\ud800", "\r\nX: y"]),
        ),
        "content": (
            st.text(st.characters(codec="utf-8"), min_size=1, max_size=40),
            st.binary(max_size=60)
            | st.sampled_from(
                [
                    b"",
                    b"   ",
                    b"# Title\x00\n\nbody \x00 text",
                    b"<html><title>a&#0;b\x00</title><body>&#xd800; x\x00</body></html>",
                    b"%PDF-1.4\n%\x00\x00 not really",
                    "# \ud800 \udcff".encode("utf-8", "surrogatepass"),
                ]
            ),
        ),
        "title": (st.sampled_from([ABSENT, "", "My notes"]), hostile_text),
        "other fields": (st.just({}), st.dictionaries(hostile_text, hostile_text, max_size=2)),
        "file": (st.just(True), st.just(False)),
    },
    _upload,
)
