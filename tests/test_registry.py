"""The measure registry (issue 29: one name per measure): torch-free, every spelling resolves, and every layer's names
come from it; the values it points at exist in what the library computes."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from segmetrics_torch import registry
from segmetrics_torch.errors import InputError
from segmetrics_torch.registry import MEASURES, canonical, meta_name


def test_it_imports_no_torch() -> None:
    code = "import sys; import segmetrics_torch.registry; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(
    ("spelling", "key"),
    [
        ("maxEm", "maxe"),
        ("Smeasure", "s"),
        ("wFmeasure", "wf"),
        ("weighted_f", "wf"),
        ("adpFm", "adpf"),
        ("avgF", "meanf"),
        ("MAE", "mae"),
        ("siAUC-ROC", "siaucroc"),
        ("f_adaptive", "adpf"),
        ("Fop", "fop"),
        ("VoI", "voi"),
        ("e max", "maxe"),
    ],
)
def test_spellings(spelling: str, key: str) -> None:
    assert canonical(spelling) == key
    assert canonical(spelling, MEASURES[key].family) == key
    assert canonical(spelling, "partition" if MEASURES[key].family == "foreground" else "foreground") is None


def test_unknown_names() -> None:
    assert canonical("maxem2") is None and meta_name("maxem2") == "maxem2"


def test_every_foreground_result_path_exists() -> None:
    """Each foreground measure's ``result`` is a value of ForegroundMeasures' result with its ``include``."""
    from segmetrics_torch import ForegroundMeasures
    from segmetrics_torch.reports.tables import scalar_row

    include = sorted({m.include for m in MEASURES.values() if m.include})
    gen = torch.Generator().manual_seed(0)
    g = torch.zeros(2, 40, 40, dtype=torch.bool)
    g[:, 8:20, 10:30] = True
    g[:, 28:34, 5:9] = True
    p = torch.rand(2, 40, 40, generator=gen, dtype=torch.float64) * 0.5 + g * 0.4
    pytest.importorskip("cv2")  # the human correction effort
    pytest.importorskip("skimage")
    metric = ForegroundMeasures(include=include)
    metric.update(p, g)
    row = scalar_row(metric.compute())
    for key in registry.FOREGROUND:
        assert MEASURES[key].result in row, key


def test_partition_keys_are_what_the_library_computes() -> None:
    from segmetrics_torch.functional.partition import partition_measures

    seg = torch.zeros(1, 6, 6, dtype=torch.int64)
    seg[:, :, 3:] = 1
    out = partition_measures(seg, seg[:, None], measures=None)
    assert set(registry.PARTITION) <= set(out)  # beside them: their precision / recall parts
    assert registry.PR_MEASURES == ("fb", "fop", "fr")


def test_every_layer_reads_it() -> None:
    from segmetrics_torch.app import cli_parser, meta_command
    from segmetrics_torch.functional.partition import MEASURES as LIBRARY_PARTITION
    from segmetrics_torch.meta import metameasures

    assert cli_parser.PARTITION_MEASURES == LIBRARY_PARTITION == registry.PARTITION
    assert tuple(meta_command.PARTITION_MEASURES) == registry.PARTITION  # the command's meta names: the library's
    assert meta_command.FOREGROUND_MEASURES is metameasures.FOREGROUND_MEASURES
    assert tuple(metameasures.FOREGROUND_MEASURES) == tuple(registry.META_FOREGROUND.values())
    assert registry.canonical_list("maxEm", "foreground") == ["maxe"]  # the command parses --measures with it
    for key, name in registry.META_FOREGROUND.items():  # the meta direction is the registry's
        assert metameasures.FOREGROUND_MEASURES[name][1] == MEASURES[key].higher_is_better


def test_meta_accepts_any_spelling() -> None:
    from segmetrics_torch.meta.metameasures import as_measure

    assert as_measure("wFmeasure").name == "weighted_f" and as_measure("maxEm").name == "e_max"
    assert as_measure("Fop").name == "fop"


# ------------------------------------------------------------------ every family, checked against the library


def _public_classes() -> dict[str, type]:
    import segmetrics_torch

    return {name: getattr(segmetrics_torch, name) for name in segmetrics_torch.__all__ if name[:1].isupper()}


def test_every_public_metric_and_loss_is_registered() -> None:
    """A public Metric or loss is a registered measure's class or a suite of them: adding one without its record
    fails here."""
    from torch import nn

    named = {m.metric for m in MEASURES.values() if m.metric} | set(registry.SUITES)
    for name, cls in _public_classes().items():
        if isinstance(cls, type) and issubclass(cls, nn.Module):
            assert name in named, f"{name}: no registry record names it"
    for name in named:
        assert name in _public_classes(), f"the registry names {name}, which segmetrics_torch does not export"


def test_every_metric_s_direction_is_the_registry_s() -> None:
    """``higher_is_better`` of each Metric is its measures' direction (None where its measures disagree)."""
    from torchmetrics import Metric

    classes = _public_classes()
    by_class: dict[str, set[bool]] = {}
    for m in MEASURES.values():
        if m.metric and issubclass(classes[m.metric], Metric):
            by_class.setdefault(m.metric, set()).add(m.higher_is_better)
    for name, directions in by_class.items():
        expected = next(iter(directions)) if len(directions) == 1 else None
        # a suite computes a chosen set, perhaps beyond its registered measures (FPR, BER): None is its honest answer
        allowed = {expected, None} if name in registry.SUITES else {expected}
        assert classes[name].higher_is_better in allowed, name


