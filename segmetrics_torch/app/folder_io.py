"""What every single-folder ``segmetrics evaluate`` command shares before and after its measures run, as one record
of its options (:class:`FolderRun`): the device, the output files checked before anything is read (writable, never
an input), the pairing and its errors, the pre-scan with ``--skip-bad``, the progress bar, and the ``--json`` /
``--per-image-csv`` writers. The handlers themselves are in :mod:`.single_folder`."""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from .. import __version__
from ..datasets.folders import FolderDataset, open_folders
from ..datasets.pairing import BOUNDARY_EXTENSIONS, match_folders
from ..datasets.prescan import check_pairing, folder_names
from ..errors import InputError
from ..io import bsr_result_files
from ..reports.files import AppendedText, write_together
from ..reports.html_report import HtmlReport, html_folder_output
from ..reports.output_safety import FolderOutput, InputFolder, checked_outputs
from ..reports.tables import format_table, per_image_rows, run_file_outputs, scalar_row
from . import distributed, runner
from .report_config import config_from_mapping
from .report_run import run_report

if TYPE_CHECKING:  # annotations only
    import torch

    from ..io import Pairing
    from .family_job import Evaluated


def parse_device(name: str) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; otherwise a torch device that must be available."""
    # torch loads here: a report (``--config``) plans and starts its decoding workers first, then asks for the device
    import torch

    if name == "auto":
        return distributed.device_for(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise InputError(f"unknown device {name!r} (use cpu, cuda, cuda:N or auto)") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise InputError(f"device {name!r} requested but CUDA is not available (use --device cpu)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise InputError(f"device {name!r} requested but only {torch.cuda.device_count()} CUDA device(s) exist")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise InputError(f"device {name!r} requested but MPS is not available (use --device cpu)")
    return distributed.device_for(device)  # under torchrun, "cuda" is this rank's GPU


def shown_path(path: str) -> str:
    """A folder the user named, as printed: normalised (``a//b/./c/`` -> ``a/b/c``), relative as given."""
    return os.path.normpath(path)


def check_out_dir(path: str | None) -> Path | None:
    """Fail before the evaluation when ``--out-dir`` cannot be a folder (it is created when absent)."""
    if path is None:
        return None
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out-dir {out} is a file; give a folder")
    if not out.exists() and not out.parent.is_dir():
        raise InputError(f"--out-dir {out}: the folder {out.parent} does not exist")
    return out


def pairing_options(args: argparse.Namespace) -> dict[str, Any]:
    """The name-mapping flags of ``args`` as :func:`segmetrics_torch.io.find_pairs` keywords."""
    return {
        "pred_prefix": args.pred_prefix or "",
        "pred_suffix": args.pred_suffix or "",
        "gt_prefix": args.gt_prefix or "",
        "gt_suffix": args.gt_suffix or "",
        "pattern": args.pair_regex,
    }


@dataclass(frozen=True)
class FolderRun:
    """One single-folder ``evaluate`` form: the options every family's form shares, read once from the parser's
    Namespace (:meth:`from_args`), and the steps they drive. The handlers of :mod:`.single_folder` pass this record,
    never the Namespace, to the steps: the checked outputs (:meth:`check_outputs`), the pairing and its pre-scan
    (:meth:`open_dataset`; :meth:`pair_boundary` first for the boundary family), the evaluation under its progress
    bar (:meth:`evaluate`), and the run's outputs as one set (:meth:`write_outputs`); or, with ``--output DIR``, the
    report of one method on one dataset in their place (:meth:`report`).

    Attributes:
        family: the family evaluated (``"foreground"``, ``"boundary"``, ...).
        pred, gt: the folders as given.
        name, dataset: ``--name`` and ``--dataset`` as given; None: the opened dataset reads them from the paths
            (:attr:`~segmetrics_torch.datasets.folders.FolderDataset.method_name`, ``dataset_name``).
        device_name: ``--device`` as given; :attr:`device` is the torch device it names, resolved (and checked)
            when first used: torch loads then, so that the pairing, the pre-scan and the progress bar come first
            (something on the screen within a second of the start).
        outputs: the output options of the form, option -> value as given (``--json``, ``--per-image-csv``, the
            form's own: ``--csv``, ``--plot``).
        pairing: the name-mapping options as :func:`segmetrics_torch.io.find_pairs` keywords.
        allow_missing, skip_bad, skip_empty_gt, resize: the pairing and pre-scan switches.
        batch_size, workers, progress: how the evaluation runs.
        gt_classes: the class folder of ``evaluate proposals`` (an input too), else None.
    """

    family: str
    pred: str
    gt: str
    name: str | None
    dataset: str | None
    device_name: str
    outputs: dict[str, str | None]
    pairing: dict[str, Any]
    allow_missing: bool
    skip_bad: bool
    skip_empty_gt: bool
    resize: bool
    batch_size: int
    workers: int
    progress: bool
    gt_classes: str | None = None
    html: str | None = None

    @classmethod
    def from_args(
        cls, args: argparse.Namespace, family: str, more: Mapping[str, str | None] | None = None
    ) -> FolderRun:
        """The record of ``args``, the parser's Namespace of an ``evaluate <family>`` form (``more``: the form's own
        output options, option -> value)."""
        pairing = pairing_options(args)
        run = cls(
            family=family,
            pred=args.pred,
            gt=args.gt,
            name=args.name,
            dataset=getattr(args, "dataset", None),
            device_name=args.device,
            outputs={"--json": args.json, **(more or {}), "--per-image-csv": args.per_image_csv},
            pairing=pairing,
            allow_missing=bool(getattr(args, "allow_missing", False)),
            skip_bad=bool(getattr(args, "skip_bad", False)),
            skip_empty_gt=bool(getattr(args, "skip_empty_gt", False)),
            resize=bool(getattr(args, "resize", False)),
            batch_size=getattr(args, "batch_size", 1),
            workers=getattr(args, "workers", 0),
            progress=not args.no_progress,
            gt_classes=getattr(args, "gt_classes", None),
            html=getattr(args, "html", None),
        )
        if run.device_name not in ("cpu", "auto"):
            # an unavailable device (--device cuda on a CPU machine) is refused now, not after the pre-scan's
            # listing: torch loads first for these, as it will anyway (cpu and auto load it under the progress bar)
            run.device  # noqa: B018 - the cached property resolves and checks the device
        return run

    @functools.cached_property
    def device(self) -> torch.device:
        """The torch device of ``--device`` (:func:`parse_device`: an unknown or unavailable one is an error)."""
        return parse_device(self.device_name)

    @functools.cached_property
    def inputs(self) -> list[InputFolder]:
        """The folders the run reads (no output may replace or pollute them: ``output_safety``)."""
        inputs = [
            InputFolder("the prediction folder", Path(self.pred)),
            InputFolder("the ground-truth folder", Path(self.gt)),
        ]
        if self.gt_classes:
            inputs.append(InputFolder("the class folder", Path(self.gt_classes)))
        return inputs

    @functools.cached_property
    def dataset_options(self) -> dict[str, Any]:
        """The pairing and pre-scan switches as :func:`~segmetrics_torch.datasets.folders.open_folders` keywords."""
        return {
            "names": self.pairing,
            "allow_missing": self.allow_missing,
            "resize": self.resize,
            "skip_bad": self.skip_bad,
            "skip_empty_gt": self.skip_empty_gt,
        }

    @functools.cached_property
    def folder_outputs(self) -> list[FolderOutput]:
        """The folders the run writes whole: ``--html``'s report (checked as every output is: never an input)."""
        if self.html is None:
            return []
        return [html_folder_output(Path(self.html))]

    def check_outputs(self, *, out_dir: Path | None = None) -> dict[str, Path | None]:
        """The output files, each checked before anything is read: writable, and none of them (nor ``--out-dir``'s
        files) an input (:func:`~segmetrics_torch.reports.output_safety.checked_outputs`); option -> path (None: not
        asked for)."""
        folders = self.folder_outputs
        if out_dir is None:
            return checked_outputs(self.outputs, inputs=self.inputs, folder_outputs=folders)
        bsr = {f"--out-dir ({name})": out_dir / name for name in BSR_FILES}
        return checked_outputs(
            self.outputs, inputs=self.inputs, folders={"--out-dir": out_dir}, folder_files=bsr, folder_outputs=folders
        )

    def pair_boundary(self) -> tuple[Pairing, str, str]:
        """``--pred`` and ``--gt`` (images or .mat files) paired by stem: ``(pairing, pred kind, gt kind)``, kinds
        ``"image"`` / ``"mat"``."""
        return match_folders(self.pred, self.gt, BOUNDARY_EXTENSIONS, **self.pairing)

    def check_pairing(self, pairing: Pairing) -> None:
        """No common stem is an error; unmatched files are one too, or a warning with ``--allow-missing``."""
        check_pairing(pairing, self.pred, self.gt, self.allow_missing)

    @distributed.decided_by_main  # under torchrun rank 0 pairs and scans, the other ranks take its findings
    def open_dataset(
        self,
        input_format: str = "gray",
        gt_format: str = "gray",
        *,
        extensions: Sequence[str] | None = None,
        pairing: Pairing | None = None,
    ) -> FolderDataset:
        """``--pred`` and ``--gt`` paired (by stem, with the name mapping; ``extensions``: the family's, None:
        images; or ``pairing`` as the caller made it) and pre-scanned
        (:func:`~segmetrics_torch.datasets.folders.open_folders`): every unpaired name, unreadable file and size that
        does not fit, in one error before any measure runs (unless ``--skip-bad``); the notes and what is left out
        are printed."""
        return open_folders(
            self.pred,
            self.gt,
            self.family,
            input_format=input_format,
            gt_format=gt_format,
            extensions=extensions,
            pairing=pairing,
            method=self.name,
            dataset=self.dataset,
            **self.dataset_options,
        )

    def report(self, output: str, measures: list[str] | None, *, protocol: str, figures: str | None) -> int:
        """``evaluate foreground ... --output DIR``: the run as the report of one method on one dataset (the
        ``--config`` outputs: :func:`.report_run.run_report` of the configuration this record makes), in place of the
        single-folder files; the method and the dataset named as given or from the paths
        (:func:`~segmetrics_torch.datasets.prescan.folder_names`). ``measures``, ``protocol``, ``figures``: the
        options ``--measures`` (parsed), ``--protocol`` and ``--figures``."""
        if protocol != "pysodmetrics":
            raise InputError("--protocol applies to the single-folder form (--json, --csv); leave out --output")
        if self.outputs.get("--toolbox-lines") is not None:
            raise InputError("--toolbox-lines and --output: give one (--toolbox-lines goes with --protocol)")
        for flag in ("--json", "--csv", "--per-image-csv"):
            if self.outputs.get(flag) is not None:
                raise InputError(
                    f"{flag} and --output: give one (--output DIR writes results.json and CSV files there)"
                )
        method, dataset = folder_names(self.pred, self.gt, self.name, self.dataset)
        data: dict[str, Any] = {
            "datasets": {dataset: {"gt": str(Path(self.gt).resolve()), "families": ["foreground"]}},
            "methods": {method: str(Path(self.pred).resolve())},
            "output": str(Path(output).resolve()),
            "allow_missing": self.allow_missing,
            "resize": self.resize,
            "skip_bad": self.skip_bad,
            "skip_empty_gt": self.skip_empty_gt,
            "device": self.device_name,
            "batch_size": self.batch_size,
            "workers": self.workers,
            **({"options": {"foreground": {"measures": measures}}} if measures else {}),
            **{("pair_regex" if key == "pattern" else key): value for key, value in self.pairing.items() if value},
        }
        if figures is not None:
            value = figures.strip()
            data["figures"] = False if value == "none" else [f.strip() for f in value.split(",")]
        if self.html is not None:
            data["html"] = str(Path(self.html).resolve())
        config = config_from_mapping(data, Path.cwd(), "command line")
        config.progress = self.progress
        run_report(config, resolve_device=parse_device)
        return 0

    def evaluate(
        self,
        name: str,
        pairs: Sequence[tuple[str, Path, Path]],
        options: Mapping[str, Any],
        *,
        input_format: str = "gray",
        gt_format: str = "gray",
        resize: bool | None = None,
    ) -> tuple[Evaluated, float]:
        """``(evaluated, seconds)``: the job through the runner (:func:`.runner.start`, :func:`.runner.run`) under a
        progress bar on stderr (none with ``--no-progress`` or when stderr is not a terminal)."""
        start = time.perf_counter()
        disable = not self.progress or not sys.stderr.isatty()
        with tqdm(total=len(pairs), desc=name, unit="img", file=sys.stderr, disable=disable) as progress:
            device = self.device  # torch loads here, under the bar
            source = runner.start(
                self.family, pairs, input_format=input_format, gt_format=gt_format, resize=resize, workers=self.workers
            )
            evaluated = runner.run(
                self.family,
                pairs,
                source,
                options=options,
                input_format=input_format,
                gt_format=gt_format,
                device=device,
                batch_size=self.batch_size,
                progress=progress,
            )
        return evaluated, time.perf_counter() - start

    def document(
        self,
        dataset: FolderDataset,
        count: int,
        settings: Mapping[str, Any],
        extra: Mapping[str, Any] | None,
        elapsed: float,
        results: Any,
    ) -> dict[str, Any]:
        """The ``--json`` report: provenance, folders, pairing, settings (``settings`` after the run's own), ``extra``,
        the time taken, then the results."""
        pairing = dataset.pairing
        return {
            "segmetrics_version": __version__,
            "task": self.family,
            "name": dataset.method_name,
            "pred_dir": str(Path(self.pred).resolve()),
            "gt_dir": str(Path(self.gt).resolve()),
            "num_images": count,
            "missing_predictions": pairing.missing,
            "unmatched_predictions": pairing.unmatched,
            "settings": {
                "device": str(self.device),
                "batch_size": self.batch_size,
                "allow_missing": self.allow_missing,
                **settings,
            },
            **(extra or {}),
            "elapsed_s": elapsed,
            "results": results,
        }

    def write_outputs(
        self,
        files: Mapping[str, Path | None],
        dataset: FolderDataset,
        count: int,
        *,
        settings: dict[str, Any],
        elapsed: float,
        results: Any,
        per_image: Mapping[str, Any],
        extra: dict[str, Any] | None = None,
        keys: Sequence[str] | None = None,
        columns: Sequence[tuple[str, str]] = (),
        summary: str | None = None,
        other_files: Sequence[tuple[Path, Callable[[Path], object]]] = (),
        other_texts: Mapping[Path, str] | None = None,
        appended: Mapping[Path, tuple[str, str]] | None = None,
    ) -> None:
        """With ``summary`` (the line that says what was evaluated), first the table of the run's scalar results
        (``columns``: its ``(key, header)``) and that line on stdout (the forms without ``summary`` print their own).
        Then the run's outputs as one set (:func:`~segmetrics_torch.reports.files.write_together`: a table that
        cannot take the rows, or a page that cannot be drawn, fails before any file is replaced; an interruption
        leaves the old set or the new): the ``--json`` report (:meth:`document`), the ``--per-image-csv`` rows
        (:func:`per_image_rows`) and the ``--csv`` row (method, dataset, image count and the ``keys`` of the table),
        ``other_files`` (``(path, write)``: ``--plot``), ``other_texts`` (``{path: text}``: ``--out-dir``'s), the
        ``--html`` report (:meth:`~segmetrics_torch.reports.html_report.HtmlReport.of_dataset`) and ``appended``
        (``{path: (text, the line printed)}``: ``--toolbox-lines``, added after the others have moved in)."""
        document = self.document(dataset, count, settings, extra, elapsed, results)
        name, where = dataset.method_name, dataset.dataset_name
        json_path, per_image_path, csv_path = files["--json"], files["--per-image-csv"], files.get("--csv")
        tables: list[tuple[Path, Sequence[Mapping[str, Any]], Sequence[str], str]] = []
        shown: list[str] = []
        table = scalar_row({key: value for key, value in results.items() if key != "per_image"})
        if summary is not None:
            print(format_table({name: table}, columns))
            print(summary)
        rows = per_image_rows(name, where, per_image, keys)
        if per_image_path is not None:
            tables.append((per_image_path, rows, ("method", "dataset", "image"), "--per-image-csv"))
            shown.append(f"{per_image_path} ({len(rows)} rows of {name} / {where})")
        if csv_path is not None:
            row = {"method": name, "dataset": where, "num_images": count}
            tables.append((csv_path, [row | {k: table.get(k) for k in keys or ()}], ("method", "dataset"), "--csv"))
            shown.append(f"{csv_path} (row {name} / {where})")
        outputs, actions = run_file_outputs(None if json_path is None else (json_path, document), tables, other_texts)
        html: list[HtmlReport] = []
        if self.html is not None:
            html_options = dict(settings)
            if html_options.get("parameter_kind") == "thresholds":  # a ucm2's levels: the overlay's level
                html_options["thresholds"] = html_options["parameters"]
            html.append(
                HtmlReport.of_dataset(
                    Path(self.html),
                    dataset,
                    family=self.family,
                    per_image=rows,
                    table=table,
                    columns=columns,
                    options=html_options,
                )
            )
        lines = [AppendedText(path, text) for path, (text, _) in (appended or {}).items()]
        write_together([*outputs, *other_files, *html, *lines], locked=True)
        if other_texts:  # one folder's files (--out-dir)
            print(f"Wrote {', '.join(path.name for path in other_texts)} to {next(iter(other_texts)).parent}")
        for path in [*(Path(path) for path, _ in other_files), *([] if json_path is None else [json_path])]:
            print(f"Wrote {path}")
        for action, text in zip(actions[json_path is not None :], shown, strict=True):
            print(f"{action.capitalize()} {text}")
        for report in html:
            print(f"Wrote {report.target}")
        for _, said in (appended or {}).values():
            print(said)


#: the files of BSR's collect_eval_bdry.m that --out-dir writes
BSR_FILES = ("eval_bdry.txt", "eval_bdry_thr.txt", "eval_bdry_img.txt")


def bsr_files(out_dir: Path, summary: dict[str, Any]) -> dict[Path, str]:
    """BSR ``collect_eval_bdry.m`` outputs (:func:`~segmetrics_torch.io.bsr_result_files`) as ``{path: text}``,
    written with the run's other files (:meth:`FolderRun.write_outputs`): all together, or none (``out_dir`` is made
    when they are written, and removed again if the set fails and it is still empty)."""
    return {out_dir / name: text for name, text in bsr_result_files(summary).items()}
