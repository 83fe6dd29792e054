"""``segmetrics meta``: the meta-measure tests of :mod:`segmetrics_torch.meta` on a dataset folder, as a table.

Usage::

    segmetrics meta partition --gt DIR [--ucm DIR] [--measures LIST] [--max-different N] [--unordered]
                              [--pairing all|random]
                              [--seed 0] [--json FILE]
    segmetrics meta foreground (--demo [--n 24] | --pred DIR [--pred DIR ...] --gt DIR) [--measures LIST]
                               [--noise-maps 4] [--radius 5] [--pairing all|random] [--seed 0] [--json FILE]

``meta partition`` reads BSDS ``groundTruth`` .mat files (their ``Segmentation``): SIHD on every ordered pair of human
partitions. With ``--ucm`` (BSR ``ucm2`` .mat files of a state-of-the-art method, paired by file name), each measure
picks its own Optimal Dataset Scale (SEISM's rule) for the method over 99 thresholds, for SEISM's quadtree and for our
seeded random hierarchy over SEISM's QuadTree parameters (2 ... 800 regions); then SABD (method vs each baseline) and
SISD (method on its image vs on every other image), and CVPR 2013 Table 2's "global" rate, the mean of SIHD,
SABD (quadtree) and SISD.

``meta foreground`` scores one or more methods' foreground maps (each ``--pred`` folder one method) or the synthetic
demo data (``segmetrics demo``'s three methods): error rates of the generic-map (centred Gaussian and centred
circle), noise and ground-truth-switch tests, and 1 - Spearman rho under dilated / eroded ground truth.

Registered on the ``segmetrics`` parser by ``cli_parser._add_meta_command``; input problems raise ``cli.InputError``.
"""

from __future__ import annotations

import argparse
import difflib
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import InputError
from ..functional.partition import hierarchy_measures, hierarchy_state, summarize_hierarchy
from ..io import list_images, pair_by_stem, read_bsds_ground_truth, read_gray, read_mat_array
from ..meta import (
    FOREGROUND_MEASURES,
    PARTITION_MEASURES,
    annotation_error_test,
    generic_map_test,
    grid_oversegmentation,
    gt_switch_test,
    noise_test,
    quadtree_partitions,
    random_hierarchy_ucm,
    sabd,
    shared_computations,
    sihd,
    sisd,
)
from ..ops.hierarchy import ucm_hierarchy
from ..registry import meta_name
from ..reports.files import check_output
from ..reports.output_safety import InputFolder, check_outputs, probe_outputs
from ..reports.tables import format_table, write_json
from ..synthetic import make_foreground_dataset

__all__ = ["run_meta_foreground", "run_meta_partition"]

# SEISM parameters/QuadTree.txt: the quadtree's (and our random hierarchy's) numbers of regions
QUADTREE_PARAMETERS = (2, 3, 4, 8, 16, 20, 32, 40, 50, 64, 80, 128, 160, 256, 320, 400, 800)


def _input_error(message: str) -> Exception:

    return InputError(message)


def _measure_list(text: str, known: dict) -> list[str]:
    """The meta-measures' names of ``--measures`` (any spelling of the registry: ``wf``, ``wFmeasure``, ``maxEm``)."""
    names = [meta_name(t.strip()) for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in known]
    if bad or not names:
        near = difflib.get_close_matches(bad[0].lower(), sorted(known), n=3, cutoff=0.5) if bad else []
        hint = f"unknown measure {bad[0]!r}; did you mean {' or '.join(map(repr, near))}? " if near else ""
        raise _input_error(f"--measures: {hint}expected names from {sorted(known)}, got {text!r}")
    return list(dict.fromkeys(names))


def _mat_files(folder: str, what: str) -> dict[str, Path]:

    try:
        return list_images(folder, (".mat",), name=what)
    except (ValueError, FileNotFoundError) as error:
        raise _input_error(str(error)) from None


def _check_json(json_path: str | None, folders: list[tuple[str, str | None]]) -> None:
    """``--json`` writable, neither replacing an input nor landing where a pairing would read it (see
    ``output_safety``), checked in that order: the check that writes a file beside it comes last."""

    inputs = [InputFolder(role, Path(folder)) for role, folder in folders if folder]
    path = check_output(json_path, "--json", probe=False)
    check_outputs({"--json": path}, inputs=inputs)
    probe_outputs({"--json": path})


