"""Never lose a file, third round (issue 41, part 1): one safety rule for every family, every form, every reader.

The matrix is generated, not listed: the output options come from the command's parser (every ``FILE`` option that
is not an input file), the file names from the readers' declarations (:func:`segmetrics_torch.readers.
folder_extensions`), the input folders from each form's arguments. For each output option of each form and each name
ending some reader of any family takes, a new file in an input folder and an existing input file are both refused
(exit 2, one ``error:`` line, every file under the test's folder byte-identical). Then the cases the third harness
found (a NIfTI volume, PySODEvalToolkit's JSON files, a style file, the output folder's lock file).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import segmetrics_torch
from segmetrics_torch.app import report_run
from segmetrics_torch.app.cli import main
from segmetrics_torch.app.cli_parser import build_parser
from segmetrics_torch.readers import READERS, folder_extensions, is_read_by_a_reader

from ..video.layout import moving_objects, write_davis
from .folders import H, W, fingerprint, png, write_families

#: the ``FILE`` options the command reads (every other ``FILE`` option is an output)
INPUT_FILE_OPTIONS = {"--config", "--datasets-json", "--methods-json", "--ids"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Valid inputs of every family (surface masks included), a configuration, PySODEvalToolkit's two files."""
    write_families(tmp_path)
    mask = np.zeros((H, W), np.uint8)
    mask[3:12, 4:16] = 1
    for i in range(2):
        png(tmp_path / "surf/gt" / f"c{i}.png", mask)
        png(tmp_path / "surf/pred" / f"c{i}.png", np.roll(mask, i, axis=1))
        masks = np.zeros((3, H, W), bool)
        masks[:, 2:12, 3:15] = True
        (tmp_path / "prop/pred").mkdir(parents=True, exist_ok=True)
        np.savez(tmp_path / "prop/pred" / f"p{i}.npz", masks=masks)
        png(tmp_path / "prop/gt" / f"p{i}.png", mask)
        png(tmp_path / "prop/cls" / f"p{i}.png", mask * 7)
    (tmp_path / "eval.yaml").write_text(
        "output: report\ndatasets:\n  D: sod/gt\nmethods:\n  M: sod/pred\nfamilies: [foreground]\n", encoding="utf-8"
    )
    (tmp_path / "d.json").write_text(
        json.dumps({"D": {"mask": {"path": "sod/gt", "suffix": ".png"}}}), encoding="utf-8"
    )
    (tmp_path / "m.json").write_text(json.dumps({"M": {"D": {"path": "sod/pred", "suffix": ".png"}}}), encoding="utf-8")
    gt = moving_objects(np.random.default_rng(0), 3, 20, 24, 2)  # a DAVIS-layout sequence: root and results
    write_davis(tmp_path / "davis", tmp_path / "davis_res", {"s": (gt, gt)})
    return tmp_path


def _refused(
    argv: list[str], root: Path, capsys: pytest.CaptureFixture[str], match: str, untouched: tuple[str, ...] = ()
) -> str:
    """Exit 2 with one ``error:`` line matching ``match``, and every file under ``root`` as it was; the folders
    ``untouched`` (relative to ``root``: the form's inputs) not even written into and cleaned up (their time of change
    kept: a refused output's writability probe, a file made and removed, came before the check of the inputs)."""
    before = fingerprint(root)
    for folder in untouched:
        os.utime(root / folder, ns=(10**18, 10**18))
    status = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert re.search(match, lines[0]), lines[0]
    assert fingerprint(root) == before
    assert [(root / folder).stat().st_mtime_ns for folder in untouched] == [10**18] * len(untouched), untouched
    return lines[0]


# ------------------------------------------------------------------------------------------------ the forms

