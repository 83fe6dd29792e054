"""The evaluation report's plan: the (dataset, method, family) jobs of a configuration, each paired, its formats
decided and its files pre-scanned before any measure runs, and the fingerprint that keys its cache entry."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..datasets.pairing import (
    BOUNDARY_EXTENSIONS,
    SURFACE_EXTENSIONS,
    boundary_formats,
    check_boundary_nms,
    match_folders,
    pairing_error,
    partition_formats,
)
from ..datasets.prescan import Problem, Scan, check_pairing, listing, raise_or_skip, scan_pairing
from ..errors import InputError
from ..io import PROPOSAL_EXTENSIONS, find_pairs
from ..registry import canonical_list
from ..reports.cache import ResultCache, canonical_json, class_images, file_id
from . import distributed
from .report_config import Dataset, ReportConfig

# ---------------------------------------------------------------------------------------------------- planning


@dataclass
class Job:
    """One (dataset, family, method) combination, planned: its pairs, formats, settings and cache key."""

    dataset: Dataset
    family: str
    method: str
    pred_dir: Path
    pairing: Any
    input_format: str
    gt_format: str
    settings: dict[str, Any]
    key: str = ""
    fingerprint: dict[str, Any] = field(default_factory=dict)
    classes: dict[str, Path] | None = None
    device_type: str = ""
    #: the pre-scan's findings (foreground), the images left out (``--skip-bad``), the ground truths of the dataset
    scan: Any = None
    skipped: list[dict[str, str]] = field(default_factory=list)
    gt_total: int | None = None


#: the settings of :class:`~segmetrics_torch.ForegroundMeasures` as the foreground family runs it (its defaults; a test
#: checks them against the class), a constant so that planning, cache keys included, needs no torch import
SOD_SETTINGS: dict[str, Any] = {
    "normalize": True,
    "protocol": "pysodmetrics",
    "beta2": 0.3,
    "wf_beta2": 1.0,
    "alpha": 0.5,
    "empty_quadrant": "nan",
    "edt_backend": "auto",
    "gt_binarisation": "> 128 (a mask holding only 0 and 1: == 1)",
    "reader": "cv2.imread(path, IMREAD_GRAYSCALE) (segmetrics_torch.io.read_gray_map)",
    # part of the cache key: records cached before per-image scores existed are recomputed, not shown without them
    "per_image": True,
}


def plan_jobs(config: ReportConfig, warn: Callable[[str], None], device_type: str) -> tuple[list[Job], list[str]]:
    """Every combination, checked and paired before anything is computed; also the skipped ones (as sentences)."""
    jobs, skipped = [], []
    missing_gt = [
        f"dataset {d.name}: the ground-truth folder {d.gt} {'is not a folder' if d.gt.exists() else 'does not exist'}"
        for d in config.datasets
        if not d.gt.is_dir()
    ]
    missing_pred: list[str] = []
    for dataset in config.datasets:
        if not dataset.gt.is_dir():
            continue
        for family in dataset.families:
            for method in config.methods:
                pred_dir = method.folder(dataset.name, family)
                label = f"{dataset.name} / {family} / {method.name}"
                if pred_dir is None:
                    skipped.append(f"{label}: no prediction folder given")
                elif not pred_dir.is_dir():
                    missing_pred.append(f"{label}: the prediction folder {pred_dir} does not exist")
                    skipped.append(f"{label}: no folder {pred_dir}")
    # every missing folder in one error (ground truths always; predictions unless --allow-missing leaves them out)
    fatal = missing_gt + ([] if config.allow_missing or config.skip_bad else missing_pred)
    if len(fatal) == 1:
        hint = "" if missing_gt else " (use --allow-missing to leave it out)"
        raise InputError(f"{fatal[0]}{hint}")
    if fatal:
        hint = "" if missing_gt else "; use --allow-missing to leave the missing prediction folders out"
        raise InputError("\n  ".join([f"{len(fatal)} folder(s) do not exist{hint}:", *fatal]))
    for message in missing_pred:
        warn(f"warning: {message}; skipped")
    for dataset in config.datasets:
        for family in dataset.families:
            for method in config.methods:
                pred_dir = method.folder(dataset.name, family)
                if pred_dir is None or not pred_dir.is_dir():
                    continue
                label = f"{dataset.name} / {family} / {method.name}"
                try:
                    jobs.append(
                        _plan_job(
                            config,
                            dataset,
                            family,
                            method.name,
                            pred_dir,
                            device_type,
                            {**dataset.pairing, **method.pairing_for(dataset.name)},
                        )
                    )
                except InputError as error:
                    raise InputError(f"{label}: {error}") from None
    if not jobs:
        raise InputError("nothing to evaluate: no method has predictions for any dataset")
    _prescan(jobs, config, warn)
    for job in jobs:
        _fingerprint(job, config)
    return jobs, skipped


def _prescan(jobs: list[Job], config: ReportConfig, warn: Callable[[str], None]) -> None:
    """Every problem of every job in one error (or, with ``skip_bad``, the bad images left out and recorded); notes
    printed once per kind; then, by default, the methods of each dataset and family restricted to the images they all
    have (``compare_on: common``)."""

    scanned = jobs
    # ground truths scanned once per dataset (their findings differ by family and format)
    gt_caches: dict[tuple[str, str], dict[Path, Any]] = {}

    def scan_job(job: Job) -> Scan:
        gt_cache = gt_caches.setdefault((job.family, job.gt_format), {})
        return scan_pairing(job.family, job.pairing, job.input_format, job.gt_format, gt_cache)

    scans = []

    def scan_or_cached(job: Job) -> Any:
        if config.cache is not None:
            # a result cached for exactly these pairs was computed without leaving any out, so their files had no
            # fatal problem: a re-run reads no image (as before the pre-scan existed); unpaired names still count
            _fingerprint(job, config)
            cached = ResultCache(config.cache, lambda _: None).load(job.key)  # a corrupt entry: scanned, recomputed
            if cached is not None:
                found = [Problem(p["problem"], p["image"], p.get("detail", "")) for p in cached.get("problems", [])]
                return Scan(found, len(job.pairing.pairs))
        return scan_job(job)

    # under torchrun rank 0 scans (or reads its cache) and the other ranks take its findings
    results = distributed.main_decides(lambda: [scan_or_cached(j) for j in scanned])
    for job, found in zip(scanned, results, strict=True):
        job.scan = found
        scans.append((f"{job.dataset.name} / {job.family} / {job.method}", job.scan))
    bad = raise_or_skip(
        scans,
        allow_missing=config.allow_missing,
        resize=config.resize,
        skip_bad=config.skip_bad,
        skip_empty_gt=config.skip_empty_gt,
    )
    said: set[tuple[str, str]] = set()
    for job, (label, scan) in zip(scanned, scans, strict=True):
        job.skipped = scan.findings(bad[label])["skipped"]
        notes = [p for p in scan.problems if p not in bad[label]]
        # findings of the ground truth (0/1 masks, empty masks, colour masks) are the dataset's: said once, not per
        # method
        of_gt = [
            p
            for p in notes
            if p.kind in ("binary01", "empty") or (p.kind == "colour" and p.detail.startswith("ground truth"))
        ]
        for line in listing(of_gt, prefix=""):
            if (job.dataset.name, line) not in said:
                said.add((job.dataset.name, line))
                warn(f"note: dataset {job.dataset.name}: {line}")
        for line in listing([p for p in notes if p not in of_gt], prefix=""):
            warn(f"note: {label}: {line}")
        for line in listing(bad[label], prefix=""):
            warn(f"skipped: {label}: {line}")
        left_out = {p.image for p in bad[label]}
        job.gt_total = len(job.pairing.pairs) + len(job.pairing.missing)
        job.pairing = replace(job.pairing, pairs=[pair for pair in job.pairing.pairs if pair[0] not in left_out])
        if not job.pairing.pairs:
            raise InputError(f"{label}: every image has a problem (listed above); nothing to evaluate")
    if config.compare_on == "common":
        by_dataset: dict[tuple[str, str], list[Job]] = {}
        for job in scanned:
            by_dataset.setdefault((job.dataset.name, job.family), []).append(job)
        for (dataset, family), group in by_dataset.items():
            common = set.intersection(*({stem for stem, _, _ in job.pairing.pairs} for job in group))
            if not common:
                raise InputError(
                    f"dataset {dataset} ({family}): no image has a prediction of every method; compare each method "
                    "on its own images with --compare-on each"
                )
            for job in group:
                job.pairing = replace(job.pairing, pairs=[pair for pair in job.pairing.pairs if pair[0] in common])


_PAIR_REGEX = "pair_regex (--pair-regex)"  # the configuration key and the flag that give the pairing pattern


def _plan_job(
    config: ReportConfig,
    dataset: Dataset,
    family: str,
    method: str,
    pred_dir: Path,
    device_type: str,
    own_pairing: Mapping[str, str] | None = None,
) -> Job:

    # the name mapping: the top-level keys, then the dataset's own, then the method's own
    merged = {**config.pairing, **(own_pairing or {})}
    pairing_keys = {key: value for key, value in merged.items() if key != "pair_regex"}
    if "pair_regex" in merged:
        pairing_keys["pattern"] = merged["pair_regex"]
    try:
        if family == "foreground":
            pairing = find_pairs(pred_dir, dataset.gt, **pairing_keys)
            pred_kind, gt_kind = "image", "image"
        elif family == "proposals":
            pairing = find_pairs(pred_dir, dataset.gt, PROPOSAL_EXTENSIONS, **pairing_keys)
            pred_kind, gt_kind = "pool", "objects"
        elif family == "surface":
            pairing = find_pairs(pred_dir, dataset.gt, SURFACE_EXTENSIONS, **pairing_keys)
            pred_kind, gt_kind = "labels", "labels"
        else:
            pairing, pred_kind, gt_kind = match_folders(
                pred_dir, dataset.gt, BOUNDARY_EXTENSIONS, pattern_option=_PAIR_REGEX, **pairing_keys
            )
    except ValueError as error:
        raise pairing_error(error, _PAIR_REGEX) from None
    # no common name is an error here; missing and extra files are listed by the pre-scan with every other problem
    check_pairing(pairing, pred_dir, dataset.gt, True, option="--allow-missing", warn=lambda message: None)
    options = dict(config.options[family])
    if family == "foreground":
        input_format = gt_format = "gray"
        settings = {**SOD_SETTINGS, "resize": config.resize}
        if options.get("measures"):
            settings["measures"] = canonical_list(options["measures"], "foreground")
    elif family == "boundary":
        input_format, gt_format = boundary_formats(pred_kind, gt_kind, dataset.gt_labels, dataset.gt)
        check_boundary_nms(options["nms"], input_format, f"options.boundary.nms ({pred_dir})")
        resize = config.resize and input_format == "soft"
        settings = {**options, "input_format": input_format, "gt_format": gt_format, "resize": resize}
    elif family == "proposals":
        input_format, gt_format = "pool", "objects"
        settings = {**options, "gt_classes": None if dataset.gt_classes is None else str(dataset.gt_classes)}
    elif family == "surface":
        input_format = gt_format = "labels"
        settings = {**options, "skip_empty_gt": config.skip_empty_gt}
    else:
        input_format, gt_format = partition_formats(pairing, pred_kind, gt_kind)
        # the family's thresholds / num_regions pick the levels of ucm2 hierarchies; the other methods of the
        # family (label maps, stacks of levels) have their own levels and are evaluated as they are
        options.update(ucm2_only_options(options, input_format))
        settings = {**options, "input_format": input_format, "gt_format": gt_format}
    job = Job(dataset, family, method, pred_dir, pairing, input_format, gt_format, settings)
    job.device_type = device_type
    return job


def ucm2_only_options(options: Mapping[str, Any], input_format: str) -> dict[str, Any]:
    """``thresholds`` / ``num_regions`` as a partition method of ``input_format`` uses them (None unless ucm2)."""
    keys = ("thresholds", "num_regions")
    return {key: options[key] for key in keys} if input_format == "ucm2" else dict.fromkeys(keys)


def _fingerprint(job: Job, config: ReportConfig) -> None:
    """The job's cache key: version, names, settings, device type and the files of its (final) pairs."""

    dataset, check = job.dataset, config.cache_check
    files = [[stem, *file_id(Path(p), check), *file_id(Path(g), check)] for stem, p, g in job.pairing.pairs]
    if job.family == "proposals" and dataset.gt_classes is not None:
        job.classes = class_images(dataset.gt_classes)
        files += [["class", stem, *file_id(path, check)] for stem, path in job.classes.items()]
    job.fingerprint = {
        "segmetrics_version": __version__,
        "dataset": dataset.name,
        "method": job.method,
        "family": job.family,
        "settings": job.settings,
        "device": job.device_type,
        "cache_check": check,
        "files": files,
    }
    job.key = hashlib.sha256(canonical_json(job.fingerprint).encode()).hexdigest()
