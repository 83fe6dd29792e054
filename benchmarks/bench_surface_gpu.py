"""The boundary-distance measures on the GPU (issue 44): HD + HD95 + ASSD + NSD on the device, the host and MONAI.

Cases (``--sizes N S B``; default 250 512 16, the issue's; ``--quick`` 48 128 4):

* ``sphere N^3``: two spheres of different radius and centre (:func:`bench_surface.spheres`), unit spacing (MONAI PR
  7008's sphere, for which MONAI with cuCIM publishes 45 ms at 250^3);
* ``smooth N^3``: two overlapping random smooth shapes (:func:`bench_device_edt.smooth_shapes`: thresholded
  Gaussian-filtered noise, about half the volume each), spacing (2.0, 0.8, 0.8) as the device-EDT benchmark;
* ``2-D B x S^2``: a batch of B blob masks (:func:`bench_surface.blobs_2d`), unit spacing, one call for the batch.

Per case, one call each (percentile 95, NSD tolerance 1.0 in spacing units, MONAI's convention, the default
``validate_args=True``), the inputs already on their device:

* ``device``: :func:`segmetrics_torch.functional.surface_distance_measures` on ``--device`` tensors (CUDA: boundaries
  and exact distance transforms on the GPU, ``ops.distance.distance_to_features_device``). With ``--device cpu`` the
  same route on CPU tensors, as the tests run it: the backend setting ``"tensor"`` and the family's device transform
  (``pair_distances(on_device=True)``; the family picks its transform by the masks' device, not by the setting), so
  the parity column compares two different codes on any machine;
* ``CPU``: the same call on CPU tensors (the host path: compiled kernels and KD-trees on all the machine's threads);
* ``MONAI`` 1.6: ``compute_hausdorff_distance`` (max, then percentile 95), ``compute_average_surface_distance``
  (symmetric) and ``compute_surface_dice`` (four calls: its API computes the distances per call) on ``--device``
  tensors. MONAI takes cuCIM by itself for CUDA tensors where cuCIM imports (there is no switch); without it, its
  CUDA path runs scipy's transform on the host. Its values (float32) are compared with ours as a check that both
  compute the same quantity.

Timing: one untimed warm-up call (kernel compilation, allocator growth), then the median of ``--repeat`` calls,
``torch.cuda.synchronize()`` around each; a library whose warm-up call alone takes more than ``--budget`` seconds is
reported by that first call (marked ``*``), and fewer repeats are taken where ``--repeat`` would exceed the budget.
Also printed: the largest ``|device - CPU|`` per measure (target <= 1e-12), the largest relative difference from
MONAI, and each case against the issue's GPU target (only judged on CUDA at the issue's sizes). Rows are printed as
they finish, so a run cut by a timeout keeps its finished rows.

Run::

    python benchmarks/bench_surface_gpu.py --device cuda            # the issue's cases, on a GPU
    python benchmarks/bench_surface_gpu.py --device cpu --quick     # small sizes, the device route on CPU tensors
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_device_edt import SPACING as SMOOTH_SPACING, smooth_shapes
from bench_surface import blobs_2d, spheres

from segmetrics_torch.functional import surface_distance_measures
from segmetrics_torch.functional.surface import distances
from segmetrics_torch.ops import use_backend

#: our result keys and the measures they are reported as
MEASURES = {"hausdorff": "HD", "hausdorff_percentile": "HD95", "assd": "ASSD", "nsd": "NSD"}
TOLERANCE = 1.0
PERCENTILE = 95
#: the issue's GPU targets: case (at the issue's sizes) -> milliseconds per call
TARGETS_MS = {"sphere 250^3": 30.0, "smooth 250^3": 300.0, "2-D 16 x 512^2": 10.0}
PARITY_TARGET = 1e-12
Spacing = tuple[float, ...] | None


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn: Callable[[], object], device: str, repeat: int, budget: float) -> tuple[float, bool]:
    """(seconds, first_call_only): the median of up to ``repeat`` calls after one warm-up call; the warm-up call's own
    time when that call alone took more than ``budget`` seconds."""
    _sync(device)
    start = time.perf_counter()
    fn()
    _sync(device)
    first = time.perf_counter() - start
    if first > budget:
        return first, True
    times = []
    for _ in range(max(1, min(repeat, int(budget / max(first, 1e-9))))):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times), False


@contextlib.contextmanager
def device_route(device: str) -> Iterator[None]:
    """The route CUDA inputs take, on ``device``: as it is on CUDA; on the CPU, the tensor code (backend setting
    ``"tensor"``) with the family's device transform, which the family chooses by the masks' device alone."""
    if device != "cpu":
        yield
        return
    original = distances.pair_distances
    distances.pair_distances = functools.partial(original, on_device=True)
    try:
        with use_backend("tensor"):
            yield
    finally:
        distances.pair_distances = original


def ours(p: torch.Tensor, g: torch.Tensor, spacing: Spacing) -> dict[str, np.ndarray]:
    result = surface_distance_measures(p, g, percentile=PERCENTILE, tolerance=TOLERANCE, spacing=spacing)
    return {key: result[key].double().cpu().numpy().ravel() for key in MEASURES}


def monai_measures(yp: torch.Tensor, yg: torch.Tensor, spacing: Spacing) -> dict[str, np.ndarray]:
    """MONAI's four calls on (B, 1, ...) float masks, as float64 numpy (B,)."""
    from monai.metrics import compute_average_surface_distance, compute_hausdorff_distance, compute_surface_dice

    sp = list(spacing) if spacing is not None else None
    out = {
        "hausdorff": compute_hausdorff_distance(yp, yg, include_background=True, spacing=sp),
        "hausdorff_percentile": compute_hausdorff_distance(
            yp, yg, include_background=True, percentile=PERCENTILE, spacing=sp
        ),
        "assd": compute_average_surface_distance(yp, yg, include_background=True, symmetric=True, spacing=sp),
        "nsd": compute_surface_dice(yp, yg, [TOLERANCE], include_background=True, spacing=sp),
    }
    return {key: torch.as_tensor(v).double().cpu().numpy().ravel() for key, v in out.items()}


def abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """The largest |a - b|, equal infinities and NaNs counting as equal (an unequal NaN / inf as inf)."""
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    d = np.where(same, 0.0, np.abs(a - b))
    return float(np.nan_to_num(d, nan=np.inf).max(initial=0.0))


def rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    d = np.where(same, 0.0, np.abs(a - b) / np.maximum(np.abs(b), 1e-300))
    return float(np.nan_to_num(d, nan=np.inf).max(initial=0.0))


def library_versions() -> tuple[str | None, str]:
    """MONAI's version (None when it does not import) and a line about cuCIM."""
    try:
        import monai

        monai_version: str | None = monai.__version__
    except ImportError:
        monai_version = None
    if importlib.util.find_spec("cucim") is None:
        return monai_version, "cuCIM: not installed"
    try:
        import cucim
        from cucim.core.operations.morphology import distance_transform_edt  # noqa: F401
    except Exception as exc:  # an installed cuCIM that cannot load (no CUDA, no cupy): MONAI skips it the same way
        return monai_version, f"cuCIM: installed but does not import ({type(exc).__name__}: {exc})"
    return monai_version, f"cuCIM {cucim.__version__}: MONAI uses it for CUDA tensors (EDT; erosion without spacing)"


def run_case(
    p: torch.Tensor, g: torch.Tensor, spacing: Spacing, device: str, repeat: int, budget: float, with_monai: bool
) -> tuple[dict[str, tuple[float, bool]], list[float], float]:
    """One case: {library: (seconds, first call only)}, the largest |device - CPU| per measure of :data:`MEASURES`,
    and the largest relative difference of the device's values from MONAI's (NaN without MONAI)."""
    pd, gd = p.to(device), g.to(device)
    values: dict[str, dict[str, np.ndarray]] = {}

    def run_device() -> None:
        with device_route(device):
            values["device"] = ours(pd, gd, spacing)

    def run_cpu() -> None:
        values["cpu"] = ours(p, g, spacing)

    times = {"device": timed(run_device, device, repeat, budget), "cpu": timed(run_cpu, "cpu", repeat, budget)}
    times["monai"] = (float("nan"), False)
    if with_monai:
        yp, yg = pd.float().unsqueeze(1), gd.float().unsqueeze(1)  # MONAI's (B, 1, ...) channel-first masks

        def run_monai() -> None:
            values["monai"] = monai_measures(yp, yg, spacing)

        times["monai"] = timed(run_monai, device, repeat, budget)
    diffs = [abs_diff(values["device"][key], values["cpu"][key]) for key in MEASURES]
    vs_monai = float("nan")
    if "monai" in values:
        vs_monai = max(rel_diff(values["device"][key], values["monai"][key]) for key in MEASURES)
    return times, diffs, vs_monai


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    parser.add_argument("--quick", action="store_true", help="small sizes (48 128 4) unless --sizes is given")
    parser.add_argument(
        "--sizes", type=int, nargs=3, metavar=("N", "S", "B"), help="volume side N, 2-D side S, 2-D batch B"
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed calls after the warm-up (median)")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of timed calls per library and case")
    parser.add_argument("--only", default="", help="the cases whose name contains this text")
    parser.add_argument("--skip-monai", action="store_true")
    args = parser.parse_args()
    device = args.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available")
    if device not in ("cpu",) and not device.startswith("cuda"):
        parser.error(f"--device: expected 'cuda', 'cuda:N' or 'cpu', got {device!r}")
    n, side, batch = args.sizes or ((48, 128, 4) if args.quick else (250, 512, 16))
    warnings.simplefilter("ignore")  # MONAI's and ours' empty-mask and deprecation warnings are not what is timed

    monai_version, cucim_line = library_versions()
    run_monai = monai_version is not None and not args.skip_monai
    import numba

    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else "CPU tensors (the device route)"
    print(
        f"torch {torch.__version__} (CUDA {torch.version.cuda}), device {device}: {name}; CPU path: {os.cpu_count()} "
        f"CPUs, torch threads {torch.get_num_threads()}, numba threads {numba.get_num_threads()}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"MONAI {monai_version or 'not installed'}; {cucim_line}")
    print(
        f"HD + HD95 + ASSD + NSD (tolerance {TOLERANCE}) in one call, convention monai; ms per call, median of up to "
        f"{args.repeat} after a warm-up (* = the first call, slower than --budget {args.budget:g} s)"
    )

    cases: list[tuple[str, Callable[[], tuple[np.ndarray, np.ndarray]], Spacing, bool]] = [
        (f"sphere {n}^3", lambda: spheres(n), None, False),
        (f"smooth {n}^3", lambda: smooth_shapes(n), SMOOTH_SPACING, False),
        (f"2-D {batch} x {side}^2", lambda: blobs_2d(batch, side), None, True),
    ]
    parity = " ".join(f"{m:>7}" for m in MEASURES.values())
    print(
        f"{'case':<18}{'device':>9}{'CPU':>9}{'CPU/dev':>8}{'MONAI':>10}{'MONAI/dev':>10}"
        f"  max|dev-CPU| {parity}  {'vs MONAI':>8}  target"
    )
    verdicts: list[tuple[str, bool]] = []
    worst = 0.0
    for label, make, spacing, is_2d in cases:
        if args.only not in label:
            continue
        p, g = (torch.from_numpy(m) for m in make())
        if not is_2d:
            p, g = p[None], g[None]  # one volume: (1, D, H, W)
        times, diffs, vs_monai = run_case(p, g, spacing, device, args.repeat, args.budget, run_monai)
        worst = max(worst, *diffs)
        t_dev = times["device"][0]
        target = TARGETS_MS.get(label)
        if target is None or not device.startswith("cuda"):
            verdict = "n/a (" + ("not CUDA" if not device.startswith("cuda") else "not the issue's size") + ")"
        else:
            met = t_dev * 1e3 <= target
            verdict = f"<= {target:g} ms: {'met' if met else 'NOT met'}"
            verdicts.append((f"{label} <= {target:g} ms: {t_dev * 1e3:.1f} ms", met))
        ms = {k: "-" if t != t else f"{t * 1e3:.1f}{'*' if first else ''}" for k, (t, first) in times.items()}
        ratio = {k: "-" if t != t else f"{t / t_dev:.1f}x" for k, (t, _) in times.items()}
        print(
            f"{label:<18}{ms['device']:>9}{ms['cpu']:>9}{ratio['cpu']:>8}{ms['monai']:>10}{ratio['monai']:>10}"
            f"  {'':>12} "
            + " ".join(f"{d:>7.0e}" for d in diffs)
            + f"  {'-' if vs_monai != vs_monai else f'{vs_monai:.1e}':>8}  {verdict}",
            flush=True,
        )

    judged = "" if device.startswith("cuda") else ": not judged, no CUDA device in this run"
    print(f"\nTargets (issue 44, GPU){judged}:")
    for text, ok in verdicts:
        print(f"  {'met    ' if ok else 'NOT met'} {text}")
    ok = worst <= PARITY_TARGET
    print(f"  {'met    ' if ok else 'NOT met'} |device - CPU| <= {PARITY_TARGET:g} on every value: {worst:.1e}")


if __name__ == "__main__":
    main()
