"""What Oracle knows of its MCP servers, and which of them each user switched off."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class McpServerStatus(models.Model):
    """A server as one worker found it: its state and its tools ({"name", "tool",
    "description", "approval", "why", "annotations", "grant"}). Each worker runs its own
    servers, so each writes its own row of each (`worker`: its Celery name; "" for a
    process that is no worker); the rows of a worker whose heartbeat stopped are left out
    and deleted. Pages and the API read them here: the web process starts no MCP server."""

    worker = models.CharField(max_length=200, blank=True, default="")
    name = models.CharField(max_length=32)
    transport = models.CharField(max_length=8)
    state = models.CharField(max_length=16)
    error = models.TextField(blank=True)
    problems = models.JSONField(default=list, blank=True)
    tools = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "worker"]
        constraints = [
            models.UniqueConstraint(fields=["worker", "name"], name="one_status_a_worker_a_server")
        ]

    def __str__(self) -> str:
        return f"MCP server {self.name} ({self.state}) on {self.worker or 'this process'}"


class ToolPreferences(models.Model):
    """A user's choices on the Tools page: the MCP servers their runs do not use."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tool_preferences"
    )
    disabled_servers = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"Tool preferences of {self.user}"