def _pct(value: float) -> float:
    return 100 * value


def _ods_index(values: dict, measure: str, parameters: Any) -> int:
    """The level of the Optimal Dataset Scale of ``measure`` (SEISM ``general_ods.m``; min for voi)."""

    state = hierarchy_state(values, (measure,), False)
    ods = summarize_hierarchy(state, torch.as_tensor(parameters), (measure,), region_benchmark=False)
    return int(torch.nonzero(torch.as_tensor(parameters) == ods[measure]["ods_parameter"])[0, 0])


def _partitions_at(ucms: list, thresholds: Any, indices: list[int]) -> dict:
    """{level index: the B partitions ``gridbmap2seg(ucm2 > threshold)`` of the level}, all levels of an image from
    one union-find sweep (``thresholds`` (L,) for every image or (B, L) per image)."""

    chosen = thresholds[..., indices]
    hierarchy = ucm_hierarchy(ucms, chosen)
    stacks = [hierarchy.partitions(b) for b in range(len(ucms))]
    return {level: [s[k] for s in stacks] for k, level in enumerate(indices)}


def _record(
    m: str,
    results: dict,
    threshold: Any,
    quad_regions: int,
    random_regions: int,
    rows: dict,
    report: dict,
    ods_rows: dict,
) -> None:
    """Store measure ``m``'s SABD / SISD results and its ODS levels in the table rows and the JSON report."""
    for key, res in results.items():
        rows[m][key] = _pct(res.rate)
        report["measures"][m][key] = {k: getattr(res, k) for k in ("rate", "count", "total", "ties")}
    rows[m]["global"] = (rows[m]["sihd"] + rows[m]["sabd_quadtree"] + rows[m]["sisd"]) / 3
    ods_rows[m] = {
        "soa_threshold": float(threshold),
        "quadtree_regions": float(quad_regions),
        "random_regions": float(random_regions),
    }
    report["measures"][m]["ods"] = ods_rows[m]


def _against_baselines(
    args: argparse.Namespace,
    stems: list[str],
    annotations: list[Any],
    measures: list[str],
    rows: dict[str, dict[str, float]],
    report: dict[str, Any],
) -> dict[str, dict[str, float]]:
    """SABD (against SEISM's quadtree and the random hierarchy) and SISD of the ``--ucm`` hierarchies, each at its
    ODS level per measure; fills ``rows`` and ``report`` and returns the table of the ODS levels."""

    ods_rows: dict[str, dict[str, float]] = {}
    ucm_files = _mat_files(args.ucm, "ucm2 folder")
    missing = [s for s in stems if s not in ucm_files]
    if missing:
        raise _input_error(f"--ucm: no ucm2 file for {missing[:5]} (files are paired by name)")
    try:
        ucms = [torch.from_numpy(read_mat_array(ucm_files[s], "ucm2")).double() for s in stems]
    except ValueError as error:
        raise _input_error(str(error)) from None
    sizes = [(int(a.shape[-2]), int(a.shape[-1])) for a in annotations]
    soa_values = hierarchy_measures(ucms, annotations, measures=measures, region_benchmark=False)
    thresholds = soa_values["thresholds"]
    # the quadtree depends on the image size only: one stack per size, shared by the images of that size
    quad_of_size = {(h, w): quadtree_partitions(h, w, list(QUADTREE_PARAMETERS)) for h, w in dict.fromkeys(sizes)}
    quad = [quad_of_size[size] for size in sizes]
    quad_values = hierarchy_measures(
        quad,
        annotations,
        input_format="stack",
        measures=measures,
        thresholds=len(QUADTREE_PARAMETERS),
        region_benchmark=False,
    )
    random_ucms = [random_hierarchy_ucm(grid_oversegmentation(h, w), seed=args.seed) for h, w in sizes]
    rand_values = hierarchy_measures(
        random_ucms, annotations, num_regions=list(QUADTREE_PARAMETERS), measures=measures, region_benchmark=False
    )
    levels = torch.arange(1, len(QUADTREE_PARAMETERS) + 1, dtype=torch.float64)
    ods = {
        m: (
            _ods_index(soa_values, m, thresholds),
            _ods_index(quad_values, m, levels),
            _ods_index(rand_values, m, levels),
        )
        for m in measures
    }
    # every level's partitions are built once, so measures that share an ODS level share their pairs' values
    soa_at = _partitions_at(ucms, thresholds, sorted({t for t, _, _ in ods.values()}))
    random_at = _partitions_at(random_ucms, rand_values["thresholds"], sorted({r for _, _, r in ods.values()}))
    with shared_computations():  # each (partition, ground truth) pair evaluated once for all measures and tests
        for m, (t, q, r) in ods.items():
            results = {
                "sabd_quadtree": sabd(m, soa_at[t], [s[q] for s in quad], annotations),
                "sabd_random": sabd(m, soa_at[t], random_at[r], annotations),
                "sisd": sisd(m, soa_at[t], annotations, pairing=args.pairing, seed=args.seed),
            }
            _record(m, results, thresholds[t], QUADTREE_PARAMETERS[q], QUADTREE_PARAMETERS[r], rows, report, ods_rows)
    return ods_rows