#: each form of the command: its argv before the output option, and the input folders it reads (relative)
FORMS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "evaluate davis": (
        [
            "evaluate",
            "davis",
            "--davis-root",
            "{r}/davis",
            "--results",
            "{r}/davis_res",
            "--task",
            "semi-supervised",
            "--out",
            "{r}/davis_out",
        ],
        ("davis", "davis_res"),
    ),
    "evaluate semantic-boundary": (
        ["evaluate", "semantic-boundary", "--pred", "{r}/sod/pred", "--gt", "{r}/sod/gt", "--dataset", "sbd"],
        ("sod/pred", "sod/gt"),
    ),
    "evaluate foreground": (
        ["evaluate", "foreground", "--pred", "{r}/sod/pred", "--gt", "{r}/sod/gt"],
        ("sod/pred", "sod/gt"),
    ),
    "evaluate boundary": (
        ["evaluate", "boundary", "--pred", "{r}/bdry/pred", "--gt", "{r}/bdry/gt"],
        ("bdry/pred", "bdry/gt"),
    ),
    "evaluate partition": (
        ["evaluate", "partition", "--pred", "{r}/part/pred", "--gt", "{r}/part/gt"],
        ("part/pred", "part/gt"),
    ),
    "evaluate proposals": (
        ["evaluate", "proposals", "--pred", "{r}/prop/pred", "--gt", "{r}/prop/gt", "--gt-classes", "{r}/prop/cls"],
        ("prop/pred", "prop/gt", "prop/cls"),
    ),
    "evaluate surface": (
        ["evaluate", "surface", "--pred", "{r}/surf/pred", "--gt", "{r}/surf/gt"],
        ("surf/pred", "surf/gt"),
    ),
    "evaluate": (
        [
            "evaluate",
            "--gt",
            "{r}/surf/gt",
            "--pred",
            "M={r}/surf/pred",
            "--family",
            "surface",
            "--output",
            "{r}/out",
            "--figures",
            "none",
        ],
        ("surf/pred", "surf/gt"),
    ),
    "evaluate --config": (["evaluate", "--config", "{r}/eval.yaml", "--figures", "none"], ("sod/pred", "sod/gt")),
    "evaluate --datasets-json": (
        [
            "evaluate",
            "--datasets-json",
            "{r}/d.json",
            "--methods-json",
            "{r}/m.json",
            "--output",
            "{r}/out",
            "--figures",
            "none",
        ],
        ("sod/pred", "sod/gt"),
    ),
    "meta partition": (["meta", "partition", "--gt", "{r}/bdry/gt"], ("bdry/gt",)),
    "meta foreground": (["meta", "foreground", "--pred", "{r}/sod/pred", "--gt", "{r}/sod/gt"], ("sod/pred", "sod/gt")),
}


def _parser_outputs() -> dict[str, list[str]]:
    """Every form's ``FILE`` output options, read off the command's parser (the report's three forms share one)."""
    found: dict[str, list[str]] = {}

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if name != "sod":  # an alias of foreground
                        walk(sub, [*path, name])
            elif action.metavar == "FILE" and action.option_strings[0] not in INPUT_FILE_OPTIONS:
                found.setdefault(" ".join(path), []).append(action.option_strings[0])

    walk(build_parser(), [])
    return found


OUTPUTS = _parser_outputs()


def _form_outputs(form: str) -> list[str]:
    return OUTPUTS[form.split(" --")[0]]


def _matrix() -> list[tuple[str, str, str]]:
    return [
        (form, option, ending) for form in FORMS for option in _form_outputs(form) for ending in folder_extensions()
    ]


def test_the_forms_cover_every_command_with_a_file_output() -> None:
    """A new command with a ``FILE`` output and no form here fails (so the matrix grows with the command)."""
    assert set(OUTPUTS) == {form.split(" --")[0] for form in FORMS}
    assert {"--json", "--csv", "--per-image-csv", "--plot"} <= {o for options in OUTPUTS.values() for o in options}


def _argv(form: str, root: Path, *extra: str) -> list[str]:
    base, _ = FORMS[form]
    quiet = ["--no-progress"] if base[0] == "evaluate" else []  # meta has no progress bar
    return [part.replace("{r}", str(root)) for part in base] + [*quiet, *extra]


@pytest.mark.parametrize(("form", "option", "ending"), _matrix(), ids=lambda v: str(v).replace(" ", "_"))
def test_no_output_into_an_input_folder_under_a_reader_s_name(
    form: str, option: str, ending: str, root: Path, capsys
) -> None:
    """A new file named like any reader's input (of any family) in any input folder of the form is refused; so is an
    existing one, which keeps its bytes."""
    folders = FORMS[form][1]
    index = folder_extensions().index(ending)
    new = root / folders[index % len(folders)] / f"zz_new{ending.upper() if index % 2 else ending}"
    _refused(_argv(form, root, option, str(new)), root, capsys, r"would be read as an input", folders)
    assert not new.exists()
    old = root / folders[(index + 1) % len(folders)] / f"zz_old{ending}"
    old.write_bytes(b"an input of some reader")
    _refused(_argv(form, root, option, str(old)), root, capsys, r"(would be read as an input|this run reads)", folders)
    assert old.read_bytes() == b"an input of some reader"


