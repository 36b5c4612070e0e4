"""The knowledge base: documents a user uploaded, and Oracle's own guide, cut into passages.

A passage is a span of its document's text (`start`, `length`) with the heading it
sits under (`location`). The full-text index over passages is the database's own
(SQLite FTS5 or a PostgreSQL tsvector), created in migration 0002 and kept up to date
by the database itself as passages are written and deleted (knowledge/search.py).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class DocumentFormat(models.TextChoices):
    MARKDOWN = "markdown", "Markdown"
    TEXT = "text", "Text"
    HTML = "html", "HTML"
    PDF = "pdf", "PDF"
    IMAGE = "image", "Image"


class Document(models.Model):
    """An uploaded file's text. No owner means the built-in guide, which every user sees."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="documents",
    )
    title = models.CharField(max_length=200)
    filename = models.CharField(max_length=255)
    format = models.CharField(max_length=16, choices=DocumentFormat.choices)
    size = models.PositiveBigIntegerField(help_text="Bytes of the uploaded file.")
    text = models.TextField(help_text="The text extracted from the file.")
    passage_count = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the file.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One row per built-in file: two processes indexing the guide at once
            # cannot both add it.
            models.UniqueConstraint(
                fields=["filename"], condition=Q(owner__isnull=True), name="one_builtin_per_file"
            )
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def builtin(self) -> bool:
        """Shipped with Oracle (the user guide): shown to everyone, deleted by no one."""
        return self.owner_id is None

    @property
    def is_markdown(self) -> bool:
        """Its text is Markdown, shown rendered; any other format's is shown as it is."""
        return self.format == DocumentFormat.MARKDOWN

    @property
    def is_image(self) -> bool:
        """An image: its picture is a `DocumentImage`, its text a line saying what it is."""
        return self.format == DocumentFormat.IMAGE


class DocumentImage(models.Model):
    """The picture of an image document (`knowledge.images`): its bytes, checked to be an
    image of its MIME type, and its size in pixels. A table of its own, so that reading
    a document (its list, its page, search) never loads the bytes."""

    document = models.OneToOneField(
        Document, on_delete=models.CASCADE, primary_key=True, related_name="image"
    )
    data = models.BinaryField()
    media_type = models.CharField(max_length=32)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"{self.media_type}, {self.width}x{self.height}"


class Passage(models.Model):
    """A span of a document's text, the unit that search finds."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="passages")
    ordinal = models.PositiveIntegerField()
    start = models.PositiveIntegerField(help_text="Offset in the document's text.")
    length = models.PositiveIntegerField()
    location = models.CharField(
        max_length=300, blank=True, help_text="Its headings, outermost first."
    )
    text = models.TextField()

    class Meta:
        ordering = ["document", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="one_passage_per_ordinal")
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"
