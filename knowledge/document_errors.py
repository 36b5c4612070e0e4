"""What can be wrong with an uploaded file, each kind an exception whose message is for
the user, and the sizes those messages give in megabytes."""

from __future__ import annotations

import math

MEGABYTE = 1024 * 1024
# What a multipart body adds around the file (boundaries, headers, a title).
MULTIPART_ALLOWANCE = 64 * 1024


class DocumentError(ValueError):
    """A file that cannot become a document. The message is for the user; nothing was saved.

    `field` names the form field at fault (the API answers `{"errors": {field: [message]}}`).
    """

    field = "file"


class UnsupportedFile(DocumentError):
    """Not a kind of file Oracle reads, or not text where text was expected."""


class EmptyDocument(DocumentError):
    """An empty file, or one with no text in it (a scanned PDF)."""


class BrokenFile(DocumentError):
    """A file of a supported kind that cannot be read (a damaged or locked PDF)."""


class FileTooLarge(DocumentError):
    """Bigger than ORACLE_MAX_UPLOAD_BYTES."""

    def __init__(self, filename: str, size: int | None, limit: int) -> None:
        self.limit = limit
        what = f"is {megabytes(size, up=True)}" if size is not None else "is too big"
        super().__init__(f"{filename} {what}; files can be at most {megabytes(limit)}.")


class TooMuchText(DocumentError):
    """More text than a file of the allowed size can hold as plain text (a PDF whose
    compressed streams unpack to far more): refused rather than indexed for minutes."""

    def __init__(self, filename: str, length: int, limit: int) -> None:
        super().__init__(
            f"{filename} holds {length:,} characters of text; a document may hold at most "
            f"{limit:,}."
        )


class InvalidTitle(DocumentError):
    field = "title"


def megabytes(size: int | None, *, up: bool = False) -> str:
    """'5 MB', '7.3 MB', '0.5 MB'; `up` rounds up (a file just over 5 MB is "5.1 MB")."""
    tenths = (size or 0) / MEGABYTE * 10
    return f"{(math.ceil(tenths) if up else round(tenths)) / 10:g} MB"


def declared_too_large(content_length: str | None, what: str, limit: int) -> FileTooLarge | None:
    """The refusal of an upload whose declared length (its Content-Length) is more than
    a file of `limit` bytes in a multipart body: known before the body is read."""
    declared = content_length or "0"
    if declared.isdigit() and int(declared) > limit + MULTIPART_ALLOWANCE:
        return FileTooLarge(what, int(declared), limit)
    return None
