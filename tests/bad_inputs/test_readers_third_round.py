"""Readers and configurations that misread their input without a word (third round of bad inputs).

Each test failed before its fix:

* a NIfTI file holding one 2-D slice as (H, W, 1) was scored as a one-slice 3-D volume (NSD 0.93 where the same
  masks as PNG give 0.49): a trailing axis of length 1 is now a 2-D image, spacing from the first two pixdims;
* a NIfTI gzip bomb said ``cannot read the NIfTI volume ()``: the header's shape is checked against the image size
  limit (``--max-image-pixels`` / ``SEGMETRICS_MAX_IMAGE_PIXELS``) before any voxel is decompressed;
* NaN pixdims in both headers said the spacings "differ": a NaN or non-positive ``pixdim`` is its own error;
* a NIfTI label of 2**40 got the hint meant for colour PNGs;
* PySODEvalToolkit's JSON files with a repeated key kept the last entry silently;
* dataset names that slug alike (``DUTS TE`` / ``DUTS_TE``, two non-Latin names both ``unnamed``) wrote one file;
* an unknown value of a ``SEGMETRICS_*`` variable (then ``SEGMETRICS_COLD_START=Compile``, now
  ``SEGMETRICS_BACKEND=Tensor``) was read as the default.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

import segmetrics_torch
from segmetrics_torch.app.cli import main
from segmetrics_torch.functional import surface_distance_measures
from segmetrics_torch.io import read_label_volume

from .folders import write_foreground

nibabel = pytest.importorskip("nibabel")

H, W = 40, 48


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _disc(cy: float, cx: float, r: float) -> np.ndarray:
    yy, xx = np.mgrid[:H, :W]
    return ((yy - cy) ** 2 + (xx - cx) ** 2 < r * r).astype(np.uint8)


def _nifti(path: Path, array: np.ndarray, zooms: tuple[float, ...] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = nibabel.Nifti1Image(array, np.eye(4), dtype=array.dtype)
    if zooms is not None:
        image.header.set_zooms(zooms)
    nibabel.save(image, str(path))
    return path


def _surface(pred: Path, gt: Path, out: Path, *extra: str) -> list[str]:
    return ["evaluate", "surface", "--pred", str(pred), "--gt", str(gt), "--no-progress", "--json", str(out), *extra]


def _per_image(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["results"]["per_image"]


# ----------------------------------------------------------------------------------------- 1. (H, W, 1) NIfTI


def test_a_one_slice_nifti_is_a_2d_image_with_the_pngs_numbers(tmp_path: Path, capsys) -> None:
    gt, pred = _disc(20, 24, 10), _disc(22, 25, 9.5)
    for side, mask in (("gt", gt), ("pred", pred)):
        Image.fromarray(mask * 255).save(_mkdir(tmp_path / "png" / side) / "a.png")
        _nifti(tmp_path / "nii" / side / "a.nii.gz", mask[:, :, None], (0.5, 0.75, 3.0))
    assert (
        main(
            _surface(
                tmp_path / "png/pred",
                tmp_path / "png/gt",
                tmp_path / "png.json",
                "--spacing",
                "0.5,0.75",
                "--tolerance",
                "1",
            )
        )
        == 0
    )
    nii_run = _surface(tmp_path / "nii/pred", tmp_path / "nii/gt", tmp_path / "nii.json", "--tolerance", "1")
    assert main(nii_run) == 0, capsys.readouterr()
    png, nii = _per_image(tmp_path / "png.json")["a"], _per_image(tmp_path / "nii.json")["a"]
    assert nii.pop("spacing") == png.pop("spacing")  # the header's spacing, the one the PNG run was given
    assert nii == pytest.approx(png, abs=1e-12)
    # the 2-D numbers (the one-slice volume's NSD was 0.93: every voxel lies on its top or bottom face)
    expected = surface_distance_measures(
        torch.from_numpy(pred != 0)[None], torch.from_numpy(gt != 0)[None], spacing=(0.5, 0.75), tolerance=1.0
    )
    assert nii["nsd"] == pytest.approx(float(expected["nsd"][0]), abs=1e-12)
    labels, spacing = read_label_volume(tmp_path / "nii/gt/a.nii.gz")
    assert labels.shape == (H, W) and spacing == (0.5, 0.75)


def test_a_one_slice_nifti_pairs_with_a_png_of_the_same_slice(tmp_path: Path, capsys) -> None:
    """The pre-scan reads a NIfTI header's shape by the same rule: (H, W, 1) and an (H, W) PNG have one shape."""
    gt, pred = _disc(20, 24, 10), _disc(22, 25, 9.5)
    Image.fromarray(pred * 255).save(_mkdir(tmp_path / "pred") / "a.png")
    _nifti(tmp_path / "gt" / "a.nii.gz", gt[:, :, None, None])  # (H, W, 1, 1): one slice, one time point
    run = _surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json", "--tolerance", "1")
    assert main(run) == 0, capsys.readouterr().err
    assert 0.3 < _per_image(tmp_path / "r.json")["a"]["nsd"] < 0.8


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


