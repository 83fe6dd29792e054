"""The documentation site in a real browser (issue 45): the entry page and an API page load from ``file://`` with no
console error and nothing fetched from the network, and an internal link leads where it says.

The site is the one ``tests/docs`` builds (the session fixture ``docs_site`` of ``tests/docs/site_build.py``, imported
here: one build per session); the browser is ``tests/browser/conftest.py``'s.
"""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import PageLog
from tests.docs.site_build import Site, docs_site as docs_site

LOCAL = ("file:", "data:", "blob:", "about:")


def _open(page: Any, log: PageLog, url: str) -> None:
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    assert log.errors == [], f"{url}: console errors {log.errors}"
    outside = [request for request in log.requests if not request.startswith(LOCAL)]
    assert outside == [], f"{url}: requests outside the site {outside}"


def test_entry_page_loads_offline(docs_site: Site, page: tuple[Any, PageLog]) -> None:
    browser_page, log = page
    _open(browser_page, log, docs_site.page("index").as_uri())
    assert browser_page.locator("h1").first.inner_text().strip().rstrip("¶").strip() == "segmetrics-torch"
    assert any(request.endswith(".css") for request in log.requests)  # its own styles, from the site's folder


def test_api_page_loads_offline(docs_site: Site, page: tuple[Any, PageLog]) -> None:
    browser_page, log = page
    _open(browser_page, log, docs_site.page("reference/segmetrics_torch").as_uri())
    # the Metric's entry, found by its anchor (the inventory's name)
    entry = browser_page.locator('[id="segmetrics_torch.MAE"]')
    assert entry.count() == 1
    assert "MAE" in entry.inner_text()


def test_following_an_internal_link(docs_site: Site, page: tuple[Any, PageLog]) -> None:
    browser_page, log = page
    _open(browser_page, log, docs_site.page("index").as_uri())
    browser_page.locator('a[href="measures.html"]').first.click()
    browser_page.wait_for_load_state("load")
    assert browser_page.url.endswith("/measures.html")
    assert browser_page.locator("h1").first.inner_text().strip().rstrip("¶").strip() == "Measures"
    assert browser_page.locator("div.measure-table-foreground table").count() == 1
    assert log.errors == []
    assert all(request.startswith(LOCAL) for request in log.requests)
