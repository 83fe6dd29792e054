"""A sparse tensor is refused by the shared tensor check of every family (was torch's NotImplementedError from a
backend), and the device distance transform keeps its 2^25-entry chunks on long lines (a 1 x 12,000 row asked for
1.15 GB at once)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import segmetrics_torch.functional as F
from segmetrics_torch.ops import distance
from segmetrics_torch.ops.distance import distance_to_features, distance_to_features_device

# --------------------------------------------------------------------------------------------- 4. sparse layouts


def _foreground() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.rand(2, 8, 8), torch.rand(2, 8, 8) > 0.5


def _boundary() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.rand(2, 8, 8), torch.rand(2, 1, 8, 8) > 0.8


def _partition() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randint(0, 3, (2, 8, 8)), torch.randint(0, 3, (2, 1, 8, 8))


def _surface() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.rand(2, 8, 8) > 0.5, torch.rand(2, 8, 8) > 0.5


FAMILIES: list[tuple[str, Callable[..., Any], Callable[[], tuple[torch.Tensor, torch.Tensor]]]] = [
    ("foreground mae", F.mae, _foreground),
    ("boundary boundary_pr", lambda p, g: F.boundary_pr(p, g, thresholds=3), _boundary),
    ("boundary morphological_boundary_f", F.morphological_boundary_f, _boundary),
    ("partition partition_measures", F.partition_measures, _partition),
    ("surface hausdorff_distance", F.hausdorff_distance, _surface),
    ("surface boundary_iou", F.boundary_iou, _surface),
]


@pytest.mark.parametrize(("name", "function", "make"), FAMILIES, ids=[n for n, _, _ in FAMILIES])
@pytest.mark.parametrize("side", ["preds", "target"])
@pytest.mark.parametrize("as_list", [False, True], ids=["batch", "list"])
def test_a_sparse_tensor_is_a_type_error_naming_the_argument(
    name: str,
    function: Callable[..., Any],
    make: Callable[[], tuple[torch.Tensor, torch.Tensor]],
    side: str,
    as_list: bool,
) -> None:
    preds, target = make()
    if side == "preds":
        preds = preds.to_sparse()
    else:
        target = target.to_sparse()
    if as_list:
        preds, target = list(preds.unbind(0)), list(target.unbind(0))
    with pytest.raises(TypeError, match=rf"`{side}(\[0\])?`.*dense tensor.*sparse"):
        function(preds, target)


def test_the_metrics_refuse_a_sparse_tensor_too() -> None:
    from segmetrics_torch import MAE
    from segmetrics_torch.metrics.surface import HausdorffDistance

    p, g = _surface()
    with pytest.raises(TypeError, match=r"`preds`.*dense tensor"):
        HausdorffDistance().update(p.to_sparse(), g)
    with pytest.raises(TypeError, match=r"`target`.*dense tensor"):
        MAE().update(p.float(), g.to_sparse())


# ------------------------------------------------------------------------------------ 5. device transform chunks


@pytest.mark.parametrize("shape", [(1, 12_000), (12_000, 1), (1, 500_000)])
def test_a_long_line_matches_the_host_transform(shape: tuple[int, int]) -> None:
    """Was 1.15 GB asked at once (a (1, 12000, 12000) candidate table) and torch's allocator error."""
    rng = np.random.default_rng(len(shape) + shape[0])
    f = rng.random(shape) < 0.001
    f.flat[[5, -7]] = True
    at = np.ones(shape, bool)
    for spacing in ((1.0, 1.0), (0.7, 1.3)):
        host = distance_to_features(f, spacing, at=at)
        device = distance_to_features_device(torch.from_numpy(f), spacing, torch.from_numpy(at)).numpy()
        assert np.array_equal(device, host)


@pytest.mark.parametrize("shape", [(3, 40, 60), (2, 300), (300, 3)])
def test_small_chunks_give_the_values_of_one_chunk(monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...]) -> None:
    """Every pass cut into chunks of whole lines far below the image's size gives the values of one chunk, bit for
    bit."""
    rng = np.random.default_rng(sum(shape))
    f = torch.from_numpy(rng.random(shape) < 0.05)
    f.view(-1)[0] = True
    at = torch.from_numpy(rng.random(shape) < 0.5)
    spacing = (0.7, 1.3, 2.5)[-len(shape) :]
    whole = distance_to_features_device(f, spacing, at)
    monkeypatch.setattr(distance, "_DEVICE_CHUNK", 37)
    assert torch.equal(distance_to_features_device(f, spacing, at), whole)
    host = distance_to_features(f.numpy(), spacing, at=at.numpy())
    np.testing.assert_allclose(whole.numpy(), host, rtol=4e-16, atol=0)


_BOUNDED = """
import resource, numpy as np, torch
from segmetrics_torch.ops.distance import distance_to_features, distance_to_features_device
torch.set_num_threads(1)
cases = []
for shape in SHAPES:  # the inputs and the host's values first: numba may compile, outside the cap
    f = np.zeros(shape, bool); f.flat[[3, -5]] = True
    at = np.ones(shape, bool)
    cases.append((torch.from_numpy(f), torch.from_numpy(at), distance_to_features(f, (1.0, 1.0), at=at)))
small = torch.zeros(4, 9, dtype=torch.bool); small[1, 2] = True
distance_to_features_device(small, (1.0, 1.0), ~small)  # warm up: allocator arenas, thread pools
vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + 640 * 2**20, resource.RLIM_INFINITY))
for f, at, host in cases:
    assert np.array_equal(distance_to_features_device(f, (1.0, 1.0), at).numpy(), host), tuple(f.shape)
print("bounded")
"""


def test_the_device_transform_runs_under_a_memory_cap() -> None:
    """The whole transform of long lines under an address-space cap of 640 MiB above the interpreter's: chunks of
    whole lines, at most 100 bytes of scratch per element, fit (the old single table of the first device transform,
    1.15 GB for a 1 x 12,000 row and as much for a 12,000-long column of a 2-wide image, did not)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS and /proc/self/status are Linux's")
    code = _BOUNDED.replace("SHAPES", "[(1, 12_000), (12_000, 2)]")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 0 and "bounded" in run.stdout, run.stderr[-2000:]