def run_meta_partition(args: argparse.Namespace) -> int:

    _check_json(args.json, [("the ground-truth folder", args.gt), ("the ucm2 folder", args.ucm)])
    measures = _measure_list(args.measures, PARTITION_MEASURES)
    gt_files = _mat_files(args.gt, "ground-truth folder")
    stems = sorted(gt_files)
    try:
        annotations = [torch.from_numpy(read_bsds_ground_truth(gt_files[s]).segmentations) for s in stems]
    except ValueError as error:
        raise _input_error(str(error)) from None
    if len(annotations) < 2:
        raise _input_error(f"--gt: the meta-measures need at least 2 images, found {len(annotations)}")
    start = time.perf_counter()
    rows: dict[str, dict[str, float]] = {m: {} for m in measures}
    report: dict[str, Any] = {"images": stems, "measures": {m: {} for m in measures}}
    try:
        human = sihd(
            measures, annotations, max_different=args.max_different, ordered=not args.unordered, seed=args.seed
        )
    except ValueError as error:
        raise _input_error(f"SIHD: {error}") from None
    for m in measures:
        rows[m]["sihd"] = _pct(human[m].rate)
        report["measures"][m]["sihd"] = {
            k: getattr(human[m], k)
            for k in ("rate", "threshold", "same_correct", "same_total", "different_correct", "different_total")
        }
    ods_rows = _against_baselines(args, stems, annotations, measures, rows, report) if args.ucm else {}
    elapsed = time.perf_counter() - start
    columns = [("sihd", "SIHD")]
    if args.ucm:
        columns += [
            ("sabd_quadtree", "SABD(quadtree)"),
            ("sabd_random", "SABD(random)"),
            ("sisd", "SISD"),
            ("global", "Global"),
        ]
    print(format_table(rows, columns, digits=1, index_header="measure"))
    n_pairs = human[measures[0]]
    print(
        f"% correct. SIHD over {n_pairs.same_total} same-image and {n_pairs.different_total} different-image "
        f"{'unordered' if args.unordered else 'ordered'} "
        f"pairs of the {sum(a.shape[0] for a in annotations)} human partitions of {len(stems)} images."
    )
    if args.ucm:
        print(
            f"SABD/SISD: {Path(args.ucm).name} vs SEISM's quadtree and the random hierarchy (seed {args.seed}), each "
            f"at its ODS for the measure; SISD pairing '{args.pairing}'; Global = mean of SIHD, SABD(quadtree), SISD."
        )
        ods_columns = [
            ("soa_threshold", "ODS threshold"),
            ("quadtree_regions", "quadtree regions"),
            ("random_regions", "random regions"),
        ]
        print(format_table(ods_rows, ods_columns, digits=2, index_header="measure"))
    print(f"Computed in {elapsed:.1f} s.")
    if args.json:
        write_json(args.json, report)
    return 0


