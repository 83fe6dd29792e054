"""The weighted-F and E-measure losses beside BCE-with-logits, forward + backward, same inputs, same run.

Inputs: (16, 1, 352, 352) float32 logits (standard normal) and the ellipse ground truths of ``bench_foreground``'s
``make_maps`` (one of them empty), as ``bench_tensor_path.py``. Each loss is timed on the sigmoid of the logits, the
backward pass included, as multiples of ``binary_cross_entropy_with_logits`` timed in the same round (``--rounds``
interleaved rounds, the best of ``--repeats`` calls each; the ratio is the median of the per-round ratios, since
this VM's speed drifts within a run):

* ``weighted_f_measure_loss`` on the tensor route (``use_backend("tensor")``: what CUDA runs) and on the compiled CPU
  kernels (the default for CPU tensors);
* ``e_measure_loss`` (no compiled kernel: one route).

Also counts the aten operations of one forward + backward of each loss with ``torch.profiler``: all top-level
ones, and those that launch a kernel on a GPU (views, metadata and host scalars left out). The load average is
printed: wall times on a shared machine.

Run: ``python benchmarks/bench_losses.py [--rounds 3] [--repeats 5] [--threads N] [--batch 16] [--size 352]
[--cpu-time] [--device cuda]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_foreground import make_maps

from segmetrics_torch import losses
from segmetrics_torch.ops import use_backend

Loss = Callable[[torch.Tensor], torch.Tensor]


def timed(
    fn: Callable[[], object], repeats: int, clock: Callable[[], float] = time.perf_counter, device: str = "cpu"
) -> float:
    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    fn()
    times = []
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        times.append(clock() - start)
    return min(times)


#: aten operations that compute nothing (views, metadata, allocation, host-side scalars): no kernel launch on a GPU
NO_LAUNCH = {
    "aten::alias",
    "aten::as_strided",
    "aten::detach",
    "aten::empty",
    "aten::empty_like",
    "aten::empty_strided",
    "aten::expand",
    "aten::lift_fresh",
    "aten::narrow",
    "aten::permute",
    "aten::promote_types",
    "aten::reshape",
    "aten::_reshape_alias",
    "aten::result_type",
    "aten::scalar_tensor",
    "aten::select",
    "aten::slice",
    "aten::squeeze",
    "aten::t",
    "aten::to",
    "aten::transpose",
    "aten::unsqueeze",
    "aten::view",
    "aten::_unsafe_view",
}


def aten_ops(step: Callable[[], object]) -> tuple[int, int]:
    """``(all, launching)``: the top-level aten operations one call of ``step`` runs, and those of them that launch a
    kernel (not in :data:`NO_LAUNCH`; ``to`` counts through the ``_to_copy`` it calls when it copies)."""
    from torch.profiler import ProfilerActivity, profile

    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    events = [e for e in prof.events() if e.name.startswith("aten::")]
    top = [e for e in events if not _inside_aten(e)]
    copies = sum(1 for e in events if e.name == "aten::_to_copy" and _parent_name(e) == "aten::to")
    return len(top), sum(1 for e in top if e.name not in NO_LAUNCH) + copies


def _parent_name(event: object) -> str:
    parent = getattr(event, "cpu_parent", None)
    return "" if parent is None else str(parent.name)


def _inside_aten(event: object) -> bool:
    parent = getattr(event, "cpu_parent", None)
    while parent is not None:
        if parent.name.startswith("aten::"):
            return True
        parent = getattr(parent, "cpu_parent", None)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--size", type=int, default=352)
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time the process's CPU time instead of the wall clock (with --threads 1: the work itself, robust on a "
        "machine whose other jobs take the cores away)",
    )
    parser.add_argument("--device", default="cpu", help="the tensors' device (cuda: no compiled-kernel row)")
    args = parser.parse_args()
    clock = time.process_time if args.cpu_time else time.perf_counter
    if args.threads:
        torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(args.batch, 1, args.size, args.size, generator=gen).to(args.device)
    target = torch.from_numpy(make_maps(args.batch, args.size, seed=1)[1] > 128).float()[:, None].to(args.device)

    def tensor_route(fn: Loss) -> Loss:
        def call(x: torch.Tensor) -> torch.Tensor:
            with use_backend("tensor"):  # the backward pass takes its forward pass's route whatever the setting then
                return fn(x)

        return call

    cases: dict[str, Loss] = {
        "bce": lambda x: F.binary_cross_entropy_with_logits(x, target),
        "wf_tensor": tensor_route(lambda x: losses.weighted_f_measure_loss(x.sigmoid(), target)),
        "wf_kernels": lambda x: losses.weighted_f_measure_loss(x.sigmoid(), target),
        "em": lambda x: losses.e_measure_loss(x.sigmoid(), target),
    }
    if args.device != "cpu":
        del cases["wf_kernels"]  # the compiled kernels are the CPU's; other devices run the tensor route

    def step(fn: Loss) -> Callable[[], None]:
        def run() -> None:
            x = logits.clone().requires_grad_(True)
            fn(x).backward()

        return run

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, load average {os.getloadavg()}, "
        f"({args.batch}, 1, {args.size}, {args.size}) float32, forward + backward, "
        f"{'process CPU time' if args.cpu_time else 'wall time'}, device {args.device}"
    )
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            times[name].append(timed(step(fn), args.repeats, clock, args.device) * 1e3)
    labels = {
        "bce": "BCE with logits",
        "wf_tensor": "weighted_f_measure_loss, tensor route",
        "wf_kernels": "weighted_f_measure_loss, CPU kernels",
        "em": "e_measure_loss",
    }
    for name in cases:
        ms = statistics.median(times[name])
        ratio = statistics.median(t / b for t, b in zip(times[name], times["bce"], strict=True))
        ops, launches = aten_ops(step(cases[name]))
        print(f"  {labels[name]:40s} {ms:8.2f} ms  = {ratio:5.1f}x BCE   {ops:4d} aten ops, {launches:4d} launching")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
