"""Evaluate a dataset across processes (torchrun) without counting any image twice.

Each rank reads its contiguous block of the dataset (:class:`segmetrics_torch.sharding.EvaluationSampler`: no
padding, unlike ``DistributedSampler``), updates its Metric, and ``compute()`` sums the states over the ranks, so
every rank gets the single-process numbers. Backend: nccl with one GPU per rank (``LOCAL_RANK``), gloo on CPU. Run::

    torchrun --nproc-per-node 2 examples/ddp_evaluation.py --images 101
    python examples/ddp_evaluation.py --images 101          # one process, the same numbers

Rank 0 prints the results as JSON.
"""

from __future__ import annotations

import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

from segmetrics_torch import ForegroundMeasures, flatten_results
from segmetrics_torch.sharding import EvaluationSampler
from segmetrics_torch.synthetic import make_foreground_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=101)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    distributed = "WORLD_SIZE" in os.environ  # set by torchrun
    if distributed:
        use_cuda = torch.cuda.is_available()
        if use_cuda:
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        dist.init_process_group("nccl" if use_cuda else "gloo")
        device = torch.device("cuda", torch.cuda.current_device()) if use_cuda else torch.device("cpu")
    else:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        data = make_foreground_dataset(n=args.images, size=(64, 80), methods=("good",))
        dataset = TensorDataset(torch.from_numpy(data.preds["good"]), torch.from_numpy(data.gt))
        loader = DataLoader(dataset, batch_size=args.batch_size, sampler=EvaluationSampler(dataset))
        metric = ForegroundMeasures().to(device)
        for preds, gt in loader:
            metric.update(preds.to(device), gt.to(device))
        results = flatten_results(metric.compute())  # sums the states over all ranks
        with metric.sync_context():  # the reduced state, as compute() saw it: every image once
            seen = int(metric.count)
        if not distributed or dist.get_rank() == 0:
            world = dist.get_world_size() if distributed else 1
            print(
                json.dumps({"world_size": world, "images": seen, **{k: float(v) for k, v in sorted(results.items())}})
            )
    finally:
        if distributed:
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
