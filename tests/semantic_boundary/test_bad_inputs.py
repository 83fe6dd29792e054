"""Bad input: clear ValueError / TypeError naming the file or the argument (the library writes no file at all)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse
import torch
from PIL import Image

from segmetrics_torch.functional.semantic_boundary import (
    evaluate_semantic_boundary_folders,
    read_cityscapes_instance_ids,
    read_sbd_cls,
    read_sbd_inst,
    semantic_boundary_counts,
    semantic_boundary_protocol,
)

from . import synthetic_data


@pytest.fixture
def sbd(tmp_path: Path) -> Path:
    synthetic_data.make_sbd(tmp_path, n_images=2, shape=(20, 24), classes=(3, 15))
    return tmp_path


def _run(root: Path, **kw):
    protocol = kw.pop("protocol", semantic_boundary_protocol("post-seal", "sbd"))
    return evaluate_semantic_boundary_folders(root / "pred", root / "gt", protocol, classes=[3, 15], **kw)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_folders_evaluate(sbd: Path) -> None:
    before = _snapshot(sbd)
    res = _run(sbd)
    assert res.counts.cnt_r.shape == (2, 2, 99) and len(res.ids) == 2
    assert _snapshot(sbd) == before  # nothing written, nothing changed


def test_mat_without_gtcls(sbd: Path) -> None:
    bad = sbd / "gt/cls" / "2008_000000.mat"
    scipy.io.savemat(bad, {"something": np.zeros((3, 3))})
    with pytest.raises(ValueError, match=r"2008_000000\.mat.*GTcls"):
        read_sbd_cls(bad)
    with pytest.raises(ValueError, match=r"2008_000000\.mat.*GTcls"):
        _run(sbd)


def test_mat_that_is_not_a_mat_file(sbd: Path) -> None:
    bad = sbd / "gt/cls" / "2008_000001.mat"
    bad.write_bytes(b"not a mat file")
    with pytest.raises(ValueError, match=r"2008_000001\.mat"):
        _run(sbd)


def test_gtcls_missing_a_field(tmp_path: Path) -> None:
    path = tmp_path / "x.mat"
    scipy.io.savemat(path, {"GTcls": {"Segmentation": np.zeros((4, 4), np.uint8)}})
    with pytest.raises(ValueError, match=r"x\.mat.*Boundaries"):
        read_sbd_cls(path)


def test_class_folder_missing(sbd: Path) -> None:
    for f in (sbd / "pred/class_015").iterdir():
        f.unlink()
    (sbd / "pred/class_015").rmdir()
    with pytest.raises(ValueError, match=r"class_015.*class folder missing.*holds the classes 3 only.*--classes"):
        _run(sbd)


def test_prediction_missing_for_an_image(sbd: Path) -> None:
    (sbd / "pred/class_003/2008_000001.png").unlink()
    with pytest.raises(ValueError, match=r"class_003.*2008_000001"):
        _run(sbd)


def test_prediction_of_the_wrong_size(sbd: Path) -> None:
    path = sbd / "pred/class_003/2008_000001.png"
    Image.fromarray(np.zeros((21, 24), np.uint8)).save(path)
    with pytest.raises(ValueError, match=r"2008_000001\.png.*\(21, 24\).*\(20, 24\)"):
        _run(sbd)


def test_a_non_png_in_a_class_folder(sbd: Path) -> None:
    (sbd / "pred/class_015/notes.txt").write_text("x")
    with pytest.raises(ValueError, match=r"notes\.txt.*not a PNG or BMP"):
        _run(sbd)


def test_hidden_files_are_not_predictions(sbd: Path) -> None:
    (sbd / "pred/class_015/.DS_Store").write_bytes(b"\0")
    _run(sbd)


def test_instance_map_with_more_than_255_instances(tmp_path: Path) -> None:
    seg = (np.arange(20 * 20).reshape(20, 20) % 300 + 1).astype(np.uint16)  # 300 instances
    cells = np.empty((300, 1), dtype=object)
    for i in range(300):
        cells[i, 0] = scipy.sparse.csc_matrix(np.zeros((20, 20)))
    path = tmp_path / "inst.mat"
    scipy.io.savemat(path, {"GTinst": {"Segmentation": seg, "Boundaries": cells, "Categories": np.ones((300, 1))}})
    with pytest.raises(ValueError, match=r"inst\.mat.*300 instances.*at most 255"):
        read_sbd_inst(path)


def test_instance_without_category(tmp_path: Path) -> None:
    seg = np.zeros((6, 6), np.uint8)
    seg[1:3, 1:3] = 2
    cells = np.empty((1, 1), dtype=object)
    cells[0, 0] = scipy.sparse.csc_matrix(np.zeros((6, 6)))
    path = tmp_path / "inst.mat"
    scipy.io.savemat(path, {"GTinst": {"Segmentation": seg, "Boundaries": cells, "Categories": np.ones((1, 1))}})
    with pytest.raises(ValueError, match=r"inst\.mat.*instance 2.*Categories"):
        read_sbd_inst(path)


def test_cityscapes_instance_ids_of_a_class_without_instances(tmp_path: Path) -> None:
    path = tmp_path / "a_gtFine_instanceIds.png"
    Image.fromarray(np.full((4, 4), 7 * 1000 + 1, np.uint16)).save(path)
    with pytest.raises(ValueError, match=r"a_gtFine_instanceIds\.png.*labelIds \[7\]"):
        read_cityscapes_instance_ids(path)


def test_cityscapes_missing_ground_truth(tmp_path: Path) -> None:
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    protocol = semantic_boundary_protocol("post-seal", "cityscapes")
    with pytest.raises(ValueError, match="class folder missing"):
        evaluate_semantic_boundary_folders(tmp_path / "pred", tmp_path / "gt", protocol)
    with pytest.raises(ValueError, match="no Cityscapes ground truth"):
        evaluate_semantic_boundary_folders(tmp_path / "pred", tmp_path / "gt", protocol, classes=[])


def test_unknown_class_and_ids(sbd: Path) -> None:
    protocol = semantic_boundary_protocol("post-seal", "sbd")
    with pytest.raises(ValueError, match="classes"):
        evaluate_semantic_boundary_folders(sbd / "pred", sbd / "gt", protocol, classes=[21])
    with pytest.raises(ValueError, match="no ground truth for images"):
        _run(sbd, ids=["nope"])


def test_functional_form_bad_arguments() -> None:
    p = torch.rand(1, 2, 8, 8)
    g = torch.zeros(1, 2, 8, 8, dtype=torch.bool)
    with pytest.raises(ValueError, match="target\\[0\\]"):
        semantic_boundary_counts(p, g[:, :1])
    with pytest.raises(ValueError, match="`preds` to have 4 dims"):
        semantic_boundary_counts(p[0], g)
    with pytest.raises(ValueError, match="segmentation"):
        semantic_boundary_counts(p, g, kill_internal=True)
    with pytest.raises(ValueError, match="segmentation\\[0\\]"):
        semantic_boundary_counts(p, g, torch.zeros(1, 7, 8, dtype=torch.int64), kill_internal=True)
    with pytest.raises(ValueError, match="preds"):
        semantic_boundary_counts(p * 2, g)
    with pytest.raises(ValueError, match="boolean"):
        semantic_boundary_counts(p, g.double() + 2)
    with pytest.raises(TypeError, match="kill_internal"):
        semantic_boundary_counts(p, g, kill_internal=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ignore_border"):
        semantic_boundary_counts(p, g, ignore_border=-1)
    with pytest.raises(ValueError, match="thresholds"):
        semantic_boundary_counts(p, g, thresholds=[128])
