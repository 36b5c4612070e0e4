from django.contrib import admin

from knowledge.models import Document


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("title", "owner", "format", "size", "passage_count", "created_at")
    list_filter = ("format",)
    search_fields = ("title", "filename", "owner__username")
    readonly_fields = ("text", "content_hash", "passage_count", "size")
