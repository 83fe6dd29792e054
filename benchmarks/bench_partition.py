"""Partition measures: segmetrics-torch vs scikit-image on the same BSDS500 partitions and annotators, in one run.

* Case 1, one partition per image: the gPb-owt-ucm partition ``gridbmap2seg(ucm2 > 0.2)`` of each sample image
  against its first 5 annotators. Ours: every SEISM measure but Fb (fop, fr, pri, voi, nvoi, sc, ssc, dhd, sdhd, vd,
  bgm, bce, gce, lce) from one table per annotator, ``partition_measures`` on one image per call and on the whole
  batch. Peer: scikit-image's ``variation_of_information`` + ``adapted_rand_error`` (``ignore_labels=()``) on the
  same 5 pairs (two measures only).
* Case 2, hierarchies: the 99-level ucm2 hierarchy (thresholds 0.01..0.99) of each image against 5 annotators, all
  measures but Fb plus the BSR region-benchmark counts (``hierarchy_measures``), against scikit-image's VoI + ARE
  on the 99 x 5 pairs (the peer gets the partitions for free).
* Optional (``--with-fb``): Fb of one image's 99 levels (the boundary matching dominates).

Every figure is seconds per image (median over images of the best of ``--repeat`` runs), with the ratio, and the
largest difference between the two libraries' VoI and Fr on the same pairs. The first call (numba compilation) is
excluded. Data: ``../shared/bsds_sample`` (``--data``). Run::

    python benchmarks/bench_partition.py               # CPU (~1 minute)
    python benchmarks/bench_partition.py --device cuda
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numba
import numpy as np
import torch
from skimage.metrics import adapted_rand_error, variation_of_information

from segmetrics_torch.functional import hierarchy_measures, partition_measures
from segmetrics_torch.functional.partition import TABLE_MEASURES
from segmetrics_torch.io import read_bsds_ground_truth, read_mat_array
from segmetrics_torch.ops.hierarchy import ucm_hierarchy

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "bsds_sample"
ANNOTATORS = 5


def load(data: Path, n_images: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    ids = sorted(p.stem for p in (data / "BSDS500" / "ucm2" / "test").glob("*.mat"))[:n_images]
    if not ids:
        raise SystemExit(f"no BSDS500 sample under {data} (pass --data)")
    ucms, gts = [], []
    for i in ids:
        gt = read_bsds_ground_truth(data / "BSDS500" / "data" / "groundTruth" / "test" / f"{i}.mat").segmentations
        if gt.shape[0] < ANNOTATORS:
            continue
        ucms.append(read_mat_array(data / "BSDS500" / "ucm2" / "test" / f"{i}.mat", "ucm2"))
        gts.append(gt[:ANNOTATORS].astype(np.int64))
    return ucms, gts


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def best_of(fn, repeat: int, device: str) -> float:
    times = []
    for _ in range(repeat):
        sync(device)
        t0 = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t0)
    return min(times)


def skimage_pairs(parts: list[np.ndarray], gts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """VoI (bits) and Fr = 1 - adapted Rand error of every (partition, annotator) pair."""
    voi = np.empty((len(parts), len(gts)))
    fr = np.empty((len(parts), len(gts)))
    for i, p in enumerate(parts):
        for k, g in enumerate(gts):
            voi[i, k] = variation_of_information(g, p, ignore_labels=()).sum()
            fr[i, k] = 1 - adapted_rand_error(g, p, ignore_labels=())[0]
    return voi, fr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--images", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--with-fb", action="store_true")
    args = parser.parse_args()
    dev = args.device
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), numba {numba.__version__} ({numba.get_num_threads()} threads), "
        f"device {dev}" + (f" ({torch.cuda.get_device_name()})" if dev.startswith("cuda") else "")
    )
    ucms, gts = load(args.data, args.images)
    n = len(ucms)
    print(f"# {n} BSDS500 test images (481x321), {ANNOTATORS} annotators each")
    ucm_t = [torch.from_numpy(u).to(dev) for u in ucms]
    gt_t = [torch.from_numpy(g).to(dev) for g in gts]
    parts = [ucm_hierarchy([u], torch.tensor([0.2], dtype=torch.float64)).partitions(0)[0] for u in ucm_t]
    partition_measures(parts[:1], gt_t[:1], measures=TABLE_MEASURES)  # compile the kernels
    hierarchy_measures(ucm_t[:1], gt_t[:1], thresholds=3, measures=TABLE_MEASURES)

    # ---------------------------------------------------------------- case 1
    ours = [
        best_of(
            lambda i=i: partition_measures(parts[i : i + 1], gt_t[i : i + 1], measures=TABLE_MEASURES), args.repeat, dev
        )
        for i in range(n)
    ]
    batch = best_of(lambda: partition_measures(parts, gt_t, measures=TABLE_MEASURES), args.repeat, dev) / n
    parts_np = [p.cpu().numpy() for p in parts]
    peer = [best_of(lambda i=i: skimage_pairs([parts_np[i]], gts[i]), args.repeat, "cpu") for i in range(n)]
    values = partition_measures(parts, gt_t, measures=["voi", "fr"])
    ref = [skimage_pairs([parts_np[i]], gts[i]) for i in range(n)]
    d_voi = max(abs(float(values["voi"][i]) - ref[i][0].mean()) for i in range(n))
    regions = statistics.median(int(p.max()) + 1 for p in parts)
    o, p_ = statistics.median(ours), statistics.median(peer)
    print(f"\n## Case 1: one partition (gPb ucm2 > 0.2, median {regions:.0f} regions) vs {ANNOTATORS} annotators")
    print("| | s / image | ratio |")
    print("|---|---|---|")
    print(f"| scikit-image VoI + ARE (2 measures, 5 pairs) | {p_:.4f} | 1 |")
    print(f"| ours, 14 measures, one image per call | {o:.4f} | {p_ / o:.1f}x |")
    print(f"| ours, 14 measures, batch of {n} | {batch:.4f} | {p_ / batch:.1f}x |")
    print(f"max |VoI ours - skimage| = {d_voi:.2e} (mean over annotators)")

    # ---------------------------------------------------------------- case 2
    ours_h = [
        best_of(
            lambda i=i: hierarchy_measures(ucm_t[i : i + 1], gt_t[i : i + 1], measures=TABLE_MEASURES), args.repeat, dev
        )
        for i in range(n)
    ]
    k_peer = min(n, 3)
    peer_h = []
    for i in range(k_peer):
        levels = ucm_hierarchy([ucm_t[i]], torch.linspace(0.01, 0.99, 99, dtype=torch.float64)).partitions(0)
        levels_np = list(levels.cpu().numpy())
        peer_h.append(best_of(lambda ln=levels_np, i=i: skimage_pairs(ln, gts[i]), 1, "cpu"))
    oh, ph = statistics.median(ours_h), statistics.median(peer_h)
    print(f"\n## Case 2: 99-level ucm2 hierarchy vs {ANNOTATORS} annotators, all measures but Fb")
    print("| | s / image | ratio |")
    print("|---|---|---|")
    print(f"| scikit-image VoI + ARE on 99 x 5 pairs ({k_peer} images) | {ph:.3f} | 1 |")
    print(f"| ours, 14 measures + BSR region counts, 99 levels | {oh:.3f} | {ph / oh:.1f}x |")
    print(f"ours: max over images {max(ours_h):.3f} s (target < 1 s)")

    if args.with_fb:
        t = best_of(lambda: hierarchy_measures(ucm_t[:1], gt_t[:1], measures=["fb"], region_benchmark=False), 1, dev)
        print(f"\n## Fb of one image's 99 levels (boundary matching): {t:.2f} s")


if __name__ == "__main__":
    main()
