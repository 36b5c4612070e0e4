"""Tools from typed functions, and the built-in calculator and clock."""

from __future__ import annotations

import json
import re

import pytest

from agents.builtin_tools import builtin_tools
from agents.tools import Tool, ToolRegistry


async def calc(expression: str) -> tuple[bool, str]:
    arguments = json.dumps({"expression": expression})
    result = await builtin_tools().run("c1", "calculator", arguments)
    return result.ok, result.content


@pytest.mark.parametrize(
    ("expression", "answer"),
    [
        ("17*23", "391"),
        ("(2 + 3) ^ 2", "25"),
        ("7 / 2", "3.5"),
        ("-4 + 10 // 3", "-1"),
        ("2 ** 10 % 1000", "24"),
    ],
)
async def test_the_calculator_computes_arithmetic(expression, answer):
    assert await calc(expression) == (True, answer)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1/0", "division by zero"),
        ("9 ** 9 ** 9", "too large"),
        ("__import__('os').system('true')", "only numbers and arithmetic operators"),
        ("x + 1", "only numbers and arithmetic operators"),
        ("2 +", "not an arithmetic expression"),
        ("", "empty"),
    ],
)
async def test_the_calculator_gives_an_error_result_for_bad_input(expression, message):
    ok, content = await calc(expression)
    assert ok is False
    assert message in content


async def test_current_time_tells_the_time_in_a_zone():
    tools = builtin_tools()
    utc = await tools.run("t1", "current_time", "{}")
    paris = await tools.run("t2", "current_time", '{"timezone": "Europe/Paris"}')
    nowhere = await tools.run("t3", "current_time", '{"timezone": "Mars/Olympus"}')

    assert utc.ok and re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(UTC", utc.content)
    assert paris.ok and "Europe/Paris" in paris.content
    assert not nowhere.ok and "unknown time zone" in nowhere.content


def test_a_tools_schema_comes_from_its_signature_and_docstring():
    def search(query: str, limit: int = 5, exact: bool | None = None) -> str:
        """Search the notes.

        Args:
            query: Words to look for.
            limit: How many results.
        """
        return query

    schema = Tool.from_function(search).schema["function"]

    assert schema["name"] == "search"
    assert schema["description"] == "Search the notes."
    assert schema["parameters"]["required"] == ["query"]
    assert schema["parameters"]["properties"] == {
        "query": {"type": "string", "description": "Words to look for."},
        "limit": {"type": "integer", "description": "How many results."},
        "exact": {"type": "boolean"},
    }
    assert ToolRegistry([Tool.from_function(search)]).names() == ["search"]
