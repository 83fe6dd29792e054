"""Evaluation reports of many methods x datasets: ``segmetrics evaluate --config eval.yaml``.

A run evaluates every (dataset, family, method) combination of a configuration through the one runner of
:mod:`segmetrics_torch.app.runner` (the family evaluators behind
``segmetrics evaluate foreground|boundary|partition|proposals|surface`` too),
caches each result, and writes a report: a terminal table, Markdown / LaTeX / CSV tables (methods x measures per
dataset, the best value of each column marked), one JSON file with every number and curve, and figures (PR curves,
F- and E-measure against the threshold, proposal recall) as PNG and PDF.

Order of work, so that bad input costs nothing and leaves nothing half-written:

1. the configuration is checked, every folder listed and paired, every format decided (any problem: one
   :class:`~segmetrics_torch.errors.InputError`, before any image is read);
2. each combination is taken from the cache or computed (progress bar per combination); a computed result is
   written to the cache at once (atomically), so an interrupted run resumes where it stopped;
3. the report is rendered into a temporary folder inside the output folder and its files are then moved into place
   (``os.replace``, atomic per file): a failure before that point writes no output file.

Cache: one JSON file per combination, named by the SHA-256 of its fingerprint: the package version, dataset,
method and family names, the measure settings (the family's options, input formats, ``resize``), the device type
(CUDA may differ from the CPU kernel in the last bits on exact ties) and the file list, each pair as names, sizes
and modification times in nanoseconds (``cache_check: stat``, the default: a re-run costs one ``stat`` per file) or
the SHA-256 of the files' bytes (``cache_check: content``: reads every file, robust to tools that restore
modification times). The batch size and the number of workers are not part of it (they do not change results). An
entry holds the fingerprint and a checksum of its results; an entry that cannot be parsed, has another key or a
wrong checksum (a partial or corrupt file) is reported and recomputed.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..datasets.prescan import empty_gt_skips
from ..errors import InputError
from ..registry import missing_packages
from ..reports.cache import ResultCache
from ..reports.combined import check_xlsx
from ..reports.files import signals_held, write_together
from ..reports.html_report import html_folder_output
from ..reports.output_safety import FolderOutput, InputFile, InputFolder, check_outputs, probe_outputs, report_folder
from ..reports.report import ReportFolder, check_report_folder, html_page_folders, records_html, render_report
from ..reports.tables import check_csv_outputs, to_jsonable
from . import distributed, runner
from .report_config import (
    FAMILIES,
    Dataset,
    Method,
    ReportConfig,
    config_from_mapping,
    load_config,
)
from .report_plan import SOD_SETTINGS, Job, plan_jobs, ucm2_only_options

__all__ = [
    "FAMILIES",
    "SOD_SETTINGS",
    "Dataset",
    "Method",
    "ReportConfig",
    "ResultCache",
    "config_from_mapping",
    "load_config",
    "run_report",
]

# ----------------------------------------------------------------------------------------------------- running


def _compute(job: Job, config: ReportConfig, device: Any, progress: Any, source: Any) -> dict[str, Any]:
    """Run the job through the runner (``source``: its :func:`.runner.start`); the record that goes into the cache
    and the JSON report."""

    pairs = job.pairing.pairs
    options = {**config.options[job.family], **_job_extras(job, config)}
    if job.family == "partition":
        options.update(ucm2_only_options(options, job.input_format))
    start = time.perf_counter()
    evaluated = runner.run(
        job.family,
        pairs,
        source,
        options=options,
        input_format=job.input_format,
        gt_format=job.gt_format,
        device=device,
        progress=progress,
        batch_size=config.batch_size or runner.FAMILY_EVALUATORS[job.family].batch_size,
    )
    elapsed = time.perf_counter() - start
    return to_jsonable(
        {
            "dataset": job.dataset.name,
            "method": job.method,
            "family": job.family,
            "pred_dir": str(job.pred_dir.resolve()),
            "gt_dir": str(job.dataset.gt.resolve()),
            "num_images": len(pairs),
            "missing_predictions": job.pairing.missing,
            "unmatched_predictions": job.pairing.unmatched,
            "num_ground_truths": job.gt_total or len(pairs) + len(job.pairing.missing),
            "compared_on": config.compare_on,
            "problems": [p.as_dict() for p in job.scan.problems] if job.scan is not None else [],
            # every image left out, in one place: the pre-scan's, and those a family found while evaluating
            "skipped": job.skipped + empty_gt_skips(evaluated.results.pop("skipped_empty_gt", None) or []),
            "settings": {**job.settings, **evaluated.settings},
            "device": str(device),
            "elapsed_s": elapsed,
            "results": evaluated.results,
        }
    )


def _job_extras(job: Job, config: ReportConfig) -> dict[str, Any]:
    """The options a job adds to (or settles in) its family's: the foreground measures by their table names (a
    configuration may spell them as PySODEvalToolkit does; the plan resolved them), the class images of proposals,
    the empty-truth rule of surfaces."""
    if job.family == "foreground":
        return {"measures": job.settings.get("measures")}
    if job.family == "proposals":
        return {"classes": job.classes, "class_option": "gt_classes"}
    if job.family == "surface":
        return {"skip_empty_gt": config.skip_empty_gt}
    return {}


@dataclass
class SuiteResult:
    """What a run produced: ``records[dataset][family][method]``, where each came from, the files written."""

    records: dict[str, dict[str, dict[str, dict[str, Any]]]]
    computed: list[str]
    cached: list[str]
    skipped: list[str]
    written: list[Path]
    tables: str


def _device_type(name: str) -> str | None:
    """The device type of a device name, without importing torch (None for "auto", which needs torch)."""
    if name == "auto":
        return None
    return name.split(":")[0]


def _start(job: Job, config: ReportConfig) -> Any:
    """This rank's share of a job's pairs, its decoding started (:func:`.runner.start`); an input error (fewer images
    than torchrun processes) names the job."""
    try:
        return runner.start(
            job.family,
            job.pairing.pairs,
            input_format=job.input_format,
            gt_format=job.gt_format,
            resize=config.resize,
            workers=config.workers,
        )
    except InputError as error:
        raise InputError(f"{job.dataset.name} / {job.family} / {job.method}: {error}") from None


def run_report(
    config: ReportConfig,
    *,
    resolve_device: Callable[[str], Any] | None = None,
    out: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
    file_outputs: Mapping[str, Path] | None = None,
) -> SuiteResult:
    """Evaluate a configuration and write its report (see the module doc for the order of work).

    Planning (listing, pairing, fingerprints, cache look-ups) imports no torch. The decoding workers start on the
    first combination to compute before torch and the measures are imported (~2.5 s on CPU), so that they decode
    meanwhile.

    Args:
        config: the checked configuration.
        resolve_device: ``config.device`` -> a torch device, raising :class:`InputError` for an unavailable one
            (default: ``torch.device``).
        out: where the tables and the summary go (stdout).
        warn: where warnings go (default: stderr).
        file_outputs: ``option -> path`` of the single-file outputs written after the report (``--json``,
            ``--csv``, ``--per-image-csv``), checked with the report's own against the inputs before anything runs.

    Returns:
        The records, which combinations were computed / taken from the cache / skipped, and the written files.
    """
    warn = warn or (lambda message: print(message, file=sys.stderr))
    _check_output_folder(config)

    problem = missing_packages(config.options.get("foreground", {}).get("measures"))
    if problem is not None:
        raise InputError(f"{config.source}: options.foreground.measures: {problem}")
    check_report_outputs(config, file_outputs or {})
    if config.xlsx:
        check_xlsx()
    if config.figures and importlib.util.find_spec("matplotlib") is None:
        raise InputError("figures need matplotlib: pip install 'segmetrics-torch[plot]' (or --figures none)")
    if config.figures and config.style is not None:
        import matplotlib.style

        if config.style not in matplotlib.style.available and not Path(config.style).is_file():
            raise InputError(
                f"--style / the configuration's `style`: {config.style!r} is not a matplotlib style (available: "
                f"{', '.join(sorted(matplotlib.style.available)[:8])} ...; or a .mplstyle file)"
            )
    with _output_lock(config.output):
        return _run_checked(config, resolve_device, out, warn)


@contextlib.contextmanager
def _output_lock(folder: Path) -> Iterator[None]:
    """Hold the output folder for this run: a second run into it at the same time is an input error.

    An advisory lock (``flock``) on ``folder/.segmetrics-lock``, which holds the pid of the run that holds it: the
    kernel releases it when the process ends, however it ends, so a killed run never leaves the folder locked. The
    lock file is opened without following a link and without truncating anything (:func:`_open_lock`): a lock path
    that is a symbolic link, a hard link, a folder or another kind of file is an error naming it, never written. The
    run removes its lock file when it ends (a run killed by SIGKILL leaves it, and the next run takes it over: a
    lock file nobody holds is stale). Only the writing rank locks under torchrun. A folder this run created and left
    empty (it failed before writing) is removed again. Where ``fcntl`` does not exist (Windows) nothing is locked.
    """
    if importlib.util.find_spec("fcntl") is None:  # pragma: no cover - not POSIX
        yield
        return
    if not distributed.is_main():
        yield
        return
    created = not folder.exists()
    folder.mkdir(exist_ok=True)
    lock_path = folder / LOCK_FILE
    handle = _held_lock(lock_path, folder, created)
    try:
        if handle >= 0:
            os.ftruncate(handle, 0)  # our own regular file (checked by _open_lock), held: a stale pid is replaced
            os.pwrite(handle, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            # removed while still held: a run waiting on the old file sees, once it holds it, that the path names
            # another file (or none) and starts over (_held_lock); a new run creates the file anew. A Ctrl-C here
            # waits for the removal (signals_held), which it would otherwise cut short
            with signals_held(), contextlib.suppress(OSError):
                if handle >= 0 and os.path.samestat(os.fstat(handle), os.lstat(lock_path)):
                    os.unlink(lock_path)
    finally:
        with signals_held():
            if handle >= 0:
                os.close(handle)  # releases the lock
            if created:
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only when empty: the run failed before writing anything


def _held_lock(lock_path: Path, folder: Path, created: bool) -> int:
    """A descriptor of ``lock_path`` that this process holds (``flock``), the path still naming that very file; -1
    (with a warning) where the file system has no locks. Another run's lock is an :class:`InputError`."""
    import fcntl

    for _ in range(100):  # a run that ends between our open and our lock removes the file: open the new one
        handle = _open_lock(lock_path)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = os.pread(handle, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(handle)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise InputError(
                    f"another segmetrics run is writing {folder} (pid {holder}); wait for it or choose another --output"
                ) from None
            # no locks on this file system (NFS without lockd, some FUSE mounts): run, and say what is not guarded
            if created or not holder.strip("?"):
                with contextlib.suppress(OSError):
                    os.unlink(lock_path)
            reason = error.strerror or error
            print(
                f"warning: cannot lock {folder} ({reason}): a second run writing the same folder at the same time "
                "would not be refused",
                file=sys.stderr,
            )
            return -1
        try:
            if os.path.samestat(os.fstat(handle), os.lstat(lock_path)):
                return handle
        except OSError:  # removed meanwhile by the run that held it
            pass
        os.close(handle)
    raise InputError(f"cannot hold the lock {lock_path}: it keeps being replaced; is another program writing there?")


def _open_lock(path: Path) -> int:
    """A descriptor of the lock file ``path``: created new (``O_EXCL``), or an existing regular file of one link,
    opened without following a link (``O_NOFOLLOW``) and without truncating it; anything else is an InputError
    naming the path."""
    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        pass
    refuse = (
        f"{path} exists and is not a segmetrics lock file (a link, a folder or a file linked elsewhere); the run "
        "never writes through it: remove or rename it, or choose another --output"
    )
    try:
        handle = os.open(path, flags)
    except OSError:  # ELOOP: a symbolic link; EISDIR: a folder; ENXIO/EACCES: a socket, a file not ours
        raise InputError(refuse) from None
    info = os.fstat(handle)
    # ours: a regular file of one link holding nothing but a pid (a killed run's, or one still running)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or not _LOCK_TEXT.fullmatch(os.pread(handle, 64, 0)):
        os.close(handle)
        raise InputError(refuse)
    return handle


#: what a lock file of this command holds: a pid and a newline, or nothing (a run that ended before writing it)
_LOCK_TEXT = re.compile(rb"(\d{1,20}\n)?")


def _run_checked(
    config: ReportConfig,
    resolve_device: Callable[[str], Any] | None,
    out: Callable[[str], None],
    warn: Callable[[str], None],
) -> SuiteResult:
    """:func:`run_report` once the configuration's outputs are checked and the output folder is held."""
    device = None
    device_type = _device_type(config.device)
    if device_type is None:
        device = _resolve(config.device, resolve_device)
        device_type = device.type
    jobs, skipped = plan_jobs(config, warn, device_type)
    cache = ResultCache(config.cache, warn) if config.cache is not None else None
    records: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    found = {job.key: cache.load(job.key) for job in jobs} if cache is not None and distributed.is_main() else {}
    found = distributed.share_cached(found)  # under torchrun rank 0 reads the cache and says what to compute
    todo = [job for job in jobs if found.get(job.key) is None]
    computed, cached = [], []
    streams = {}
    start = time.perf_counter()
    try:
        if todo:
            first = todo[0]
            streams[first.key] = _start(first, config)
        if todo:
            runner.load_measures()  # torch and the measures load while the workers decode
        if device is None:
            device = _resolve(config.device, resolve_device)
        show = config.progress and sys.stderr.isatty()
        for job in jobs:
            label = f"{job.dataset.name} / {job.family} / {job.method}"
            record = found.get(job.key)
            if record is None:
                stream = streams.pop(job.key) if job.key in streams else _start(job, config)
                with tqdm(
                    total=len(job.pairing.pairs), desc=label, unit="img", file=sys.stderr, disable=not show, leave=True
                ) as progress:
                    try:
                        record = _compute(job, config, device, progress, stream)
                    except InputError as error:
                        raise InputError(f"{label}: {error}") from None
                    finally:
                        runner.stop(stream)
                if cache is not None and distributed.is_main():
                    cache.store(job.key, record, job.fingerprint)
                computed.append(label)
            else:
                cached.append(label)
            records.setdefault(job.dataset.name, {}).setdefault(job.family, {})[job.method] = record
    except KeyboardInterrupt:
        if cache is not None and computed:
            warn(f"note: {len(computed)} finished evaluation(s) are cached in {cache.root}; run again to resume")
        raise
    finally:
        for stream in streams.values():
            runner.stop(stream)
    elapsed = time.perf_counter() - start
    if not distributed.is_main():  # under torchrun rank 0 reports and writes
        return SuiteResult(records, computed, cached, skipped, [], "")

    pairs = {(job.dataset.name, job.family, job.method): job.pairing.pairs for job in jobs}
    return _write_report(
        config, SuiteResult(records, computed, cached, skipped, [], ""), pairs, cache, device, len(jobs), elapsed, out
    )


def _write_report(
    config: ReportConfig,
    result: SuiteResult,
    pairs: Mapping[tuple[str, str, str], Sequence[tuple[str, Path, Path]]],
    cache: ResultCache | None,
    device: Any,
    n_jobs: int,
    elapsed: float,
    out: Callable[[str], None],
) -> SuiteResult:
    """Render the report of ``result``'s records into the output folder and its HTML pages (``pairs``: the files of
    each (dataset, family, method)), all moved into place together; print its tables and the summary lines;
    ``result`` with the files written and the tables."""

    files, tables = render_report(result.records, config)
    report = ReportFolder(config.output, files)
    pages = []
    if config.html is not None:  # drawn with the report's figures as they are rendered, before anything moves in
        figures = [report.staged(relative) for relative in files if Path(relative).suffix in (".png", ".svg")]
        pages = records_html(
            config.html, result.records, pairs, families=_families(config), figures=figures, digits=config.digits
        )
    write_together([report, *pages], locked=True)
    written = report.written
    out(tables)
    out("")
    cached = len(result.cached)
    cache_note = f" ({cached} from the cache in {cache.root})" if cache is not None and cached else ""
    out(
        f"Evaluated {n_jobs} (dataset, family, method) combination(s) on {device}: {len(result.computed)} computed"
        f"{cache_note}, in {elapsed:.2f} s."
    )
    for line in result.skipped:
        out(f"Not evaluated: {line}")
    top = sorted(
        {
            p.relative_to(config.output).parts[0] + ("/" if p.parent != config.output else "")
            for p in written
            if p.is_relative_to(config.output)
        }
    )
    out(f"Wrote {len(written)} file(s) to {config.output}: {', '.join(top)}")
    for page in pages:
        out(f"Wrote {page.target}")
    return SuiteResult(result.records, result.computed, result.cached, result.skipped, written, tables)


def _resolve(name: str, resolve_device: Callable[[str], Any] | None) -> Any:
    if resolve_device is not None:
        return resolve_device(name)
    # torch loads here, once the plan is made and the decoding workers run (this module imports no torch)
    import torch

    try:
        return torch.device(name)
    except (RuntimeError, ValueError):
        raise InputError(f"unknown device {name!r} (use cpu, cuda, cuda:N or auto)") from None


def _check_output_folder(config: ReportConfig) -> None:
    out = config.output
    if out.exists() and not out.is_dir():
        raise InputError(f"the output {out} is a file; give a folder")
    if not out.exists() and not out.parent.is_dir():
        raise InputError(f"the output folder {out}: its parent {out.parent} does not exist")
    if config.cache is not None and config.cache.exists() and not config.cache.is_dir():
        raise InputError(f"the cache {config.cache} is a file; give a folder")


def check_report_outputs(config: ReportConfig, file_outputs: Mapping[str, Path]) -> None:
    """No output of the report (its folder, its cache, ``--json`` / ``--csv`` / ``--per-image-csv``) replaces,
    deletes or pollutes an input: a ground-truth, prediction or class folder, or the configuration file (see
    :mod:`~segmetrics_torch.reports.output_safety`)."""

    inputs: list[InputFolder] = []
    for dataset in config.datasets:
        inputs.append(InputFolder(f"the ground-truth folder of {dataset.name}", dataset.gt))
        if dataset.gt_classes is not None:
            inputs.append(InputFolder(f"the class folder of {dataset.name}", dataset.gt_classes))
        for method in config.methods:
            for family in dataset.families:
                folder = method.folder(dataset.name, family)
                if folder is not None:
                    inputs.append(InputFolder(f"the prediction folder of {method.name} on {dataset.name}", folder))
    default_cache = config.cache is not None and config.cache == config.output / "cache"
    folders = [report_folder(config.output, "the output folder", default_cache=default_cache)]
    if config.cache is not None and not default_cache:
        folders.append(FolderOutput("the cache folder", config.cache))
    if config.html is not None:  # each page's folder: a file, or a page or assets/ the report did not write, refused
        for page in html_page_folders(config.html, _families(config)).values():
            folders.append(html_folder_output(page, "html" if config.config_file is not None else "--html"))
    sources = [InputFile("the configuration file", config.config_file)] if config.config_file is not None else []
    files = {("--" + option.replace("_", "-")): path for option, path in file_outputs.items()}
    check_outputs(files, folders=folders, inputs=inputs, input_files=sources, cache=config.cache)
    probe_outputs(files)
    # a user's own results.json or tables of the report's names: refused before hours of work (after the inputs'
    # checks, whose errors say more: an input of the run named like a report file)
    check_report_folder(config.output, option="output" if config.config_file is not None else "--output")

    check_csv_outputs(files)


#: the lock file of a report folder (see ``_output_lock``)
LOCK_FILE = ".segmetrics-lock"


def _families(config: ReportConfig) -> list[str]:
    """The families the configuration evaluates, in order (the HTML report's pages: one folder each)."""
    return list(dict.fromkeys(family for dataset in config.datasets for family in dataset.families))
