"""Object proposals: segmetrics-torch vs a straightforward numpy loop over proposals (the package's oracle), same
pool, same run.

One 481x321 image, ``--proposals`` ranked masks (random boxes and ellipses, 5,000 by default) and ``--objects``
ground-truth objects (10) with a void band: ours computes every (proposal, object) count with chunked matrix products
and the best overlap for all the MCG numbers of proposals from one running maximum; the peer
(:func:`segmetrics_torch.reference.proposals.best_overlaps`) loops over proposals and objects. The peer runs on the
first ``--peer-proposals`` masks and is extrapolated linearly (its cost is linear in the pool size); the printed
check compares both on that sub-pool. ``--chunk`` bounds the float copy of the pool. Run::

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

from segmetrics_torch.functional.proposals import MCG_PROPOSAL_COUNTS, best_overlaps, proposal_overlaps
from segmetrics_torch.reference import proposals as ref

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
    print(f"# {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), device "
          f"{args.device}; {args.proposals} proposals x {args.objects} objects at {W}x{H}")  # fmt: skip
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
    print(f"max |best J ours - oracle| on the first {k} proposals: {diff:.1e}; "
          f"best J at all {args.proposals}: mean {float(ours['jaccard'][-1].mean()):.4f}")
    print(f"peak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB "
          f"(the bool pool itself: {pool.nbytes / 2**30:.2f} GiB)")


if __name__ == "__main__":
    main()
