"""The SBD MATLAB benchmark's own output (``../shared/sbd_bench``: class 15 on two val images, 99 thresholds)
reproduced with the "matlab" preset: summaries within 1e-3 (its CSA matcher is randomised: its reruns differ in the
4th decimal), ``sumR`` / ``sumP`` of every image and threshold exactly (they never depend on the matching), and the
BSR text files in its layout."""

from __future__ import annotations

import numpy as np
import pytest

from segmetrics_torch.functional.semantic_boundary import (
    bsr_files,
    evaluate_semantic_boundary_folders,
    semantic_boundary_protocol,
)
from tests.conftest import REQUIRED, SHARED

BENCH = SHARED / "sbd_bench"
pytestmark = pytest.mark.skipif(
    not (BENCH / "outdir").is_dir() and not REQUIRED, reason="../shared/sbd_bench is not available"
)


@pytest.fixture(scope="module")
def result():
    protocol = semantic_boundary_protocol("matlab", "sbd")
    return evaluate_semantic_boundary_folders(BENCH / "indir", BENCH / "datadir", protocol, classes=[15])


def test_summary_within_1e_3_of_the_matlab_output(result) -> None:
    ref = np.loadtxt(BENCH / "outdir" / "eval_bdry.txt")
    ours = np.array(bsr_files(result, 0)["eval_bdry.txt"].split(), float)
    assert ours.shape == ref.shape == (9,)
    np.testing.assert_allclose(ours, ref, atol=1e-3)
    s = result.summary["classes"][0]
    assert float(s["ods"]["f"]) == pytest.approx(ref[3], abs=1e-3)
    assert float(s["ois"]["f"]) == pytest.approx(ref[6], abs=1e-3)
    assert float(s["ap"]) == pytest.approx(ref[7], abs=1e-3)
    assert float(result.summary["mean"]["ods_f"]) == pytest.approx(ref[3], abs=1e-3)


def test_per_image_and_per_threshold_files(result) -> None:
    files = bsr_files(result, 0)
    for name in ("eval_bdry_img.txt", "eval_bdry_thr.txt"):
        np.testing.assert_allclose(
            np.loadtxt(files[name].splitlines()), np.loadtxt(BENCH / "outdir" / name), atol=1e-3, err_msg=name
        )
    for image_id in result.ids:
        ours = np.loadtxt(files[f"{image_id}_ev1.txt"].splitlines())
        ref = np.loadtxt(BENCH / "outdir" / f"{image_id}_ev1.txt")
        np.testing.assert_array_equal(ours[:, 0], ref[:, 0])  # thresholds
        np.testing.assert_array_equal(ours[:, [2, 4]], ref[:, [2, 4]])  # sumR, sumP: exact
        gap = ours[:, 1] - ref[:, 1]  # cntR: the maximum matching, at most a pixel above the CSA's here
        assert gap.min() >= 0 and gap.max() <= 2
        np.testing.assert_array_equal(ours[:, 1], ours[:, 3])  # one annotator: cntP == cntR, as in MATLAB's files


def test_bsr_file_format_matches_matlab_layout(result) -> None:
    files = bsr_files(result, 0)
    ref = (BENCH / "outdir" / "2008_000051_ev1.txt").read_text().splitlines()
    ours = files["2008_000051_ev1.txt"].splitlines()
    assert [len(x) for x in ours] == [len(x) for x in ref]
    assert ours[0] == ref[0] and ours[-1].split()[2::2] == ref[-1].split()[2::2]
    assert files["eval_bdry_img.txt"] == (BENCH / "outdir" / "eval_bdry_img.txt").read_text()
