"""BSDS boundary benchmark: segmetrics-torch vs pyEdgeEval 0.2.8 on the same BSDS500 images, in one run.

Both compute the per-threshold counts ``cntR, sumR, cntP, sumP`` of the BSDS boundary benchmark (99 thresholds,
``max_dist`` 0.0075, thinned machine maps) of the ucm2 soft maps against the annotators' ``Boundaries``:

* ours: ``boundary_pr_counts(..., thresholds=99, input_format="ucm2")`` on the double-size ucm2 grids (list input);
  the first call compiles the numba kernels and is excluded (a warm-up on a small input);
* peer: pyEdgeEval's ``evaluate_boundaries_threshold_multiple_gts`` on ``ucm2[2::2, 2::2]`` (float64 in [0, 1]) with
  ``thresholds = np.linspace(1/100, 99/100, 99)``, ``apply_thinning=True, apply_nms=False``, one image per call
  (single-threaded; ~2-3 CPU minutes per image).

Case 1 (the headline) times one image; case 2 times the whole sample (ours in batches; the peer on the first
``--peer-images`` images only, extrapolated per image). Both print seconds per image, the ratio, whether ``sumR`` and
``sumP`` are identical between the libraries (they do not depend on the matching) and the largest difference of the
per-threshold F (``cntR``/``cntP`` may differ: ours is the maximum matching, pyEdgeEval's CSA approximates it).
Data: ``../shared/bsds_sample/BSDS500/{ucm2/test, data/groundTruth/test}/*.mat`` (``--data``); without it a
synthetic stand-in is used (clearly labelled).

``--levels distinct`` (issue 16) times the hard case instead: soft maps whose 99 thresholded maps all differ, like the
PNG outputs of edge detectors (HED, RCF, PiDiNet), where no level can be copied from another. Each sample image's
``ucm2[2::2, 2::2]`` is Gaussian-blurred (sigma 1.5), divided by its 99th percentile, clipped to [0, 1] and rounded to
1/255 (a uint8 map, read as ``value / 255`` by both libraries); the script checks and prints that all 99 thresholded
maps of every image differ. It reports CPU seconds per image (``time.process_time``, all threads of the process) and
wall seconds for ours (all images, lists of ``--batch``) and for pyEdgeEval, at 99 and at 9 thresholds, and the
ratios. pyEdgeEval at 9 thresholds is measured on all 9; at 99 thresholds it is measured on 9 of them spread over the
range (every 11th: 0.06, 0.17, ..., 0.94, one per block of 11) and extrapolated (x 11), which the output says.
``--threads 1`` gives per-core figures (pyEdgeEval is single-threaded anyway). Run::

    python benchmarks/bench_boundary.py                   # CPU, default torch/numba threads (~3-5 minutes)
    python benchmarks/bench_boundary.py --skip-peer       # ours only
    python benchmarks/bench_boundary.py --device cuda     # threshold + thin on the GPU (matching stays on the CPU)
    python benchmarks/bench_boundary.py --levels distinct [--threads 1] [--peer-images 20]   # all levels differ
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import os
import platform
import statistics
import time
from pathlib import Path

import numba
import numpy as np
import torch

from segmetrics_torch.functional.boundary import annotator_boundaries, boundary_pr_counts, default_thresholds
from segmetrics_torch.io import read_bsds_ground_truth, read_mat_array

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "bsds_sample"
N_THRESHOLDS = 99
MAX_DIST = 0.0075


# ----------------------------------------------------------------------------------------------------------- data
def image_ids(data: Path) -> list[str]:
    return sorted(p.stem for p in (data / "BSDS500" / "ucm2" / "test").glob("*.mat"))


def load_image(data: Path, image_id: str) -> tuple[np.ndarray, np.ndarray]:
    """(double-size ucm2 float64, (A, H, W) bool annotator boundaries) of one BSDS500 test image."""
    ucm2 = read_mat_array(data / "BSDS500" / "ucm2" / "test" / f"{image_id}.mat", "ucm2")
    gt = read_bsds_ground_truth(data / "BSDS500" / "data" / "groundTruth" / "test" / f"{image_id}.mat").boundaries
    return ucm2, gt


def synthetic_image(seed: int | str, h: int = 321, w: int = 481, annotators: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Stand-in when the BSDS sample is absent: Voronoi label maps per annotator and a blurred, noisy soft map."""
    from scipy import ndimage

    rng = np.random.default_rng(int(seed))
    seeds = rng.uniform(0, 1, (24, 2)) * (h, w)
    yy, xx = np.mgrid[:h, :w]
    segs = []
    for _ in range(annotators):
        s = seeds + rng.normal(0, 3, seeds.shape)
        d = (yy[..., None] - s[:, 0]) ** 2 + (xx[..., None] - s[:, 1]) ** 2
        segs.append(d.argmin(-1))
    gt = annotator_boundaries(torch.from_numpy(np.stack(segs))).numpy()
    soft = ndimage.gaussian_filter(gt.mean(0), 1.0) + rng.normal(0, 0.02, (h, w))
    soft = np.clip(soft / soft.max(), 0, 1)
    ucm2 = np.zeros((2 * h + 1, 2 * w + 1))
    ucm2[2::2, 2::2] = soft
    return ucm2, gt


