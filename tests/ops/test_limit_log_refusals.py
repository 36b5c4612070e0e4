"""A tool call refused at one of the operator's bounds is a line of the limit log: the
tool, why, and the figure that passed its limit."""

from __future__ import annotations

from ops import limit_log
from tests.ops.test_limit_log import Lines, alices_run, recorder_of
from tests.ops.test_limit_log import lines as lines  # the fixture

REFUSED = {
    "type": "tool.refused", "id": "c4", "name": "write_note", "reason": "arguments_too_large",
    "metric": "argument_bytes", "value": 100_017, "limit": 65_536,
}  # fmt: skip


async def test_a_refused_call_is_logged_with_its_reason_and_figures(lines: Lines) -> None:
    recorder = recorder_of(alices_run())
    result = {"type": "tool.result", "id": "c4", "name": "write_note", "ok": False,
              "content": "Error: not run: this call's arguments are over the limit"}  # fmt: skip

    await recorder(dict(result))
    await recorder(dict(REFUSED))

    (line,) = lines()
    assert (line["event"], line["tool"], line["reason"]) == (
        "tool.refused", "write_note", "arguments_too_large",
    )  # fmt: skip
    assert (line["metric"], line["value"], line["limit"]) == ("argument_bytes", 100_017, 65_536)
    assert line["agent_type"] == "oracle" and line["user"]["username"] == "alice"


def test_a_refusal_reads_as_one_line_for_a_person() -> None:
    line = limit_log.build_line(alices_run(), {**REFUSED, "seq": 5}, {})

    assert line is not None
    assert limit_log._message(line) == (
        "tool.refused oracle argument_bytes 100017/65536 arguments_too_large"
    )
