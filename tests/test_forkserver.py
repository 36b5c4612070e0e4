"""The fork server the suite starts workers and `manage.py` commands from: each forked
command sees its own environment, arguments, folder and streams, and its exit code or
signal reaches the test as `subprocess` would give it."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from tests import forkserver, processes


def test_a_command_runs_with_its_own_environment_and_arguments():
    env = processes.base_env(ORACLE_FORK_PROBE="from the test")
    code = "import os, sys; print(os.environ['ORACLE_FORK_PROBE'], sys.argv[0], os.getcwd())"

    done = processes.manage("shell", "--no-imports", "-c", code, env=env)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["from", "the", "test", "manage.py", str(processes.ROOT)]


def test_a_failing_command_gives_its_exit_code_and_what_it_wrote_to_stderr():
    done = processes.manage("no_such_command")

    assert done.returncode == 1
    assert "Unknown command: 'no_such_command'" in done.stderr


def test_a_command_over_its_time_is_killed():
    with pytest.raises(subprocess.TimeoutExpired):
        processes.manage("shell", "--no-imports", "-c", "import time; time.sleep(60)", timeout=1)


def test_a_long_lived_process_is_signalled_and_waited_for_like_a_popen(tmp_path):
    log = tmp_path / "sleeper.log"
    with open(log, "wb") as output, open(os.devnull, "rb") as nothing:
        sleeper = forkserver.server().start(
            ["-c", "print('up', flush=True); import time; time.sleep(60)"],
            env=processes.base_env(), cwd=processes.ROOT,
            stdio=(nothing.fileno(), output.fileno(), output.fileno()),
        )  # fmt: skip
    processes.wait_for(lambda: log.read_text() == "up\n", 30)
    assert sleeper.poll() is None

    sleeper.send_signal(signal.SIGKILL)

    assert sleeper.wait(10) == -signal.SIGKILL
    assert sleeper.poll() == -signal.SIGKILL