# ------------------------------------------------------------------------------------------------------- measures
def f_per_threshold(cnt_r, sum_r, cnt_p, sum_p) -> np.ndarray:
    """F = 2PR / (P + R) per threshold, with R = cntR/sumR and P = cntP/sumP (0 when a denominator is 0)."""
    cnt_r, sum_r, cnt_p, sum_p = (np.asarray(a, np.float64) for a in (cnt_r, sum_r, cnt_p, sum_p))
    r = np.divide(cnt_r, sum_r, out=np.zeros_like(cnt_r), where=sum_r > 0)
    p = np.divide(cnt_p, sum_p, out=np.zeros_like(cnt_p), where=sum_p > 0)
    return np.divide(2 * p * r, p + r, out=np.zeros_like(p), where=(p + r) > 0)


def compare(ours: np.ndarray, peer: np.ndarray) -> dict:
    """ours, peer: (4, K) counts cntR, sumR, cntP, sumP of one image."""
    df = np.abs(f_per_threshold(*ours) - f_per_threshold(*peer))
    return {
        "sum_r": bool((ours[1] == peer[1]).all()),
        "sum_p": bool((ours[3] == peer[3]).all()),
        "d_cnt_r": (int((ours[0] - peer[0]).min()), int((ours[0] - peer[0]).max())),
        "d_cnt_p": (int((ours[2] - peer[2]).min()), int((ours[2] - peer[2]).max())),
        "max_df": float(df.max()),
        "argmax_df": int(df.argmax()),
    }


