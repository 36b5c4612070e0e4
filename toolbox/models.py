"""What Oracle knows of its MCP servers, and which of them each user switched off."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class McpServerStatus(models.Model):
    """A server as the last worker to reach it found it: its state and its tools
    ({"name", "tool", "description", "approval", "why", "annotations", "grant"}).
    Pages and the API read it here: the web process starts no MCP server of its own."""

    name = models.CharField(max_length=32, primary_key=True)
    transport = models.CharField(max_length=8)
    state = models.CharField(max_length=16)
    error = models.TextField(blank=True)
    problems = models.JSONField(default=list, blank=True)
    tools = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"MCP server {self.name} ({self.state})"


class ToolPreferences(models.Model):
    """A user's choices on the Tools page: the MCP servers their runs do not use."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tool_preferences"
    )
    disabled_servers = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"Tool preferences of {self.user}"
