"""Tools: typed Python functions offered to the model, with their JSON schema.

A tool that raises, or is called with bad arguments, gives an error result to
the model; it never crashes the run.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agents.config import TOOL_ARGUMENTS_MAX_BYTES
from agents.tool_arguments import (
    JSON_TYPES,
    Param,
    arg_descriptions,
    base_type,
    fits,
    schema_validator,
    too_large,
)
from agents.tool_outcomes import Refusal as Refusal
from agents.tool_outcomes import ToolError as ToolError
from agents.tool_outcomes import ToolOutput as ToolOutput
from agents.tool_outcomes import ToolRefused as ToolRefused
from agents.tool_outcomes import ToolResult as ToolResult
from agents.tool_threads import in_own_thread as in_own_thread


def function_schema(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """A tool as a request carries it (the OpenAI shape every provider is sent)."""
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


@dataclass(frozen=True)
class Tool:
    """A callable the model may use. Build one with `Tool.from_function`."""

    name: str
    description: str
    schema: dict[str, Any]
    function: Callable[..., Any]
    params: tuple[Param, ...]
    is_async: bool
    inline: bool
    server: str = ""  # the MCP server it comes from ("" for Oracle's own tools)
    needs_approval: bool = False  # a call waits for the user's Approve or Deny
    # Running it twice does no more than once: a call cut by a lost worker runs again
    # (a function says so with an attribute `idempotent = True`).
    idempotent: bool = False
    # What an "Always allow" of it is bound to ([server, tool, fingerprint]; MCP tools).
    grant: list[str] | None = None
    # Checks arguments against a JSON Schema (MCP tools) instead of `params`.
    validator: Callable[[Mapping[str, Any]], str | None] | None = None

    @classmethod
    def from_function(
        cls, function: Callable[..., Any], *, name: str | None = None, inline: bool = False
    ) -> Tool:
        """Describe `function` from its signature and docstring.

        Parameters must be str, int, float or bool (optionally `X | None` with a
        default). The docstring's first paragraph is the description; lines
        `name: text` under `Args:` describe the parameters. Sync functions run in
        a thread of their own (`in_own_thread`) unless `inline` (for quick,
        CPU-bounded work).
        """
        hints = typing.get_type_hints(function)
        descriptions = arg_descriptions(function.__doc__ or "")
        properties: dict[str, Any] = {}
        required: list[str] = []
        params: list[Param] = []
        for param in inspect.signature(function).parameters.values():
            kind = base_type(hints[param.name])
            has_default = param.default is not inspect.Parameter.empty
            prop: dict[str, Any] = {"type": JSON_TYPES[kind]}
            if param.name in descriptions:
                prop["description"] = descriptions[param.name]
            properties[param.name] = prop
            if not has_default:
                required.append(param.name)
            params.append(Param(param.name, kind, not has_default))
        tool_name = name or function.__name__
        description = (function.__doc__ or tool_name).strip().split("\n\n")[0]
        description = " ".join(description.split())
        parameters = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        return cls(
            name=tool_name,
            description=description,
            schema=function_schema(tool_name, description, parameters),
            function=function,
            params=tuple(params),
            is_async=inspect.iscoroutinefunction(function),
            inline=inline,
            idempotent=getattr(function, "idempotent", False) is True,
        )

    @classmethod
    def from_schema(
        cls,
        *,
        name: str,
        description: str,
        parameters: dict[str, Any],
        function: Callable[..., Any],
        server: str = "",
        needs_approval: bool = False,
        grant: list[str] | None = None,
        idempotent: bool = False,
    ) -> Tool:
        """A tool described by a JSON Schema of its parameters (an MCP server's tool);
        `function` is async and takes the arguments as keywords."""
        return cls(
            name=name,
            description=description,
            schema=function_schema(name, description, parameters),
            function=function,
            params=(),
            is_async=True,
            inline=False,
            server=server,
            needs_approval=needs_approval,
            grant=grant,
            idempotent=idempotent,
            validator=schema_validator(parameters),
        )

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None:
        """Return what is wrong with `arguments`, or None when they fit the signature."""
        if self.validator is not None:
            return self.validator(arguments)
        known = {param.name for param in self.params}
        unknown = sorted(set(arguments) - known)
        if unknown:
            return f"unknown argument(s): {', '.join(unknown)}"
        for param in self.params:
            if param.name not in arguments:
                if param.required:
                    return f"missing argument: {param.name}"
                continue
            if not fits(arguments[param.name], param.kind):
                expected = JSON_TYPES[param.kind]
                return f"argument {param.name} must be a {expected}"
        return None

    async def call(self, arguments: Mapping[str, Any]) -> Any:
        """Run the tool with checked arguments."""
        if self.is_async:
            return await self.function(**arguments)
        if self.inline:
            return self.function(**arguments)
        return await in_own_thread(self.function, arguments, name=f"tool {self.name}")


class ToolRegistry:
    """The tools a run may use, by name; a call whose arguments pass
    `max_argument_bytes` is refused before they are read."""

    def __init__(
        self, tools: Iterable[Tool] = (), *, max_argument_bytes: int = TOOL_ARGUMENTS_MAX_BYTES
    ) -> None:
        self.max_argument_bytes = max_argument_bytes
        self._tools: dict[str, Tool] = {}
        self._schemas: list[dict[str, Any]] = []
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        """Offer another tool."""
        self._tools[tool.name] = tool
        self._schemas = [t.schema for t in self._tools.values()]

    def register(self, function: Callable[..., Any] | None = None, *, inline: bool = False) -> Any:
        """Decorator form of `add`: `@registry.register` over a typed function."""

        def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add(Tool.from_function(fn, inline=inline))
            return fn

        return wrap(function) if function is not None else wrap

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style tool schemas, built once."""
        return self._schemas

    def names(self) -> list[str]:
        """Names of the tools offered."""
        return list(self._tools)

    def runs_inline(self, name: str) -> bool:
        """Whether a call of `name` runs to its end in the caller's thread without awaiting.

        True for an inline tool and for a name with no tool (that call is an error
        result at once); nothing could interrupt such a call midway.
        """
        tool = self._tools.get(name)
        return tool is None or (tool.inline and not tool.is_async)

    async def run(self, call_id: str, name: str, raw_arguments: str) -> ToolResult:
        """Run one call; every failure becomes an error result the model can read. Arguments
        over `max_argument_bytes` are refused unread (not parsed, nothing run)."""
        size, limit = len(raw_arguments.encode("utf-8", "surrogatepass")), self.max_argument_bytes
        if size > limit:
            refusal = Refusal("arguments_too_large", "argument_bytes", size, limit)
            return ToolResult(call_id, name, {}, False, too_large(size, limit), refusal=refusal)
        try:
            arguments = json.loads(raw_arguments) if raw_arguments.strip() else {}
        except json.JSONDecodeError as error:
            return ToolResult(call_id, name, {}, False, f"Error: arguments are not JSON ({error})")
        if not isinstance(arguments, dict):
            return ToolResult(call_id, name, {}, False, "Error: arguments must be a JSON object")
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            message = f"Error: there is no tool named {name!r} (tools: {known})"
            return ToolResult(call_id, name, arguments, False, message)
        problem = tool.check_arguments(arguments)
        if problem is not None:
            return ToolResult(call_id, name, arguments, False, f"Error: {problem}")
        try:
            output = await tool.call(arguments)
        except ToolRefused as error:
            message = f"Error: {error}"
            return ToolResult(call_id, name, arguments, False, message, refusal=error.refusal)
        except ToolError as error:
            return ToolResult(call_id, name, arguments, False, f"Error: {error}")
        except Exception as error:
            # A broken tool must not end the run; the model reads the error instead.
            message = f"Error: {type(error).__name__}: {error}"
            return ToolResult(call_id, name, arguments, False, message)
        if isinstance(output, ToolOutput):
            text = output.text if output.ok else f"Error: {output.text}"
            return ToolResult(call_id, name, arguments, output.ok, text, tuple(output.attachments))
        return ToolResult(call_id, name, arguments, True, _to_text(output))

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, if offered."""
        return self._tools.get(name)

    def tools(self) -> list[Tool]:
        """Every tool offered, in order."""
        return list(self._tools.values())


def _to_text(output: object) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(output, default=str)
