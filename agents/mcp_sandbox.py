"""Where a stdio MCP server runs: inside bubblewrap (`bwrap`, a Debian package), so that
it can read neither the worker's environment nor Oracle's files.

A stdio server is a child of the worker and runs as the same user. With no more than a
scrubbed environment it could still read the worker's `/proc/<pid>/environ` (SECRET_KEY,
provider keys, DATABASE_URL) and open the database through `/proc/<pid>/fd`. In its
sandbox it has a PID namespace and a `/proc` of its own (no process of Oracle's exists
there), no capabilities, a session of its own (it cannot type into `ask`'s terminal),
and Oracle's private paths are hidden: an empty folder over each private folder (the
var folder: the SQLite database, the secret key file, the embedded Redis's socket,
the logs) and an empty file over each private file (`.env`, the MCP configuration with
every server's credentials, a database elsewhere). The rest of the filesystem is the
machine's, so a server's own program, folder and files work as before; its network is
the machine's too (servers fetch things).

Bubblewrap over a dedicated system user: it needs no account made by the operator
and no root, it hides the worker's processes entirely instead of relying on their
permissions, and Debian enables the unprivileged user namespaces it needs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

BWRAP = "bwrap"
# Always: its own processes and /proc, no System V IPC shared, its own session (no
# TIOCSTI into a terminal), no capabilities, and it ends with the process that started it.
BWRAP_OPTIONS = (
    "--bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--unshare-pid",
    "--unshare-ipc",
    "--new-session",
    "--die-with-parent",
    "--cap-drop", "ALL",
)  # fmt: skip


class SandboxRefused(Exception):
    """A stdio server that cannot be started in its sandbox, and why (in words)."""


@dataclass(frozen=True)
class Sandbox:
    """How stdio servers are started: `program` is bubblewrap's path ("" for none).
    `refused` says why no stdio server may start (contained was required and cannot be).
    `hidden_folders` get an empty folder over them, `hidden_files` an empty file."""

    program: str = ""
    hidden_folders: tuple[str, ...] = ()
    hidden_files: tuple[str, ...] = ()
    refused: str = ""

    @property
    def contained(self) -> bool:
        return bool(self.program)

    def arguments(self) -> list[str]:
        """bubblewrap's options, up to the `--` before a server's command."""
        hiding: list[str] = []
        for folder in self.hidden_folders:
            hiding += ["--tmpfs", folder]
        for file in self.hidden_files:
            if not _inside(file, self.hidden_folders):
                hiding += ["--ro-bind", os.devnull, file]
        return [*BWRAP_OPTIONS, *hiding, "--"]

    def command(
        self, command: str, args: list[str], *, path: str | None, cwd: str | None
    ) -> tuple[str, list[str]]:
        """The command and arguments that start a server: in its sandbox when there is
        one. Raises `SandboxRefused` when it cannot start there, saying why; `path` is
        the server's PATH, by which its command is found."""
        if self.refused:
            raise SandboxRefused(self.refused)
        if not self.contained:
            return command, args
        if cwd and os.sep in command and not os.path.isabs(command):
            command = os.path.join(cwd, command)  # as the server's folder finds it
        found = shutil.which(command, path=path)
        if found is None:
            # Said before bubblewrap starts, as it is said without it.
            raise FileNotFoundError(2, "No such file or directory", command)
        for what, where in (("its command", found), ("its cwd", cwd)):
            if where and _inside(where, self.hidden_folders + self.hidden_files):
                raise SandboxRefused(
                    f"{what} {where} is among Oracle's private files, which its sandbox "
                    "hides: move the server out of them"
                )
        return self.program, [*self.arguments(), found, *args]


NO_SANDBOX = Sandbox()


def bwrap_problem(sandbox: Sandbox, *, timeout: float = 10.0) -> str:
    """Why `sandbox` cannot start a process on this machine ("" when it can): bubblewrap
    missing, or refused the namespaces it needs (as in some containers)."""
    try:
        probe = subprocess.run(
            [sandbox.program, *sandbox.arguments(), "true"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={"PATH": os.environ.get("PATH", os.defpath)},
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"bubblewrap could not be run: {error}"
    if probe.returncode != 0:
        said = probe.stderr.strip().splitlines()[-1:] or [f"exit status {probe.returncode}"]
        return f"bubblewrap failed: {said[0][:300]}"
    return ""


def find_bwrap() -> str:
    """bubblewrap's path on this machine ("" when it is not installed)."""
    return shutil.which(BWRAP) or ""


def _inside(path: str, hidden: tuple[str, ...]) -> bool:
    resolved = Path(path).resolve()
    return any(resolved == Path(h) or Path(h) in resolved.parents for h in hidden)


SANDBOX_MODES = ("auto", "bwrap", "none")


def sandbox_for(
    mode: str, *, hidden_folders: tuple[str, ...] = (), hidden_files: tuple[str, ...] = ()
) -> tuple[Sandbox, str]:
    """The sandbox of ORACLE_MCP_SANDBOX's `mode`, and why stdio servers run uncontained
    under it ("" when they do not): "auto" contains them when bubblewrap works here,
    "bwrap" requires it (no stdio server starts without), "none" never contains them."""
    if mode not in SANDBOX_MODES:
        raise ValueError(f"ORACLE_MCP_SANDBOX must be auto, bwrap or none, not {mode!r}")
    if mode == "none":
        return NO_SANDBOX, "ORACLE_MCP_SANDBOX is none"
    sandbox = Sandbox(find_bwrap(), hidden_folders, hidden_files)
    if not sandbox.program:
        problem = "bubblewrap is not installed (apt-get install bubblewrap)"
    else:
        problem = bwrap_problem(sandbox)
    if not problem:
        return sandbox, ""
    if mode == "bwrap":
        return Sandbox(refused=f"ORACLE_MCP_SANDBOX is bwrap and {problem}"), problem
    return NO_SANDBOX, problem
