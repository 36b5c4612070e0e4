"""The operator's bounds on one tool call and on a run's helpers come from the
environment; a bad one stops the product at start with its name, not a traceback."""

from __future__ import annotations

from tests import processes

BOUNDS = (
    "ORACLE_TOOL_ARGUMENTS_MAX_BYTES",
    "ORACLE_SUBAGENTS_MAX_PER_RUN",
    "ORACLE_SUBAGENTS_MAX_DEPTH",
    "ORACLE_SUBAGENTS_MAX_CONCURRENT",
)
PRINT_BOUNDS = "from django.conf import settings; print(" + ", ".join(
    f"settings.{name}" for name in BOUNDS
) + ")"  # fmt: skip


def check(**env: str) -> tuple[int, str]:
    result = processes.manage("check", env=processes.base_env(**env))
    return result.returncode, result.stderr


def test_the_bounds_have_defaults_and_are_read_from_the_environment() -> None:
    def bounds(**env: str) -> str:
        result = processes.manage(
            "shell", "--no-imports", "-c", PRINT_BOUNDS, env=processes.base_env(**env)
        )
        return result.stdout.strip()

    assert bounds() == "65536 10 1 3"
    assert bounds(ORACLE_TOOL_ARGUMENTS_MAX_BYTES="200000", ORACLE_SUBAGENTS_MAX_PER_RUN="4",
                  ORACLE_SUBAGENTS_MAX_DEPTH="2", ORACLE_SUBAGENTS_MAX_CONCURRENT="1",
                  ) == "200000 4 2 1"  # fmt: skip


def test_a_bad_bound_stops_manage_py_check_with_its_name() -> None:
    code, stderr = check(ORACLE_TOOL_ARGUMENTS_MAX_BYTES="100")
    assert code != 0 and "ORACLE_TOOL_ARGUMENTS_MAX_BYTES must be at least 1024" in stderr
    code, stderr = check(ORACLE_SUBAGENTS_MAX_DEPTH="0")
    assert code != 0 and "ORACLE_SUBAGENTS_MAX_DEPTH must be at least 1." in stderr
    code, stderr = check(ORACLE_SUBAGENTS_MAX_CONCURRENT="two")
    assert code != 0 and "ORACLE_SUBAGENTS_MAX_CONCURRENT must be a whole number." in stderr
    assert "Traceback" not in stderr
