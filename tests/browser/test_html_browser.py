"""The HTML error browser in a real browser (Chromium driven by Playwright, fixtures of conftest.py): it loads from
``file://`` with no console error, sorts and filters, the worst-k control changes the gallery, the overlays load,
nothing is fetched from the network, and hostile names stay text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import PageLog
from tests.reports.html_run import HOSTILE_DATASET, HOSTILE_STEM, SCRIPT_STEM, STEMS, write_run


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("html")
    return write_run(root)


def _open(page: Any, report: Path) -> None:
    page.goto(report.as_uri())
    page.wait_for_load_state("load")


def test_loads_without_errors_and_offline(page: tuple[Any, PageLog], report: Path) -> None:
    browser_page, log = page
    _open(browser_page, report)
    assert log.errors == []
    assert log.requests, "the page's own requests are logged"
    assert all(url.split(":", 1)[0] in ("file", "data") for url in log.requests), log.requests
    assert browser_page.title() == "foreground <b>run</b>"
    # the script ran (a console-silent failure would leave these empty)
    assert browser_page.locator("#shown").text_content() == f"{2 * len(STEMS)} of {2 * len(STEMS)} rows"
    assert browser_page.locator("#gallery .card").count() > 0


def test_header_click_sorts_rows(page: tuple[Any, PageLog], report: Path) -> None:
    browser_page, log = page
    _open(browser_page, report)
    column = "#per-image-table tbody tr td:nth-child(4)"  # the first measure column: S-measure

    def values() -> list[float]:
        return [float(x) for x in browser_page.locator(column).all_text_contents()]

    before = values()
    browser_page.locator("#per-image-table th[data-col='3'] button").click()
    ascending = values()
    assert ascending == sorted(before) and ascending != before
    browser_page.locator("#per-image-table th[data-col='3'] button").click()
    assert values() == sorted(before, reverse=True)
    names = browser_page.locator("#per-image-table tbody tr td:nth-child(3)")
    browser_page.locator("#per-image-table th[data-col='2'] button").click()
    assert names.all_text_contents() == sorted(names.all_text_contents())
    assert log.errors == []


def test_filter_by_name(page: tuple[Any, PageLog], report: Path) -> None:
    browser_page, _ = page
    _open(browser_page, report)
    browser_page.fill("#filter", "a_001")
    visible = browser_page.locator("#per-image-table tbody tr:not([hidden]) td:nth-child(3)").all_text_contents()
    assert visible == ["a_001", "a_001"]  # one row per method


def test_worst_k_changes_gallery(page: tuple[Any, PageLog], report: Path) -> None:
    browser_page, log = page
    _open(browser_page, report)
    cards = browser_page.locator("#gallery .card")
    browser_page.fill("#worst-k", "2")
    assert cards.count() == 2
    browser_page.fill("#worst-k", "5")
    assert cards.count() == 5
    browser_page.fill("#worst-k", "50")  # more than there are images: all of them
    assert cards.count() == len(STEMS)
    browser_page.select_option("#worst-method", "bad")
    browser_page.select_option("#worst-measure", "mae")
    browser_page.fill("#worst-k", "1")
    assert cards.count() == 1
    assert HOSTILE_STEM in cards.first.locator("h4").text_content()  # the worst MAE of "bad" is the hostile image
    assert log.errors == []


def test_overlays_present_and_loaded(page: tuple[Any, PageLog], report: Path) -> None:
    browser_page, log = page
    _open(browser_page, report)
    browser_page.fill("#worst-k", "3")
    overlays = browser_page.locator("#gallery img[alt*='errors']")
    assert overlays.count() == 3
    browser_page.wait_for_function("() => Array.from(document.images).every(img => img.complete)", timeout=10_000)
    widths = browser_page.eval_on_selector_all(
        "#gallery img, #side img, #distributions img", "imgs => imgs.map(img => img.naturalWidth)"
    )
    assert len(widths) >= 3 + 6 and all(w > 0 for w in widths), widths
    # side by side: every method's prediction and overlay of one image
    assert browser_page.locator("#side img[alt*='errors']").count() == 2
    assert log.errors == []


def test_hostile_names_are_text(page: tuple[Any, PageLog], report: Path) -> None:
    browser_page, log = page
    _open(browser_page, report)
    browser_page.fill("#worst-k", "20")
    assert browser_page.evaluate("() => window.__xss") is None
    body = browser_page.locator("body").inner_text()
    assert HOSTILE_STEM in body and HOSTILE_DATASET in body and SCRIPT_STEM in body
    cells = browser_page.locator("#per-image-table tbody td:nth-child(3)").all_text_contents()
    assert HOSTILE_STEM in cells and SCRIPT_STEM in cells
    # the gallery and the side-by-side selector hold the names as text too
    assert SCRIPT_STEM in browser_page.locator("#gallery").inner_text()
    assert SCRIPT_STEM in browser_page.locator("#side-image").inner_text()
    for value in browser_page.eval_on_selector_all("#side-image option", "options => options.map(o => o.value)"):
        browser_page.select_option("#side-image", value)  # every image drawn side by side once
    assert browser_page.locator("img[src='x']").count() == 0
    assert browser_page.evaluate("() => window.__xss") is None  # no markup of a name ran, whatever was drawn
    assert all(url.split(":", 1)[0] in ("file", "data") for url in log.requests)
    assert log.errors == []


def test_the_worst_k_measures_are_those_that_rank(page: tuple[Any, PageLog], tmp_path: Path) -> None:
    """A column without a direction (a boundary row's threshold) ranks no image: it is not offered, and the gallery
    opens on the first measure that ranks (a boundary page opened on `threshold`, its gallery empty)."""
    from tests.reports.html_run import COLUMNS, HIGHER, per_image_rows

    rows = [row | {"threshold": 0.5} for row in per_image_rows()]
    report = write_run(
        tmp_path,
        columns=[("threshold", "Threshold"), *COLUMNS],
        higher_is_better={"threshold": None, **HIGHER},
        per_image=rows,
    )
    browser_page, log = page
    _open(browser_page, report)
    options = browser_page.locator("#worst-measure option").evaluate_all("(os) => os.map((o) => o.value)")
    assert options == [key for key, _ in COLUMNS]
    assert browser_page.locator("#gallery .card").count() > 0
    assert log.errors == []
