from django.contrib import admin

from chat.models import Conversation, Message, Run


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ("seq", "role", "content", "termination_reason")
    readonly_fields = fields
    can_delete = False


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ("__str__", "owner", "skill", "updated_at")
    list_filter = ("skill",)
    search_fields = ("title", "owner__username")
    inlines = [MessageInline]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("id", "conversation", "status", "reason", "iterations", "tokens", "cost_usd")
    list_filter = ("status", "reason", "failure_class")
    readonly_fields = ("state",)
