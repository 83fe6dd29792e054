"""``segmetrics meta partition`` / ``meta foreground``: tables, JSON equal to the library calls, seeds, errors."""

from __future__ import annotations

import json
import os

import pytest
import torch

from segmetrics_torch.app.cli import main
from segmetrics_torch.io import read_bsds_ground_truth, read_mat_array
from segmetrics_torch.meta import gt_switch_test, quadtree_partition, sabd, sihd
from segmetrics_torch.ops.hierarchy import gridbmap2seg
from segmetrics_torch.synthetic import make_foreground_dataset, write_foreground_dataset
from tests.conftest import shared_path


def test_meta_foreground_demo_is_seeded(tmp_path, capsys):
    args = ["meta", "foreground", "--demo", "--n", "4", "--measures", "mae,s_measure", "--noise-maps", "1"]
    assert main([*args, "--json", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert "generic(Gauss)" in out and "1-rho(dilate)" in out and "s_measure" in out
    assert main([*args, "--json", str(tmp_path / "b.json")]) == 0
    a = json.loads((tmp_path / "a.json").read_text())
    assert a == json.loads((tmp_path / "b.json").read_text())
    # the numbers are the library's
    data = make_foreground_dataset(n=4, size=(240, 320), seed=0)
    preds = {m: torch.from_numpy(v) for m, v in data.preds.items()}
    ref = gt_switch_test("s_measure", preds, torch.from_numpy(data.gt))
    assert a["measures"]["s_measure"]["gt_switch"] == {
        "rate": ref.rate,
        "count": ref.count,
        "total": ref.total,
        "ties": ref.ties,
    }


def test_meta_foreground_folders(tmp_path, capsys):
    write_foreground_dataset(tmp_path, n=3, size=(32, 40), methods=["good", "noisy"])
    code = main(
        [
            "meta",
            "foreground",
            "--pred",
            str(tmp_path / "good"),
            "--pred",
            str(tmp_path / "noisy"),
            "--gt",
            str(tmp_path / "gt"),
            "--measures",
            "mae",
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["methods"] == ["good", "noisy"] and report["measures"]["mae"]["gt_switch"]["total"] == 2 * 3 * 2


def test_meta_errors(tmp_path, capsys):
    assert main(["meta", "foreground", "--measures", "mae"]) == 2
    assert "--demo" in capsys.readouterr().err
    assert main(["meta", "foreground", "--demo", "--measures", "accuracy"]) == 2
    assert main(["meta", "partition", "--gt", str(tmp_path / "none")]) == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.slow
def test_meta_partition_matches_the_library(tmp_path, capsys):
    root = shared_path("bsds_sample", "BSDS500")
    stems = ["100007", "101084", "102062"]  # two landscape images and a portrait one
    (tmp_path / "gt").mkdir()
    (tmp_path / "ucm").mkdir()
    for s in stems:
        (tmp_path / "gt" / f"{s}.mat").symlink_to(root / "data" / "groundTruth" / "test" / f"{s}.mat")
        (tmp_path / "ucm" / f"{s}.mat").symlink_to(root / "ucm2" / "test" / f"{s}.mat")
    code = main(
        [
            "meta",
            "partition",
            "--gt",
            str(tmp_path / "gt"),
            "--ucm",
            str(tmp_path / "ucm"),
            "--measures",
            "pri,voi",
            "--max-different",
            "120",
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "SABD(quadtree)" in out and "Global" in out
    report = json.loads((tmp_path / "r.json").read_text())
    anns = [torch.from_numpy(read_bsds_ground_truth(tmp_path / "gt" / f"{s}.mat").segmentations) for s in stems]
    human = sihd(["pri", "voi"], anns, max_different=120)
    for m in ("pri", "voi"):
        assert report["measures"][m]["sihd"]["rate"] == human[m].rate
        # SABD at the reported ODS parameters, recomputed through the library
        ods = report["measures"][m]["ods"]
        ucms = [torch.from_numpy(read_mat_array(tmp_path / "ucm" / f"{s}.mat", "ucm2")) for s in stems]
        soa = [gridbmap2seg(u > ods["soa_threshold"]) for u in ucms]
        quad = [quadtree_partition(*a.shape[-2:], int(ods["quadtree_regions"])) for a in anns]
        ref = sabd(m, soa, quad, anns)
        assert report["measures"][m]["sabd_quadtree"] == {
            "rate": ref.rate,
            "count": ref.count,
            "total": 3,
            "ties": ref.ties,
        }
        assert report["measures"][m]["sisd"]["total"] == 6


def test_the_command_lets_idle_openmp_threads_sleep_unless_the_user_chose(monkeypatch):
    from segmetrics_torch.app import cli

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    cli._passive_idle_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    cli._passive_idle_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_measure_spellings_and_a_typo(capsys) -> None:
    """Any spelling of the registry names a meta-measure; a typo is one error line with the nearest names."""
    from segmetrics_torch.app.cli import main

    assert main(["meta", "foreground", "--demo", "--measures", "smesure"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 's_measure'" in err and len([ln for ln in err.splitlines() if ln.startswith("error:")]) == 1
