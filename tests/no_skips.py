"""A skipped test fails the run: a suite that skips its browser (or any other) tests
where Chromium or a server is missing would pass CI while testing less than it says."""

from __future__ import annotations

import pytest

_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _skipped:
        terminalreporter.write_line(
            f"{len(_skipped)} test(s) skipped, which fails the run: {', '.join(_skipped[:5])}",
            red=True,
        )
