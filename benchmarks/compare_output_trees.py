"""Compare the files two runs of the app's tests wrote, for a change that must not change any output.

Run the command tests of two commits with one fixed temporary folder (so that every path written into a report is
the same), keep each tree, then compare them::

    SOURCE_DATE_EPOCH=0 python -m pytest tests/app -p no:cacheprovider --basetemp=/tmp/snap && mv /tmp/snap /tmp/before
    # ... the same on the other commit, then mv /tmp/snap /tmp/after
    python benchmarks/compare_output_trees.py /tmp/before /tmp/after [--same-root OLD_ROOT=NEW_ROOT]

Every file is compared byte for byte, except for what differs from run to run by nature, which is masked first:
the timings (``elapsed_s`` in JSON, ``in 0.12 s`` in text), the names of cache entries (SHA-256 of a fingerprint
that holds files' modification times: only their number is compared), the headers of ``.mat`` inputs the tests
write (scipy stamps them with the time), the creation date inside ``.xlsx`` files (each other member of the zip is
compared) and a checkout's root given with ``--same-root``. Not compared: copies of the package's source and numba's
cache files (a test installs the package read-only), and folders named with ``--skip`` (a glob; e.g. the Ctrl-C
test's, whose outputs depend on when the signal lands). Figures (PNG/PDF/SVG) are compared as bytes:
``SOURCE_DATE_EPOCH`` fixes the dates matplotlib writes. Exits 1 and lists the files that differ, or are on one
side only.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
import zipfile
from pathlib import Path

_ELAPSED_JSON = re.compile(rb'("elapsed_s"\s*:\s*)[0-9.eE+-]+')
_ELAPSED_TEXT = re.compile(rb"in [0-9]+\.[0-9]+ s")


def _normal(path: Path, roots: list[tuple[bytes, bytes]]) -> bytes:
    if path.suffix == ".xlsx":
        with zipfile.ZipFile(path) as archive:
            return b"".join(archive.read(name) for name in sorted(archive.namelist()) if name != "docProps/core.xml")
    data = path.read_bytes()
    if path.suffix == ".mat":
        return data[128:]  # the 128-byte header holds the creation time
    data = _ELAPSED_JSON.sub(rb"\1 0", data)
    data = _ELAPSED_TEXT.sub(b"in 0 s", data)
    for old, new in roots:
        data = data.replace(old, new)
    return data


def _files(root: Path, skip: list[str]) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*"):
        if not path.is_file() or path.is_symlink() or path.suffix in (".py", ".pyi", ".nbc", ".nbi", ".pyc"):
            continue
        relative = path.relative_to(root)
        if any(fnmatch.fnmatch(relative.parts[0], pattern) for pattern in skip):
            continue
        key = str(relative)
        if "cache" in relative.parts[:-1] and path.suffix == ".json":
            key = str(relative.parent / "<entry>") + f"#{len([k for k in out if k.startswith(str(relative.parent))])}"
        out[key] = path
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument(
        "--same-root",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="a path written into the files that stands for the same place in both runs",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out the top-level folders (one per test) that match",
    )
    args = parser.parse_args()
    roots = [tuple(part.encode() for part in pair.split("=", 1)) for pair in args.same_root]
    before, after = _files(args.before, args.skip), _files(args.after, args.skip)
    only = sorted(set(before) ^ set(after))
    differ = []
    for key in sorted(set(before) & set(after)):
        if "<entry>" in key:
            continue  # cache entries: counted above (their names hash modification times), compared via the reports
        if _normal(before[key], roots) != _normal(after[key], roots):
            differ.append(key)
    for key in only:
        print(f"only in {'before' if key in before else 'after'}: {key}")
    for key in differ:
        print(f"differs: {key}")
    compared = len(set(before) & set(after))
    print(f"{compared} files compared, {len(differ)} differ, {len(only)} on one side only")
    return 1 if differ or only else 0


if __name__ == "__main__":
    sys.exit(main())
