"""``segmetrics evaluate`` under ``torchrun --nproc-per-node 2`` (gloo, CPU) equals one process.

7 images (odd: the shards differ by one image) for the foreground, boundary and partition families (and 3 object
proposal pools), in the single-folder form (``--json``, ``--csv``, ``--per-image-csv``, BSR files) and in the report
form (``--config``): the numbers agree to 1e-12; the tables (terminal, Markdown, LaTeX), the per-image CSV files and
the BSR files are byte-identical; rank 1 prints nothing; an error in one rank's shard ends the run, writing nothing.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from PIL import Image

from segmetrics_torch.meta import grid_oversegmentation, random_hierarchy_ucm
from segmetrics_torch.synthetic import make_boundary_dataset, write_foreground_dataset

REPO = Path(__file__).resolve().parents[2]
N = 7
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
#: provenance that legitimately differs between two runs
VOLATILE = {"elapsed_s"}

pytestmark = [pytest.mark.slow, pytest.mark.ddp]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """``fg/{gt,good,noisy}`` PNGs; ``bsds/gt`` groundTruth .mat (2 annotators), ``bsds/soft`` boundary PNGs,
    ``bsds/labels`` label-map PNGs, ``bsds/ucm2`` .mat hierarchies; a report configuration using them all."""
    root = tmp_path_factory.mktemp("ddp")
    write_foreground_dataset(root / "fg", n=N, size=(32, 40), seed=5, methods=("good", "noisy"))
    h, w = 32, 40
    data = make_boundary_dataset(n=N, size=(h, w), n_annotators=2, seed=6)
    for folder in ("gt", "soft", "labels", "ucm2"):
        (root / "bsds" / folder).mkdir(parents=True)
    for i in range(N):
        stem = f"im{i}"
        cell = np.empty((1, 2), dtype=object)
        for a in range(2):
            cell[0, a] = {
                "Segmentation": data.segmentations[i, a].astype(np.uint16) + 1,
                "Boundaries": data.boundaries[i, a].astype(np.uint8),
            }
        scipy.io.savemat(root / "bsds" / "gt" / f"{stem}.mat", {"groundTruth": cell})
        Image.fromarray(np.round(data.preds[i] * 255).astype(np.uint8)).save(root / "bsds" / "soft" / f"{stem}.png")
        labels = np.roll(data.segmentations[i, 0], 2, axis=1).astype(np.uint8) + 1
        Image.fromarray(labels).save(root / "bsds" / "labels" / f"{stem}.png")
        ucm = random_hierarchy_ucm(grid_oversegmentation(h, w, cells=5), seed=i).numpy()
        scipy.io.savemat(root / "bsds" / "ucm2" / f"{stem}.mat", {"ucm2": ucm})
    config = {
        "datasets": {
            "FG": {"gt": "fg/gt", "families": ["foreground"]},
            "toy": {"gt": "bsds/gt", "families": ["boundary", "partition"]},
        },
        "methods": {
            "good": {"FG": "fg/good"},
            "noisy": {"FG": "fg/noisy"},
            "A": {"toy": {"boundary": "bsds/soft", "partition": "bsds/ucm2"}},
        },
        "options": {
            "boundary": {"thresholds": 9, "max_dist": 2},
            "partition": {"measures": ["fop", "voi"], "thresholds": 7},
        },
        "figures": False,
    }
    (root / "eval.json").write_text(json.dumps(config))
    _write_proposals(root / "prop", np.random.default_rng(8))
    return root


def _write_proposals(root: Path, rng: np.random.Generator) -> None:
    """3 images (odd): .npz pools of discs, instance images with 255 void rings, class images."""
    h, w = 32, 40
    yy, xx = np.mgrid[:h, :w]

    def discs(n: int) -> np.ndarray:
        centres, radii = rng.integers(0, (h, w), (n, 2)), rng.integers(3, 10, n)
        return np.stack([(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r for (cy, cx), r in zip(centres, radii, strict=True)])

    for folder in ("pred", "gt", "cls"):
        (root / folder).mkdir(parents=True)
    for i in range(3):
        inst, cls = np.zeros((h, w), np.uint8), np.zeros((h, w), np.uint8)
        for k, disc in enumerate(discs(3), start=1):
            inst[disc], cls[disc] = k, rng.integers(1, 4)
        Image.fromarray(inst).save(root / "gt" / f"im{i}.png")
        Image.fromarray(cls).save(root / "cls" / f"im{i}.png")
        np.savez_compressed(root / "pred" / f"im{i}.npz", masks=discs(20 + 5 * i))


def _segmetrics(cwd: Path, world: int, *args: str) -> subprocess.CompletedProcess:
    """``segmetrics evaluate ARGS`` in one process, or under ``torchrun`` with ``world`` processes."""
    cli = ["-m", "segmetrics_torch.app.cli", "evaluate", *args, "--no-progress"]
    cmd = [sys.executable, *cli] if world == 1 else [*TORCHRUN, *cli]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    for key in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    run = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run


def _assert_same(got, expected, where: str = "") -> None:
    """Equal JSON trees: numbers to 1e-12 (NaN == NaN), everything else exactly, volatile keys skipped."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and list(got) == list(expected), where  # same keys, same order
        for key in expected:
            if key not in VOLATILE:
                _assert_same(got[key], expected[key], f"{where}/{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            _assert_same(g, e, f"{where}[{i}]")
    elif isinstance(expected, float) or isinstance(got, float):
        g, e = float(got), float(expected)
        assert (math.isnan(g) and math.isnan(e)) or abs(g - e) <= 1e-12, (where, got, expected)
    else:
        assert got == expected, (where, got, expected)


def _table_lines(stdout: str) -> list[str]:
    """The printed tables: stdout without the timing line and the 'Wrote ...' lines."""
    return [line for line in stdout.splitlines() if not line.startswith(("Evaluated", "Wrote", "Created", "Updated"))]


FORMS = {
    "foreground": ("foreground", "--pred", "fg/good", "--gt", "fg/gt"),
    "boundary": ("boundary", "--pred", "bsds/soft", "--gt", "bsds/gt", "--thresholds", "9"),
    "partition": ("partition", "--pred", "bsds/labels", "--gt", "bsds/gt"),
    "proposals": (
        "proposals",
        "--pred",
        "prop/pred",
        "--gt",
        "prop/gt",
        "--gt-classes",
        "prop/cls",
        "--counts",
        "1,4,10,100",
        "--boundary",
        "--bound-th",
        "2",
    ),
}


@pytest.mark.parametrize("family", list(FORMS))
def test_single_folder_form_under_torchrun_equals_one_process(root, family):
    runs = {}
    for world in (1, 2):
        out = root / f"{family}-{world}"
        out.mkdir()
        extra = ["--json", str(out / "r.json")]
        if family == "foreground":
            extra += ["--csv", str(out / "t.csv"), "--per-image-csv", str(out / "img.csv")]
        if family == "boundary":
            extra += ["--out-dir", str(out / "bsr")]
        runs[world] = _segmetrics(root, world, *FORMS[family], *extra)
    one, two = (json.loads((root / f"{family}-{w}" / "r.json").read_text()) for w in (1, 2))
    _assert_same(two, one)
    assert one["num_images"] == (3 if family == "proposals" else N)
    assert "[rank 1]" not in runs[2].stderr
    assert _table_lines(runs[2].stdout) == _table_lines(runs[1].stdout)
    assert runs[2].stdout.count("Evaluated") == 1  # rank 1 prints nothing
    # the summary's counts are the whole dataset's (proposals printed rank 0's objects only), timing aside
    summary = [re.sub(r" in [0-9.]+ s", "", line) for r in (runs[1], runs[2]) for line in r.stdout.splitlines()]
    assert len({line for line in summary if line.startswith("Evaluated")}) == 1
    for name in ("t.csv", "img.csv", *(f"bsr/{p.name}" for p in (root / f"{family}-1" / "bsr").glob("*"))):
        first = root / f"{family}-1" / name
        if first.exists():
            _assert_same_file(root / f"{family}-2" / name, first)


def _assert_same_file(got: Path, expected: Path) -> None:
    """Byte-identical: the tables, the per-image CSV files (each row computed from its image alone, gathered in the
    original order) and the BSR files (integer counts); the other CSV files, whose dataset values are written in full
    precision, hold the same cells with numbers to 1e-12 (the ranks' float64 sums are added in another order than
    one process adds its batches, which can change the last digit)."""
    if got.read_bytes() == expected.read_bytes():
        return
    assert got.suffix == ".csv" and "per_image" not in got.name and got.name != "img.csv", f"{got} differs"

    def cells(path: Path) -> list[list[str]]:
        return [line.replace(",", " ").split() for line in path.read_text().splitlines()]

    def number(cell: str):
        try:
            return float(cell)
        except ValueError:
            return cell

    _assert_same(
        [[number(c) for c in row] for row in cells(got)],
        [[number(c) for c in row] for row in cells(expected)],
        str(got),
    )


def test_report_form_under_torchrun_equals_one_process(root):
    runs = {}
    for world in (1, 2):
        out = root / f"report-{world}"
        runs[world] = _segmetrics(
            root,
            world,
            "--config",
            "eval.json",
            "--output",
            str(out),
            "--json",
            str(root / f"report-{world}.json"),
            "--per-image-csv",
            str(root / f"report-{world}_per_image.csv"),
        )
    one, two = (root / f"report-{w}" for w in (1, 2))
    _assert_same_file(root / "report-2_per_image.csv", root / "report-1_per_image.csv")
    assert _table_lines(runs[2].stdout) == _table_lines(runs[1].stdout)  # the terminal tables
    _assert_same(json.loads((two / "results.json").read_text()), json.loads((one / "results.json").read_text()))
    _assert_same(json.loads((root / "report-2.json").read_text()), json.loads((root / "report-1.json").read_text()))
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file() and p.parent.name != "cache")
    assert Path("tables.md") in files and any(p.parts[0] == "csv" for p in files)
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file() and p.parent.name != "cache")
    for relative in files:
        if relative.suffix in (".md", ".tex"):  # the rendered tables: byte-identical
            assert (two / relative).read_bytes() == (one / relative).read_bytes(), relative
        elif relative.suffix == ".csv":
            _assert_same_file(two / relative, one / relative)
    # rank 0 wrote one cache entry per combination; a second torchrun run takes them all from the cache
    assert len(list((two / "cache").glob("*.json"))) == 4
    again = _segmetrics(root, 2, "--config", "eval.json", "--output", str(two))
    assert "4 from the cache" in again.stdout, again.stdout
    assert (two / "tables.md").read_bytes() == (one / "tables.md").read_bytes()


