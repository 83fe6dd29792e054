"""A real browser for the tests of what users look at (the HTML report, the documentation site).

Playwright for Python drives the system's Chromium (Debian's ``chromium`` package, ``apt-get install chromium``):
Playwright's own browser download is not reachable on these machines, and Playwright (unlike Selenium with
``chromium-driver``) can watch every request a page makes, which the "nothing fetched from the network" test needs.
Where the browser or Playwright is absent (a user's clone) the tests skip with the reason; with
``SEGMETRICS_REQUIRE_SHARED=1`` (CI) they fail instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: where the browser is looked for, first found wins (``SEGMETRICS_BROWSER`` is not read: one less variable)
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")


def _missing(reason: str) -> None:
    if os.environ.get("SEGMETRICS_REQUIRE_SHARED") == "1":
        pytest.fail(f"SEGMETRICS_REQUIRE_SHARED=1 but {reason}")
    pytest.skip(reason)


def browser_path() -> Path | None:
    """The system browser's executable, or None."""
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium (a Playwright ``Browser``), one per test session."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright is not installed (pip install playwright)")
    executable = browser_path()
    if executable is None:
        _missing("no Chromium on PATH (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


class PageLog:
    """What a page did: console messages of type error, uncaught exceptions, and every URL it requested."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, PageLog]]:
    """A fresh page (own context: no state between tests) and its :class:`PageLog`; any request that is not a
    ``file:``, ``data:``, ``blob:`` or ``about:`` URL is aborted (and logged), so an offline page stays offline."""
    context = browser.new_context()
    page = context.new_page()
    log = PageLog()
    page.on("console", lambda message: log.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: log.errors.append(str(error)))

    def route(route: Any) -> None:
        url = route.request.url
        log.requests.append(url)
        if url.split(":", 1)[0] in ("file", "data", "blob", "about"):
            route.continue_()
        else:
            route.abort()

    page.route("**/*", route)
    try:
        yield page, log
    finally:
        context.close()
