"""The measure registry (issue 29: one name per measure): torch-free, every spelling resolves, and every layer's names
come from it; the values it points at exist in what the library computes."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from segmetrics_torch import registry
from segmetrics_torch.registry import MEASURES, canonical, meta_name


def test_it_imports_no_torch() -> None:
    code = "import sys; import segmetrics_torch.registry; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(
    ("spelling", "key"),
    [("maxEm", "maxe"), ("Smeasure", "s"), ("wFmeasure", "wf"), ("weighted_f", "wf"), ("adpFm", "adpf"),
     ("avgF", "meanf"), ("MAE", "mae"), ("siAUC-ROC", "siaucroc"), ("f_adaptive", "adpf"), ("Fop", "fop"),
     ("VoI", "voi"), ("e max", "maxe")],
)  # fmt: skip
def test_spellings(spelling: str, key: str) -> None:
    assert canonical(spelling) == key
    assert canonical(spelling, MEASURES[key].family) == key
    assert canonical(spelling, "partition" if MEASURES[key].family == "foreground" else "foreground") is None


def test_unknown_names() -> None:
    assert canonical("maxem2") is None and meta_name("maxem2") == "maxem2"


def test_every_foreground_result_path_exists() -> None:
    """Each foreground measure's ``result`` is a value of ForegroundMeasures' result with its ``include``."""
    from segmetrics_torch import ForegroundMeasures
    from segmetrics_torch.app.tables import scalar_row

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
    from segmetrics_torch.app.measures import ALIASES, FOREGROUND_MEASURES
    from segmetrics_torch.functional.partition import MEASURES as LIBRARY_PARTITION
    from segmetrics_torch.meta import metameasures

    assert cli_parser.PARTITION_MEASURES == meta_command.PARTITION_MEASURES == LIBRARY_PARTITION == registry.PARTITION
    assert tuple(metameasures.FOREGROUND_MEASURES) == meta_command.FOREGROUND_MEASURES
    assert tuple(metameasures.FOREGROUND_MEASURES) == tuple(registry.META_FOREGROUND.values())
    assert tuple(FOREGROUND_MEASURES) == registry.FOREGROUND and ALIASES["maxem"] == "maxe"
    for key, name in registry.META_FOREGROUND.items():  # the meta direction is the registry's
        assert metameasures.FOREGROUND_MEASURES[name][1] == MEASURES[key].higher_is_better


def test_meta_accepts_any_spelling() -> None:
    from segmetrics_torch.meta.metameasures import as_measure

    assert as_measure("wFmeasure").name == "weighted_f" and as_measure("maxEm").name == "e_max"
    assert as_measure("Fop").name == "fop"