@pytest.mark.parametrize("form", ["evaluate --config", "evaluate --datasets-json"])
@pytest.mark.parametrize("option", ["--json", "--csv", "--per-image-csv"])
def test_no_output_replaces_a_file_the_run_read_by_name(form: str, option: str, root: Path, capsys) -> None:
    """The configuration and PySODEvalToolkit's two JSON files (whatever their name) are inputs of the run."""
    names = ["eval.yaml"] if form == "evaluate --config" else ["d.json", "m.json"]
    for name in names:
        _refused(_argv(form, root, option, str(root / name)), root, capsys, rf"{re.escape(name)} is .* this run reads")


# ---------------------------------------------------------------------------- the third harness's cases


def test_surface_json_onto_a_nifti_volume_is_refused(root: Path, capsys) -> None:
    nibabel = pytest.importorskip("nibabel")
    volume = np.zeros((6, 7, 5), np.uint8)
    volume[1:4, 2:5, 1:3] = 1
    for side in ("gt", "pred"):
        (root / "vol" / side).mkdir(parents=True)
        nibabel.save(nibabel.Nifti1Image(volume, np.eye(4)), str(root / "vol" / side / "case0.nii.gz"))
    single = ["evaluate", "surface", "--pred", str(root / "vol/pred"), "--gt", str(root / "vol/gt"), "--no-progress"]
    _refused(
        [*single, "--json", str(root / "vol/gt/case0.nii.gz")], root, capsys, r"case0\.nii\.gz .*ground-truth folder"
    )
    report = [
        "evaluate",
        "--gt",
        str(root / "vol/gt"),
        "--pred",
        f"M={root / 'vol/pred'}",
        "--family",
        "surface",
        "--output",
        str(root / "out"),
        "--figures",
        "none",
        "--no-progress",
    ]
    _refused(
        [*report, "--json", str(root / "vol/gt/case0.nii.gz")], root, capsys, r"case0\.nii\.gz .*ground-truth folder"
    )
    _refused(
        [*single, "--json", str(root / "vol/pred/new.nii.gz")],
        root,
        capsys,
        r"new\.nii\.gz .* would be read as an input",
    )


def test_toolkit_configuration_is_an_input(root: Path, capsys) -> None:
    argv = _argv("evaluate --datasets-json", root)
    _refused(
        [*argv, "--json", str(root / "d.json")], root, capsys, r"--json .*d\.json is --datasets-json .* this run reads"
    )
    _refused(
        [*argv, "--csv", str(root / "m.json")], root, capsys, r"--csv .*m\.json is --methods-json .* this run reads"
    )


def test_a_style_file_is_an_input(root: Path, capsys) -> None:
    style = root / "paper.mplstyle"
    style.write_text("lines.linewidth: 2\n", encoding="utf-8")
    argv = _argv("evaluate --config", root, "--style", str(style), "--json", str(style))
    _refused(argv, root, capsys, r"paper\.mplstyle is the style file")


def test_a_foreground_run_refuses_a_volume_name_in_its_folders(root: Path, capsys) -> None:
    """The rule is every reader's, not the run's family's: a foreground run may not drop a .nii.gz in its folders."""
    _refused(
        _argv("evaluate foreground", root, "--json", str(root / "sod/pred/new.nii.gz")),
        root,
        capsys,
        r"would be read as an input",
    )


# ----------------------------------------------------------------------------------------- the lock file


def _report_argv(root: Path) -> list[str]:
    return _argv("evaluate", root).copy()


def test_a_lock_that_is_a_link_to_an_input_is_refused_and_the_input_kept(root: Path, capsys) -> None:
    (root / "out").mkdir()
    target = root / "surf/gt/c0.png"
    (root / "out" / report_run.LOCK_FILE).symlink_to(target)
    before = target.read_bytes()
    _refused(_report_argv(root), root, capsys, r"\.segmetrics-lock exists and is not a segmetrics lock file")
    assert target.read_bytes() == before and len(before) > 0


