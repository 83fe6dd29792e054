"""Object proposals: segmetrics-torch vs a straightforward numpy loop over proposals (the package's oracle), same
pool, same run.

One 481x321 image, ``--proposals`` ranked masks (random boxes and ellipses, 5,000 by default) and ``--objects``
ground-truth objects (10) with a void band: ours computes every (proposal, object) count with chunked matrix products
and the best overlap for all the MCG numbers of proposals from one running maximum; the peer
(:func:`segmetrics_torch.reference.proposals.best_overlaps`) loops over proposals and objects. The peer runs on the
first ``--peer-proposals`` masks and is extrapolated linearly (its cost is linear in the pool size); the printed
check compares both on that sub-pool. ``--chunk`` bounds the float copy of the pool.

The boundary variant (best morphological boundary F per object, DAVIS ``f_boundary`` at 0.8 % of the diagonal) is
timed the same way against a numpy/scipy loop over proposals that computes each proposal's ``seg2bmap`` and disk
dilation once and scores it against all objects at once (the objects' boundaries and dilations precomputed), and
checked against the package's per-pair oracle on the first proposals. Run::

    python benchmarks/bench_proposals.py
    python benchmarks/bench_proposals.py --proposals 10000 --chunk 256   # the memory-bounded case
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
import torch
from scipy import ndimage

from segmetrics_torch.functional.proposals import (
    MCG_PROPOSAL_COUNTS,
    best_boundary_f,
    best_overlaps,
    proposal_boundary_overlaps,
    proposal_overlaps,
)
from segmetrics_torch.reference import proposals as ref
from segmetrics_torch.reference.boundary import seg2bmap

H, W = 321, 481


def shapes(rng: np.random.Generator, n: int) -> np.ndarray:
    yy, xx = np.mgrid[:H, :W]
    out = np.zeros((n, H, W), dtype=bool)
    for i in range(n):
        cy, cx = rng.uniform(0, H), rng.uniform(0, W)
        ry, rx = rng.uniform(5, H / 2), rng.uniform(5, W / 2)
        if rng.random() < 0.5:
            out[i] = (np.abs(yy - cy) <= ry) & (np.abs(xx - cx) <= rx)
        else:
            out[i] = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
    return out


def numpy_boundary_loop(pool: np.ndarray, objects: np.ndarray, void: np.ndarray, bound_th: float = 0.008) -> dict:
    """Best boundary F per object for every MCG N: one seg2bmap + dilation per proposal, all objects at once."""
    radius = np.ceil(bound_th * np.hypot(H, W))
    r = int(radius)
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    disk = xx**2 + yy**2 <= radius**2
    valid = ~void
    gt_b = np.stack([seg2bmap(o) for o in objects])
    gt_dil = np.stack([ndimage.binary_dilation(b, structure=disk) for b in gt_b])
    gt_bv = gt_b & valid
    n_gt = gt_bv.sum((1, 2))
    f = np.zeros((len(pool), len(objects)))
    for i, mask in enumerate(pool):
        fg_b = seg2bmap(mask)
        fg_dil = ndimage.binary_dilation(fg_b, structure=disk)
        fg_bv = fg_b & valid
        n_fg = fg_bv.sum()
        p = np.where(n_gt == 0, 0.0, (gt_dil & fg_bv).sum((1, 2)) / max(n_fg, 1)) if n_fg else np.ones(len(objects))
        rc = (gt_bv & fg_dil).sum((1, 2)) / np.maximum(n_gt, 1)
        rc = np.where(n_gt == 0, 1.0, rc if n_fg else 0.0)
        f[i] = np.where(p + rc == 0, 0.0, 2 * p * rc / np.where(p + rc == 0, 1.0, p + rc))
    running = np.maximum.accumulate(f, 0)
    return {"f": running[[min(n, len(pool)) - 1 for n in MCG_PROPOSAL_COUNTS]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proposals", type=int, default=5000)
    parser.add_argument("--objects", type=int, default=10)
    parser.add_argument("--peer-proposals", type=int, default=250)
    parser.add_argument("--chunk", type=int, default=None)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    pool = shapes(rng, args.proposals)
    objects = shapes(rng, args.objects)
    void = np.zeros((H, W), bool)
    void[:, :3] = True
    print(
        f"# {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), device "
        f"{args.device}; {args.proposals} proposals x {args.objects} objects at {W}x{H}"
    )
    pool_t = torch.from_numpy(pool).to(args.device)
    obj_t, void_t = torch.from_numpy(objects).to(args.device), torch.from_numpy(void).to(args.device)
    proposal_overlaps(pool_t[:8], obj_t, void=void_t)  # warm-up
    start = time.perf_counter()
    ov = proposal_overlaps(pool_t, obj_t, void=void_t, chunk_size=args.chunk)
    ours = best_overlaps(ov, MCG_PROPOSAL_COUNTS)
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    t_ours = time.perf_counter() - start
    k = min(args.peer_proposals, args.proposals)
    start = time.perf_counter()
    peer = ref.best_overlaps(pool[:k], objects, MCG_PROPOSAL_COUNTS, void)
    t_peer = (time.perf_counter() - start) * args.proposals / k
    sub = best_overlaps(proposal_overlaps(pool_t[:k], obj_t, void=void_t), MCG_PROPOSAL_COUNTS)
    diff = float(np.abs(sub["jaccard"].cpu().numpy() - peer["jaccard"]).max())
    print("| | s / image | ratio |")
    print("|---|---|---|")
    print(f"| numpy loop over proposals (oracle; {k} measured, extrapolated) | {t_peer:.2f} | 1 |")
    print(f"| segmetrics-torch | {t_ours:.3f} | {t_peer / t_ours:.0f}x |")
    print(
        f"max |best J ours - oracle| on the first {k} proposals: {diff:.1e}; "
        f"best J at all {args.proposals}: mean {float(ours['jaccard'][-1].mean()):.4f}"
    )
    # the boundary variant
    start = time.perf_counter()
    ours_b = best_boundary_f(
        proposal_boundary_overlaps(pool_t, obj_t, void=void_t, chunk_size=args.chunk), MCG_PROPOSAL_COUNTS
    )
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    t_ours_b = time.perf_counter() - start
    start = time.perf_counter()
    loop_b = numpy_boundary_loop(pool[:k], objects, void)
    t_peer_b = (time.perf_counter() - start) * args.proposals / k
    k_ref = min(20, k)
    oracle_b = ref.best_boundary_f(pool[:k_ref], objects, MCG_PROPOSAL_COUNTS, void)
    sub_b = best_boundary_f(proposal_boundary_overlaps(pool_t[:k], obj_t, void=void_t), MCG_PROPOSAL_COUNTS)
    sub_ref = best_boundary_f(proposal_boundary_overlaps(pool_t[:k_ref], obj_t, void=void_t), MCG_PROPOSAL_COUNTS)
    diff_loop = float(np.abs(sub_b["f"].cpu().numpy() - loop_b["f"]).max())
    diff_ref = float(np.abs(sub_ref["f"].cpu().numpy() - oracle_b["f"]).max())
    print("\nboundary variant (best morphological boundary F):")
    print("| | s / image | ratio |")
    print("|---|---|---|")
    print(f"| numpy/scipy loop over proposals ({k} measured, extrapolated) | {t_peer_b:.2f} | 1 |")
    print(f"| segmetrics-torch | {t_ours_b:.3f} | {t_peer_b / t_ours_b:.0f}x |")
    print(
        f"max |best F ours - loop| on the first {k} proposals: {diff_loop:.1e}; vs the per-pair oracle on the first "
        f"{k_ref}: {diff_ref:.1e}; best F at all {args.proposals}: mean {float(ours_b['f'][-1].mean()):.4f}"
    )
    print(
        f"peak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB "
        f"(the bool pool itself: {pool.nbytes / 2**30:.2f} GiB)"
    )


if __name__ == "__main__":
    main()
