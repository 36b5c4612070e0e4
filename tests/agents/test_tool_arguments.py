"""A tool's parameters: from a signature and docstring, or from a JSON Schema."""

from __future__ import annotations

import pytest

from agents.tool_arguments import arg_descriptions, base_type, fits, schema_validator


def test_it_reads_the_descriptions_under_args_and_stops_at_the_blank_line():
    doc = """Look a word up.

    Args:
        word: the word to look up
        limit: how many senses: at most

    Returns: the senses.
    """

    assert arg_descriptions(doc) == {
        "word": "the word to look up",
        "limit": "how many senses: at most",
    }


def test_an_optional_type_is_its_base_type_and_other_types_are_refused():
    assert base_type(int | None) is int
    assert base_type(str) is str
    with pytest.raises(TypeError, match="unsupported tool parameter type"):
        base_type(list[str])


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [(3, float, True), (3.5, int, False), (True, int, False), (None, str, False), ("a", str, True)],
)
def test_a_value_fits_its_json_type_and_a_bool_is_no_number(value, kind, expected):
    assert fits(value, kind) is expected


def test_a_schema_check_names_where_the_arguments_break_it():
    check = schema_validator(
        {
            "type": "object",
            "properties": {"page": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            "required": ["page"],
        }
    )

    assert check({"page": {"n": 2}}) is None
    assert check({"page": {"n": "two"}}) == "page/n: 'two' is not of type 'integer'"
    assert check({}) == "'page' is a required property"
