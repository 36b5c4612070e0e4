from __future__ import annotations

from django.apps import AppConfig


class ToolboxConfig(AppConfig):
    name = "toolbox"
    verbose_name = "Tools"

    def ready(self) -> None:
        from toolbox import checks  # noqa: F401  (registers the MCP configuration check)
