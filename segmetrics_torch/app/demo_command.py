"""``segmetrics demo``: the foreground measures on a synthetic dataset (ellipses, blobs and thin structures, and per
method a map damaged to a graded degree), timed after a one-time warm-up; no files needed or written."""

from __future__ import annotations

import argparse
import time

import torch

from .. import ForegroundMeasures
from ..reports.tables import SOD_COLUMNS, format_table, scalar_row
from ..synthetic import make_foreground_dataset
from . import distributed
from .batching import sync
from .folder_io import parse_device


def run_demo(args: argparse.Namespace) -> int:

    device = parse_device(args.device)
    start = time.perf_counter()
    data = make_foreground_dataset(n=args.n, size=(240, 320), seed=args.seed)
    generated = time.perf_counter() - start
    gt = torch.from_numpy(data.gt).to(device)
    # one tiny batch first: compiled kernels (numba on CPU, CUDA context on GPU) start here, outside the timing
    start = time.perf_counter()
    warm = ForegroundMeasures().to(device)
    warm.update(gt[:1, :32, :32], gt[:1, :32, :32])
    warm.compute()
    sync(device)
    warmup = time.perf_counter() - start
    rows: dict[str, dict[str, float]] = {}
    start = time.perf_counter()
    for method, maps in data.preds.items():
        metric = ForegroundMeasures().to(device)
        preds = torch.from_numpy(maps).to(device)
        for i in range(0, args.n, args.batch_size):
            metric.update(preds[i : i + args.batch_size], gt[i : i + args.batch_size])
        rows[method] = scalar_row(metric.compute())
    sync(device)
    elapsed = time.perf_counter() - start
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return 0
    empty = " (one with an empty ground truth)" if args.n >= 2 else ""
    print(format_table(rows, SOD_COLUMNS))
    print(
        f"Data: {args.n} synthetic 240x320 ground-truth maps{empty} of random ellipses, blobs and thin structures "
        f"(seed {args.seed}), and per method a map damaged to a graded degree: good = slightly blurred + mild noise, "
        "blurry = strongly blurred + shifted, noisy = strong noise + false blobs (segmetrics_torch.synthetic)."
    )
    print(
        f"Evaluated {args.n * len(rows)} maps with ForegroundMeasures on {device} in {elapsed:.2f} s "
        f"(data generated in {generated:.2f} s; one-time warm-up, e.g. kernel compilation, {warmup:.2f} s)."
    )
    return 0