def test_a_lock_that_is_a_hard_link_or_a_foreign_file_is_refused(root: Path, capsys) -> None:
    (root / "out").mkdir()
    lock = root / "out" / report_run.LOCK_FILE
    os.link(root / "surf/gt/c1.png", lock)
    _refused(_report_argv(root), root, capsys, r"not a segmetrics lock file")
    lock.unlink()
    lock.write_text("my notes\n", encoding="utf-8")
    _refused(_report_argv(root), root, capsys, r"not a segmetrics lock file")
    assert lock.read_text(encoding="utf-8") == "my notes\n"


def test_the_lock_is_removed_when_the_run_ends_and_a_stale_one_is_taken_over(root: Path, capsys) -> None:
    assert main(_report_argv(root)) == 0, capsys.readouterr().err
    assert not (root / "out" / report_run.LOCK_FILE).exists()
    (root / "out" / report_run.LOCK_FILE).write_text("999999\n", encoding="utf-8")  # a killed run's, held by nobody
    assert main(_report_argv(root)) == 0, capsys.readouterr().err
    assert not (root / "out" / report_run.LOCK_FILE).exists()


def test_a_failed_run_removes_its_lock_too(root: Path, capsys) -> None:
    (root / "surf/pred/c1.png").write_bytes(b"not an image")
    assert main(_report_argv(root)) == 2
    capsys.readouterr()
    assert not (root / "out" / report_run.LOCK_FILE).exists()


# ----------------------------------------------------------------------------------- the declarations


#: the calls that open a file: an image, a volume, a .mat, a numpy archive, a zip, a text file, ``open`` to read
_OPENERS = {("Image", "open"), ("nibabel", "load"), ("np", "load"), ("numpy", "load"), ("zipfile", "ZipFile")}
_OPENING_METHODS = {"loadmat", "whosmat", "read_text", "read_bytes"}


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _reads_a_file(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (f.value.id, f.attr) in _OPENERS:
        return True
    if isinstance(f, ast.Attribute) and f.attr in _OPENING_METHODS:
        return True
    builtin = isinstance(f, ast.Name) and f.id == "open"
    if builtin or (isinstance(f, ast.Attribute) and f.attr == "open" and not _is_name(f.value, "os")):
        modes = [a.value for a in call.args[int(builtin) : int(builtin) + 1] if isinstance(a, ast.Constant)]
        modes += [k.value.value for k in call.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)]
        return not any(isinstance(m, str) and ("w" in m or "a" in m or "x" in m) for m in modes)
    return False


#: functions that open a file the command wrote itself (never a user's input), each with why
NOT_INPUT_READERS = {
    "segmetrics_torch.reports.output_safety.check_appended_file": "an output the run appends to, read before appending",
    "segmetrics_torch._lazy.stub_table": "the package's own type stub",
    "segmetrics_torch._stubs._all_of": "the package's own source (the stubs' generator)",
    "segmetrics_torch._stubs._classes_of": "the package's own source (the stubs' generator)",
    "segmetrics_torch._stubs.write_stubs": "the package's own stubs, compared before they are rewritten",
    "segmetrics_torch._stubs._hand_written": "the package's own source (the hand-written part of a generated face)",
    "segmetrics_torch.reports.files._umask": "/proc/self/status, for the umask",
    "segmetrics_torch.datasets.decoding.DecodeStream.__iter__": "a decoding worker's chunk, in the scratch folder",
    "segmetrics_torch.reports.cache.ResultCache.load": "the command's own cache entries (an output folder)",
    "segmetrics_torch.reports.cache.file_id": "hashes an input the pairing already took (reads, never writes)",
    "segmetrics_torch.reports.report._manifest_files": "the report's own manifest (an output folder)",
    "segmetrics_torch.reports.report.foreign_report_files": "an output folder's results.json, read to tell a report's "
    "own from a user's file (reads, never writes)",
    "segmetrics_torch.reports.tables._read_csv_table": "a CSV table this command wrote, read back to merge rows",
}


