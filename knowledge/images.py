"""Images as documents: PNG, JPEG, GIF and WebP, each checked with Pillow to be what its
name (or, without an extension, its content type) says. An image's document keeps its
bytes (`DocumentImage`) and, for its text, a line saying what it is ("Image lions.png
(lions), 640 by 480 PNG", with a multiplication sign): so it is listed, found by its
name and cited like any document, and no text is ever extracted from it.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import PurePath

from PIL import Image

from knowledge.document_errors import EmptyDocument, UnsupportedFile


@dataclass(frozen=True)
class ImageKind:
    """A kind of image Oracle takes: as people name it, its MIME type, its usual
    extension, and Pillow's name for it."""

    label: str
    media_type: str
    extension: str
    pillow: str


PNG = ImageKind("PNG", "image/png", ".png", "PNG")
JPEG = ImageKind("JPEG", "image/jpeg", ".jpg", "JPEG")
GIF = ImageKind("GIF", "image/gif", ".gif", "GIF")
WEBP = ImageKind("WebP", "image/webp", ".webp", "WEBP")
KINDS = (PNG, JPEG, GIF, WEBP)
EXTENSIONS = {".png": PNG, ".jpg": JPEG, ".jpeg": JPEG, ".gif": GIF, ".webp": WEBP}
MEDIA_TYPES = {kind.media_type: kind for kind in KINDS}
ACCEPTED = "an image (.png, .jpg, .gif, .webp)"
TIMES = "\u00d7"  # the sign between an image's width and height, as people write it
_BY_PILLOW = {kind.pillow: kind for kind in KINDS}


@dataclass(frozen=True)
class ImageFacts:
    """What Pillow found an image to be: its kind and its size in pixels."""

    kind: ImageKind
    width: int
    height: int

    def description(self, filename: str) -> str:
        """The image's document's text: "Image lions.png (lions), 640 by 480 PNG" (with the
        sign). The name's stem stands apart too: PostgreSQL's text search reads
        "lions.png" as one word, a file's name, and would not find it by "lions"."""
        stem = PurePath(filename).stem
        named = filename if stem in ("", filename) else f"{filename} ({stem})"
        return f"Image {named}, {self.width} {TIMES} {self.height} {self.kind.label}"


def image_kind(filename: str, content_type: str = "") -> ImageKind | None:
    """The kind of image a file says it is, by its extension, else (with none) by its
    content type; None for a file that is not named as an image."""
    suffix = PurePath(filename).suffix.lower()
    if suffix:
        return EXTENSIONS.get(suffix)
    return MEDIA_TYPES.get(content_type.split(";")[0].strip().lower())


def inspect_image(data: bytes, *, filename: str, kind: ImageKind) -> ImageFacts:
    """The image's kind and size, read by Pillow from its header and checked (`verify`)
    without decoding its pixels. `UnsupportedFile`, with a message for the user, for
    bytes that are not an image of `kind` (or of any kind Oracle takes), or an image
    with more pixels than Pillow will open; `EmptyDocument` for no bytes at all."""
    if not data:
        raise EmptyDocument(f"{filename} is empty.")
    try:
        with warnings.catch_warnings():
            # More pixels than Pillow's limit (about 89 million): a decompression bomb.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=list(_BY_PILLOW)) as image:
                found, (width, height) = image.format, image.size
                image.verify()
    except (Image.DecompressionBombWarning, Image.DecompressionBombError):
        raise UnsupportedFile(
            f"{filename} has too many pixels for Oracle to take: make it smaller and "
            "upload it again."
        ) from None
    except Exception:  # Pillow raises many kinds for bytes that are not a sound image
        raise UnsupportedFile(
            f"{filename} is not a {kind.label} image: Oracle could not read it as one "
            "(a damaged file, or another kind of file renamed)."
        ) from None
    actual = _BY_PILLOW[str(found)]
    if actual is not kind:
        raise UnsupportedFile(
            f"{filename} is a {actual.label} image, not a {kind.label} one: name it "
            f"{PurePath(filename).stem}{actual.extension} and upload it again."
        )
    return ImageFacts(actual, width, height)
