"""``segmetrics warmup`` / :func:`segmetrics_torch.warmup.compile_kernels`: the kernels every family's defaults use
are compiled ahead, so that a later process's first call compiles nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from segmetrics_torch.app.cli import main
from segmetrics_torch.app.cli_parser import WARMUP_FAMILIES
from segmetrics_torch.warmup import FAMILIES, compile_kernels


def test_the_command_lists_the_library_families() -> None:
    assert tuple(FAMILIES) == WARMUP_FAMILIES


def test_an_unknown_family_is_refused() -> None:
    with pytest.raises(ValueError, match="families"):
        compile_kernels(["foreground", "nope"])


def test_the_command_prints_each_family_and_the_cache(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup", "--families", "foreground,partition"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("foreground") and out.splitlines()[1].startswith("partition")
    assert "numba caches them in" in out
    with pytest.raises(SystemExit) as exit_info:
        main(["warmup", "--families", "nope"])
    assert exit_info.value.code == 2


_FIRST_CALLS = """
import logging
logging.basicConfig(level=logging.DEBUG, format="%(name)s %(levelname)s %(message)s")
import torch
from segmetrics_torch import BoundaryPR, PartitionMeasures, SurfaceDistanceMeasures, WeightedFMeasure
from segmetrics_torch.ops import use_backend
g = torch.zeros(2, 40, 48, dtype=torch.bool); g[:, 8:30, 10:40] = True
p = torch.rand(2, 40, 48, generator=torch.Generator().manual_seed(1))
with use_backend("compiled"):
    WeightedFMeasure().update(p, g)
    WeightedFMeasure().update((p * 255).to(torch.uint8), g)
    b = BoundaryPR(thresholds=5); b.update(p, g[:, None] & ~g[:, None].roll(1, 2)); b.compute()
    m = PartitionMeasures(); m.update(g.long(), g.long().roll(3, 2)[:, None]); m.compute()
    s = SurfaceDistanceMeasures(tolerance=2.0); s.update(p > 0.5, g); s.compute()
"""


@pytest.mark.slow
def test_after_a_warmup_the_first_calls_compile_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    warm = subprocess.run(
        [sys.executable, "-m", "segmetrics_torch.app.cli", "warmup"], env=env, capture_output=True, text=True
    )
    assert warm.returncode == 0, warm.stderr
    first = subprocess.run([sys.executable, "-c", _FIRST_CALLS], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    compiled = [line for line in first.stderr.splitlines() if line.startswith("segmetrics_torch.compile")]
    assert compiled == []
