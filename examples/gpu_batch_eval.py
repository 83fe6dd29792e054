"""Evaluate a dataset in batches on the GPU (or the CPU when there is none) with a DataLoader.

Predictions and ground truths are moved to the device batch by batch; the Metric's states live on the device and
``compute()`` returns device tensors. The data here are the embedded synthetic maps (uint8 as read from PNG); with
files, use :func:`segmetrics_torch.io.find_pairs` / ``read_gray`` in a Dataset. Run::

    python examples/gpu_batch_eval.py                 # cuda if available
    python examples/gpu_batch_eval.py --device cpu --images 200
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from segmetrics_torch import ForegroundMeasures, flatten_results
from segmetrics_torch.synthetic import make_foreground_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    data = make_foreground_dataset(n=args.images, size=(320, 320), methods=("good",))
    dataset = TensorDataset(torch.from_numpy(data.preds["good"]), torch.from_numpy(data.gt))
    loader = DataLoader(
        dataset, batch_size=args.batch_size, num_workers=args.workers, pin_memory=args.device.startswith("cuda")
    )
    metric = ForegroundMeasures().to(args.device)
    start = time.perf_counter()
    for preds, gt in loader:
        metric.update(preds.to(args.device, non_blocking=True), gt.to(args.device, non_blocking=True))
    results = metric.compute()
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"{args.images} images on {args.device}: {elapsed:.2f} s ({elapsed / args.images * 1e3:.2f} ms/image)")
    for key, value in flatten_results(results).items():
        print(f"  {key:>22}: {float(value):.4f}")


if __name__ == "__main__":
    main()
