"""pyEdgeEval 0.2.8 run on the synthetic datasets: its own GT conversion, its evaluators, its presets.

Two adaptations, each outside its logic: scipy >= 1.13 returns sparse *arrays*, which its ``sparse2numpy`` asserts
against (patched to ``toarray()``); its Cityscapes conversion imports cityscapesScripts' ``json2labelImg`` (only for
polygon files, not used here), stubbed when that package is absent. The kill_internal segmentation is given as
trainIds (``_trainIds.png``), so that its ``seg == category - 1`` is the evaluated class.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

pyEdgeEval = __import__("pytest").importorskip("pyEdgeEval")


def _patch() -> None:
    import pyEdgeEval.helpers.convert_sbd as convert_sbd

    convert_sbd.sparse2numpy = lambda x: x.toarray()  # type: ignore[attr-defined]
    if "cityscapesscripts" not in sys.modules:
        try:
            import cityscapesscripts.preparation.json2labelImg  # noqa: F401
        except ImportError:
            for name in ("cityscapesscripts", "cityscapesscripts.preparation"):
                sys.modules[name] = types.ModuleType(name)
            stub = types.ModuleType("cityscapesscripts.preparation.json2labelImg")
            stub.json2labelImg = None  # type: ignore[attr-defined]
            sys.modules[stub.__name__] = stub
    logging.getLogger("pyEdgeEval").setLevel(logging.ERROR)


_patch()


class _Recorder:
    """Wraps a per-sample evaluation function and keeps its (cntR, sumR, cntP, sumP) per sample name."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.counts: dict[str, np.ndarray] = {}

    def __call__(self, kwargs: dict[str, Any]) -> Any:
        out = self.fn(kwargs)
        self.counts[kwargs["name"]] = np.stack(out).astype(np.int64)  # (4, T)
        return out


def _quiet() -> contextlib.AbstractContextManager[Any]:
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def sbd(
    root: Path, ids: list[str], classes: list[int], preset: str, thin: bool, instance_sensitive: bool, thresholds: int
) -> dict[int, tuple[np.ndarray, dict[str, float]]]:
    """pyEdgeEval's SBDEvaluator on ``root/gt`` and ``root/pred``: class -> ((B, 4, T) counts, overall metrics)."""
    import pyEdgeEval.evaluators.sbd as sbd_module
    from pyEdgeEval.common.multi_label import rgb_multilabel_encoding
    from pyEdgeEval.datasets.sbd_attributes import SBD_label2trainId
    from pyEdgeEval.helpers.convert_sbd import convert_mat2np, convert_seg_label2train

    gt_eval = root / "peer_sbd" / "gtEval"
    gt_eval.mkdir(parents=True, exist_ok=True)
    suffix = (
        "_thin_isedge.png"
        if thin and instance_sensitive
        else "_thin_edge.png"
        if thin
        else ("_raw_isedge.png" if instance_sensitive else "_raw_edge.png")
    )
    with _quiet():
        for image_id in ids:
            cls = str(root / "gt/cls" / f"{image_id}.mat")
            inst = str(root / "gt/inst" / f"{image_id}.mat") if instance_sensitive else None
            out = convert_mat2np(cls, inst, radius=1 if thin else 2, thin=thin)
            Image.fromarray(rgb_multilabel_encoding(out[0])).save(gt_eval / f"{image_id}{suffix}")
            train = convert_seg_label2train(out[1], SBD_label2trainId).astype(np.uint8)
            Image.fromarray(train).save(gt_eval / f"{image_id}_trainIds.png")
        evaluator = sbd_module.SBDEvaluator(
            dataset_root=str(root / "peer_sbd"), pred_root=str(root / "pred"), split="val", thin=thin
        )
        evaluator.SEG_SUFFIX = "_trainIds.png"
        evaluator.set_sample_names(sample_names=list(ids))
        evaluator.set_eval_params(eval_mode=preset, apply_thinning=thin, instance_sensitive=instance_sensitive)
        return _run(evaluator, sbd_module, "sbd_eval_single", ids, classes, thresholds)


def _run(evaluator: Any, module: Any, name: str, ids: list[str], classes: list[int], thresholds: int) -> Any:
    results = {}
    original = getattr(module, name)
    try:
        for c in classes:
            recorder = _Recorder(original)
            setattr(module, name, recorder)
            overall = evaluator.evaluate_category(category=c, thresholds=thresholds, nproc=1, save_dir=None)
            results[c] = (np.stack([recorder.counts[i] for i in ids]), overall)
    finally:
        setattr(module, name, original)
    return results


def cityscapes(
    root: Path,
    ids: list[str],
    classes: list[int],
    thin: bool,
    instance_sensitive: bool,
    thresholds: int,
    city: str = "lindau",
) -> dict[int, tuple[np.ndarray, dict[str, float]]]:
    """pyEdgeEval's post-SEAL Cityscapes evaluation at half scale: thin with the half-scale GT made from resized
    labels (``HalfCityscapesEvaluator``), raw with full-scale GT resized at load (``CityscapesEvaluator``, scale
    0.5)."""
    import pyEdgeEval.evaluators.cityscapes as cs_module
    from pyEdgeEval.datasets.cityscapes_attributes import CITYSCAPES_label2trainId
    from pyEdgeEval.evaluators.half_cityscapes import HalfCityscapesEvaluator
    from pyEdgeEval.helpers.convert_cityscapes import convert_label_to_semantic_edges
    from pyEdgeEval.utils import mask_label2trainId

    kind = "isedge" if instance_sensitive else "edge"
    suffix = f"_gtProc_half_thin_{kind}.png" if thin else f"_gtProc_raw_{kind}.png"
    with _quiet():
        for image_id in ids:
            label_file = root / "gtFine" / "val" / city / f"{image_id}_gtFine_labelIds.png"
            convert_label_to_semantic_edges(
                str(label_file),
                inst_sensitive=instance_sensitive,
                proc_dir="gtEval",
                edge_suffix=suffix,
                radius=1 if thin else 2,
                thin=thin,
                scale=0.5 if thin else 1.0,
                seal=True,
            )
            train = mask_label2trainId(np.array(Image.open(label_file)), CITYSCAPES_label2trainId)
            out_dir = root / "gtEval" / "val" / city
            Image.fromarray(train).save(out_dir / f"{image_id}_gtFine_labelTrainIds.png")
        cls = HalfCityscapesEvaluator if thin else cs_module.CityscapesEvaluator
        evaluator = cls(dataset_root=str(root), pred_root=str(root / "pred"), split="val", thin=thin)
        evaluator.set_sample_names(sample_names=[f"{city}/{i}" for i in ids])
        params: dict[str, Any] = {
            "eval_mode": "post-seal",
            "apply_thinning": thin,
            "instance_sensitive": instance_sensitive,
        }
        if not thin:
            params["scale"] = 0.5
        evaluator.set_eval_params(**params)
        results = _run(
            evaluator, cs_module, "cityscapes_eval_single", [f"{city}/{i}" for i in ids], classes, thresholds
        )
    return results
