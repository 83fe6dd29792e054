"""PySODEvalToolkit's dataset and method JSON configurations, read as they are.

PySODEvalToolkit (the usual driver of PySODMetrics) describes an evaluation in two JSON files::

    datasets.json  {"ECSSD": {"image": {"path": ..., "suffix": ".jpg"}, "mask": {"path": ..., "prefix": ...,
                                                                                  "suffix": ".png"}}, ...}
    methods.json   {"MyNet": {"ECSSD": {"path": ..., "prefix": "ecssd_", "suffix": "_sal.png"}, ...}, ...}

``segmetrics evaluate --datasets-json datasets.json --methods-json methods.json [--output DIR]`` evaluates them as a
report of the foreground family: each dataset's ``mask`` folder is its ground truth, each method's entry its
prediction folder on that dataset, with that entry's own name mapping. A ``suffix`` there includes the file
extension (``".png"``, ``"_sal.png"``); the pairing here matches file stems, so the extension is dropped
(``"_sal.png"`` -> ``pred_suffix: _sal``) and the extension itself is left to the readers (any image type). As the
toolkit, a method is evaluated on the datasets both files name (a dataset no method names is left out); the
``image`` entries (the RGB images) are not
needed. Relative paths are relative to the JSON file that holds them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..reports.named_inputs import parse_json, read_text_file

__all__ = ["toolkit_configuration"]

_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


def _stem_suffix(suffix: str) -> str:
    lower = suffix.lower()
    for ext in _EXTENSIONS:
        if lower.endswith(ext):
            return suffix[: -len(ext)]
    return suffix


def _load(path: str | Path, what: str) -> dict[str, Any]:
    path = Path(path)
    data = parse_json(read_text_file(path, what), path)  # a name given twice is an error, not the last one kept
    if not isinstance(data, dict) or not data:
        raise InputError(f"{path}: expected PySODEvalToolkit's {what} (a JSON object of named entries)")
    return data


def _entry(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not isinstance(value.get("path"), str):
        raise InputError(f'{where}: expected {{"path": ..., "prefix": ..., "suffix": ...}}, got {value!r}')
    for key in ("prefix", "suffix"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise InputError(f"{where}.{key}: expected a string, got {value[key]!r}")
    return value


def toolkit_configuration(datasets_json: str | Path, methods_json: str | Path) -> dict[str, Any]:
    """The report configuration (the mapping ``config_from_mapping`` reads) of PySODEvalToolkit's two JSON files.

    Raises:
        InputError: a file missing, not JSON, with a key given twice in one object (a method or dataset name, an
            entry's ``path`` ...: the toolkit's ``json.load`` would keep the last one), or not of the toolkit's shape
            (naming the entry); no dataset that both files name.
    """
    datasets_raw = _load(datasets_json, "--datasets-json (PySODEvalToolkit's dataset configuration)")
    methods_raw = _load(methods_json, "--methods-json (PySODEvalToolkit's method configuration)")
    dbase, mbase = Path(datasets_json).resolve().parent, Path(methods_json).resolve().parent
    datasets: dict[str, Any] = {}
    for name, value in datasets_raw.items():
        if not isinstance(value, dict) or "mask" not in value:
            raise InputError(f'{datasets_json}: {name}: expected {{"image": ..., "mask": ...}}, got {value!r}')
        mask = _entry(value["mask"], f"{datasets_json}: {name}.mask")
        entry: dict[str, Any] = {"gt": str(dbase / mask["path"]), "families": ["foreground"]}
        if mask.get("prefix"):
            entry["gt_prefix"] = mask["prefix"]
        if _stem_suffix(mask.get("suffix") or ""):
            entry["gt_suffix"] = _stem_suffix(mask["suffix"])
        datasets[str(name)] = entry
    methods: dict[str, Any] = {}
    for name, per_dataset in methods_raw.items():
        if not isinstance(per_dataset, dict):
            raise InputError(f'{methods_json}: {name}: expected {{dataset: {{"path": ...}}}}, got {per_dataset!r}')
        entry = {}
        for dataset, value in per_dataset.items():
            if dataset not in datasets:
                continue  # as the toolkit: the datasets both files name
            item = _entry(value, f"{methods_json}: {name}.{dataset}")
            spec: dict[str, str] = {"path": str(mbase / item["path"])}
            if item.get("prefix"):
                spec["pred_prefix"] = item["prefix"]
            if _stem_suffix(item.get("suffix") or ""):
                spec["pred_suffix"] = _stem_suffix(item["suffix"])
            entry[str(dataset)] = spec
        if entry:
            methods[str(name)] = entry
    if not methods:
        raise InputError(
            f"{methods_json}: no method names a dataset of {datasets_json} ({', '.join(list(datasets)[:5])} ...)"
        )
    used = {dataset for entry in methods.values() for dataset in entry}
    return {
        "datasets": {k: v for k, v in datasets.items() if k in used},
        "methods": methods,
        "families": ["foreground"],
    }
