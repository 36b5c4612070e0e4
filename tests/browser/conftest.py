"""Browser tests: a real daphne server on its own SQLite file, driven by Debian's Chromium.

`daphne_server` (session) serves the app on a free port; `browser_user` is an account
on it; `browser` is Playwright's Chromium; `page` is a fresh tab.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import processes

CHROMIUM = Path(os.environ.get("TEST_CHROMIUM", "/usr/bin/chromium-headless-shell"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives a real Chromium against a live server")


@dataclass(frozen=True)
class LiveServer:
    url: str
    env: dict[str, str]
    log: Path

    def create_user(self, username: str, password: str = PASSWORD) -> None:
        code = (
            "from django.contrib.auth.models import User; "
            f"User.objects.create_user({username!r}, password={password!r})"
        )
        done = processes.shell(code, env=self.env)
        assert done.returncode == 0, done.stderr


@contextmanager
def serving_daphne(directory: Path, **env: str) -> Iterator[LiveServer]:
    """daphne serving the app on a SQLite database of its own in `directory` (a copy of a
    migrated one), with `env` over the suite's environment; stopped afterwards."""
    database_url = processes.migrated_sqlite(directory / "db.sqlite3")
    environment = processes.base_env(DATABASE_URL=database_url, **env)
    port = processes.free_port()
    log = directory / "daphne.log"
    server = processes.start_daphne(port, environment, log)
    url = f"http://127.0.0.1:{port}"
    try:
        processes.wait_for(lambda: processes.get_status(f"{url}/login/") == 200, timeout=60)
        yield LiveServer(url=url, env=environment, log=log)
    finally:
        processes.close_shell(environment)
        processes.stop(server)


@pytest.fixture(scope="session")
def daphne_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """daphne serving the app, with a database of its own."""
    with serving_daphne(tmp_path_factory.mktemp("live-server"), DEBUG="True") as server:
        yield server


@pytest.fixture(scope="session")
def live_server_url(daphne_server: LiveServer) -> str:
    return daphne_server.url


class Chromium:
    """Debian's Chromium driven by Playwright, launched again if it has exited: a crash
    of the browser itself (seen once, on closing a context) must not fail every test
    left in the module. Anything else is Playwright's `Browser`."""

    def __init__(self, playwright: Any) -> None:
        self._playwright = playwright
        self._browser = self._launch()

    def _launch(self) -> Any:
        return self._playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)

    def new_context(self, **options: Any) -> Any:
        from playwright.sync_api import Error

        try:
            return self._browser.new_context(**options)
        except Error as error:
            if not _closed(error):
                raise
        self._browser = self._launch()
        return self._browser.new_context(**options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


def _closed(error: Exception) -> bool:
    """Whether Playwright said the browser (or the context) is gone."""
    return "has been closed" in str(error)


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (`Chromium`), closed afterwards."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"Browser tests need Chromium at {CHROMIUM}: install it with "
            "`sudo apt-get install chromium-headless-shell`.",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = Chromium(playwright)
        yield chromium
        try:
            chromium.close()
        except Exception as error:
            if not _closed(error):
                raise


class _Kept:
    """One Chromium for a run of browser modules, which a worker takes one after another
    (tests/schedule.py): launched by the first, closed after the last. Playwright's sync
    API holds an event loop while it runs, which must be gone before any asyncio test
    runs in this process: the browser is closed before any test that does not use it."""

    def __init__(self) -> None:
        self._open: ExitStack | None = None
        self._chromium: Any = None
        self.next_uses_it = False

    def chromium(self) -> Any:
        if self._open is None:
            self._open = ExitStack()
            self._chromium = self._open.enter_context(launched_chromium())
        return self._chromium

    def close(self) -> None:
        opened, self._open, self._chromium = self._open, None, None
        if opened is not None:
            opened.close()


_kept = _Kept()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Before a test's fixtures are torn down: whether the next test uses the browser."""
    _kept.next_uses_it = nextitem is not None and "browser" in getattr(nextitem, "fixturenames", ())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _kept.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for the module, kept for the next one if its next test uses it too."""
    try:
        yield _kept.chromium()
    finally:
        if not _kept.next_uses_it:
            _kept.close()


@pytest.fixture
def page(browser: Chromium) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    tab = context.new_page()
    yield tab
    try:
        context.close()
    except Exception as error:
        if not _closed(error):
            raise
        # The browser itself exited while closing a test that had passed: the next test
        # gets a new one (`Chromium.new_context`).
        warnings.warn("Chromium exited while closing the test's context", stacklevel=1)


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The whole product with no model configured, so the offline model answers (on a
    Redis database of its own: the session's stack may be running beside it)."""
    from tests.redis_dbs import SCALE_OUT_REDIS_DB
    from tests.stack import OracleStack

    oracle = OracleStack(
        tmp_path_factory.mktemp("offline"),
        redis_db=SCALE_OUT_REDIS_DB,
        ORACLE_MODEL="",
        ORACLE_MODELS="",
    )
    oracle.start()
    try:
        yield oracle
    finally:
        oracle.stop()


@pytest.fixture(scope="session")
def browser_user(daphne_server: LiveServer) -> str:
    """An account made once per session on the live server (its password is PASSWORD)."""
    daphne_server.create_user("browser-alice")
    return "browser-alice"


def sign_up(page: Any, live_server_url: str, username: str, password: str = PASSWORD) -> None:
    """Make an account through the sign-up page, which logs it in."""
    page.goto(f"{live_server_url}/signup/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password1]", password)
    page.fill("input[name=password2]", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/signup/" not in url)


def log_in(page: Any, live_server_url: str, username: str, password: str = PASSWORD) -> None:
    """Log in through the login page, as a person would."""
    page.goto(f"{live_server_url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)


LOOKS = (("desktop", (1280, 900)), ("phone", (390, 844)))


TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def each_look(page: Any, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """The page light and dark, on a desktop and a phone, one after the other: each time
    the screenshots folder and a name for the look ("dark-phone"). Back to light on a
    desktop after."""
    folder = Path(os.environ.get("ORACLE_VAR_DIR", tmp_path)) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for scheme in ("light", "dark"):
            # Reduced motion: the phone's sidebar folds away at once, not in a transition.
            page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
            for device, (width, height) in LOOKS:
                page.set_viewport_size({"width": width, "height": height})
                page.evaluate(TWO_FRAMES)
                yield folder, f"{scheme}-{device}"
    finally:
        page.emulate_media(color_scheme="light", reduced_motion="no-preference")
        page.set_viewport_size({"width": 1280, "height": 900})


_people = itertools.count(1)


def person(stack: Any, **settings: Any) -> tuple[str, Any]:
    """A new user of `stack` (with these settings, through the API): their name, and an
    API client of theirs."""
    name = f"reader-{next(_people)}"
    client = stack.client(stack.create_user(name))
    if settings:
        assert client.patch("/api/settings/", json=settings).status_code == 200
    return name, client


def start_conversation(page: Any, stack: Any, name: str, message: str) -> None:
    """Log `name` in and start a conversation with `message`, as a person would."""
    log_in(page, stack.url, name)
    page.click("text=New conversation")
    page.fill("#composer-input", message)
    page.press("#composer-input", "Enter")
    page.wait_for_selector(f".msg-user >> text={message}")