# ------------------------------------------------------------------------------------------- 2. gzip bombs


def _header_only_volume(path: Path, shape: tuple[int, ...]) -> Path:
    """A .nii.gz whose header claims ``shape`` (uint8) but which holds a few bytes of data: any reader that
    decompressed the data before looking at the shape would fail on the missing data, not on the size."""
    header = nibabel.Nifti1Header()
    header.set_data_shape(shape)
    header.set_data_dtype(np.uint8)
    header["vox_offset"] = 352
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(header.binaryblock + b"\0" * 8))
    return path


def test_a_nifti_bomb_is_refused_from_its_header(tmp_path: Path) -> None:
    bomb = _header_only_volume(tmp_path / "bomb.nii.gz", (4000, 4000, 100))
    with pytest.raises(ValueError) as caught:
        read_label_volume(bomb)
    message = str(caught.value)
    assert "bomb.nii.gz: 4000x4000x100 = 1,600,000,000 voxels exceeds the limit of 178,956,970" in message, message
    assert "--max-image-pixels" in message and "SEGMETRICS_MAX_IMAGE_PIXELS" in message


def test_a_nifti_bomb_in_a_folder_is_one_error_line(tmp_path: Path, capsys) -> None:
    for side in ("pred", "gt"):
        _header_only_volume(tmp_path / side / "a.nii.gz", (4000, 4000, 100))
    assert main(_surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json")) == 2
    err = capsys.readouterr().err  # the pre-scan's one error line, then its listing of the problems
    _one_error_line(err)
    assert "1,600,000,000 voxels exceeds the limit of 178,956,970" in err and "--max-image-pixels" in err, err


def test_the_nifti_limit_is_the_image_limit(tmp_path: Path, capsys, monkeypatch) -> None:
    """One limit for images and volumes: lowered by the variable, raised by the option."""
    volume = np.zeros((20, 24, 5), np.uint8)
    volume[5:12, 6:14, 1:4] = 1
    for side in ("pred", "gt"):
        _nifti(tmp_path / side / "a.nii.gz", volume)
    monkeypatch.setenv("SEGMETRICS_MAX_IMAGE_PIXELS", "1000")
    with pytest.raises(ValueError, match="20x24x5 = 2,400 voxels exceeds the limit of 1,000"):
        read_label_volume(tmp_path / "gt" / "a.nii.gz")
    assert main(_surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json")) == 2
    err = capsys.readouterr().err
    _one_error_line(err)
    assert "2,400 voxels exceeds the limit of 1,000" in err, err
    assert main(_surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json", "--max-image-pixels", "2400")) == 0


def test_running_out_of_memory_while_decompressing_names_the_reason(tmp_path: Path, monkeypatch) -> None:
    """Under a memory cap the decompression fails with an empty MemoryError: the message says what it was."""
    path = _nifti(tmp_path / "a.nii.gz", np.zeros((20, 24, 5), np.uint8))

    class NoMemory:
        def __array__(self, *args, **kwargs):
            raise MemoryError()

    real = nibabel.load

    def load(filename):
        image = real(filename)
        return type("Image", (), {"header": image.header, "shape": image.shape, "dataobj": NoMemory()})()

    monkeypatch.setattr(nibabel, "load", load)
    with pytest.raises(ValueError, match=r"a\.nii\.gz: not enough memory to read 2,400 voxels \(uint8"):
        read_label_volume(path)


# ------------------------------------------------------------------------------------------- 3. bad pixdim


def _broken_pixdim(path: Path, volume: np.ndarray, bad: float) -> None:
    """``volume`` with pixdim[2] = ``bad``, written byte by byte (nibabel.save would repair a zero or negative one)."""
    header = nibabel.Nifti1Header()
    header.set_data_shape(volume.shape)
    header.set_data_dtype(volume.dtype)
    header["vox_offset"] = 352
    header["pixdim"][2] = bad
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(header.binaryblock + b"\0" * 4 + volume.tobytes(order="F")))


@pytest.mark.parametrize("bad", [float("nan"), 0.0, -1.0, float("inf")])
def test_a_bad_pixdim_is_its_own_error(tmp_path: Path, capsys, bad: float) -> None:
    volume = np.zeros((20, 24, 5), np.uint8)
    volume[5:12, 6:14, 1:4] = 1
    for side in ("pred", "gt"):
        _broken_pixdim(tmp_path / side / "a.nii.gz", volume, bad)
    with pytest.raises(ValueError, match=r"gt/a\.nii\.gz: .*pixdim"):
        read_label_volume(tmp_path / "gt" / "a.nii.gz")
    assert main(_surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json")) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "pixdim" in line and "a.nii.gz" in line and "differ" not in line, line
    assert "--spacing" in line
    # a spacing given by the user replaces the headers' (the labels are still read)
    assert main(_surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json", "--spacing", "1,1,1")) == 0
    assert read_label_volume(tmp_path / "gt" / "a.nii.gz", header_spacing=False)[1] is None


# ---------------------------------------------------------------------------------------- 4. the colour hint


def test_a_huge_nifti_label_gets_no_colour_image_hint(tmp_path: Path, capsys) -> None:
    volume = np.zeros((20, 24, 5), np.int64)
    volume[5:12, 6:14, 1:4] = 1
    _nifti(tmp_path / "gt" / "a.nii.gz", volume)
    volume[0, 0, 0] = 2**40
    _nifti(tmp_path / "pred" / "a.nii.gz", volume)
    assert main(_surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json", "--num-classes", "2")) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"holds {2**40}" in line and "a colour image" not in line and "R << 16" not in line, line


def test_a_colour_png_label_map_keeps_its_hint_and_a_16_bit_one_gets_none(tmp_path: Path, capsys) -> None:
    gt = np.zeros((H, W), np.uint8)
    gt[5:15, 5:20] = 1
    Image.fromarray(gt).save(_mkdir(tmp_path / "gt") / "a.png")
    rgb = np.zeros((H, W, 3), np.uint8)
    rgb[5:15, 5:20] = (200, 10, 10)
    Image.fromarray(rgb).save(_mkdir(tmp_path / "pred") / "a.png")
    assert main(_surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json", "--num-classes", "2")) == 2
    assert "a colour image" in _one_error_line(capsys.readouterr().err)
    Image.fromarray((gt.astype(np.uint16) * 300).astype(np.uint16)).save(tmp_path / "pred" / "a.png")  # 16-bit gray
    assert main(_surface(tmp_path / "pred", tmp_path / "gt", tmp_path / "r.json", "--num-classes", "2")) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "holds 300" in line and "a colour image" not in line, line


# ------------------------------------------------------------------------- 6. PySODEvalToolkit duplicate keys


def _toolkit(tmp_path: Path) -> tuple[str, str]:
    write_foreground(tmp_path / "sod", np.random.default_rng(0))
    datasets = '{"DS": {"image": {"path": "x", "suffix": ".jpg"}, "mask": {"path": "sod/gt", "suffix": ".png"}}}'
    methods = '{"A": {"DS": {"path": "sod/pred", "suffix": ".png"}}}'
    return datasets, methods


@pytest.mark.parametrize(
    ("where", "edit", "key"),
    [
        ("methods", lambda m: m.replace('{"A":', '{"A": {"DS": {"path": "sod/gt"}}, "A":'), "A"),
        ("datasets", lambda d: d.replace('{"DS":', '{"DS": {"mask": {"path": "sod/pred"}}, "DS":'), "DS"),
        ("methods", lambda m: m.replace('{"DS":', '{"DS": {"path": "sod/gt"}, "DS":'), "DS"),
        ("methods", lambda m: m.replace('"suffix": ".png"', '"suffix": ".png", "suffix": "_x.png"'), "suffix"),
        ("datasets", lambda d: d.replace('"path": "sod/gt"', '"path": "sod/pred", "path": "sod/gt"'), "path"),
    ],
    ids=["method", "dataset", "dataset-in-method", "suffix", "mask-path"],
)
def test_a_repeated_key_in_the_toolkit_json_is_an_error(tmp_path: Path, capsys, where, edit, key) -> None:
    datasets, methods = _toolkit(tmp_path)
    if where == "methods":
        methods = edit(methods)
    else:
        datasets = edit(datasets)
    (tmp_path / "d.json").write_text(datasets, encoding="utf-8")
    (tmp_path / "m.json").write_text(methods, encoding="utf-8")
    argv = [
        "evaluate",
        "--datasets-json",
        str(tmp_path / "d.json"),
        "--methods-json",
        str(tmp_path / "m.json"),
        "--output",
        str(tmp_path / "report"),
        "--figures",
        "none",
        "--no-progress",
    ]
    assert main(argv) == 2
    line = _one_error_line(capsys.readouterr().err)
    name = "m.json" if where == "methods" else "d.json"
    assert f"{name}: the key {key!r} appears twice" in line, line
    assert not (tmp_path / "report" / "results.json").exists()


# ----------------------------------------------------------------------------------- 7. output names collide


def _config(tmp_path: Path, names: tuple[str, str]) -> Path:
    write_foreground(tmp_path / "sod", np.random.default_rng(0))
    datasets = "".join(f"  {json.dumps(n)}: {{gt: sod/gt}}\n" for n in names)
    methods = "".join(f"    {json.dumps(n)}: sod/pred\n" for n in names)
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"families: [foreground]\noutput: report\nfigures: false\ndatasets:\n{datasets}methods:\n  M:\n{methods}",
        encoding="utf-8",
    )
    return config


# "//" has no letter or digit at all: it still slugs to "unnamed"
@pytest.mark.parametrize("names", [("DUTS TE", "DUTS_TE"), ("DUTS/TE", "DUTS TE"), ("//", "unnamed"), ("duts", "DUTS")])
def test_dataset_names_that_name_one_file_are_an_error(tmp_path: Path, capsys, monkeypatch, names) -> None:
    from segmetrics_torch.app import runner

    monkeypatch.setattr(runner, "run", lambda *a, **k: pytest.fail("a measure ran"))
    config = _config(tmp_path, names)
    assert main(["evaluate", "--config", str(config), "--no-progress"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"datasets {names[0]!r} and {names[1]!r}" in line and "one file name" in line, line
    assert not (tmp_path / "report" / "results.json").exists()


def test_non_latin_dataset_names_keep_their_letters(tmp_path: Path, capsys) -> None:
    config = _config(tmp_path, ("数据集", "データ"))
    assert main(["evaluate", "--config", str(config), "--no-progress"]) == 0, capsys.readouterr().err
    names = sorted(p.name for p in (tmp_path / "report" / "csv").glob("*_foreground.csv"))
    assert "数据集_foreground.csv" in names and "データ_foreground.csv" in names, names


def test_slug_keeps_unicode_letters_and_ascii_names_as_before() -> None:
    from segmetrics_torch.reports.tables import slug

    assert slug("DUTS-TE") == "DUTS-TE" and slug("DUTS TE") == "DUTS_TE" and slug("a/b..c") == "a_b..c"
    assert slug("Ωmega set") == "Ωmega_set" and slug("数据集") == "数据集" and slug("//") == "unnamed"


# ------------------------------------------------------------------------------- 8. SEGMETRICS_* variables


def _variables_read_by_the_package() -> list[str]:
    package = Path(segmetrics_torch.__file__).parent
    found = set()
    for path in package.rglob("*.py"):
        found |= set(re.findall(r"\bSEGMETRICS_[A-Z_]+\b", path.read_text(encoding="utf-8")))
    return sorted(found)


def test_every_variable_the_package_reads_is_checked() -> None:
    from segmetrics_torch.environment import VARIABLES

    assert _variables_read_by_the_package() == sorted(VARIABLES)


@pytest.mark.parametrize("name", _variables_read_by_the_package())
def test_an_unknown_value_of_a_variable_is_one_error_line(tmp_path: Path, capsys, monkeypatch, name) -> None:
    from segmetrics_torch.environment import VARIABLES

    write_foreground(tmp_path, np.random.default_rng(0))
    monkeypatch.setenv(name, "Tensor" if name == "SEGMETRICS_BACKEND" else "many")
    assert (
        main(
            ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
        )
        == 2
    )
    line = _one_error_line(capsys.readouterr().err)
    value = "Tensor" if name == "SEGMETRICS_BACKEND" else "many"
    assert line.startswith(f"error: {name}={value!r}: expected {VARIABLES[name].accepted}"), line


def test_the_library_reads_the_variables_through_the_helper(monkeypatch) -> None:
    from segmetrics_torch.environment import environment_value
    from segmetrics_torch.ops import backend

    monkeypatch.setattr(backend, "_setting", None)  # as in a new process: the first question reads the variable
    monkeypatch.setenv("SEGMETRICS_BACKEND", "Tensor")
    with pytest.raises(ValueError, match=r"SEGMETRICS_BACKEND='Tensor': expected auto, compiled or tensor"):
        backend.get_backend()
    monkeypatch.setenv("SEGMETRICS_BACKEND", " tensor ")  # surrounding spaces are not a different value
    assert environment_value("SEGMETRICS_BACKEND") == "tensor"
    assert backend.get_backend() == "tensor"
    monkeypatch.setattr(backend, "_setting", None)
    monkeypatch.setenv("SEGMETRICS_BACKEND", "")  # set but empty: the default, as unset
    assert environment_value("SEGMETRICS_BACKEND") == "auto" and backend.get_backend() == "auto"


def test_max_image_pixels_of_a_run_ends_with_the_run(tmp_path: Path, capsys) -> None:
    """``--max-image-pixels`` is the run's limit, set by a function: after ``main`` returns, the caller's process has
    the default again and no variable was written (an earlier in-process run left 400,000,000 for every later test)."""
    from segmetrics_torch.app.cli import main
    from segmetrics_torch.io import DEFAULT_MAX_IMAGE_PIXELS, MAX_IMAGE_PIXELS_ENV, max_image_pixels

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray(np.full((20, 30), 255, np.uint8)).save(tmp_path / side / "a.png")
    argv = ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    assert main([*argv, "--max-image-pixels", "100"]) == 2  # 600 pixels: over this run's limit
    assert "exceeds the limit of 100 pixels" in capsys.readouterr().err
    assert max_image_pixels() == DEFAULT_MAX_IMAGE_PIXELS and MAX_IMAGE_PIXELS_ENV not in os.environ
    assert main(argv) == 0, capsys.readouterr().err


def test_a_caller_s_own_limit_is_restored_after_a_run(tmp_path: Path, capsys) -> None:
    from segmetrics_torch.app.cli import main
    from segmetrics_torch.io import max_image_pixels, set_max_image_pixels

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray(np.full((20, 30), 255, np.uint8)).save(tmp_path / side / "a.png")
    argv = ["evaluate", "foreground", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]
    previous = set_max_image_pixels(10**9)
    try:
        assert main([*argv, "--max-image-pixels", "100"]) == 2
        assert max_image_pixels() == 10**9  # the caller's, not the run's, nor the default
        assert main(argv) == 0, capsys.readouterr().err
    finally:
        set_max_image_pixels(previous)