# --------------------------------------------------------------------------------------------------------- timing
def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_ours(ucm2s: list[np.ndarray], gts: list[np.ndarray], device: str, batch: int) -> tuple[float, np.ndarray]:
    """Seconds for all images (inputs already on ``device``, lists of ``batch`` images per call), (4, B, K) counts."""
    preds = [torch.from_numpy(u).to(device) for u in ucm2s]
    targets = [torch.from_numpy(g).to(device) for g in gts]
    sync(device)
    start = time.perf_counter()
    outs = []
    for i in range(0, len(preds), batch):
        outs.append(
            boundary_pr_counts(
                preds[i : i + batch],
                targets[i : i + batch],
                thresholds=N_THRESHOLDS,
                max_dist=MAX_DIST,
                input_format="ucm2",
            )
        )
    sync(device)
    elapsed = time.perf_counter() - start
    counts = np.stack(
        [torch.cat([getattr(o, k) for o in outs]).cpu().numpy() for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")]
    )
    return elapsed, counts


def warm_up(device: str) -> float:
    """First call on a small input: compiles the numba kernels (and starts CUDA); returns its seconds."""
    rng = np.random.default_rng(0)
    ucm2 = np.round(rng.uniform(0, 1, (2, 65, 81)), 2)
    gt = np.zeros((2, 3, 32, 40), bool)
    gt[:, :, 16, 4:36] = True
    gt[:, 1:, 4:28, 20] = True
    start = time.perf_counter()
    run_ours(list(ucm2), list(gt), device, batch=2)
    return time.perf_counter() - start


def peer_counts(ucm2: np.ndarray, gt: np.ndarray, thr: np.ndarray) -> tuple[float, float, np.ndarray]:
    """pyEdgeEval on one image: (wall seconds, process CPU seconds, (4, K) counts cntR, sumR, cntP, sumP)."""
    with contextlib.redirect_stdout(io.StringIO()):  # its import prints a note about MATLAB v7.3 .mat files
        from pyEdgeEval.common.binary_label.evaluate_boundaries import evaluate_boundaries_threshold_multiple_gts

    pb = np.ascontiguousarray(ucm2[2::2, 2::2], dtype=np.float64)
    gts = [np.asarray(g, bool) for g in gt]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    out = evaluate_boundaries_threshold_multiple_gts(
        thresholds=thr, pred=pb, gts=gts, max_dist=MAX_DIST, apply_thinning=True, apply_nms=False
    )
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return wall, cpu, np.stack([np.asarray(a) for a in out]).astype(np.int64)


def fmt_cmp(c: dict, thr: np.ndarray, indent: str) -> str:
    yes = {True: "yes", False: "NO"}
    return (
        f"{indent}sumR identical: {yes[c['sum_r']]}, sumP identical: {yes[c['sum_p']]} (all 99 thresholds); "
        f"max |dF| per threshold {c['max_df']:.1e} (t={thr[c['argmax_df']]:.2f})\n"
        f"{indent}ours - peer: cntR in [{c['d_cnt_r'][0]}, {c['d_cnt_r'][1]}], "
        f"cntP in [{c['d_cnt_p'][0]}, {c['d_cnt_p'][1]}]"
    )


# ------------------------------------------------------------------------------------------ issue 16: distinct
def distinct_map(ucm2: np.ndarray) -> np.ndarray:
    """uint8 soft map whose 99 thresholded maps all differ: the ucm2 soft map blurred, stretched, rounded to 1/255."""
    from scipy import ndimage

    b = ndimage.gaussian_filter(ucm2[2::2, 2::2], 1.5)
    return np.round(np.clip(b / np.quantile(b, 0.99), 0, 1) * 255).astype(np.uint8)


def distinct_levels(pb: np.ndarray, thr: np.ndarray) -> int:
    """Number of distinct maps ``pb >= t`` over the thresholds."""
    return len({np.packbits(pb >= t).tobytes() for t in thr})


def time_ours(preds: list[np.ndarray], gts: list[np.ndarray], n_thr: int, device: str, batch: int):
    """(CPU s, wall s) for all images, lists of ``batch`` images per call, and the (4, B, K) counts."""
    p = [torch.from_numpy(x).to(device) for x in preds]
    g = [torch.from_numpy(x).to(device) for x in gts]
    sync(device)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    outs = [
        boundary_pr_counts(p[i : i + batch], g[i : i + batch], thresholds=n_thr, max_dist=MAX_DIST)
        for i in range(0, len(p), batch)
    ]
    sync(device)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    counts = np.stack(
        [torch.cat([getattr(o, k) for o in outs]).cpu().numpy() for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")]
    )
    return cpu, wall, counts


def peer_on(pred: np.ndarray, gt: np.ndarray, thr: np.ndarray) -> tuple[float, float, np.ndarray]:
    """pyEdgeEval on one uint8 map (as value / 255) at the given thresholds: (wall s, CPU s, (4, K) counts)."""
    with contextlib.redirect_stdout(io.StringIO()):
        from pyEdgeEval.common.binary_label.evaluate_boundaries import evaluate_boundaries_threshold_multiple_gts

    pb = pred.astype(np.float64) / 255
    cpu0, wall0 = time.process_time(), time.perf_counter()
    out = evaluate_boundaries_threshold_multiple_gts(
        thresholds=thr,
        pred=pb,
        gts=[np.asarray(x, bool) for x in gt],
        max_dist=MAX_DIST,
        apply_thinning=True,
        apply_nms=False,
    )
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return wall, cpu, np.stack([np.asarray(a) for a in out]).astype(np.int64)


def distinct_levels_case(args: argparse.Namespace, ids: list[str], load) -> None:
    data = [load(i) for i in ids]
    preds, gts = [distinct_map(d[0]) for d in data], [d[1] for d in data]
    thr99 = np.linspace(1 / 100, 99 / 100, 99)
    n_distinct = [distinct_levels(p / 255, thr99) for p in preds]
    load_avg = os.getloadavg()
    print(
        f"\nDistinct-level soft maps (issue 16): {len(ids)} images, ucm2[2::2, 2::2] blurred (sigma 1.5), / 99th "
        f"percentile, rounded to 1/255 (uint8)\n  distinct thresholded maps per image at 99 thresholds: min "
        f"{min(n_distinct)}, max {max(n_distinct)} ({'ALL 99 DIFFER' if min(n_distinct) == 99 else 'NOT all differ'})"
        f"\n  load average before the run: {load_avg[0]:.2f} {load_avg[1]:.2f} {load_avg[2]:.2f} "
        f"({os.cpu_count()} CPUs)"
    )
    n_peer = 0 if args.skip_peer else max(1, min(args.peer_images, len(ids)))
    for n_thr in (99, 9):
        ours_thr = default_thresholds(n_thr).numpy()
        peer_thr = np.linspace(1 / (n_thr + 1), 1 - 1 / (n_thr + 1), n_thr)
        same = all(
            ((p / 255 >= a) == (p / 255 >= b)).all() for p in preds for a, b in zip(ours_thr, peer_thr, strict=True)
        )
        runs = [time_ours(preds, gts, n_thr, args.device, args.batch) for _ in range(args.repeats)]
        cpu = statistics.median(r[0] for r in runs) / len(ids)
        wall = statistics.median(r[1] for r in runs) / len(ids)
        print(
            f"\n  {n_thr} thresholds (ours MATLAB linspace, peer np.linspace: binarised maps identical: "
            f"{'yes' if same else 'NO'})\n    ours: {cpu:.3f} CPU s/img, {wall:.3f} wall s/img (median of "
            f"{args.repeats} runs over {len(ids)} images: CPU {', '.join(f'{r[0]:.2f}' for r in runs)} s)"
        )
        if not n_peer:
            continue
        sub = np.arange(5, 99, 11) if n_thr == 99 else np.arange(n_thr)  # 9 thresholds spread over the range
        scale = n_thr / len(sub)
        p_cpu, p_wall, cmps = [], [], []
        for j in range(n_peer):
            w, c, counts = peer_on(preds[j], gts[j], peer_thr[sub])
            p_cpu.append(c * scale)
            p_wall.append(w * scale)
            cmps.append(compare(runs[0][2][:, j, sub], counts))
        how = (
            f"measured on {len(sub)} of the 99 thresholds ({', '.join(f'{t:.2f}' for t in peer_thr[sub])}), "
            f"EXTRAPOLATED x {scale:.0f}"
            if n_thr == 99
            else f"measured on all {n_thr} thresholds"
        )
        pc, pw = float(np.mean(p_cpu)), float(np.mean(p_wall))
        print(
            f"    peer: {pc:.1f} CPU s/img, {pw:.1f} wall s/img ({how}; {n_peer} image(s): "
            f"{', '.join(f'{c:.1f}' for c in p_cpu)})\n"
            f"    ratio peer/ours: CPU {pc / cpu:.0f}x, wall {pw / wall:.0f}x\n"
            f"    agreement on the measured thresholds: sumR identical {all(c['sum_r'] for c in cmps)}, sumP "
            f"identical {all(c['sum_p'] for c in cmps)}, ours - peer cntR in [{min(c['d_cnt_r'][0] for c in cmps)}, "
            f"{max(c['d_cnt_r'][1] for c in cmps)}], cntP in [{min(c['d_cnt_p'][0] for c in cmps)}, "
            f"{max(c['d_cnt_p'][1] for c in cmps)}], max |dF| {max(c['max_df'] for c in cmps):.1e}"
        )
    load_avg = os.getloadavg()
    print(f"\n  load average after the run: {load_avg[0]:.2f} {load_avg[1]:.2f} {load_avg[2]:.2f}")


# ----------------------------------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="device of our input tensors (cuda: threshold/thin on GPU)")
    parser.add_argument("--threads", type=int, default=None, help="torch and numba threads (default: leave as is)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding BSDS500/ (the BSDS sample)")
    parser.add_argument("--image", default="100007", help="image id of case 1")
    parser.add_argument("--batch", type=int, default=4, help="images per call of ours in case 2")
    parser.add_argument("--repeats", type=int, default=3, help="runs of ours per case (the median is reported)")
    parser.add_argument("--peer-images", type=int, default=1, help="images the peer runs on in case 2 (the first N)")
    parser.add_argument("--skip-peer", action="store_true", help="time ours only")
    parser.add_argument(
        "--levels",
        choices=("ucm2", "distinct"),
        default="ucm2",
        help="ucm2: the gPb ucm2 maps (few distinct levels); distinct: blurred maps whose 99 levels all differ",
    )
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available")
    if args.threads is not None:
        numba.set_num_threads(args.threads)  # first: it resets torch's OpenMP thread count to the default
        torch.set_num_threads(args.threads)

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; torch {torch.__version__}, "
        f"numba {numba.__version__}, numpy {np.__version__}"
    )
    print(
        f"device {args.device}{f' ({torch.cuda.get_device_name()})' if args.device.startswith('cuda') else ''}; "
        f"threads: torch {torch.get_num_threads()}, numba {numba.get_num_threads()}"
    )
    ids = image_ids(args.data)
    if ids:
        data_label = f"BSDS500 sample {args.data.resolve()}"
        if args.image not in ids:
            parser.error(f"--image {args.image}: not in {data_label} ({len(ids)} images)")
        load = functools.partial(load_image, args.data)
    else:
        data_label = f"SYNTHETIC stand-in ({args.data} has no BSDS500/ucm2/test/*.mat)"
        ids, args.image = [str(i) for i in range(20)], "0"
        load = synthetic_image
    print(f"data: {data_label}; {N_THRESHOLDS} thresholds, max_dist {MAX_DIST}, thinning on")
    thr = np.linspace(1 / 100, 99 / 100, 99)  # the peer's thresholds
    ours_thr = default_thresholds(N_THRESHOLDS).numpy()  # MATLAB linspace
    print(f"ours: first (warm-up) call, numba compile or cache load: {warm_up(args.device):.1f} s, excluded")
    if args.levels == "distinct":
        distinct_levels_case(args, ids, load)
        return

    # ---- case 1: one image
    ucm2, gt = load(args.image)
    pb = ucm2[2::2, 2::2]
    same_maps = all(((pb >= a) == (pb >= b)).all() for a, b in zip(ours_thr, thr, strict=True))
    print(
        f"\nCase 1: image {args.image}, {pb.shape[1]}x{pb.shape[0]}, {gt.shape[0]} annotators\n"
        f"  thresholds: ours MATLAB linspace, peer np.linspace ({int((ours_thr != thr).sum())}/99 differ in the "
        f"last bits); binarised maps identical: {'yes' if same_maps else 'NO'}"
    )
    runs = [run_ours([ucm2], [gt], args.device, 1) for _ in range(args.repeats)]
    ours_s = statistics.median(r[0] for r in runs)
    ours_counts = runs[0][1][:, 0]
    print(f"  ours: {ours_s:.3f} s/img wall (median of {args.repeats}: {', '.join(f'{r[0]:.3f}' for r in runs)})")
    peer_cache: dict[str, tuple[float, float, np.ndarray]] = {}
    if not args.skip_peer:
        peer_cache[args.image] = peer_counts(ucm2, gt, thr)
        wall, cpu, counts = peer_cache[args.image]
        print(f"  peer: {wall:.1f} s/img wall, {cpu:.1f} s CPU (1 run)")
        print(f"  ratio peer/ours: {wall / ours_s:.0f}x")
        print(fmt_cmp(compare(ours_counts, counts), thr, "  "))

    # ---- case 2: the whole sample
    data = [load(i) for i in ids]
    ucm2s, gts = [d[0] for d in data], [d[1] for d in data]
    n_ann = sorted({g.shape[0] for g in gts})
    print(
        f"\nCase 2: {len(ids)} images ({min(n_ann)}-{max(n_ann)} annotators), ours in lists of {args.batch} images "
        f"per call"
    )
    runs = [run_ours(ucm2s, gts, args.device, args.batch) for _ in range(args.repeats)]
    total = statistics.median(r[0] for r in runs)
    print(
        f"  ours: {total:.2f} s total, {total / len(ids):.3f} s/img wall (median of {args.repeats}: "
        f"{', '.join(f'{r[0]:.2f}' for r in runs)} s)"
    )
    if not args.skip_peer:
        n_peer = max(1, min(args.peer_images, len(ids)))
        walls, cpus = [], []
        for j, image_id in enumerate(ids[:n_peer]):
            reused = image_id in peer_cache
            if not reused:
                peer_cache[image_id] = peer_counts(ucm2s[j], gts[j], thr)
            wall, cpu, counts = peer_cache[image_id]
            walls.append(wall)
            cpus.append(cpu)
            note = " (the case-1 run, reused)" if reused else ""
            print(f"  peer on {image_id}: {wall:.1f} s wall, {cpu:.1f} s CPU{note}")
            print(fmt_cmp(compare(runs[0][1][:, j], counts), thr, "    "))
        per_img = float(np.mean(walls))
        print(
            f"  peer: {per_img:.1f} s/img wall, {np.mean(cpus):.1f} s/img CPU, MEASURED ON {n_peer} IMAGE(S) "
            f"({', '.join(ids[:n_peer])}); extrapolated to {len(ids)} images: {per_img * len(ids):.0f} s"
        )
        print(f"  ratio peer/ours (per image): {per_img / (total / len(ids)):.0f}x")


if __name__ == "__main__":
    main()