def test_an_error_in_one_ranks_shard_ends_every_rank_and_writes_nothing(root, tmp_path):
    """A prediction among rank 1's images that cannot be decoded although its header and checksums are sound (the
    pre-scan reads headers only, so the error comes during the evaluation): rank 1 names it, rank 0 stops without a
    traceback, no report is written."""
    data = tmp_path / "bad"
    (data / "soft").mkdir(parents=True)
    for path in (root / "bsds" / "soft").glob("*.png"):
        (data / "soft" / path.name).write_bytes(path.read_bytes())
    bad = data / "soft" / f"im{N - 1}.png"
    with Image.open(bad) as image:
        width, height = image.size

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit gray
    chunks = chunk(b"IHDR", header) + chunk(b"IDAT", b"not zlib data") + chunk(b"IEND", b"")
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + chunks)
    cli = [
        "-m",
        "segmetrics_torch.app.cli",
        "evaluate",
        "boundary",
        "--pred",
        str(data / "soft"),
        "--gt",
        str(root / "bsds" / "gt"),
        "--json",
        str(data / "r.json"),
        "--no-progress",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    run = subprocess.run([*TORCHRUN, *cli], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert f"[rank 1] error: im{N - 1}" in run.stderr or f"[rank 1] error: {data}" in run.stderr, run.stderr
    assert "error: another process of this torchrun run stopped" in run.stderr or "error: interrupted" in run.stderr
    assert "unexpected" not in run.stderr and not (data / "r.json").exists()


def test_the_one_process_commands_refuse_torchrun(tmp_path):
    """``meta`` ran whole on every rank and every rank wrote ``--json``; it is refused now, as the DAVIS and
    semantic-boundary forms were (one rule in the command's entry, for every subcommand that runs in one process)."""
    cli = [
        "-m",
        "segmetrics_torch.app.cli",
        "meta",
        "foreground",
        "--demo",
        "--json",
        str(tmp_path / "m.json"),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    for key in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    run = subprocess.run([*TORCHRUN, *cli], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "error: meta foreground runs in one process: run it without torchrun" in run.stderr, run.stderr
    assert "unexpected" not in run.stderr and list(tmp_path.iterdir()) == []


def test_a_nan_in_another_ranks_shard_is_announced(tmp_path):
    """The size-invariant MAE's NaN images were named from rank 0's shard only: a NaN of rank 1's image was printed
    without its warning. They are named from every rank's rows now, as in one process."""
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt").mkdir()
    for i in range(4):
        g = np.zeros((32, 32), np.uint8)
        g[8:20, 8:20] = 255
        if i == 3:  # a one-pixel frame: its box covers the whole image, so no background is left (rank 1's image)
            g[:] = 0
            g[0, :] = g[-1, :] = g[:, 0] = g[:, -1] = 255
        Image.fromarray(g).save(tmp_path / "gt" / f"im{i}.png")
        Image.fromarray((g // 2 + 40).astype(np.uint8)).save(tmp_path / "pred" / f"im{i}.png")
    runs = [
        _segmetrics(tmp_path, world, "foreground", "--pred", "pred", "--gt", "gt", "--measures", "mae,simae")
        for world in (1, 2)
    ]
    for run in runs:
        assert "warning: size-invariant MAE is NaN for 1 of 4 image(s) (im3)" in run.stderr, run.stderr
