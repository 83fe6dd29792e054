"""The foreground family's update and the losses are sync-free, one pass per batch (the CUDA path, on CPU tensors).

The tensor path is what CUDA inputs take; on CPU tensors it runs under ``use_backend("tensor")`` (the torch distance
transform included, as on CUDA). A ``TorchDispatchMode`` records every aten op of
``update()`` (or of a loss's forward and backward) and the test asserts

* no op that makes the host wait for the device: ``_local_scalar_dense`` (``.item()``, ``bool(t)``, ``int(t)``),
  ``bincount`` (CUDA sizes its output from ``key.max()`` on the host), ``nonzero``, ``masked_select``, the ``unique``
  family, ``repeat_interleave`` without ``output_size``, and indexing or index-assignment with a boolean mask;
  ``Tensor.tolist``/``Tensor.numpy`` are patched to fail;
* an op count that does not grow with the batch size (a batch is one pass, not a loop over images).

The boundary, partition and proposal families synchronise by design (their matching and table kernels run on the
host); their ``update`` docstrings list where.
"""

from __future__ import annotations

import collections

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import segmetrics_torch as st
from segmetrics_torch import losses
from segmetrics_torch.ops import distance, filters, use_backend

SYNC_OPS = {
    "_local_scalar_dense",
    "bincount",  # on CUDA it reads key.max() on the host to size its output (seen on an H200)
    "nonzero",
    "nonzero_static",
    "masked_select",
    "unique",
    "_unique",
    "_unique2",
    "unique_dim",
    "unique_consecutive",
    "unique_dim_consecutive",
}


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: collections.Counter[str] = collections.Counter()
        self.syncs: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        self.ops[name] += 1
        if name in SYNC_OPS:
            self.syncs.append(name)
        elif name == "repeat_interleave" and kwargs.get("output_size") is None:
            self.syncs.append("repeat_interleave without output_size")
        elif name in ("index", "index_put", "index_put_", "_index_put_impl_"):
            indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
            if any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
                self.syncs.append(f"{name} with a boolean mask")
        return func(*args, **kwargs)


@pytest.fixture
def tensor_path(monkeypatch):
    # what a CUDA input takes: the tensor path, the torch distance transform (both: the backend "tensor") and its
    # CUDA square root (the CPU branch calls numpy's correctly rounded sqrt instead; CUDA's double sqrt is exact)
    monkeypatch.setattr(distance, "_exact_sqrt", lambda d2: d2.sqrt_())

    # the blur's weights are a host-side constant made once per process from a CPU tensor (no device transfer); make
    # them before `tolist` is refused, so that the test does not depend on which test ran first
    filters._host_gaussian_weights(7, 5.0)

    def refuse(self, *args, **kwargs):
        raise AssertionError("host transfer (tolist/numpy) in a sync-free path")

    monkeypatch.setattr(torch.Tensor, "tolist", refuse)
    monkeypatch.setattr(torch.Tensor, "numpy", refuse)
    with use_backend("tensor"):
        yield


def _batch(b: int, dtype=torch.float64):
    gen = torch.Generator().manual_seed(b)
    preds = torch.rand(b, 30, 41, generator=gen, dtype=dtype)
    target = torch.rand(b, 30, 41, generator=gen) > 0.6
    return preds, target


FOREGROUND = {
    "MAE": lambda: st.MAE(validate_args=False),
    "SMeasure": lambda: st.SMeasure(validate_args=False),
    "WeightedFMeasure": lambda: st.WeightedFMeasure(validate_args=False),
    "FMeasure": lambda: st.FMeasure(validate_args=False),
    "EMeasure": lambda: st.EMeasure(validate_args=False),
    "IoU": lambda: st.IoU(validate_args=False),
    "Dice": lambda: st.Dice(validate_args=False),
    "ForegroundMeasures": lambda: st.ForegroundMeasures(validate_args=False),
    "ThresholdMeasures": lambda: st.ThresholdMeasures(validate_args=False),
    "MultiScaleIoU": lambda: st.MultiScaleIoU(validate_args=False),
}


def _record_update(make, b):
    metric = make()
    preds, target = _batch(b)
    with _Recorder() as rec:
        metric.update(preds, target)
    return rec


@pytest.mark.parametrize("name", sorted(FOREGROUND))
def test_foreground_update_is_sync_free_and_one_pass(tensor_path, name):
    small = _record_update(FOREGROUND[name], 2)
    large = _record_update(FOREGROUND[name], 9)
    assert small.syncs == [] and large.syncs == [], (small.syncs, large.syncs)
    assert sum(large.ops.values()) == sum(small.ops.values()), (small.ops - large.ops) + (large.ops - small.ops)
    assert sum(small.ops.values()) > 0  # the recorder saw the update


