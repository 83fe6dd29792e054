"""One top-three convention across the combined Markdown, LaTeX and Excel tables (issue 28, item 8): 1st bold,
2nd underlined, 3rd italic."""

from __future__ import annotations

import re

import pytest

from segmetrics_torch.reports.combined import (
    LATEX_MACROS,
    TOP_THREE,
    Combined,
    format_combined_latex,
    format_combined_markdown,
    write_combined_xlsx,
)


def _table() -> Combined:
    rows = {m: {("D", "s"): v} for m, v in (("first", 0.9), ("second", 0.8), ("third", 0.7), ("fourth", 0.6))}
    return Combined("foreground", ["D"], [("s", "S")], rows, lower=[])


def test_markdown_marks() -> None:
    md = format_combined_markdown(_table())
    assert "| first | **0.900** |" in md
    assert "| second | <ins>0.800</ins> |" in md
    assert "| third | _0.700_ |" in md
    assert "| fourth | 0.600 |" in md


def test_latex_marks() -> None:
    tex = format_combined_latex(_table(), "caption", "label")
    assert re.search(r"first & \\first\{0\.900\}", tex) and re.search(r"second & \\second\{0\.800\}", tex)
    assert re.search(r"third & \\third\{0\.700\}", tex)
    assert r"\providecommand{\second}[1]{\underline{#1}}" in LATEX_MACROS
    assert r"\providecommand{\third}[1]{\textit{#1}}" in LATEX_MACROS


def test_xlsx_marks(tmp_path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    path = tmp_path / "t.xlsx"
    write_combined_xlsx([_table()], path)
    sheet = openpyxl.load_workbook(path).active
    fonts = {
        row[0].value: row[1].font for row in sheet.iter_rows() if row[0].value in ("first", "second", "third", "fourth")
    }
    assert fonts["first"].bold and not fonts["first"].italic
    assert fonts["second"].underline == "single" and not fonts["second"].italic and not fonts["second"].bold
    assert fonts["third"].italic and not fonts["third"].underline
    assert not (fonts["fourth"].bold or fonts["fourth"].italic or fonts["fourth"].underline)
    assert TOP_THREE == {1: "bold", 2: "underline", 3: "italic"}
