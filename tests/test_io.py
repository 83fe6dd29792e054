"""Image reading (== cv2.imread grayscale), folder pairing, and the synthetic dataset."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from segmetrics_torch.io import find_pairs, list_images, pair_by_stem, read_gray
from segmetrics_torch.synthetic import METHODS, make_foreground_dataset, write_foreground_dataset

cv2 = pytest.importorskip("cv2")


def _cv2_gray(path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    assert image is not None, path
    return image


# ------------------------------------------------------------------------------------------------------ read_gray


@pytest.mark.parametrize(
    ("mode", "ext"),
    [
        ("RGB", ".png"),
        ("RGBA", ".png"),
        ("P", ".png"),
        ("L", ".png"),
        ("LA", ".png"),
        ("1", ".png"),
        ("RGB", ".bmp"),
        ("L", ".bmp"),
        ("RGB", ".tif"),
        ("RGBA", ".tif"),
        ("RGB", ".jpg"),
        ("L", ".jpg"),
    ],
)
@pytest.mark.parametrize("shape", [(37, 53), (64, 48)])
def test_read_gray_equals_cv2(tmp_path, mode, ext, shape):
    rng = np.random.default_rng([*map(ord, mode + ext), *shape])
    rgba = rng.integers(0, 256, (*shape, 4), dtype=np.uint8)
    if mode == "RGB":
        image = Image.fromarray(rgba[..., :3])
    elif mode == "RGBA":
        image = Image.fromarray(rgba, "RGBA")
    elif mode == "P":
        image = Image.fromarray(rgba[..., :3]).quantize(97)
    elif mode == "L":
        image = Image.fromarray(rgba[..., 0])
    elif mode == "LA":
        image = Image.fromarray(rgba[..., :2], "LA")
    else:
        image = Image.fromarray(rgba[..., 0] > 127)
    assert image.mode == mode
    path = tmp_path / f"image{ext}"
    image.save(path)
    ours = read_gray(path)
    assert ours.dtype == np.uint8 and ours.shape == shape
    np.testing.assert_array_equal(ours, _cv2_gray(path))


def test_read_gray_rgb_png_uses_libpng_rule_and_ignores_alpha(tmp_path):
    """PNG colour -> gray is libpng's truncating rule, not cvtColor's rounded one; alpha is dropped, not blended."""
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (50, 70, 3), dtype=np.uint8)
    alpha = rng.integers(0, 256, (50, 70, 1), dtype=np.uint8)
    Image.fromarray(np.concatenate([rgb, alpha], axis=2), "RGBA").save(tmp_path / "a.png")
    Image.fromarray(rgb).save(tmp_path / "b.png")
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    np.testing.assert_array_equal(read_gray(tmp_path / "a.png"), (9797 * r + 19234 * g + 3737 * b) >> 15)
    np.testing.assert_array_equal(read_gray(tmp_path / "a.png"), read_gray(tmp_path / "b.png"))


def test_read_gray_bilevel_is_0_255(tmp_path):
    Image.fromarray(np.eye(5, dtype=bool)).save(tmp_path / "m.png")
    np.testing.assert_array_equal(read_gray(tmp_path / "m.png"), np.eye(5, dtype=np.uint8) * 255)


def test_read_gray_exif_orientation_as_cv2(tmp_path):
    image = Image.fromarray(np.arange(30 * 50, dtype=np.uint32).reshape(30, 50).astype(np.uint8))
    exif = image.getexif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise
    image.save(tmp_path / "o.png", exif=exif.tobytes())
    ours = read_gray(tmp_path / "o.png")
    assert ours.shape == (50, 30)
    np.testing.assert_array_equal(ours, _cv2_gray(tmp_path / "o.png"))


@pytest.mark.parametrize("kind", ["gray16", "rgb16"])
def test_read_gray_rejects_16bit(tmp_path, kind):
    rng = np.random.default_rng(1)
    data = rng.integers(0, 65536, (8, 9) if kind == "gray16" else (8, 9, 3), dtype=np.uint16)
    path = tmp_path / f"{kind}.png"
    cv2.imwrite(str(path), data)
    with pytest.raises(ValueError, match=r"16-bit images are not supported yet; convert to 8-bit") as info:
        read_gray(path)
    assert str(path) in str(info.value)


def test_read_gray_bad_files(tmp_path):
    (tmp_path / "junk.png").write_bytes(b"not an image")
    with pytest.raises(ValueError, match=r"junk\.png"):
        read_gray(tmp_path / "junk.png")
    with pytest.raises(FileNotFoundError):
        read_gray(tmp_path / "absent.png")


# --------------------------------------------------------------------------------------------------- pairing


def _touch(folder, *names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        Image.fromarray(np.zeros((4, 4), np.uint8)).save(folder / name)


def test_pair_by_stem_matches_across_extensions_sorted(tmp_path):
    _touch(tmp_path / "pred", "b.png", "a.PNG", "c.jpg")
    _touch(tmp_path / "gt", "c.png", "a.png", "b.bmp")
    (tmp_path / "gt" / "notes.txt").write_text("ignored")
    (tmp_path / "gt" / ".hidden.png").write_bytes(b"")
    pairs = pair_by_stem(tmp_path / "pred", tmp_path / "gt")
    assert [stem for stem, _, _ in pairs] == ["a", "b", "c"]
    assert [(p.name, g.name) for _, p, g in pairs] == [("a.PNG", "a.png"), ("b.png", "b.bmp"), ("c.jpg", "c.png")]


def test_pair_by_stem_missing_and_unmatched(tmp_path):
    _touch(tmp_path / "pred", "a.png", "extra.png")
    _touch(tmp_path / "gt", "a.png", "b.png", "c.png")
    with pytest.raises(ValueError, match=r"2 ground-truth image\(s\) have no prediction: b, c") as info:
        pair_by_stem(tmp_path / "pred", tmp_path / "gt")
    assert "extra" in str(info.value)
    pairs = pair_by_stem(tmp_path / "pred", tmp_path / "gt", allow_missing=True)
    assert [stem for stem, _, _ in pairs] == ["a"]
    pairing = find_pairs(tmp_path / "pred", tmp_path / "gt")
    assert (pairing.missing, pairing.unmatched, pairing.complete) == (["b", "c"], ["extra"], False)


def test_pair_by_stem_lists_at_most_10(tmp_path):
    _touch(tmp_path / "pred", "x.png")
    _touch(tmp_path / "gt", "x.png", *(f"m{i:02d}.png" for i in range(13)))
    with pytest.raises(ValueError, match=r"m09 \.\.\. and 3 more") as info:
        pair_by_stem(tmp_path / "pred", tmp_path / "gt")
    assert "m10" not in str(info.value)


def test_pair_by_stem_no_common_stem(tmp_path):
    _touch(tmp_path / "pred", "a.png")
    _touch(tmp_path / "gt", "b.png")
    with pytest.raises(ValueError, match="No prediction"):
        pair_by_stem(tmp_path / "pred", tmp_path / "gt", allow_missing=True)


def test_pair_by_stem_bad_folders(tmp_path):
    _touch(tmp_path / "gt", "a.png")
    with pytest.raises(ValueError, match=r"prediction folder .* does not exist"):
        pair_by_stem(tmp_path / "nope", tmp_path / "gt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"prediction folder .* holds no image"):
        pair_by_stem(tmp_path / "empty", tmp_path / "gt")
    with pytest.raises(ValueError, match=r"ground-truth folder .* is not a directory"):
        pair_by_stem(tmp_path / "gt", tmp_path / "gt" / "a.png")
    _touch(tmp_path / "dup", "a.png", "a.jpg")
    with pytest.raises(ValueError, match=r"several images with one stem: a \(a.jpg, a.png\)"):
        pair_by_stem(tmp_path / "dup", tmp_path / "gt")


def test_list_images_custom_extensions(tmp_path):
    _touch(tmp_path / "f", "a.png", "b.bmp")
    assert list(list_images(tmp_path / "f", exts=("png",))) == ["a"]


# ------------------------------------------------------------------------------------------------- synthetic


def test_synthetic_dataset_properties():
    data = make_foreground_dataset(n=6, size=(60, 80), seed=3)
    assert data.gt.shape == (6, 60, 80) and data.gt.dtype == np.uint8
    assert set(np.unique(data.gt)) <= {0, 255}
    assert list(data.preds) == ["good", "blurry", "noisy"]
    assert all(p.shape == (6, 60, 80) and p.dtype == np.uint8 for p in data.preds.values())
    fractions = (data.gt > 0).mean(axis=(1, 2))
    assert fractions[1] == 0  # the empty ground truth
    assert np.all((fractions[[0, 2, 3, 4, 5]] >= 0.05) & (fractions[[0, 2, 3, 4, 5]] <= 0.40))
    assert data.names == [f"img_{i:03d}" for i in range(6)]


def test_synthetic_dataset_is_deterministic_and_prefix_stable():
    a = make_foreground_dataset(n=4, size=(48, 64), seed=7)
    b = make_foreground_dataset(n=4, size=(48, 64), seed=7)
    c = make_foreground_dataset(n=2, size=(48, 64), seed=7, methods=["noisy"])
    d = make_foreground_dataset(n=4, size=(48, 64), seed=8)
    np.testing.assert_array_equal(a.gt, b.gt)
    for m in METHODS:
        np.testing.assert_array_equal(a.preds[m], b.preds[m])
    np.testing.assert_array_equal(c.gt, a.gt[:2])
    np.testing.assert_array_equal(c.preds["noisy"], a.preds["noisy"][:2])
    assert not np.array_equal(a.gt, d.gt)


@pytest.mark.parametrize(
    "kwargs",
    [{"n": 0}, {"size": (8, 64)}, {"size": 64}, {"seed": -1}, {"methods": ["good", "good"]}, {"methods": ["x"]}],
)
def test_synthetic_dataset_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        make_foreground_dataset(**kwargs)


def test_write_foreground_dataset_round_trip(tmp_path):
    data = write_foreground_dataset(tmp_path, n=3, size=(40, 56), methods=("good", "blurry"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blurry", "good", "gt"]
    for i, name in enumerate(data.names):
        np.testing.assert_array_equal(read_gray(tmp_path / "gt" / f"{name}.png"), data.gt[i])
        np.testing.assert_array_equal(_cv2_gray(tmp_path / "blurry" / f"{name}.png"), data.preds["blurry"][i])


@pytest.mark.parametrize("kind", ["random", "gradient"])
def test_cmyk_jpeg_reads_as_opencv(tmp_path, kind):
    """OpenCV's own CMYK rule on libjpeg's inverted samples (Pillow's CMYK -> RGB was a grey level off on most px)."""
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:48, :64]
    if kind == "random":
        cmyk = rng.integers(0, 256, (48, 64, 4), dtype=np.uint8)
    else:
        cmyk = np.stack([xx * 4, yy * 5, np.full_like(xx, 30), np.full_like(xx, 200)], -1).astype(np.uint8)
    path = tmp_path / "map.jpg"
    Image.fromarray(cmyk, "CMYK").save(path, quality=90)
    np.testing.assert_array_equal(read_gray(path), cv2.imread(str(path), cv2.IMREAD_GRAYSCALE))
