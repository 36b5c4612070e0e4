"""The tools a run offers the model: the built-in ones and the operator's (ORACLE_TOOLS)."""

from __future__ import annotations

from functools import cache

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from agents.builtin_tools import builtin_tools
from agents.tools import Tool, ToolRegistry


def run_tools() -> ToolRegistry:
    """A registry for one run: the built-in tools, then those named in ORACLE_TOOLS."""
    registry = builtin_tools()
    for tool in _extra_tools(tuple(settings.ORACLE_TOOLS)):
        registry.add(tool)
    return registry


@cache
def _extra_tools(paths: tuple[str, ...]) -> list[Tool]:
    return [Tool.from_function(import_string(path)) for path in paths]


@checks.register()
def check_tools(**_: object) -> list[checks.CheckMessage]:
    """Every ORACLE_TOOLS entry names a function that makes a tool, with a new name."""
    errors: list[checks.CheckMessage] = []
    names = set(builtin_tools().names())
    for path in settings.ORACLE_TOOLS:
        try:
            tool = Tool.from_function(import_string(path))
        except Exception as error:  # an import error, or a signature no tool can have
            message = f"ORACLE_TOOLS entry {path!r} is not a usable tool: {error}"
            errors.append(checks.Error(message, id="oracle.E010"))
            continue
        if tool.name in names:
            message = f"ORACLE_TOOLS entry {path!r}: a tool named {tool.name!r} exists already"
            errors.append(checks.Error(message, id="oracle.E011"))
        names.add(tool.name)
    return errors
