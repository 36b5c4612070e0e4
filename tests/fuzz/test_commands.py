"""Every argument of the project's management commands under arbitrary values, in this
process (call_command): a command either goes ahead or stops with a usage error that
says what is wrong (CommandError, or exit status 2 with a message), never with a
traceback, and a refused command changes no row at all.

The table must name every argument of every command the project defines: a new flag
without an entry here fails `test_every_command_argument_is_fuzzed`. `serve` is fuzzed
up to where it would start the servers; `seed_runs` adds at most a few runs."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from random import Random
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import ApiToken
from agents.config import FIELDS_BY_NAME
from agents.offline_model import OFFLINE_MODEL_NAME
from agents.skills import skill_names
from dashboard.management.commands import seed_runs as seed_runs_command
from dashboard.management.commands.seed_runs import MAX_DAYS
from dashboard.seeding import seed_runs
from ops.management.commands import serve as serve_command
from runs.management.commands.ask import FLAGS
from settings_ui.models import AgentSettings
from tests.fuzz.strategies import (
    ABSENT,
    Part,
    Parts,
    fuzzing,
    hostile_text,
    huge_ints,
    mixed,
    setting_values,
)
from tests.fuzz.world import is_project_module, snapshot

pytestmark = pytest.mark.django_db

numbers = st.one_of(
    st.integers(-3, 0).map(str),
    huge_ints.map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    hostile_text,
)
FLAG: Part = (st.sampled_from([ABSENT, True]), st.just("1") | hostile_text)  # "--flag=1"


def optional(good: st.SearchStrategy[str], hostile: st.SearchStrategy[str] = numbers) -> Part:
    """An option: left out or a good value; or a hostile one."""
    return (st.just(ABSENT) | good, hostile)


def required(good: st.SearchStrategy[str], hostile: st.SearchStrategy[str] = numbers) -> Part:
    """A positional argument: a good value; or left out, or a hostile one."""
    return (good, st.just(ABSENT) | hostile)


def setting(flag: str) -> Part:
    """A flag of `ask` that sets a field of AgentConfig: good values within its bounds."""
    return optional(setting_values(FIELDS_BY_NAME[FLAGS[flag]]).map(str))


def ints(low: int, high: int) -> st.SearchStrategy[str]:
    return st.integers(low, high).map(str)


@dataclass(frozen=True)
class Fuzzed:
    """How to fuzz one command: how many examples it is worth, and each argument's good
    and hostile values (a flag's value is True when given, ABSENT when not)."""

    examples: int
    arguments: Parts


users = st.sampled_from(["alice", "bob"])
COMMANDS = {
    "ask": Fuzzed(
        50,
        {
            "question": required(st.sampled_from(["What is 2+2?", "hi"]), hostile_text),
            "--json": FLAG,
            "--user": optional(users, hostile_text),
            "--unlimited": (st.just(ABSENT), FLAG[0] | FLAG[1]),  # or --max-iterations
            "--limit-action": optional(setting_values(FIELDS_BY_NAME["limit_action"])),
            "--skill": optional(st.sampled_from(skill_names()), hostile_text),
            "--model": optional(st.sampled_from(["", OFFLINE_MODEL_NAME]), hostile_text),
            # No MCP server is configured here: any name is refused.
            "--mcp-servers": (st.just(ABSENT), hostile_text),
            "--no-mcp": FLAG,
            "--approve-all": FLAG,
            "--list-tools": (st.just(ABSENT), FLAG[0] | FLAG[1]),  # not with a question
            **{
                f"--{flag.replace('_', '-')}": setting(flag)
                for flag in FLAGS
                if flag not in ("limit_action", "model")
            },
        },
    ),
    "create_api_token": Fuzzed(
        25,
        {
            "username": required(users, hostile_text),
            "--name": optional(st.text(max_size=20), hostile_text),
        },
    ),
    "seed_runs": Fuzzed(
        25,
        {
            "count": required(ints(0, 3)),
            "--days": optional(ints(1, MAX_DAYS)),
            "--seed": optional(huge_ints.map(str)),
            "--no-measure": FLAG,
        },
    ),
    "serve": Fuzzed(
        25,
        {
            "--host": optional(
                st.sampled_from(["127.0.0.1", "0.0.0.0", "localhost"]), hostile_text
            ),
            "--port": optional(ints(1, 65535)),
            "--concurrency": optional(ints(1, 8)),
            "--web-processes": optional(ints(1, 4)),
            "--workers": optional(ints(1, 4)),
        },
    ),
}
ORDER = {
    "other arguments": (
        st.just([]),
        st.lists(st.sampled_from(["--nope", "-x", "--", "-"]) | hostile_text, max_size=2),
    ),
    "--flag=value": (st.booleans(), st.booleans()),
    "shuffled": (st.just(False), st.just(True)),
}


def own_arguments(name: str, app: str) -> set[str]:
    """The command's arguments (positionals by name, options by their long flag), less
    those every Django command has."""
    common = {action.dest for action in BaseCommand().create_parser("", "")._actions}
    parser = load_command_class(app, name).create_parser("manage.py", name)
    return {
        max(action.option_strings, key=len) if action.option_strings else action.dest
        for action in parser._actions
        if action.dest not in common
    }


def test_every_command_argument_is_fuzzed() -> None:
    commands = {name: app for name, app in get_commands().items() if is_project_module(app)}
    found = {name: own_arguments(name, app) for name, app in commands.items()}
    assert found == {name: set(command.arguments) for name, command in COMMANDS.items()}


def command_line(name: str, values: dict[str, Any], shuffle: Random) -> list[str]:
    """The arguments given (each flag with its value), maybe in another order."""
    given: list[list[str]] = []
    for argument in COMMANDS[name].arguments:
        value = values[argument]
        if value is ABSENT:
            continue
        if not argument.startswith("--"):
            given.append([value])
        elif value is True:
            given.append([argument])
        elif values["--flag=value"]:
            given.append([f"{argument}={value}"])
        else:
            given.append([argument, value])
    if values["shuffled"]:
        shuffle.shuffle(given)
    other: list[str] = values["other arguments"]
    return [word for argument in given for word in argument] + other


class Started(Exception):
    """`serve` got past its checks: it would migrate and start the servers now."""


@pytest.fixture
def harmless(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`serve` stops where it would start anything; `seed_runs` adds at most 3 runs and
    measures nothing."""

    def start(*args: Any, **kwargs: Any) -> None:
        raise Started

    no_signals = SimpleNamespace(signal=lambda *args: None, SIGINT=2, SIGTERM=15)
    monkeypatch.setattr(serve_command, "call_command", start)
    monkeypatch.setattr(serve_command, "signal", no_signals)
    monkeypatch.setattr(
        seed_runs_command, "seed_runs", lambda count, **kw: seed_runs(min(count, 3), **kw)
    )
    monkeypatch.setattr(seed_runs_command.Command, "measure", lambda self: None)
    yield


def run(name: str, argv: list[str]) -> str:
    """ "ran", or "refused" after checking that it says why and changed nothing."""
    stderr = io.StringIO()
    with transaction.atomic():  # rolled back: every example meets the same database
        before = snapshot()
        try:
            call_command(name, *argv, stdout=io.StringIO(), stderr=stderr)
            outcome = "ran"
        except Started:
            outcome = "ran"
        except CommandError as error:
            assert str(error).strip(), "a usage error without a message"
            outcome = "refused"
        except SystemExit as exit_:
            assert exit_.code in (1, 2), exit_.code
            outcome = "ran" if exit_.code == 1 else "refused"  # ask: 1 is a run that stopped
            assert outcome == "ran" or stderr.getvalue().strip(), "exit 2 without a message"
        if outcome == "refused":
            assert snapshot() == before, f"a refused {name} changed the database"
        transaction.set_rollback(True)
    return outcome


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_command_line_fails_nor_changes_anything_when_refused(
    alice: User, bob: User, harmless: None, name: str
) -> None:
    @fuzzing(COMMANDS[name].examples)
    @given(values=mixed({**COMMANDS[name].arguments, **ORDER}), shuffle=st.randoms())
    def fuzz(values: dict[str, Any], shuffle: Random) -> None:
        run(name, command_line(name, values, shuffle))

    fuzz()


def test_create_api_token_refuses_a_name_the_database_cannot_hold(alice: User) -> None:
    """Found by fuzzing: a username or token name with a lone surrogate (how Python reads
    a byte that is not UTF-8 on a command line) or a NUL was a traceback."""
    for argv in (["\udcff"], ["a\x00"], ["alice", "--name", "\udcff"], ["alice", "--name=\x00"]):
        with pytest.raises(CommandError):
            call_command("create_api_token", *argv, stdout=io.StringIO())
    assert not ApiToken.objects.exists()


def test_ask_refuses_a_user_the_database_cannot_hold() -> None:
    with pytest.raises(CommandError, match="no user named"):
        call_command("ask", "hi", "--user", "\udcff", stdout=io.StringIO())


def test_ask_with_a_bad_flag_stores_no_settings(alice: User) -> None:
    """Found by fuzzing (`ask "What is 2+2?" --user=alice --max-parallel-tools=0`): a
    user's first run stores their settings, and a refused one did too."""
    before = list(AgentSettings.objects.values())  # alice's, stored with her account
    with pytest.raises(CommandError, match="--max-parallel-tools=0"):
        call_command("ask", "hi", "--user", "alice", "--max-parallel-tools=0")
    assert list(AgentSettings.objects.values()) == before


@pytest.mark.parametrize("days", ["0", str(MAX_DAYS + 1), "1093214"])
def test_seed_runs_refuses_days_out_of_range(days: str) -> None:
    """Found by fuzzing (`seed_runs 1 --days=1093214`): days before the year 1 were an
    OverflowError, after the users were made."""
    stderr = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("seed_runs", "1", "--days", days, stderr=stderr)
    assert exit_.value.code == 2
    assert "--days" in stderr.getvalue()
    assert not User.objects.exists()
