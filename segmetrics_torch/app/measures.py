"""The foreground measures a table can show, by the short names of ``--measures`` / ``options.foreground.measures``.

Torch-free (the command's parsers and the configuration check use it before torch loads); the names, spellings and
headers are :mod:`segmetrics_torch.registry`'s. Each name maps to the key
of the flattened result (:func:`segmetrics_torch.reports.tables.scalar_row`), the column header, the measure
:class:`~segmetrics_torch.ForegroundMeasures` must ``include`` to compute it (None: always computed) and whether
lower is better. The default is the table the command printed before the option existed.
"""

from __future__ import annotations

import difflib
import importlib.util

from ..errors import InputError
from ..registry import DEFAULT_FOREGROUND, FOREGROUND, MEASURES, aliases, canonical, foreground_columns

__all__ = [
    "ALIASES",
    "DEFAULT_FOREGROUND_MEASURES",
    "FOREGROUND_MEASURES",
    "check_foreground_measures",
    "foreground_columns",
    "foreground_measure_error",
    "missing_packages",
    "parse_foreground_measures",
]

#: name -> (result key, header, included measure or None, lower is better), from :mod:`segmetrics_torch.registry`
FOREGROUND_MEASURES: dict[str, tuple[str, str, str | None, bool]] = {
    k: (MEASURES[k].result, MEASURES[k].header, MEASURES[k].include, not MEASURES[k].higher_is_better)
    for k in FOREGROUND
}

DEFAULT_FOREGROUND_MEASURES: tuple[str, ...] = DEFAULT_FOREGROUND

#: other spellings of the names, lowercased with ``_``, ``-`` and spaces removed: PySODEvalToolkit's and
#: PySODMetrics' keys (``maxEm``, ``Smeasure``, ``wFmeasure``, ``adpFm``, ``avgF`` ...) and the table headers
ALIASES: dict[str, str] = {s: k for s, k in aliases("foreground").items() if s != k}


def _canonical(name: str) -> str | None:
    return canonical(name, "foreground")


def foreground_measure_error(names: object) -> str | None:
    """Why ``names`` (a list, or a comma-separated string) is not a list of foreground measures, naming the
    unknown token and the nearest known names; None when it is one."""
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        return f"expected a comma-separated list of measure names, got {names!r}"

    for name in names:
        if _canonical(name) is None:
            key = "".join(name.lower().split()).replace("_", "").replace("-", "")
            near = difflib.get_close_matches(key, [*FOREGROUND_MEASURES, *ALIASES], n=3, cutoff=0.5)
            hint = f"; did you mean {' or '.join(repr(n) for n in dict.fromkeys(near))}?" if near else ""
            return f"unknown measure {name.strip()!r}{hint} (known: {', '.join(FOREGROUND_MEASURES)})"
    return None


def check_foreground_measures(names: object) -> list[str] | None:
    """``names`` (a list, or a comma-separated string) as the table's measure names, other spellings
    (:data:`ALIASES`: PySODEvalToolkit's ``maxEm``, ``Smeasure`` ...) mapped; None when one is unknown (see
    :func:`foreground_measure_error` for the message)."""
    if foreground_measure_error(names) is not None:
        return None
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    assert isinstance(names, (list, tuple))
    return list(dict.fromkeys(c for n in names if (c := _canonical(n)) is not None))


def parse_foreground_measures(text: object, option: str) -> list[str]:
    """:func:`check_foreground_measures` of a command-line value, or an :class:`InputError` naming ``option`` and
    the unknown name (:func:`foreground_measure_error`)."""
    problem = foreground_measure_error(text)
    if problem is not None:
        raise InputError(f"{option}: {problem}")
    names = check_foreground_measures(text)
    assert names is not None
    return names


#: the optional packages a measure runs (the ``opencv`` extra): import name -> what to call it in the message
REQUIRES: dict[str, tuple[str, ...]] = {"hce": ("cv2", "skimage")}
_PACKAGE_NAMES = {"cv2": "OpenCV", "skimage": "scikit-image", "sklearn": "scikit-learn"}


def missing_packages(names: list[str] | tuple[str, ...] | None) -> str | None:
    """Why the measures ``names`` (canonical) cannot run here, naming the packages and the extra; None when they
    can. Checked before any image is read (the measure would otherwise fail after the decoding)."""

    for name in names or ():
        absent = [m for m in REQUIRES.get(name, ()) if importlib.util.find_spec(m) is None]
        if absent:
            listed = " and ".join(_PACKAGE_NAMES.get(m, m) for m in absent)
            return f"the measure {name!r} needs {listed}: pip install 'segmetrics-torch[opencv]'"
    return None
