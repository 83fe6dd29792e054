"""Train a tiny segmentation net with a segmetrics-torch loss and log segmetrics-torch Metrics from Lightning.

The data are embedded (no download): :func:`segmetrics_torch.synthetic.make_foreground_dataset` gives ground-truth
masks and degraded renderings of them (the "noisy" method); the net learns to recover the mask from the rendering.

* Loss: binary cross-entropy plus, optionally, one of the differentiable measures (``--loss e|wf|f|iou|none``).
  Gradients go through the loss's functional / ``forward`` form; the Metric objects never carry gradients.
* Scoring: the Metrics take ``normalize=False``, so that they score the probabilities the net outputs as they are
  (the default stretches each map to [0, 1] first, as PySODMetrics does with saved maps): a logged MAE is then
  ``(p - t).abs().mean()`` of the same tensor a loss sees.
* Logging: scalar Metrics (``MAE``, ``SMeasure``, ``WeightedFMeasure``) are passed to ``self.log`` as objects, so
  Lightning calls ``compute()`` at epoch end and torchmetrics syncs their sum states across processes (DDP).
  Dict-valued Metrics (``FMeasure``, ``EMeasure``: adaptive / mean / max and curves) are computed at epoch end and
  their scalars logged with ``log_dict``, then reset.

Run::

    python examples/lightning_training.py                        # CPU, well under 2 minutes
    python examples/lightning_training.py --loss e --epochs 6
    python examples/lightning_training.py --validate-only --devices 2 --strategy ddp --json out.json
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from segmetrics_torch import MAE, EMeasure, FMeasure, SMeasure, WeightedFMeasure
from segmetrics_torch.losses import e_measure_loss, soft_f_measure_loss, soft_iou_loss, weighted_f_measure_loss
from segmetrics_torch.sharding import EvaluationSampler
from segmetrics_torch.synthetic import make_foreground_dataset

AUX_LOSSES = {"e": e_measure_loss, "wf": weighted_f_measure_loss, "f": soft_f_measure_loss, "iou": soft_iou_loss}


def make_data(n: int, size: tuple[int, int] = (64, 64), seed: int = 0) -> TensorDataset:
    """(rendering (N, 1, H, W) float in [0, 1], mask (N, 1, H, W) bool) pairs from the embedded synthetic set."""
    d = make_foreground_dataset(n=n, size=size, seed=seed, methods=("noisy",))
    x = torch.from_numpy(d.preds["noisy"]).float().div(255)[:, None]
    y = torch.from_numpy(d.gt > 128)[:, None]
    return TensorDataset(x, y)


class TinyNet(nn.Module):
    def __init__(self, width: int = 12) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=2, dilation=2),
            nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=4, dilation=4),
            nn.ReLU(),
            nn.Conv2d(width, 1, 3, padding=1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class LitSegmentation(pl.LightningModule):
    def __init__(self, loss: str = "none", weight: float = 1.0, lr: float = 3e-3) -> None:
        super().__init__()
        if loss != "none" and loss not in AUX_LOSSES:
            raise ValueError(f"Expected `loss` to be 'none' or one of {sorted(AUX_LOSSES)}, but got {loss!r}.")
        self.save_hyperparameters()
        self.net = TinyNet()
        # normalize=False: score the sigmoid outputs as they are (no per-image min-max stretch, PySODMetrics' default
        # for saved maps), so that a logged value agrees with a loss computed on the same tensor
        scoring = {"normalize": False}
        # scalar metrics: logged as objects (epoch-level, synced across processes)
        self.val_mae = MAE(**scoring)
        self.val_sm = SMeasure(**scoring)
        self.val_wfm = WeightedFMeasure(**scoring)
        # dict-valued metrics: computed and logged with log_dict at epoch end
        self.val_fm = FMeasure(**scoring)
        self.val_em = EMeasure(**scoring)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.net(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = F.binary_cross_entropy_with_logits(logits, y.float())
        if self.hparams.loss != "none":
            loss = loss + self.hparams.weight * AUX_LOSSES[self.hparams.loss](torch.sigmoid(logits), y)
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        probs = self(x)[:, 0].detach()
        target = y[:, 0]
        for metric in (self.val_mae, self.val_sm, self.val_wfm, self.val_fm, self.val_em):
            metric.update(probs, target)
        self.log("val/mae", self.val_mae, on_epoch=True, on_step=False)
        self.log("val/sm", self.val_sm, on_epoch=True, on_step=False)
        self.log("val/wfm", self.val_wfm, on_epoch=True, on_step=False)

    def on_validation_epoch_end(self) -> None:
        # compute() already gathers the sum states of every process: the values are global, no sync_dist needed
        fm, em = self.val_fm.compute(), self.val_em.compute()
        self.log_dict({f"val/fm_{k}": fm[k] for k in ("adaptive", "mean", "max")})
        self.log_dict({f"val/em_{k}": em[k] for k in ("adaptive", "mean", "max")})
        self.val_fm.reset()
        self.val_em.reset()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def build_trainer(args: argparse.Namespace, **overrides) -> pl.Trainer:
    options = dict(
        max_epochs=args.epochs,
        accelerator="cpu",
        devices=args.devices,
        strategy=args.strategy,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        deterministic=True,
        # the loaders bring their own samplers (see `loaders`): Lightning's DistributedSampler would pad the
        # validation set by repeating images when it does not divide by the number of processes
        use_distributed_sampler=False,
    )
    options.update(overrides)
    return pl.Trainer(**options)


def loaders(args: argparse.Namespace, trainer: pl.Trainer) -> tuple[DataLoader, DataLoader]:
    """The training and validation loaders of this process. Validation: each process its own contiguous block,
    every image exactly once over all processes (``EvaluationSampler``), so that the Metrics' synced sums are the
    one-process sums whatever the number of images; training: ``DistributedSampler`` (shuffled, padded: fine for
    gradients) under DDP."""
    train_set, val_set = make_data(args.train_images, seed=1), make_data(args.val_images, seed=2)
    if trainer.world_size > 1:
        sampler = DistributedSampler(
            train_set, num_replicas=trainer.world_size, rank=trainer.global_rank, shuffle=True, seed=args.seed
        )
        train = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    else:
        train = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    shard = EvaluationSampler(val_set, num_replicas=trainer.world_size, rank=trainer.global_rank)
    return train, DataLoader(val_set, batch_size=args.batch_size, sampler=shard)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loss", default="none", choices=["none", *AUX_LOSSES])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--train-images", type=int, default=96)
    parser.add_argument("--val-images", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--strategy", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--validate-only", action="store_true", help="no training: validate the seeded model")
    parser.add_argument("--json", help="write the logged validation metrics as JSON (rank 0)")
    return parser.parse_args(argv)


def main(argv=None) -> dict[str, float]:
    args = parse_args(argv)
    # Lightning suggests sync_dist for epoch-level values; Metric.compute() results are already global
    warnings.filterwarnings("ignore", message=".*sync_dist=True.*")
    pl.seed_everything(args.seed, workers=True)
    torch.set_num_threads(max(1, torch.get_num_threads() // args.devices))
    model = LitSegmentation(loss=args.loss)
    trainer = build_trainer(args)
    train, val = loaders(args, trainer)
    start = time.perf_counter()
    if not args.validate_only:
        trainer.fit(model, train, val)
    results = trainer.validate(model, val, verbose=False)[0]
    results = {k: float(v) for k, v in sorted(results.items())}
    if trainer.global_rank == 0:
        values = ", ".join(f"{k}={v:.4f}" for k, v in results.items())
        print(f"{args.loss}: {time.perf_counter() - start:.1f} s, {values}")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"world_size": trainer.world_size, "metrics": results}, f, indent=1)
    return results


if __name__ == "__main__":
    main()