def _read_foreground(args: argparse.Namespace) -> tuple[dict[str, list[Any]], Any, list[str]]:

    if args.demo:
        data = make_foreground_dataset(n=args.n, size=(240, 320), seed=args.seed)
        gt = [torch.from_numpy(g) for g in data.gt]
        return {m: [torch.from_numpy(p) for p in v] for m, v in data.preds.items()}, gt, data.names
    if not args.pred or not args.gt:
        raise _input_error("give --demo, or --gt DIR and at least one --pred DIR")
    try:
        pairs = {
            Path(p).name: {stem: (pp, gp) for stem, pp, gp in pair_by_stem(p, args.gt, allow_missing=True)}
            for p in args.pred
        }
    except (ValueError, FileNotFoundError) as error:
        raise _input_error(str(error)) from None
    if len(pairs) != len(args.pred):
        raise _input_error("--pred: two prediction folders have the same name")
    stems = sorted(set.intersection(*(set(v) for v in pairs.values())))
    if len(stems) < 2:
        raise _input_error("the prediction folders share fewer than 2 images with the ground truth")
    first = next(iter(pairs.values()))
    try:
        gt = [torch.from_numpy(np.ascontiguousarray(read_gray(first[s][1]))) for s in stems]
        preds = {
            m: [torch.from_numpy(np.ascontiguousarray(read_gray(v[s][0]))) for s in stems] for m, v in pairs.items()
        }
    except (ValueError, FileNotFoundError) as error:
        raise _input_error(str(error)) from None
    for m, maps in preds.items():
        for s, p, g in zip(stems, maps, gt, strict=True):
            if p.shape != g.shape:
                raise _input_error(f"{m}/{s}: prediction {tuple(p.shape)} and ground truth {tuple(g.shape)} differ")
    return preds, gt, stems


def run_meta_foreground(args: argparse.Namespace) -> int:

    predictions = [("a prediction folder", p) for p in args.pred or ()]
    _check_json(args.json, [("the ground-truth folder", args.gt), *predictions])
    measures = _measure_list(args.measures, FOREGROUND_MEASURES)
    preds, gt, names = _read_foreground(args)
    start = time.perf_counter()
    rows: dict[str, dict[str, float]] = {}
    report: dict[str, Any] = {"images": list(names), "methods": list(preds), "measures": {}}
    with shared_computations():  # one kernel pass per input set for all measures; baselines built once
        for m in measures:
            results = {
                "generic_gaussian": generic_map_test(m, preds, gt, generic="gaussian"),
                "generic_circle": generic_map_test(m, preds, gt, generic="circle"),
                "noise": noise_test(m, preds, gt, num_maps=args.noise_maps, seed=args.seed),
                "gt_switch": gt_switch_test(m, preds, gt, pairing=args.pairing, seed=args.seed),
            }
            annotation = {}
            if len(preds) >= 2:
                annotation = {
                    op: annotation_error_test(m, preds, gt, operation=op, radius=args.radius)
                    for op in ("dilate", "erode")
                }
            rows[m] = {k: _pct(v.rate) for k, v in results.items()}
            rows[m].update({f"annotation_{op}": v.rate for op, v in annotation.items()})
            report["measures"][m] = {
                k: {a: getattr(v, a) for a in ("rate", "count", "total", "ties")} for k, v in results.items()
            }
            report["measures"][m].update(
                {
                    f"annotation_{op}": {"rate": v.rate, "images": v.images, "skipped": v.skipped}
                    for op, v in annotation.items()
                }
            )
    elapsed = time.perf_counter() - start
    columns = [
        ("generic_gaussian", "generic(Gauss)"),
        ("generic_circle", "generic(circle)"),
        ("noise", "noise"),
        ("gt_switch", "GT switch"),
    ]
    print(format_table(rows, columns, digits=1, index_header="measure"))
    print(
        f"% errors (lower is better) over {len(gt)} images and the methods {', '.join(preds)} (their mean score per "
        f"image for generic and noise; every (method, image, other image) for the GT switch, pairing "
        f"'{args.pairing}'); {args.noise_maps} noise map(s) per image, seed {args.seed}."
    )
    if len(preds) >= 2:
        print(
            format_table(
                rows,
                [("annotation_dilate", "1-rho(dilate)"), ("annotation_erode", "1-rho(erode)")],
                digits=4,
                index_header="measure",
            )
        )
        print(
            f"Annotation errors: mean over images of 1 - Spearman rho of the methods' ranking, ground truth "
            f"dilated / eroded by a disk of radius {args.radius} px (0 = ranking unchanged)."
        )
    print(f"Computed in {elapsed:.1f} s.")
    if args.json:
        write_json(args.json, report)
    return 0