def test_every_registered_function_exists() -> None:
    import segmetrics_torch.functional as functional
    import segmetrics_torch.meta as meta

    for m in MEASURES.values():
        if m.function:
            module = meta if m.family == "meta" else functional
            assert callable(getattr(module, m.function, None)), f"{m.key}: {m.function}"
        assert m.metric or m.function, f"{m.key}: neither a class nor a function computes it"


def test_the_report_columns_are_the_registry_s() -> None:
    from segmetrics_torch.reports import report as report_render, tables

    assert tables.SOD_COLUMNS == tuple((MEASURES[k].result, MEASURES[k].header) for k in registry.DEFAULT_FOREGROUND)
    assert tables.SURFACE_COLUMNS == registry.report_columns("surface")
    assert report_render.BOUNDARY_SUMMARY_COLUMNS == registry.report_columns("boundary")
    assert report_render.PROPOSAL_SUMMARY_COLUMNS == registry.report_columns("proposals")
    headers = [MEASURES[k].report_header for k in registry.PARTITION]
    assert [tables.measure_name(k) for k in registry.PARTITION] == headers


def _measure_table_rows() -> dict[str, list[str]]:
    """The rows of every measure table of the README and docs/ (a table whose first header cell starts with
    "measure", or the README's "other families" table), by file."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    rows: dict[str, list[str]] = {}
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            first = line.strip("| ").split("|")[0].strip().lower() if line.startswith("|") else ""
            is_header = (first.startswith("measure") or first == "other families") and i + 1 < len(lines)
            if is_header and re.match(r"^\|[-| :]+\|$", lines[i + 1]):
                j = i + 2
                while j < len(lines) and lines[j].startswith("|"):
                    rows.setdefault(path.name, []).append(lines[j])
                    j += 1
    return rows


def test_the_measure_tables_name_every_registered_measure() -> None:
    """Every registered class and function appears in a row of the README's measure tables, and every class a row of
    any measure table (README, docs/) names in backticks is one the package exports."""
    import re

    rows = _measure_table_rows()
    readme = " ".join(rows["README.md"])
    for m in MEASURES.values():
        for name in (m.metric, m.function):
            if name:
                assert re.search(rf"`{re.escape(name)}[`(]", readme), f"{m.key}: `{name}` is in no README table row"
    classes = _public_classes()
    for file, lines in rows.items():
        for line in lines:
            cells = line.strip().strip("|").split("|")
            # the second column names our classes and functions (the others name the papers and the references')
            for name in re.findall(r"`([A-Z][A-Za-z0-9]+)(?:\(|`)", cells[1] if len(cells) > 1 else ""):
                if name in registry.DEPRECATED_CLASSES:
                    continue
                assert name in classes, f"{file}: a measure table names `{name}`, which the package does not export"


def test_the_readme_s_measure_tables_are_the_registry_s() -> None:
    """The README's measure tables are written from ``registry.TABLES`` (``python -m segmetrics_torch._readme
    README.md``): a row edited in the README alone, or a table left unwritten, fails here."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert readme == registry.with_tables(readme), "run: python -m segmetrics_torch._readme README.md"
    for name in registry.TABLES:
        assert registry.render_table(name) in readme


def test_the_command_s_measure_names_are_all_documented() -> None:
    """The ``--measures LIST`` row of docs/evaluate.md names every foreground measure the command accepts (it
    lacked the toolbox protocols' sensitivity / specificity, siaucroc, siaucpr), and nothing else: not ccm, which
    needs the RGB image and which the command refuses, naming the Metric that computes it."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "evaluate.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| `--measures LIST`"))
    description = row.split("|")[3]
    named = {name for code in re.findall(r"`([^`]+)`", description) for name in re.split(r"[,\s]+", code) if name}
    named -= {"--protocol", "ForegroundMeasures(include=...)"}
    assert named == {m.key for m in registry.family_measures("foreground") if m.report}
    for m in registry.family_measures("foreground"):
        if not m.report:  # accepted before and shown as "-" with no word: refused, naming where it is computed
            with pytest.raises(InputError, match=rf"'{m.key}' is not in the command's foreground table.*{m.metric}"):
                registry.parse_measures(f"mae,{m.key}", "foreground", option="--measures")
            assert registry.measure_error(m.header, "foreground") is not None
