"""The documentation site (issue 45): it builds with warnings as errors, documents every public name, its internal
links resolve, and its generated pages (measure tables, command-line reference) say what the code says.

The reference each test holds the site to is the code itself, read independently of the site's extensions: the
``__all__`` lists of the public modules (the rule of ``docs/api.md``, walked here), ``registry.render_table``, and
the ``segmetrics`` parser.
"""

from __future__ import annotations

import argparse
import html
import importlib
import pkgutil
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import segmetrics_torch
from segmetrics_torch.registry import TABLES, render_table
from tests.docs.site_build import Site

# ------------------------------------------------------------------------------------------------------ helpers


def public_modules() -> list[str]:
    """The public modules by the rule of docs/api.md: no ``_`` component, not ``app`` / ``reference``, not a module
    inside ``metrics`` / ``meta`` or inside a functional family."""
    found = ["segmetrics_torch"]
    for info in pkgutil.walk_packages(segmetrics_torch.__path__, "segmetrics_torch."):
        parts = info.name.split(".")[1:]
        if any(part.startswith("_") for part in parts) or parts[0] in ("app", "reference"):
            continue
        if (parts[0] in ("metrics", "meta") and len(parts) > 1) or (parts[0] == "functional" and len(parts) > 2):
            continue
        found.append(info.name)
    return found


def documented(site: Site) -> set[str]:
    """Every Python object the site documents (``objects.inv``: modules, classes, functions, data, ...)."""
    from sphinx.util.inventory import InventoryFile

    with (site.html / "objects.inv").open("rb") as stream:
        inventory = InventoryFile.load(stream, "", lambda base, uri: uri)
    return {name for kind, entries in inventory.items() if kind.startswith("py:") for name in entries}


class _Page(HTMLParser):
    """A page's links (``href``/``src``), element ids, and the text of each table cell."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("href", "src"):
            if values.get(key) is not None and tag != "form":
                self.links.append(str(values[key]))
        for key in ("id", "name"):
            if values.get(key):
                self.ids.add(str(values[key]))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def read_page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def markdown_text(cell: str) -> str:
    """The text a Markdown table cell shows: links as their text, no code backticks, spaces collapsed."""
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)
    return " ".join(cell.replace("`", "").split())


def markdown_rows(table: str) -> list[list[str]]:
    """The cells of a Markdown table (header and rows; the rule left out)."""
    rows = [line.strip().strip("|").split("|") for line in table.splitlines()]
    return [[markdown_text(cell) for cell in row] for i, row in enumerate(rows) if i != 1]


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], object]]:
    """Every (sub)command of ``parser`` with its names, aliases included."""
    found: list[tuple[tuple[str, ...], object]] = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += commands(sub, (*path, name))
    return found


# -------------------------------------------------------------------------------------------------------- tests


def test_build_writes_nothing_into_the_sources(docs_site: Site) -> None:
    """The build imports the package and the command's parser and reads docs/; it writes only into its output
    folder (no stub pages, no executed examples' files in docs/)."""
    assert docs_site.sources_after == docs_site.sources_before
    assert docs_site.page("index").is_file()


def test_every_public_name_is_documented(docs_site: Site) -> None:
    names = documented(docs_site)
    modules = public_modules()
    assert {"segmetrics_torch", "segmetrics_torch.functional", "segmetrics_torch.losses"} <= set(modules)
    missing = []
    count = 0
    for module_name in modules:
        module = importlib.import_module(module_name)
        if module_name not in names:
            missing.append(module_name)
        for name in getattr(module, "__all__", ()):
            count += 1
            if f"{module_name}.{name}" not in names:
                missing.append(f"{module_name}.{name}")
    assert not missing, f"public names without an entry in the API reference: {missing}"
    assert count > 500  # the lists were read (today about 600 names)


def test_every_metric_and_function_has_its_docstring_on_the_site(docs_site: Site) -> None:
    """An entry is more than a name: the page of the package holds each Metric's one-line summary."""
    text = html.unescape(re.sub(r"<[^>]+>", "", docs_site.page("reference/segmetrics_torch").read_text("utf-8")))
    text = " ".join(text.split())
    for name in ("MAE", "BoundaryPR", "VariationOfInformation", "HausdorffDistance"):
        summary = " ".join((getattr(segmetrics_torch, name).__doc__ or "").strip().splitlines()[0].split())
        assert summary and summary[:60] in text, name


def test_internal_links_resolve(docs_site: Site) -> None:
    pages = {path: read_page(path) for path in docs_site.html.rglob("*.html")}
    assert len(pages) > 30
    broken = []
    checked = 0
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:  # http(s), mailto, data: not local files
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            checked += 1
            if not target.exists():
                broken.append(f"{path.relative_to(docs_site.html)}: {link} (no file)")
                continue
            if target.is_dir():
                target = target / "index.html"
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else read_page(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(docs_site.html)}: {link} (no anchor)")
    assert checked > 1000
    assert not broken, "\n".join(broken[:50])


def test_every_page_of_docs_is_on_the_site(docs_site: Site) -> None:
    from tests.docs.site_build import DOCS

    sources = [*sorted(DOCS.glob("*.md")), DOCS / "design" / "README.md"]
    for source in sources:
        page = docs_site.html / source.relative_to(DOCS).with_suffix(".html")
        assert page.is_file(), page
    index = read_page(docs_site.page("index"))
    for source in DOCS.glob("*.md"):
        if source.stem != "index":
            assert f"{source.stem}.html" in index.links, f"the entry page does not link {source.name}"


@pytest.mark.parametrize("name", list(TABLES))
def test_measure_tables_equal_the_registry(docs_site: Site, name: str) -> None:
    source = docs_site.page("measures").read_text(encoding="utf-8")
    start = source.find(f"measure-table-{name}")
    assert start >= 0, f"the measure table {name!r} is not on the Measures page"
    end = source.find("</table>", start)
    page = _Page()
    page.feed(source[source.rfind("<div", 0, start) : end + len("</table>")])
    assert len(page.tables) == 1
    assert page.tables[0] == markdown_rows(render_table(name))


def test_the_cli_page_names_every_subcommand_and_option(docs_site: Site) -> None:
    from segmetrics_torch.app.cli_parser import build_parser

    source = docs_site.page("command-line-reference").read_text(encoding="utf-8")
    headings = [
        html.unescape(re.sub(r"<[^>]+>", "", h)).rstrip("¶ ") for h in re.findall(r"<h\d[^>]*>(.*?)</h\d>", source)
    ]
    sections = re.split(r"<section ", source)
    parser = build_parser()
    listed = commands(parser, ("segmetrics",))
    assert len(listed) > 10
    for path, command in listed:
        title = " ".join(path)
        if title not in headings:
            # an alias (`evaluate sod`) is named in its command's section, not given one of its own
            assert re.search(rf"Also called: [^<]*\b{re.escape(path[-1])}\b", source), title
            continue
        section = next(s for s in sections if re.search(rf">{re.escape(title)}<a", s))
        text = html.unescape(re.sub(r"<[^>]+>", "", section))
        assert isinstance(command, argparse.ArgumentParser)
        for action in command._actions:
            if action.help == argparse.SUPPRESS:  # hidden from --help, and from the page
                continue
            for option in action.option_strings:
                assert option in text, f"{title}: {option} missing"
            if action.help and action.help != argparse.SUPPRESS and "%(" not in action.help:
                assert " ".join(action.help.split())[:50] in " ".join(text.split()), f"{title}: help of {action.dest}"
