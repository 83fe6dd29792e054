"""Train the tiny net of ``lightning_training.py`` with BCE alone and with BCE + each segmetrics-torch loss, for the
same fixed budget on the embedded synthetic data, and report held-out measures (honest numbers, whichever way they
come out). Run::

    python examples/compare_losses.py              # CPU, about a minute
    python examples/compare_losses.py --epochs 12 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import pytorch_lightning as pl
import torch
from lightning_training import AUX_LOSSES, LitSegmentation, build_trainer, make_data, parse_args
from torch.utils.data import DataLoader

from segmetrics_torch import MAE, EMeasure, SMeasure, WeightedFMeasure


def held_out_scores(model: LitSegmentation, data) -> dict[str, float]:
    model.eval()
    with torch.no_grad():
        x, y = data.tensors
        probs, target = model(x)[:, 0], y[:, 0]
    em = EMeasure()
    em.update(probs, target)
    e = em.compute()
    return {
        "E adaptive": float(e["adaptive"]),
        "E mean": float(e["mean"]),
        "weighted F": float(WeightedFMeasure()(probs, target)),
        "S": float(SMeasure()(probs, target)),
        "MAE": float(MAE()(probs, target)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--train-images", type=int, default=96)
    parser.add_argument("--test-images", type=int, default=48)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    opts = parser.parse_args()
    warnings.filterwarnings("ignore")
    train_set = make_data(opts.train_images, seed=1)
    test_set = make_data(opts.test_images, seed=3)  # held out: other images than training and validation
    rows = {}
    for loss in ["none", *AUX_LOSSES]:
        per_seed = []
        for seed in opts.seeds:
            pl.seed_everything(seed, workers=True, verbose=False)
            model = LitSegmentation(loss=loss)
            trainer = build_trainer(parse_args(["--epochs", str(opts.epochs)]), num_sanity_val_steps=0)
            trainer.fit(model, DataLoader(train_set, batch_size=8, shuffle=True))
            per_seed.append(held_out_scores(model, test_set))
        rows[loss] = {k: statistics.mean(s[k] for s in per_seed) for k in per_seed[0]}
    names = {
        "none": "BCE",
        "e": "BCE + E-measure loss",
        "wf": "BCE + weighted-F loss",
        "f": "BCE + soft F loss",
        "iou": "BCE + soft IoU loss",
    }
    keys = list(rows["none"])
    print(
        f"# {opts.epochs} epochs x {opts.train_images} images (64x64), held-out {opts.test_images} images, "
        f"mean over seeds {opts.seeds}"
    )
    print("| training loss | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for loss, scores in rows.items():
        print(f"| {names[loss]} | " + " | ".join(f"{scores[k]:.4f}" for k in keys) + " |")


if __name__ == "__main__":
    main()
