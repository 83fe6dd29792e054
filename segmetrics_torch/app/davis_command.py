"""``segmetrics evaluate davis``: the outputs checked, one call of :func:`~segmetrics_torch.functional.evaluate_davis`,
the global table, the reference's two CSVs (:func:`~segmetrics_torch.functional.davis_global_csv`,
:func:`~segmetrics_torch.functional.davis_per_sequence_csv`) in ``--out`` and the ``--json`` report. Everything a
script could reuse (the protocol, the CSV texts, the per-object rows) is the library's."""

from __future__ import annotations

import argparse
import functools
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError
from ..functional import davis_global_csv, davis_per_sequence_csv, evaluate_davis
from ..reports import output_safety
from ..reports.files import check_output
from ..reports.output_safety import FolderOutput, InputFolder
from ..reports.protocol_report import load_protocol_config, resolved_device_name, run_protocol_report
from ..reports.tables import format_table, write_run_files
from ..reports.video_figures import plot_davis_per_sequence
from .folder_io import parse_device, shown_path

#: the options passed on to ``evaluate_davis`` under the same names (``--set`` is its ``subset``; ``--backend`` is
#: the run's setting, applied by :mod:`.cli` as for every form, which evaluate_davis's ``backend="auto"`` follows)
SETTINGS = ("task", "resolution", "max_proposals", "decay_edges", "bound_th", "chunk_frames", "workers")

#: the options a ``--config`` report takes from its configuration, with the parser's defaults: one given with another
#: value beside ``--config`` is an error, not silently ignored (``--backend`` and ``--max-image-pixels`` are the
#: run's settings, applied by :mod:`.cli` to every form, a report included)
CONFIG_SET = {
    "set": "val",
    "resolution": "480p",
    "max_proposals": 20,
    "decay_edges": "reference",
    "bound_th": 0.008,
    "chunk_frames": 32,
    "workers": 2,
    "device": "cpu",
}


def run_evaluate_davis(args: argparse.Namespace) -> int:
    if args.config is not None:  # what each dataset's entry of the configuration sets: refused when changed here
        given = [f"--{key.replace('_', '-')}" for key, value in CONFIG_SET.items() if getattr(args, key) != value]
        if given:
            raise InputError(f"--config {args.config} sets them for each dataset: drop {', '.join(given)}")
    if run_config(args, "davis", ("davis_root", "results", "task", "out"), ("json", "sequences")):
        return 0
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file; give a folder")
    if not out.exists() and not out.parent.is_dir():
        raise InputError(f"--out {out}: the folder {out.parent} does not exist")
    csvs = {f"--out ({n})": out / f"{n}-{args.set}.csv" for n in ("global_results", "per-sequence_results")}
    figure = {"--out (figure)": out / f"per-sequence_results-{args.set}.png"} if find_spec("matplotlib") else {}
    files = {"--json": check_output(args.json, "--json", probe=False)}
    if out.is_dir():
        files.update({option: check_output(path, option, probe=False) for option, path in {**csvs, **figure}.items()})
    # both read as trees (the PNGs of every sequence folder): no output anywhere inside them
    inputs = [
        InputFolder("the DAVIS root", Path(args.davis_root), tree=True),
        InputFolder("the results folder", Path(args.results), tree=True),
    ]
    output_safety.check_outputs({**files, **csvs, **figure}, folders=[FolderOutput("--out", out)], inputs=inputs)
    output_safety.check_outputs_are_not_folders(files, {"--out": out})
    output_safety.probe_outputs(files, {"--out": out})
    settings = {key: getattr(args, key) for key in SETTINGS}
    device = parse_device(args.device)

    start = time.perf_counter()
    try:
        result = evaluate_davis(
            args.davis_root, args.results, subset=args.set, sequences=args.sequences, device=device, **settings
        )
        table, per_object = davis_global_csv(result), davis_per_sequence_csv(result)
        row = result.global_results()
    except (ValueError, FileNotFoundError) as error:  # the message names the sequence and the frame
        raise InputError(str(error)) from None
    elapsed = time.perf_counter() - start

    name = Path(shown_path(args.results)).name or shown_path(args.results)
    print(format_table({name: row}, list(row), index_header="method"))
    print(
        f"Evaluated {len(result.objects)} object(s) of {len(result.sequences)} sequence(s) of DAVIS {args.set} "
        f"({args.task}, {args.resolution}, decay edges {args.decay_edges}) in {elapsed:.2f} s."
    )
    title = f"{name}: DAVIS {args.set} ({args.task})"
    # the plot extra: without matplotlib the CSVs hold the same numbers
    draw = [
        (path, functools.partial(plot_davis_per_sequence, result.per_sequence(), title=title))
        for path in figure.values()
    ]
    json_path, json_file = files["--json"], None
    if json_path is not None:
        settings |= {"device": resolved_device_name(device)}
        json_file = (json_path, _report(args, name, result, row, settings, elapsed))
    texts = dict(zip(csvs.values(), (table, per_object), strict=True))
    # together (--out made then): an interruption leaves the old set or the new, a failure no new empty folder
    write_run_files(json_file, files=draw, texts=texts)
    print(f"Wrote {', '.join(p.name for p in [*csvs.values(), *figure.values()])} to {out}")
    if json_path is not None:
        print(f"Wrote {json_path}")
    return 0


def _report(args: argparse.Namespace, name: str, result: Any, row: dict, settings: dict, elapsed: float) -> dict:
    """The ``--json`` document: provenance, the settings, the global row, the per-object rows (per-frame J and F)."""
    return {
        "segmetrics_version": __version__,
        "task": "davis",
        "name": name,
        "davis_root": str(Path(args.davis_root).resolve()),
        "results_dir": str(Path(args.results).resolve()),
        # the device used ("cuda:0", "cpu"), not the option's text ("auto")
        "settings": {"set": args.set, "sequences": args.sequences, "backend": args.backend} | settings,
        "sequences": list(result.sequences),
        "elapsed_s": elapsed,
        "global": row,
        "objects": result.object_rows(),
    }


def run_config(args: argparse.Namespace, family: str, required: tuple[str, ...], single: tuple[str, ...]) -> bool:
    """``--config FILE``: the report of methods x datasets (:mod:`segmetrics_torch.reports.protocol_report`), True;
    without it the single form's ``required`` options are checked, False."""
    flag = {o: f"--{o.replace('_', '-')}" for o in (*required, *single)}
    given = [flag[o] for o in flag if getattr(args, o) is not None]
    if args.config is None:
        missing = [flag[o] for o in required if getattr(args, o) is None]
        if missing:
            raise InputError(f"the following arguments are required: {', '.join(missing)} (or --config FILE)")
        return False
    if given:
        raise InputError(f"--config {args.config} names the datasets, methods and outputs: drop {', '.join(given)}")
    config = load_protocol_config(args.config, family)
    run_protocol_report(config, device=parse_device(config.device) if family == "davis" else None)
    return True