def _loss_cases():
    return {
        "e_measure_loss": lambda p, g: losses.e_measure_loss(p, g, validate_args=False),
        "weighted_f_measure_loss": lambda p, g: losses.weighted_f_measure_loss(p, g, validate_args=False),
        "soft_f_measure_loss": lambda p, g: losses.soft_f_measure_loss(p, g, validate_args=False),
        "soft_iou_loss": lambda p, g: losses.soft_iou_loss(p, g, validate_args=False),
        "EMeasureLoss": lambda p, g: losses.EMeasureLoss(validate_args=False)(p, g),
        "WeightedFMeasureLoss": lambda p, g: losses.WeightedFMeasureLoss(validate_args=False)(p, g),
    }


def _record_loss(fn, b):
    preds, target = _batch(b, torch.float32)
    logits = torch.logit(preds.clamp(0.01, 0.99)).requires_grad_(True)
    with _Recorder() as rec:
        loss = fn(torch.sigmoid(logits), target)
        loss.backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    return rec


@pytest.mark.parametrize("name", sorted(_loss_cases()))
def test_losses_are_sync_free_and_one_pass(tensor_path, monkeypatch, name):
    fn = _loss_cases()[name]
    small = _record_loss(fn, 2)
    large = _record_loss(fn, 9)
    assert small.syncs == [] and large.syncs == [], (small.syncs, large.syncs)
    assert sum(large.ops.values()) == sum(small.ops.values()), (small.ops - large.ops) + (large.ops - small.ops)


def test_recorder_sees_syncs():
    # the test can fail: each forbidden pattern is caught
    x = torch.rand(4, 5)
    with _Recorder() as rec:
        x.sum().item()
        x[x > 0.5]
        torch.unique(x)
        x.nonzero()
        torch.repeat_interleave(torch.tensor([1, 2]))
    assert rec.syncs == [
        "_local_scalar_dense",
        "index with a boolean mask",
        "_unique2",
        "nonzero",
        "repeat_interleave without output_size",
    ], rec.syncs


# --- on a real GPU: CUDA's own sync detector ---------------------------------------------------------------------

cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (issue 18, part B)")


class _SyncDebug:
    """``torch.cuda.set_sync_debug_mode("error")`` for the block: any op that waits for the GPU raises."""

    def __enter__(self):
        torch.cuda.synchronize()
        self.before = torch.cuda.get_sync_debug_mode()
        torch.cuda.set_sync_debug_mode("error")

    def __exit__(self, *exc):
        torch.cuda.set_sync_debug_mode(self.before)
        return False


@cuda_only
@pytest.mark.parametrize("name", sorted(FOREGROUND))
def test_foreground_update_never_syncs_on_cuda(name):
    metric = FOREGROUND[name]().to("cuda")
    preds, target = (t.cuda() for t in _batch(7))
    metric.update(preds[:2], target[:2])  # first call: lazy state set-up, kernels loaded
    with _SyncDebug():
        metric.update(preds, target)
        metric.update(preds.float(), target)
    # and the numbers equal the CPU's
    cpu = FOREGROUND[name]()
    p, g = _batch(7)
    cpu.update(p[:2], g[:2])
    cpu.update(p, g)
    cpu.update(p.float(), g)
    torch.testing.assert_close(_flat(metric.compute()), _flat(cpu.compute()), rtol=0, atol=1e-6, check_device=False)


def _flat(result):
    if isinstance(result, dict):
        return torch.cat([_flat(v) for _, v in sorted(result.items())])
    return torch.as_tensor(result, dtype=torch.float64).flatten().cpu()


@cuda_only
@pytest.mark.parametrize("name", sorted(_loss_cases()))
def test_losses_never_sync_on_cuda(name):
    fn = _loss_cases()[name]
    preds, target = _batch(6, torch.float32)
    logits = torch.logit(preds.clamp(0.01, 0.99)).cuda().requires_grad_(True)
    target = target.cuda()
    fn(torch.sigmoid(logits), target).backward()  # warm-up
    logits.grad = None
    with _SyncDebug():
        loss = fn(torch.sigmoid(logits), target)
        loss.backward()
    assert torch.isfinite(logits.grad).all()


@cuda_only
def test_sync_debug_mode_catches_a_sync():
    # the detector is live: an .item() inside the block raises
    x = torch.rand(3, device="cuda")
    with pytest.raises(RuntimeError, match="synchroniz"), _SyncDebug():
        x.sum().item()
