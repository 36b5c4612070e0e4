"""The built-in tools: `calculator` and `current_time` (SPEC section 8)."""

from __future__ import annotations

import ast
import math
import operator
import typing
from collections.abc import Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agents.tools import Tool, ToolError, ToolRegistry

_MAX_EXPRESSION_LENGTH = 500
_MAX_EXPONENT = 1_000
_MAX_MAGNITUDE = 10**100

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression and return the result.

    Supports + - * / // % ** (or ^) and parentheses on numbers.

    Args:
        expression: The arithmetic to compute, e.g. "17*23" or "(2+3)^2".
    """
    text = expression.strip().replace("^", "**").replace("\u00d7", "*").replace("\u00f7", "/")
    if not text:
        raise ToolError("the expression is empty")
    if len(text) > _MAX_EXPRESSION_LENGTH:
        raise ToolError(f"the expression is longer than {_MAX_EXPRESSION_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ToolError(f"not an arithmetic expression: {expression!r}") from None
    value = _evaluate(tree.body)
    if isinstance(value, float):
        # Twelve significant digits: 27 ** (1/3) is 3, not 3.0000000000000004.
        value = float(f"{value:.12g}")
        if value.is_integer() and abs(value) < 2**53:
            value = int(value)
    return str(value)


def _evaluate(node: ast.expr) -> float:
    # Walk only arithmetic nodes: names, calls and attributes are refused, never evaluated.
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return typing.cast(float, node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > _MAX_EXPONENT or abs(left) > 10**6):
            raise ToolError("the exponent or its base is too large")
        try:
            result = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ToolError("division by zero") from None
        except OverflowError:
            raise ToolError("the result is too large") from None
        if isinstance(result, complex):
            raise ToolError("the result is not a real number")
        if abs(result) > _MAX_MAGNITUDE or (isinstance(result, float) and math.isinf(result)):
            raise ToolError("the result is too large")
        return result
    raise ToolError(f"only numbers and arithmetic operators are allowed, not {_describe(node)}")


def _describe(node: ast.expr) -> str:
    return type(node).__name__.lower()


def current_time(timezone: str = "UTC", days: int = 0) -> str:
    """Tell the current date and time, or the date some days before or after today.

    Args:
        timezone: An IANA time zone name such as "Europe/Paris"; UTC by default.
        days: Days from now: -3 for three days ago, 1 for tomorrow; 0 by default.
    """
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(f"unknown time zone: {timezone!r}") from None
    if abs(days) > 365_000:
        raise ToolError("days must be within a thousand years of today")
    when = datetime.now(zone) + timedelta(days=days)
    return when.strftime(f"%Y-%m-%d %H:%M:%S ({timezone}, %A)")


def builtin_tools() -> ToolRegistry:
    """A registry with the built-in tools."""
    return ToolRegistry(
        [
            Tool.from_function(calculator, inline=True),
            Tool.from_function(current_time, inline=True),
        ]
    )
