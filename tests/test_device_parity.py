"""CPU == GPU: every family's numbers on a CUDA device equal the CPU's (the prepared GPU check runs this file).

Each case builds the same inputs, runs the family's Metric (or loss, with its gradient) on a device and returns every
number it computed as one flat float64 array. ``test_cuda_equals_cpu`` compares CUDA with the CPU (atol 1e-12:
the tensor path is exact like the compiled CPU kernels; the distance transform must match bit for bit); it is
skipped without a CUDA device, and ``test_cases_run_on_the_cpu`` keeps every case runnable where CI has none.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import segmetrics_torch as st
from segmetrics_torch import losses
from segmetrics_torch.ops.distance import distance_transform_edt

cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _flat(result) -> np.ndarray:
    if isinstance(result, dict):
        return np.concatenate([_flat(v) for _, v in sorted(result.items())]) if result else np.zeros(0)
    if isinstance(result, (list, tuple)):
        return np.concatenate([_flat(v) for v in result]) if result else np.zeros(0)
    return torch.as_tensor(result).detach().to("cpu", torch.float64).flatten().numpy()


def _foreground_inputs(b: int = 6, h: int = 48, w: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    g = torch.stack([((yy - 10 - 3 * i) ** 2 + (xx - 12 - 2 * i) ** 2) < (60 + 20 * i) for i in range(b)])
    g[-1] = False  # an empty ground truth
    p = (g.float() * 0.6 + torch.rand(b, h, w, generator=gen) * 0.4).mul(255).to(torch.uint8)
    return p, g


def _metric(make: Callable[[], torch.nn.Module], *args_fn: Callable[[], tuple]) -> Callable[[str], np.ndarray]:
    def run(device: str) -> np.ndarray:
        metric = make().to(device)
        for make_args in args_fn:
            metric.update(
                *(a.to(device) if isinstance(a, torch.Tensor) else [x.to(device) for x in a] for a in make_args())
            )
        return _flat(metric.compute())

    return run


def _edt(device: str) -> np.ndarray:
    gen = torch.Generator().manual_seed(1)
    mask = torch.rand(3, 37, 45, generator=gen) < 0.02
    mask[1] = False
    dist, index = distance_transform_edt(mask.to(device), backend="torch")
    return np.concatenate([_flat(dist), _flat(index)])


def _loss(name: str) -> Callable[[str], np.ndarray]:
    def run(device: str) -> np.ndarray:
        p, g = _foreground_inputs()
        logits = torch.logit((p.double() / 255).clamp(0.02, 0.98)).to(device).requires_grad_(True)
        value = getattr(losses, name)(torch.sigmoid(logits), g.to(device), reduction="none")
        value.sum().backward()
        return np.concatenate([_flat(value), _flat(logits.grad)])

    return run


def _boundary_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(2)
    gt = torch.zeros(2, 2, 40, 48, dtype=torch.bool)
    gt[:, 0, 20, 4:44] = True
    gt[:, 1, 21, 4:40] = True
    gt[:, 1, 5:35, 24] = True
    pb = torch.rand(2, 40, 48, generator=gen) * 0.3
    pb[:, 19:22, 3:45] += 0.6
    return pb.clamp(0, 1), gt


def _partition_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(3)
    seg = torch.randint(0, 4, (2, 6, 8), generator=gen).repeat_interleave(4, 1).repeat_interleave(4, 2)
    gt = torch.stack([seg // 2, seg % 3], dim=1)
    return seg, gt


def _proposal_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    objects = torch.zeros(2, 24, 24, dtype=torch.bool)
    objects[0, 2:10, 2:12] = True
    objects[1, 12:22, 8:20] = True
    proposals = torch.zeros(5, 24, 24, dtype=torch.bool)
    for i in range(5):
        proposals[i, 2 + 2 * i : 12 + 2 * i, 3 + i : 15 + i] = True
    return proposals, objects


def _surface_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    zz, yy, xx = torch.meshgrid(torch.arange(12), torch.arange(20), torch.arange(18), indexing="ij")
    gt = torch.stack([((zz - 6) ** 2 + (yy - 9) ** 2 + (xx - 8) ** 2) < r for r in (20, 30)])
    pred = torch.stack([((zz - 5) ** 2 + (yy - 10) ** 2 + (xx - 9) ** 2) < r for r in (25, 16)])
    labels = gt.long() + (xx > 12).long() * gt.long()  # a 2-class label map
    return torch.cat([pred.long(), pred.long() * 2]), torch.cat([gt.long(), labels])


def _surface(convention: str) -> Callable[[str], np.ndarray]:
    if convention == "medpy":  # MedPy raises on an empty structure (the label maps miss class 2): masks only
        return _metric(
            lambda: st.SurfaceDistanceMeasures(convention=convention, spacing=(2.0, 1.0, 0.5)),
            lambda: tuple(x[:2].bool() for x in _surface_inputs()),
        )
    return _metric(
        lambda: st.SurfaceDistanceMeasures(
            convention=convention, num_classes=3, spacing=(2.0, 1.0, 0.5), tolerance=1.5
        ),
        _surface_inputs,
    )


CASES: dict[str, Callable[[str], np.ndarray]] = {
    "foreground-suite": _metric(st.ForegroundMeasures, _foreground_inputs),
    "foreground-weighted-f-torch-edt": _metric(lambda: st.WeightedFMeasure(edt_backend="torch"), _foreground_inputs),
    "foreground-s-measure": _metric(st.SMeasure, _foreground_inputs),
    "distance-transform": _edt,
    "loss-weighted-f": _loss("weighted_f_measure_loss"),
    "loss-e-measure": _loss("e_measure_loss"),
    "boundary-pr": _metric(lambda: st.BoundaryPR(thresholds=9), _boundary_inputs),
    "partition": _metric(st.PartitionMeasures, _partition_inputs),
    "proposals": _metric(lambda: st.ProposalRecall(counts=[1, 3, 5]), _proposal_inputs),
    "surface-monai": _surface("monai"),
    "surface-deepmind": _surface("deepmind"),
    "surface-medpy": _surface("medpy"),
    # 2-D slices on a unit grid and on a power-of-two one: the integer-keyed transform (Triton on CUDA), one per batch
    "surface-2d-monai": _metric(
        lambda: st.SurfaceDistanceMeasures(convention="monai", num_classes=3, tolerance=1.5),
        lambda: tuple(x[:, 6] for x in _surface_inputs()),
    ),
    "surface-2d-deepmind-half-spacing": _metric(
        lambda: st.SurfaceDistanceMeasures(convention="deepmind", num_classes=3, spacing=(0.5, 0.5), tolerance=1.5),
        lambda: tuple(x[:, 6] for x in _surface_inputs()),
    ),
    "boundary-iou": _metric(lambda: st.BoundaryIoU(num_classes=3), lambda: tuple(x[:, 6] for x in _surface_inputs())),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cases_run_on_the_cpu(name):
    values = CASES[name]("cpu")
    assert values.size > 0
    assert np.isfinite(values).any()


@cuda_only
@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_equals_cpu(name):
    cpu, gpu = CASES[name]("cpu"), CASES[name]("cuda")
    assert cpu.shape == gpu.shape
    if name == "distance-transform":
        np.testing.assert_array_equal(gpu, cpu)
    else:
        np.testing.assert_allclose(gpu, cpu, rtol=0, atol=1e-12, equal_nan=True)
