"""The boundary counts are frozen: every speed-up of the correspondence must give the very same cntR, cntP, sumP.

``data/level_counts.npz`` holds the counts computed by the kernel as it was before the issue-16 speed-up (commit
189b3fb; ``data/make_level_counts.py`` regenerates them) on maps whose 99 thresholded maps all differ (blurred BSDS
maps rounded to 1/255, BSR's detector PNGs), on ucm2 maps and on small random maps. The comparison is exact: the
matching is deterministic, so a faster kernel must reproduce the same optimum with the same tie-breaking, not only the
same cardinality.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.boundary.data import make_level_counts as make
from tests.conftest import shared_path

DATA = np.load(make.HERE / "level_counts.npz")


@pytest.fixture(scope="module")
def sample():
    shared_path("bsds_sample", "BSDS500")
    ids = make.sample_ids()
    ucm2s = [make.sample_ucm2(i) for i in ids]
    return ucm2s, [make.sample_gt(i) for i in ids]


@pytest.mark.parametrize("n_thresholds", [99, 9])
def test_distinct_level_maps_counts_unchanged(sample, n_thresholds):
    ucm2s, gts = sample
    maps = [make.distinct_map(u) for u in ucm2s]
    assert make.digest(maps) == str(DATA["distinct_sha"]), "the derived maps changed (scipy?): regenerate the data"
    np.testing.assert_array_equal(make.counts(maps, gts, thresholds=n_thresholds), DATA[f"distinct_{n_thresholds}"])


def test_distinct_level_maps_differ_at_every_threshold(sample):
    # the property that makes these maps the hard case: no thresholded map repeats, so nothing is shared
    ucm2s, _ = sample
    levels = np.linspace(1 / 100, 99 / 100, 99)
    for u in ucm2s[:3]:
        pb = make.distinct_map(u) / 255.0
        assert len({np.packbits(pb >= t).tobytes() for t in levels}) == 99


def test_ucm2_counts_unchanged(sample):
    ucm2s, gts = sample
    np.testing.assert_array_equal(make.counts(ucm2s, gts, thresholds=99, input_format="ucm2"), DATA["ucm2_99"])


def test_bsr_png_counts_unchanged():
    shared_path("bsds_sample", "bench", "data", "png")
    preds, gts = make.png_case()
    np.testing.assert_array_equal(make.counts(preds, gts, thresholds=99), DATA["png_99"])


@pytest.mark.parametrize("k", range(4))
def test_synthetic_counts_unchanged(k):
    pred, gt = DATA[f"synthetic_pred_{k}"], DATA[f"synthetic_gt_{k}"]
    np.testing.assert_array_equal(make.counts([pred], [gt], thresholds=99, max_dist=2.5), DATA[f"synthetic_thin_{k}"])
    np.testing.assert_array_equal(
        make.counts([pred], [gt], thresholds=25, max_dist=3.2, thin=False), DATA[f"synthetic_nothin_{k}"]
    )