def _opening_functions() -> dict[str, int]:
    """``module.function`` of every function of the package whose body opens a file, with its line."""
    package = Path(segmetrics_torch.__file__).parent
    found: dict[str, int] = {}
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, scope: list[str], module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(child, [*scope, child.name])
                    continue
                if isinstance(child, ast.Call) and scope and _reads_a_file(child):
                    found.setdefault(f"{module}.{'.'.join(_outer_function(scope))}", child.lineno)
                visit(child, scope)

        visit(tree, [])
    return found


def _outer_function(scope: list[str]) -> list[str]:
    """A nested function (a closure returned by a factory) is the factory's: the declaration sits on the factory."""
    return scope[:1] if scope[0][:1].islower() or scope[0].startswith("_") else scope[:2]


def test_every_function_that_opens_a_file_is_a_declared_reader() -> None:
    """A reader added without a declaration (``@reads``) fails here, so the safety rule knows it from its first
    commit. Every module of the package is imported first (readers declare themselves on import)."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(segmetrics_torch.__path__, "segmetrics_torch."):
        if "_kernels" not in info.name and not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    declared = {name.split("<locals>")[0].rstrip(".") for name in READERS}
    undeclared = {
        name: line
        for name, line in _opening_functions().items()
        if name not in declared and name not in NOT_INPUT_READERS
    }
    assert not undeclared, f"functions that open files without a @reads declaration: {undeclared}"


def test_every_folder_reader_s_endings_are_in_the_library_list() -> None:
    """The command's own folder readers take no name the library's readers do not list (the safety rule asks the
    library's list before the command's modules are imported)."""
    import segmetrics_torch.datasets.prescan  # noqa: F401

    endings = set(folder_extensions())
    for reader in READERS.values():
        if reader.from_folders:
            assert set(reader.extensions) <= endings, reader


def test_every_pairing_extension_list_is_covered_by_a_reader() -> None:
    """Every ``*_EXTENSIONS`` tuple of the package (the pairings' lists) names only endings a reader declares."""
    import importlib

    package = Path(segmetrics_torch.__file__).parent
    checked = 0
    for path in sorted(package.rglob("*.py")):
        module_name = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        text = path.read_text(encoding="utf-8")
        names = re.findall(r"^(_?[A-Z_]*EXTENSIONS) = ", text, flags=re.MULTILINE)
        if not names:
            continue
        module = importlib.import_module(module_name)
        for name in names:
            for ending in getattr(module, name):
                assert is_read_by_a_reader(f"x{ending}"), f"{module_name}.{name}: {ending}"
                checked += 1
    assert checked > 10


def test_dot_files_are_never_inputs() -> None:
    assert not is_read_by_a_reader(".segmetrics-lock") and not is_read_by_a_reader(".hidden.png")
    assert is_read_by_a_reader("A.PNG") and is_read_by_a_reader("v.nii.gz") and is_read_by_a_reader("p.npz")


def test_writers_are_not_in_the_exemption_list_by_mistake() -> None:
    """Every exemption names a function that exists and opens a file (a stale entry would hide nothing, but lies)."""
    found = _opening_functions()
    for name in NOT_INPUT_READERS:
        assert name in found, name


# ------------------------------------------------------------------------ links and the lock (review findings)


def test_an_input_reached_through_a_symbolic_link_is_an_input(root: Path, capsys) -> None:
    """A prediction folder of links (P/a.png -> ../store/a.png): neither the link's name nor the file it points to
    may be written, nor BSR's files when one of them links to such a file."""
    store = root / "store"
    store.mkdir()
    (root / "sod/pred/im0.png").rename(store / "im0.png")
    (root / "sod/pred/im0.png").symlink_to(store / "im0.png")
    before = (store / "im0.png").read_bytes()
    fg = _argv("evaluate foreground", root)
    _refused([*fg, "--json", str(root / "sod/pred/im0.png")], root, capsys, r"im0\.png is a file of the prediction")
    _refused([*fg, "--json", str(store / "im0.png")], root, capsys, r"same file as .*im0\.png of the prediction folder")
    (root / "bsr").mkdir()
    (root / "bsr" / "eval_bdry.txt").symlink_to(store / "im0.png")
    bdry = [*_argv("evaluate boundary", root), "--out-dir", str(root / "bsr")]
    (root / "bdry/pred/b0.png").rename(store / "b0.png")
    (root / "bdry/pred/b0.png").symlink_to(store / "b0.png")
    (root / "bsr" / "eval_bdry.txt").unlink()
    (root / "bsr" / "eval_bdry.txt").symlink_to(store / "b0.png")
    _refused(bdry, root, capsys, r"--out-dir \(eval_bdry\.txt\) .*same file as")
    assert (store / "im0.png").read_bytes() == before


def test_the_lock_file_and_linked_report_folders_are_the_report_s(root: Path, capsys) -> None:
    report = _argv("evaluate", root)
    (root / "out").mkdir()
    _refused([*report, "--json", str(root / "out" / report_run.LOCK_FILE)], root, capsys, r"writes; give another")
    (root / "out" / "figures").symlink_to(root / "surf/pred", target_is_directory=True)
    _refused(report, root, capsys, r"figures is a symbolic link")


def test_a_lock_removed_between_open_and_lock_is_opened_again(tmp_path: Path, monkeypatch) -> None:
    """Run A ends (removing its lock file) after run B opened it and before B locks it: B must not hold the removed
    file while a run C creates and holds a new one (two runs in one folder)."""
    lock = tmp_path / report_run.LOCK_FILE
    lock.write_text("4242\n", encoding="utf-8")
    opened = []
    real_open = report_run._open_lock

    def racing_open(path: Path) -> int:
        handle = real_open(path)
        if not opened:
            os.unlink(path)  # A's end: its lock file removed while B holds a descriptor of it
        opened.append(handle)
        return handle

    monkeypatch.setattr(report_run, "_open_lock", racing_open)
    handle = report_run._held_lock(lock, tmp_path, False)
    try:
        assert len(opened) == 2 and os.path.samestat(os.fstat(handle), os.lstat(lock))
    finally:
        os.close(handle)


def test_a_file_system_without_locks_runs_with_a_warning(root: Path, capsys, monkeypatch) -> None:
    import errno
    import fcntl

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    assert main(_argv("evaluate", root)) == 0
    err = capsys.readouterr().err
    assert "warning: cannot lock" in err and "No locks available" in err and "another segmetrics run" not in err
    assert not (root / "out" / report_run.LOCK_FILE).exists()


def test_the_declaring_modules_cover_every_folder_reader() -> None:
    """``folder_extensions()`` imports only the modules of ``readers._DECLARING_MODULES`` (torch-free, so that a
    report plans without loading torch): a family whose folder reader takes an ending none of them declares must add
    its module there. Checked in a fresh process: the endings before and after importing every module of the package
    are the same."""
    code = (
        "import importlib, pkgutil, segmetrics_torch\n"
        "from segmetrics_torch.readers import folder_extensions\n"
        "before = set(folder_extensions())\n"
        "for info in pkgutil.walk_packages(segmetrics_torch.__path__, 'segmetrics_torch.'):\n"
        "    if '_kernels' not in info.name and not info.name.endswith('__main__'):\n"
        "        importlib.import_module(info.name)\n"
        "print(sorted(set(folder_extensions()) - before))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "[]", run.stdout


@pytest.mark.parametrize(
    ("form", "extra", "option"),
    [
        ("evaluate boundary", ["--out-dir", "{r}/new_out"], "--out-dir"),
        ("evaluate semantic-boundary", ["--out-dir", "{r}/new_out"], "--out-dir"),
        ("evaluate davis", [], "--out"),  # its --out {r}/davis_out is created by the run
    ],
)
def test_a_folder_the_run_creates_is_probed_first(
    form: str, extra: list[str], option: str, root: Path, capsys, monkeypatch
) -> None:
    """A folder output that does not exist yet: its parent must take a new entry, checked before the evaluation
    (a read-only parent failed at mkdir after the whole run; a review). The parent is made to refuse the probe."""
    import tempfile

    from segmetrics_torch.reports import files

    real = tempfile.mkstemp

    def refusing(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("suffix") == ".probe" and Path(kwargs.get("dir", "")) == root:
            raise PermissionError(13, "Permission denied")
        return real(*args, **kwargs)

    monkeypatch.setattr(files.tempfile, "mkstemp", refusing)
    argv = _argv(form, root, *(part.replace("{r}", str(root)) for part in extra))
    line = _refused(argv, root, capsys, rf"{re.escape(option)} .*cannot create a file in")
    assert "Permission denied" in line
