"""Reading images as OpenCV does, and pairing prediction / ground-truth folders by file stem (and
:func:`bsr_result_files`, the text files the BSR benchmark writes, for a run to write as BSR does).

:func:`read_gray` reproduces ``cv2.imread(path, cv2.IMREAD_GRAYSCALE)`` with Pillow, so that evaluating a folder
gives the numbers of the OpenCV-based reference scripts (PySODMetrics' examples read every map this way) without an
OpenCV dependency.

Convention (checked against OpenCV 4.14 in ``tests/test_io.py``):
    * 8-bit gray (``"L"``) is returned as is; gray + alpha (``"LA"``) gives the gray channel.
    * Colour PNG (RGB, RGBA, palette): libpng's ``png_set_rgb_to_gray`` as OpenCV calls it, which truncates:
      ``Y = (9797 R + 19234 G + 3737 B) >> 15``; alpha is ignored (stripped, not composited).
    * Colour BMP / TIFF / other formats: OpenCV's own ``cvtColor`` rule, rounded:
      ``Y = (4899 R + 9617 G + 1868 B + 8192) >> 14``. For a TIFF with unassociated alpha, libtiff's RGBA reader
      premultiplies the colours first (``c = (c a + 127) // 255``), as OpenCV gets them.
    * JPEG: decoded straight to luma by libjpeg (Pillow's ``draft("L")``), as OpenCV does; a CMYK JPEG with OpenCV's
      own CMYK rule on libjpeg's (Adobe-inverted) samples, ``R = k - ((255 - c) k >> 8)`` ..., then the rule above.
    * Bilevel (``"1"``) images give 0 / 255. The EXIF orientation is applied, as ``cv2.imread`` does by default.
    * 16-bit and 32-bit images (``"I;16"``, ``"I"``, ``"F"``, 16-bit RGB) raise ``ValueError``: OpenCV would scale
      them down to 8 bits, and silently doing so could hide a wrong export.
"""

from __future__ import annotations

import os
import re
import struct
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .readers import reads

if TYPE_CHECKING:  # annotations only: PIL is imported where an image is read
    from PIL.Image import Image as PILImage

__all__ = [
    "DEFAULT_MAX_IMAGE_PIXELS",
    "IMAGE_EXTENSIONS",
    "MAX_IMAGE_PIXELS_ENV",
    "NIFTI_EXTENSIONS",
    "NIFTI_NEEDS_NIBABEL",
    "PROPOSAL_EXTENSIONS",
    "BSDSGroundTruth",
    "ObjectAnnotation",
    "Pairing",
    "bsr_result_files",
    "find_pairs",
    "list_images",
    "mat_variables",
    "max_image_pixels",
    "nifti_label_shape",
    "open_image",
    "pair_by_stem",
    "read_bsds_ground_truth",
    "read_gray",
    "read_gray_map",
    "read_label_volume",
    "read_labels",
    "read_mat_array",
    "read_objects",
    "read_proposals",
    "read_segmentations",
    "resize_linear",
    "set_max_image_pixels",
]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")

#: what a NIfTI volume needs where nibabel is missing
NIFTI_NEEDS_NIBABEL = "NIfTI volumes need nibabel: pip install 'segmetrics-torch[nifti]'"

#: NIfTI volumes (read with nibabel, the ``nifti`` extra)
NIFTI_EXTENSIONS = (".nii", ".nii.gz")
#: files of object-proposal pools and object annotations: numpy archives and lossless label images
PROPOSAL_EXTENSIONS = (".npz", ".png", ".bmp", ".tif", ".tiff")

#: how many names an error message lists before "... and N more"
_MAX_LISTED = 10


def _rgb_to_gray(rgb: np.ndarray, rule: str) -> np.ndarray:
    r, g, b = (rgb[..., i].astype(np.int32) for i in range(3))
    if rule == "libpng":
        y = (9797 * r + 19234 * g + 3737 * b) >> 15
    else:
        y = (4899 * r + 9617 * g + 1868 * b + 8192) >> 14
    return y.astype(np.uint8)


def _raw_modes(image: PILImage) -> list[str]:
    """The decoder's raw mode of each tile of the image ("" where not known)."""
    modes = []
    for tile in getattr(image, "tile", None) or ():
        args = tile[-1] if isinstance(tile, tuple) else getattr(tile, "args", None)
        rawmode = args if isinstance(args, str) else (args[0] if isinstance(args, tuple) and args else "")
        modes.append(rawmode if isinstance(rawmode, str) else "")
    return modes


def _cmyk_to_gray(cmyk: np.ndarray, inverted: bool) -> np.ndarray:
    """OpenCV's grayscale of a CMYK JPEG (``icvCvt_CMYK2Gray_8u_C4C1R`` on libjpeg's samples), bit for bit.

    OpenCV takes libjpeg's samples as they are, inverted as Adobe files store them: with ``c, m, y, k`` those
    samples, ``R = k - ((255 - c) k >> 8)`` (and G from m, B from y), then the 14-bit BT.601 weights of its colour
    conversion, rounded. Pillow hands back the un-inverted samples of Adobe files (``inverted``), so they are
    inverted back first. (Pillow's own CMYK -> RGB, ``255 - min(255, c + k)``, differs by a grey level on most
    pixels: MAE 0.49935895 where PySODMetrics, reading with OpenCV, gets 0.49933820.)
    """
    raw = cmyk.astype(np.int32)
    if inverted:
        raw = 255 - raw
    k = raw[..., 3]
    r, g, b = (k - (((255 - raw[..., i]) * k) >> 8) for i in range(3))
    return ((4899 * r + 9617 * g + 1868 * b + 8192) >> 14).astype(np.uint8)


def _is_16bit(image: PILImage) -> bool:
    return any(";16" in mode for mode in _raw_modes(image))


#: environment variable: the most pixels an image may have (``segmetrics evaluate --max-image-pixels`` sets it)
MAX_IMAGE_PIXELS_ENV = "SEGMETRICS_MAX_IMAGE_PIXELS"
#: Pillow's own error threshold (twice its ``Image.MAX_IMAGE_PIXELS``): what opens today still opens, silently
DEFAULT_MAX_IMAGE_PIXELS = 2 * 89_478_485
_PIL_GLOBALS = threading.Lock()


#: the limit set for this process by :func:`set_max_image_pixels` (None: the variable's or the default)
_max_pixels: int | None = None


def set_max_image_pixels(pixels: int | None) -> int | None:
    """Set the image size limit of :func:`max_image_pixels` for this process (the command's ``--max-image-pixels``);
    None returns to ``$SEGMETRICS_MAX_IMAGE_PIXELS`` or :data:`DEFAULT_MAX_IMAGE_PIXELS`. A function, not a write of
    the environment: a caller's setting ends with the caller (the command restores the previous one when it returns).

    Returns:
        The limit set before (None: none was), to be restored.

    Raises:
        ValueError: ``pixels`` is not a positive integer (naming it).
    """
    global _max_pixels
    if pixels is not None and (isinstance(pixels, bool) or not isinstance(pixels, int) or pixels < 1):
        raise ValueError(f"Expected `pixels` to be a positive number of pixels or None, but got {pixels!r}.")
    previous, _max_pixels = _max_pixels, pixels
    return previous


def max_image_pixels() -> int:
    """The image size limit in pixels: the one :func:`set_max_image_pixels` set, else ``$SEGMETRICS_MAX_IMAGE_PIXELS``,
    else :data:`DEFAULT_MAX_IMAGE_PIXELS`.

    Raises:
        ValueError: the variable is set but not a positive integer (naming it).
    """
    from .environment import environment_value

    if _max_pixels is not None:
        return _max_pixels

    text = environment_value(MAX_IMAGE_PIXELS_ENV)  # checked there: a positive integer ("1_000_000" and "1,000,000")
    return DEFAULT_MAX_IMAGE_PIXELS if text is None else int(text.replace("_", "").replace(",", ""))


@reads(IMAGE_EXTENSIONS, "images (any reader of an image opens it here)")
def open_image(path: str | Path) -> PILImage:
    """PIL image of ``path`` (lazily decoded), with a size limit that names the file.

    Pillow refuses images over twice its ``MAX_IMAGE_PIXELS`` with a ``DecompressionBombError`` (a guard against
    files that decode to gigabytes) and warns below that. Here one limit applies, :func:`max_image_pixels`: the
    header is read with Pillow's check off, and an image over the limit is a ``ValueError`` naming the file, its size
    and the limit and how to raise it (``--max-image-pixels N`` or ``SEGMETRICS_MAX_IMAGE_PIXELS=N``).

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: not a readable image, or over the size limit (the message names the file).
    """
    from PIL import Image, UnidentifiedImageError

    path = Path(path)
    limit = max_image_pixels()
    try:
        with _PIL_GLOBALS:  # Pillow's limit is a module global: switched off only around this header read
            saved = Image.MAX_IMAGE_PIXELS
            Image.MAX_IMAGE_PIXELS = None
            try:
                image = Image.open(path)
            finally:
                Image.MAX_IMAGE_PIXELS = saved
    except FileNotFoundError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, struct.error) as error:
        # Pillow's errors of a damaged header (a truncated sRGB chunk is a ValueError, a bad PNG chunk a SyntaxError)
        raise ValueError(f"{path}: not a readable image ({error}).") from None
    width, height = image.size
    if width * height > limit:
        image.close()
        raise ValueError(
            f"{path}: {width}x{height} = {width * height:,} pixels exceeds the limit of {limit:,} pixels (a guard "
            f"against decompression bombs); raise it with --max-image-pixels N or {MAX_IMAGE_PIXELS_ENV}=N"
        )
    return image


@reads(IMAGE_EXTENSIONS, "8-bit gray maps (foreground predictions and masks, boundary maps)")
def read_gray(path: str | Path) -> np.ndarray:
    """Read an image as an 8-bit grayscale array, equal to ``cv2.imread(path, cv2.IMREAD_GRAYSCALE)``.

    See the module docstring for the conversion of each image mode.

    Args:
        path: a PNG, JPEG, BMP or TIFF file (any format Pillow opens); the first frame of a multi-frame file.

    Returns:
        (H, W) uint8 array.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file is not a readable image, or has 16/32-bit samples (the message names the file).
    """
    from PIL import ImageOps

    path = Path(path)
    image = open_image(path)
    with image:
        mode = image.mode
        if mode.startswith("I") or mode == "F" or _is_16bit(image):
            depth = "32-bit" if mode in ("I", "F") else "16-bit"
            raise ValueError(
                f"{path}: 16-bit images are not supported yet; convert to 8-bit (this one is {depth}, mode {mode!r})."
            )
        fmt = image.format
        if fmt == "JPEG" and mode in ("RGB", "YCbCr"):
            image.draft("L", image.size)  # libjpeg's own colour conversion, as OpenCV
        try:
            premultiply = fmt == "TIFF" and mode == "RGBA" and _unassociated_alpha(image)
            # libjpeg's CMYK samples: Adobe files store them inverted, which Pillow undoes ("CMYK;I"); OpenCV does not
            cmyk_inverted = fmt == "JPEG" and mode == "CMYK" and _raw_modes(image)[:1] == ["CMYK;I"]
            if image.getexif().get(0x0112, 1) in range(2, 9):  # EXIF orientation, applied as cv2.imread does
                image = ImageOps.exif_transpose(image)
            mode = image.mode
            if mode == "L":
                return np.array(image, dtype=np.uint8)
            if mode == "1":
                return np.array(image.convert("L"), dtype=np.uint8)
            if mode == "LA":
                return np.array(image.getchannel("L"), dtype=np.uint8)
            rule = "libpng" if fmt == "PNG" else "opencv"
            if premultiply:
                rgba = np.asarray(image, dtype=np.uint16)
                return _rgb_to_gray((rgba[..., :3] * rgba[..., 3:] + 127) // 255, rule)
            if fmt == "JPEG" and mode == "CMYK":
                return _cmyk_to_gray(np.asarray(image), cmyk_inverted)
            if mode not in ("RGB", "RGBA", "RGBX"):
                image = image.convert("RGB")  # palette, CMYK, YCbCr, ...
            return _rgb_to_gray(np.asarray(image), rule)
        except OSError as error:  # truncated or corrupt data surfaces on load
            raise ValueError(f"{path}: cannot decode the image ({error}).") from None


@reads(IMAGE_EXTENSIONS, "label-map images (partitions, instance and class annotations)")
def read_labels(path: str | Path) -> np.ndarray:
    """Read a label-map image (one partition: a region label per pixel) as an (H, W) int64 array.

    Values are kept, not converted to gray: 8-, 16- and 32-bit gray images give their values, palette images their
    palette indices, colour images (RGB, RGBA; alpha ignored) one label per colour ``(R << 16) | (G << 8) | B``,
    bilevel images 0 / 1, gray + alpha the gray channel, 32-bit float images their values (which must be integers).
    The EXIF orientation is applied, as :func:`read_gray`.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file is not a readable image, holds fractional or non-finite float values, 16-bit colour or
            another mode (CMYK, ...) (the message names the file).
    """
    from PIL import ImageOps

    path = Path(path)
    image = open_image(path)
    with image:
        mode = image.mode
        if mode in ("RGB", "RGBA") and _is_16bit(image):
            raise ValueError(f"{path}: 16-bit colour label maps are not supported; save 16-bit labels as gray.")
        try:
            if image.getexif().get(0x0112, 1) in range(2, 9):
                image = ImageOps.exif_transpose(image)
            if mode in ("LA", "PA"):
                image = image.getchannel(mode[0])
            labels = np.asarray(image)
        except OSError as error:
            raise ValueError(f"{path}: cannot decode the image ({error}).") from None
    if mode in ("RGB", "RGBA", "RGBX"):
        rgb = labels[..., :3].astype(np.int64)
        return (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    if labels.ndim != 2:
        raise ValueError(f"{path}: mode {mode!r} is not a label map; save labels as gray, palette or RGB images.")
    _check_integer(labels, path)
    return labels.astype(np.int64)


@reads((*IMAGE_EXTENSIONS, *NIFTI_EXTENSIONS), "label volumes and masks (NIfTI, images)")
def read_label_volume(path: str | Path, *, header_spacing: bool = True) -> tuple[np.ndarray, tuple[float, ...] | None]:
    """Read a label map or mask as ``(labels, spacing)``: a NIfTI volume (``.nii``, ``.nii.gz``) as its voxel array
    (int64, in the file's axis order) with the spacing of its header (the ``pixdim`` of its spatial axes, as stored:
    ``get_zooms()`` of a valid header; in the header's unit, usually mm), or a 2-D image as :func:`read_labels` with
    spacing None (unknown: unit).

    NIfTI axes: trailing axes of length 1 beyond the second are dropped, so ``(X, Y, Z, 1)`` (one time point) is a
    3-D volume and ``(H, W, 1)`` or ``(H, W, 1, 1)`` (one slice) a 2-D image with the spacing of the first two
    ``pixdim`` -- the numbers of the same masks saved as PNG, not those of a one-slice volume (whose every voxel lies
    on its top or bottom face). The header's shape is checked against :func:`max_image_pixels` (in voxels) before
    any voxel is decompressed: a small ``.nii.gz`` of a huge zero volume is refused, as a decompression bomb image is.

    Args:
        path: the file.
        header_spacing: read and check the header's spacing; False returns None for a NIfTI file too (for a caller
            that gives its own spacing, so that a header with a broken ``pixdim`` still gives its labels).

    Raises:
        ImportError: a NIfTI file without nibabel (``pip install 'segmetrics-torch[nifti]'``).
        ValueError: an unreadable file; a NIfTI volume with more than 3 spatial axes or more voxels than the limit
            (naming the limit and how to raise it); a NaN, infinite, zero or negative ``pixdim`` of a spatial axis;
            not enough memory to decompress it; fractional or non-finite values (the message names the file).
    """
    path = Path(path)
    if not path.name.lower().endswith(NIFTI_EXTENSIONS):
        return read_labels(path), None
    image, shape, spacing = _open_nifti(path, header_spacing)

    def out_of_memory() -> ValueError:  # under a memory cap numpy's MemoryError says nothing: say what did not fit
        dtype, voxels = np.dtype(image.header.get_data_dtype()), int(np.prod(shape))
        return ValueError(
            f"{path}: not enough memory to read {voxels:,} voxels ({dtype}: {voxels * dtype.itemsize:,} bytes "
            f"decompressed, {voxels * 8:,} bytes as int64 labels)."
        )

    try:
        values = np.asanyarray(image.dataobj)
    except MemoryError:
        raise out_of_memory() from None
    except Exception as error:  # nibabel raises its own ImageFileError, EOFError, gzip's BadGzipFile, ...
        raise ValueError(f"{path}: cannot read the NIfTI volume ({error}).") from None
    try:
        values = values.reshape(shape)
        _check_integer(values, path)
        return values.astype(np.int64), spacing
    except MemoryError:
        raise out_of_memory() from None


@reads(NIFTI_EXTENSIONS, "NIfTI headers (the shape and spacing of a label volume; no voxel read)")
def _open_nifti(path: Path, header_spacing: bool) -> tuple[Any, tuple[int, ...], tuple[float, ...] | None]:
    """``(nibabel image, shape, spacing)`` of a NIfTI file from its header (no voxel is decompressed): the shape
    :func:`read_label_volume` gives it (trailing axes of length 1 beyond the second dropped), checked against the
    size limit, and the header's spacing of those axes, checked (None unless ``header_spacing``).

    The spacing is checked on the header as stored: nibabel repairs a zero ``pixdim`` to 1 and a negative one to its
    absolute value while it loads (logging a line), which would hide a broken header behind a guessed spacing.
    """
    import logging

    try:
        import nibabel
        from nibabel.openers import ImageOpener
    except ImportError:
        raise ImportError(f"{path}: {NIFTI_NEEDS_NIBABEL}") from None
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    log = logging.getLogger("nibabel.global")

    def quiet(record: logging.LogRecord) -> bool:
        return False

    log.addFilter(quiet)  # nibabel's repair messages: the checks below report what they are about, once
    try:
        image: Any = nibabel.load(str(path))  # a Nifti1Image / Nifti2Image (nibabel types it as any image)
        full = tuple(int(n) for n in image.shape)
        if header_spacing:
            with ImageOpener(str(path)) as stream:
                stored = type(image.header).from_fileobj(stream, check=False)
            pixdim = tuple(float(z) for z in stored["pixdim"][1:])
    except Exception as error:  # nibabel raises its own ImageFileError, EOFError, gzip's BadGzipFile, ...
        raise ValueError(f"{path}: cannot read the NIfTI header ({error}).") from None
    finally:
        log.removeFilter(quiet)
    shape = full
    while len(shape) > 2 and shape[-1] == 1:  # a time point (X, Y, Z, 1) or a slice (H, W, 1)
        shape = shape[:-1]
    if len(shape) not in (2, 3):
        raise ValueError(f"{path}: expected a 2-D or 3-D label volume, but it has shape {full}.")
    voxels, limit = int(np.prod(shape)), max_image_pixels()
    if voxels > limit:
        raise ValueError(
            f"{path}: {'x'.join(map(str, shape))} = {voxels:,} voxels exceeds the limit of {limit:,} pixels (a guard "
            f"against decompression bombs); raise it with --max-image-pixels N or {MAX_IMAGE_PIXELS_ENV}=N"
        )
    if not header_spacing:
        return image, shape, None
    spacing = pixdim[: len(shape)]
    if not all(np.isfinite(s) and s > 0 for s in spacing):
        raise ValueError(
            f"{path}: the header's voxel spacing (pixdim[1:{len(shape) + 1}]) is {spacing}: expected positive "
            "numbers; fix the header, or give the spacing (--spacing S) to use instead of it"
        )
    return image, shape, spacing


def nifti_label_shape(path: str | Path) -> tuple[int, ...]:
    """The shape :func:`read_label_volume` gives the NIfTI file ``path``, from its header alone (no voxel read; the
    spacing not checked): what a pre-scan compares.

    Raises:
        ImportError, FileNotFoundError, ValueError: as :func:`read_label_volume` for the header (unreadable, too many
            axes, over the size limit).
    """
    return _open_nifti(Path(path), header_spacing=False)[1]


def _check_integer(values: np.ndarray, path: Path | str, what: str = "labels") -> None:
    """A ValueError naming ``path`` when a float array holds NaN, inf or fractions."""
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values) | (values != np.round(values))
        if bad.any():
            raise ValueError(
                f"{path}: {what} must be integers, but it holds {float(values[bad][0])!r} "
                f"({int(bad.sum())} non-integer value(s))."
            )


def _unassociated_alpha(image: PILImage) -> bool:
    tags = getattr(image, "tag_v2", None)
    extra = tags.get(338) if tags is not None else None
    if isinstance(extra, tuple):
        extra = extra[0] if extra else None
    return extra == 2


def list_images(folder: str | Path, exts: Sequence[str] = IMAGE_EXTENSIONS, *, name: str = "folder") -> dict[str, Path]:
    """Map each image file's stem to its path in ``folder`` (not recursive).

    Args:
        folder: the directory to list.
        exts: accepted extensions, matched case-insensitively (``".png"`` matches ``a.PNG``).
        name: what to call the folder in error messages (e.g. ``"prediction folder"``).

    Returns:
        ``{stem: path}`` sorted by stem. Hidden files (names starting with ``.``) are skipped.

    Raises:
        ValueError: the folder does not exist or is not a directory, holds no image with one of ``exts``, holds two
            images with one stem and different extensions (``a.png`` and ``a.jpg``), or holds a broken symbolic link
            with one of ``exts`` (a file the user meant to give).
    """
    folder = Path(folder)
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist"
        raise ValueError(f"The {name} {folder} {what}.")
    wanted = {e.lower() if e.startswith(".") else f".{e.lower()}" for e in exts}
    found: dict[str, list[Path]] = {}
    broken: list[str] = []
    # the longest extension a name ends with: compound ones (".nii.gz") leave their whole length out of the stem
    by_length = sorted(wanted, key=len, reverse=True)
    for path in folder.iterdir():
        lower = path.name.lower()
        ext = next((e for e in by_length if lower.endswith(e) and len(lower) > len(e)), None)
        if path.name.startswith(".") or ext is None:
            continue
        if path.is_symlink() and not path.exists():
            broken.append(f"{path.name} -> {os.readlink(path)}")
            continue
        if path.is_file():
            found.setdefault(path.name[: -len(ext)], []).append(path)
    if broken:
        # a dangling link is a file the user meant to give: never skipped silently
        raise ValueError(
            f"The {name} {folder} holds broken symbolic links (their targets do not exist): {_listing(sorted(broken))}."
        )
    if not found:
        raise ValueError(f"The {name} {folder} holds no image ({', '.join(sorted(wanted))}).")
    duplicates = {stem: paths for stem, paths in found.items() if len(paths) > 1}
    if duplicates:
        listed = [f"{stem} ({', '.join(sorted(p.name for p in paths))})" for stem, paths in sorted(duplicates.items())]
        raise ValueError(f"The {name} {folder} holds several images with one stem: {_listing(listed)}.")
    return {stem: found[stem][0] for stem in sorted(found)}


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    return shown if len(names) <= _MAX_LISTED else f"{shown} ... and {len(names) - _MAX_LISTED} more"


@dataclass(frozen=True)
class Pairing:
    """Result of matching a prediction folder against a ground-truth folder.

    Attributes:
        pairs: sorted ``(stem, pred_path, gt_path)`` of the stems present in both folders.
        missing: ground-truth stems without a prediction (sorted).
        unmatched: prediction stems without a ground truth (sorted).
        gt_reasons, pred_reasons: why a file of that side took part in no pairing at all: its stem lacks the
            prefix / suffix or does not match the pattern (``{stem: reason}``; empty without name mapping).
    """

    pairs: list[tuple[str, Path, Path]]
    missing: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    gt_reasons: dict[str, str] = field(default_factory=dict)
    pred_reasons: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """True when every ground truth has a prediction and every prediction a ground truth."""
        return not self.missing and not self.unmatched

    def problems(self) -> str:
        """A sentence listing (up to 10 of) the missing predictions and unmatched files; empty when complete."""
        parts = []
        if self.missing:
            parts.append(f"{len(self.missing)} ground-truth image(s) have no prediction: {_listing(self.missing)}")
        if self.unmatched:
            parts.append(f"{len(self.unmatched)} prediction(s) have no ground truth: {_listing(self.unmatched)}")
        return "; ".join(parts)


def _pair_key(stem: str, prefix: str, suffix: str, pattern: re.Pattern[str] | None) -> tuple[str | None, str]:
    """The name a file is paired by: its stem without ``prefix`` / ``suffix``, then ``pattern``'s ``id`` group (or
    group 1, or the whole match); ``(None, why)`` when the stem lacks the affix or does not match (the file stays
    unpaired)."""
    if prefix:
        if not stem.startswith(prefix):
            return None, f"its name does not start with {prefix!r}"
        stem = stem[len(prefix) :]
    if suffix:
        if not stem.endswith(suffix) or len(stem) == len(suffix):
            return None, f"its name does not end in {suffix!r}"
        stem = stem[: -len(suffix)]
    if pattern is None:
        return stem, ""
    match = pattern.search(stem)
    if match is None:
        return None, f"its name does not match the pairing pattern {pattern.pattern!r}"
    if "id" in pattern.groupindex:
        return match.group("id"), ""
    return (match.group(1) if pattern.groups else match.group(0)), ""


def find_pairs(
    pred_dir: str | Path,
    gt_dir: str | Path,
    exts: Sequence[str] = IMAGE_EXTENSIONS,
    *,
    pred_prefix: str = "",
    pred_suffix: str = "",
    gt_prefix: str = "",
    gt_suffix: str = "",
    pattern: str | None = None,
) -> Pairing:
    """Match the images of ``pred_dir`` and ``gt_dir`` by file stem (``a.png`` matches ``a.jpg``).

    Toolboxes name predictions differently from their ground truth (``img_0001_sal.png`` for ``img_0001.png``): the
    affixes are removed from each side's stems before matching, and ``pattern`` (a regular expression searched in
    both sides' stems, after the affixes) keeps only its ``id`` group, its first group or its match. The pairs are
    keyed by the ground truth's stem.

    Args:
        pred_dir: folder of prediction maps.
        gt_dir: folder of ground-truth maps.
        exts: accepted extensions (case-insensitive).
        pred_prefix, pred_suffix: removed from prediction stems (a stem without them is unmatched).
        gt_prefix, gt_suffix: removed from ground-truth stems.
        pattern: a regular expression mapping both sides' stems to a common name.

    Returns:
        :class:`Pairing` with the matched pairs and the stems found on one side only (no error for those).

    Raises:
        ValueError: a folder is missing, empty or holds duplicate stems (see :func:`list_images`), ``pattern`` is not
            a regular expression, or two files of one side map to one name.
    """
    import re

    try:
        regex = None if pattern is None else re.compile(pattern)
    except re.error as error:
        raise ValueError(f"the pairing pattern {pattern!r} is not a regular expression ({error}).") from None
    preds = list_images(pred_dir, exts, name="prediction folder")
    gts = list_images(gt_dir, exts, name="ground-truth folder")
    keyed: list[dict[str, str]] = []
    reasons: list[dict[str, str]] = []
    for stems, prefix, suffix, what in (
        (preds, pred_prefix, pred_suffix, "predictions"),
        (gts, gt_prefix, gt_suffix, "ground truths"),
    ):
        keys: dict[str, str] = {}
        why: dict[str, str] = {}
        for stem in stems:
            key, reason = _pair_key(stem, prefix, suffix, regex)
            if key is None:
                why[stem] = reason
                continue
            if key in keys:
                raise ValueError(f"two {what} map to the name {key!r}: {keys[key]} and {stem}.")
            keys[key] = stem
        keyed.append(keys)
        reasons.append(why)
    pred_keys, gt_keys = keyed
    paired_preds = {pred_keys[key] for key in gt_keys if key in pred_keys}
    pairs = [(gt_keys[key], preds[pred_keys[key]], gts[gt_keys[key]]) for key in gt_keys if key in pred_keys]
    pairs.sort(key=lambda pair: pair[0])
    paired_gts = {stem for stem, _, _ in pairs}
    return Pairing(
        pairs=pairs,
        missing=[stem for stem in gts if stem not in paired_gts],
        unmatched=[stem for stem in preds if stem not in paired_preds],
        gt_reasons=reasons[1],
        pred_reasons=reasons[0],
    )


def pair_by_stem(
    pred_dir: str | Path,
    gt_dir: str | Path,
    exts: Sequence[str] = IMAGE_EXTENSIONS,
    *,
    allow_missing: bool = False,
) -> list[tuple[str, Path, Path]]:
    """Sorted ``(stem, pred_path, gt_path)`` of the images present in both folders.

    Args:
        pred_dir: folder of prediction maps.
        gt_dir: folder of ground-truth maps.
        exts: accepted extensions (case-insensitive).
        allow_missing: keep only the common stems instead of failing when the two sets differ.

    Returns:
        The pairs, sorted by stem.

    Raises:
        ValueError: a folder is missing, empty or holds duplicate stems; the stem sets differ and ``allow_missing`` is
            False (the message lists up to 10 missing predictions and unmatched files); or no stem is common.

    Example:
        >>> import tempfile, pathlib
        >>> from segmetrics_torch.synthetic import write_foreground_dataset
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = write_foreground_dataset(root, n=2, size=(32, 32), methods=["good"])
        >>> [stem for stem, _, _ in pair_by_stem(root / "good", root / "gt")]
        ['img_000', 'img_001']
    """
    pairing = find_pairs(pred_dir, gt_dir, exts)
    if not pairing.pairs:
        raise ValueError(f"No prediction in {pred_dir} matches a ground truth in {gt_dir} by file name (stem).")
    if not allow_missing and not pairing.complete:
        raise ValueError(f"The folders do not match: {pairing.problems()}.")
    return pairing.pairs


# ------------------------------------------------------------------------------------------- BSDS .mat files


@dataclass(frozen=True)
class BSDSGroundTruth:
    """Annotations of one BSDS image: (A, H, W) int64 label maps and (A, H, W) bool boundary maps."""

    segmentations: np.ndarray
    boundaries: np.ndarray


@reads((".mat",), "MATLAB .mat files (BSDS ground truth, ucm2 hierarchies, segmentations)")
def _read_mat(read: Callable[[str], Any], path: str | Path) -> Any:
    """``read(path)`` (scipy's loadmat / whosmat) with every failure of a bad file as one ValueError naming it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No such .mat file: {path}")
    try:
        return read(str(path))
    except MemoryError:
        raise
    except Exception as err:  # v7.3 (HDF5), zero-byte and truncated files raise many types
        # (MatReadError, ValueError, TypeError, EOFError, struct errors): all mean "not a readable .mat file"
        raise ValueError(f"Cannot read {path} as a MATLAB v5 .mat file: {err or type(err).__name__}") from err


def _loadmat(path: str | Path) -> dict:
    import scipy.io

    return _read_mat(scipy.io.loadmat, path)


def read_bsds_ground_truth(path: str | Path) -> BSDSGroundTruth:
    """Read a BSDS500 ``groundTruth/*.mat`` (cell ``groundTruth`` of structs with ``Segmentation`` and ``Boundaries``).

    The boundaries are returned as stored (BSR uses them as they are; they equal ``thin(seg2bmap(Segmentation))``).
    """
    data = _loadmat(path)
    if "groundTruth" not in data:
        raise ValueError(f"{path}: expected a variable `groundTruth`, found {sorted(k for k in data if k[0] != '_')}.")
    cell = data["groundTruth"].ravel()
    if cell.size == 0:
        raise ValueError(f"{path}: `groundTruth` holds no annotation.")
    segs, bounds = [], []
    for i, entry in enumerate(cell):
        names = entry.dtype.names or ()
        if "Segmentation" not in names or "Boundaries" not in names:
            raise ValueError(f"{path}: annotation {i} lacks `Segmentation` / `Boundaries` (fields {names}).")
        segs.append(np.asarray(entry["Segmentation"][0, 0], dtype=np.int64))
        bounds.append(np.asarray(entry["Boundaries"][0, 0]) != 0)
    return BSDSGroundTruth(np.stack(segs), np.stack(bounds))


def read_mat_array(path: str | Path, key: str) -> np.ndarray:
    """Read the numeric variable ``key`` of a .mat file (e.g. ``ucm2``) as a float64 array."""
    data = _loadmat(path)
    if key not in data:
        raise ValueError(f"{path}: expected a variable `{key}`, found {sorted(k for k in data if k[0] != '_')}.")
    return np.asarray(data[key], dtype=np.float64)


def read_segmentations(path: str | Path, key: str = "segs") -> np.ndarray:
    """Read a cell of label maps (BSR ``segs``) as a (K, H, W) int64 array."""
    data = _loadmat(path)
    if key not in data:
        raise ValueError(f"{path}: expected a variable `{key}`, found {sorted(k for k in data if k[0] != '_')}.")
    cell = data[key].ravel() if data[key].dtype == object else [data[key]]
    if len(cell) == 0:
        raise ValueError(f"{path}: `{key}` holds no segmentation.")
    levels = [np.asarray(c) for c in cell]
    shapes = {level.shape for level in levels}
    if len(shapes) != 1 or levels[0].ndim != 2:
        raise ValueError(f"{path}: the cells of `{key}` must be 2-D label maps of one size, got {sorted(shapes)}.")
    for level in levels:
        _check_integer(level, path, f"`{key}`")
    return np.stack(levels).astype(np.int64)


def mat_variables(path: str | Path) -> list[str]:
    """The names of the variables of a MATLAB v5 .mat file (without loading them)."""
    import scipy.io

    return [name for name, _, _ in _read_mat(scipy.io.whosmat, path)]


# ------------------------------------------------------------------------------------- object proposals


@reads((".npz",), "numpy .npz archives (proposal pools, object annotations)")
def _npz(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise FileNotFoundError(f"No such file: {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except MemoryError:
        raise
    except Exception as error:  # BadZipFile, ValueError, OSError, EOFError, KeyError, zlib.error...
        raise ValueError(f"{path}: cannot read it as a numpy .npz archive ({error or type(error).__name__}).") from None


def _binary(array: np.ndarray, path: Path, what: str) -> np.ndarray:
    """``array`` as bool, or a ValueError naming ``path`` when it holds values other than 0 / 1."""
    if array.dtype != bool and (array.dtype.kind not in "iuf" or not np.isin(array, (0, 1)).all()):
        raise ValueError(f"{path}: {what} must be binary (bool or 0 / 1), but holds other values.")
    return array.astype(bool, copy=False)


@reads(PROPOSAL_EXTENSIONS, "ranked object-proposal pools")
def read_proposals(path: str | Path) -> np.ndarray:
    """Read one image's ranked pool of object proposals.

    Formats:
        * ``.npz`` with ``masks``: a (P, H, W) stack of binary masks (bool or integers 0 / 1), ranked by index;
        * ``.npz`` with ``labels``, or a label image (8/16-bit PNG, TIFF, BMP; :func:`read_labels`): an (H, W) map of
          non-overlapping proposals, label i >= 1 being the i-th ranked proposal and 0 no proposal.

    Returns:
        (P, H, W) bool masks or an (H, W) int64 label map, as :func:`segmetrics_torch.functional.proposals.
        proposal_overlaps` takes them.

    Raises:
        ValueError: unreadable file, missing key, wrong dimensions, non-binary masks, negative or fractional labels.
    """
    path = Path(path)
    if path.suffix.lower() != ".npz":
        labels = read_labels(path)
    else:
        data = _npz(path)
        if "masks" in data:
            masks = data["masks"]
            if masks.ndim != 3:
                raise ValueError(f"{path}: `masks` must be a (P, H, W) stack, but has shape {masks.shape}.")
            masks = _binary(masks, path, "`masks`")
            if masks.shape[0] == 0:
                raise ValueError(f"{path}: `masks` holds no proposal (P = 0).")
            return masks
        if "labels" not in data:
            raise ValueError(f"{path}: expected an array `masks` (P, H, W) or `labels` (H, W), found {sorted(data)}.")
        labels = data["labels"]
        if labels.ndim != 2:
            raise ValueError(f"{path}: `labels` must be an (H, W) label map, but has shape {labels.shape}.")
        _check_integer(labels, path, "`labels`")
        if labels.dtype.kind not in "iuf":
            raise ValueError(f"{path}: `labels` must hold integers, not {labels.dtype}.")
        labels = labels.astype(np.int64)
    if labels.size and labels.min() < 0:
        raise ValueError(f"{path}: proposal labels must be >= 0 (0 = no proposal), but it holds {int(labels.min())}.")
    if not labels.any():
        raise ValueError(f"{path}: the label map holds no proposal (every label is 0).")
    return labels


@dataclass(frozen=True)
class ObjectAnnotation:
    """The annotated objects of one image: (K, H, W) bool ``objects``, optional (H, W) bool ``void`` and (K,) int64
    ``classes``."""

    objects: np.ndarray
    void: np.ndarray | None = None
    classes: np.ndarray | None = None


@reads(PROPOSAL_EXTENSIONS, "object annotations")
def read_objects(
    path: str | Path, *, void_label: int | None = 255, class_path: str | Path | None = None
) -> ObjectAnnotation:
    """Read one image's ground-truth objects.

    Formats:
        * an instance label image (Pascal VOC ``SegmentationObject``: 8-bit palette PNG): every label other than 0
          (background) and ``void_label`` is one object, in increasing label order; ``void_label`` pixels are void;
        * ``.npz`` with ``objects`` (K, H, W) binary masks and optional ``void`` (H, W) and ``classes`` (K,).

    Args:
        path: the file.
        void_label: label of void pixels in label images (Pascal 255); None for none.
        class_path: optional class label image (Pascal ``SegmentationClass``) of the same size: each object's class is
            the most frequent class label over its pixels (in Pascal each object has one class).

    Raises:
        ValueError: unreadable file, no object, wrong shapes, non-binary masks, class ids that are not one
            non-negative integer per object.
    """
    path = Path(path)
    void = classes = None
    if path.suffix.lower() == ".npz":
        data = _npz(path)
        if "objects" not in data:
            raise ValueError(f"{path}: expected an array `objects` (K, H, W), found {sorted(data)}.")
        objects = data["objects"]
        if objects.ndim != 3 or objects.shape[0] == 0:
            raise ValueError(f"{path}: `objects` must be a (K, H, W) stack with K >= 1, but has shape {objects.shape}.")
        objects = _binary(objects, path, "`objects`")
        if "void" in data:
            void = data["void"]
            if void.shape != objects.shape[1:]:
                raise ValueError(f"{path}: `void` must be a binary (H, W) = {objects.shape[1:]} mask.")
            void = _binary(void, path, "`void`")
        if "classes" in data:
            classes = data["classes"].ravel()
            _check_integer(classes, path, "`classes`")
            if classes.shape != (objects.shape[0],) or classes.dtype.kind not in "iuf" or (classes < 0).any():
                raise ValueError(
                    f"{path}: `classes` must hold one non-negative integer per object "
                    f"({objects.shape[0]}), but got {classes.tolist()}."
                )
            classes = classes.astype(np.int64)
    else:
        labels = read_labels(path)
        ids = np.unique(labels)
        ids = ids[(ids != 0) & (ids != void_label)] if void_label is not None else ids[ids != 0]
        if ids.size == 0:
            raise ValueError(f"{path}: the instance label map holds no object (only background 0 and void).")
        objects = labels[None] == ids[:, None, None]
        if void_label is not None:
            void = labels == void_label
    if class_path is not None:
        if classes is not None:
            raise ValueError(f"{path} holds `classes` already; do not give a class image too.")
        class_map = read_labels(class_path)
        if class_map.shape != objects.shape[1:]:
            raise ValueError(
                f"{class_path}: the class map is {class_map.shape} but the objects are {objects.shape[1:]}."
            )
        if class_map.min() < 0:
            raise ValueError(f"{class_path}: class labels must be >= 0.")
        classes = np.array([np.bincount(class_map[o]).argmax() if o.any() else 0 for o in objects], dtype=np.int64)
    return ObjectAnnotation(objects, void, classes)


@reads(IMAGE_EXTENSIONS, "gray maps, 16-bit included")
def read_gray_map(path: str | Path) -> np.ndarray:
    """:func:`segmetrics_torch.io.read_gray`, plus 16-bit grayscale images read as OpenCV does (the high byte).

    ``cv2.imread(path, cv2.IMREAD_GRAYSCALE)`` on a 16-bit grayscale PNG returns ``v >> 8`` (libpng's
    ``png_set_strip_16``); tested against OpenCV. An image whose 16-bit values are all below 256 would turn all
    black that way (a 0/1 or 0/255 mask saved in 16 bits), so it raises ``ValueError`` instead of evaluating
    silently against an empty map. 16-bit colour images stay an error (:func:`read_gray`).
    """
    path = Path(path)
    try:
        return read_gray(path)
    except ValueError as error:
        if "16-bit images are not supported" not in str(error):
            raise
    with open_image(path) as image:
        if image.mode not in ("I;16", "I;16B", "I;16L", "I") or image.getbands() != ("I",):
            raise ValueError(
                f"{path}: only 8-bit images and 16-bit grayscale images are supported (mode {image.mode!r})."
            )
        values = np.asarray(image)
    if values.dtype.kind == "f" or values.min() < 0 or values.max() > 65535:
        raise ValueError(f"{path}: expected 16-bit grayscale values 0..65535, found {values.min()}..{values.max()}.")
    if values.max() < 256:
        raise ValueError(
            f"{path}: a 16-bit image whose values all lie below 256 (max {int(values.max())}) would be all black as "
            "cv2.imread reads it (the high byte); save it as an 8-bit image."
        )
    return (values.astype(np.uint32) >> 8).astype(np.uint8)


def _linear_taps(src: int, dst: int, clamp: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """OpenCV's INTER_LINEAR taps: source indices and 11-bit fixed-point weights of each output coordinate."""
    scale = 1.0 / (dst / src)  # cv2 computes scale_x = 1 / inv_scale_x in double
    f = ((np.arange(dst, dtype=np.float64) + 0.5) * scale - 0.5).astype(np.float32)
    s = np.floor(f).astype(np.int64)
    f = (f - s.astype(np.float32)).astype(np.float32)
    if clamp:  # along x cv2 clamps the coordinate at the borders; along y only the row indices (see below)
        low, high = s < 0, s >= src - 1
        f[low | high] = 0
        s[low] = 0
        s[high] = src - 1
    w1 = np.rint(f * np.float32(2048)).astype(np.int64)  # saturate_cast<short>(fx * INTER_RESIZE_COEF_SCALE)
    w0 = np.rint((np.float32(1) - f) * np.float32(2048)).astype(np.int64)
    return np.clip(s, 0, src - 1), np.clip(s + 1, 0, src - 1), w0, w1


def resize_linear(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Resize an (H, W) uint8 map to ``size = (h, w)`` exactly as ``cv2.resize(image, (w, h), cv2.INTER_LINEAR)``.

    PySODEvalToolkit resizes a prediction to its ground truth this way. OpenCV's 8-bit path: half-pixel centres
    ``x = (dx + 0.5) * W / w - 0.5``, weights rounded to 1/2048, a horizontal pass in integers, then the vertical
    pass of its SIMD kernel: ``(((H0 >> 4) * b0 >> 16) + ((H1 >> 4) * b1 >> 16) + 2) >> 2``. Bit-exact against
    OpenCV 4.x on random sizes (``tests/app/test_report_run.py``); no antialiasing when shrinking (as OpenCV).
    """
    h, w = size
    if image.shape == (h, w):
        return image
    sy0, sy1, b0, b1 = _linear_taps(image.shape[0], h, clamp=False)
    sx0, sx1, a0, a1 = _linear_taps(image.shape[1], w, clamp=True)
    src = image.astype(np.int64)
    rows0, rows1 = src[sy0], src[sy1]
    h0 = rows0[:, sx0] * a0 + rows0[:, sx1] * a1
    h1 = rows1[:, sx0] * a0 + rows1[:, sx1] * a1
    out = (((h0 >> 4) * b0[:, None]) >> 16) + (((h1 >> 4) * b1[:, None]) >> 16)
    return np.clip((out + 2) >> 2, 0, 255).astype(np.uint8)


def bsr_result_files(summary: Mapping[str, Any], extra: Sequence[str] = ()) -> dict[str, str]:
    """The text files of BSR's ``collect_eval_bdry.m`` for a boundary summary
    (:func:`~segmetrics_torch.functional.boundary_summary`, or a semantic-boundary class's), every number as MATLAB's
    ``%10g`` (C printf semantics, as its ``fprintf``), fields separated by one space: ``eval_bdry.txt`` (``ODS-T
    ODS-R ODS-P ODS-F OIS-R OIS-P OIS-F AP``, then the ``extra`` keys of ``summary``: the SBD benchmark's ninth
    column), ``eval_bdry_thr.txt`` (``T R P F`` per threshold) and ``eval_bdry_img.txt`` (``image-number T R P F``,
    each image's best).

    Example:
        >>> import torch
        >>> t = torch.tensor([0.25, 0.75], dtype=torch.float64)
        >>> best = {"threshold": 0.25, "recall": 1.0, "precision": 0.5, "f": 2 / 3}
        >>> per = {"threshold": t[:1], "recall": t[:1] * 0 + 1, "precision": t[:1] * 0 + 0.5, "f": t[:1] * 0 + 2 / 3}
        >>> summary = {"ods": best, "ois": best, "ap": 0.5, "thresholds": t, "recall": t, "precision": t, "f": t}
        >>> print(bsr_result_files({**summary, "per_image": per})["eval_bdry.txt"], end="")
              0.25          1        0.5   0.666667          1        0.5   0.666667        0.5
    """

    def line(*values: Any) -> str:
        return " ".join(f"{float(v):10g}" for v in values) + "\n"

    ods, ois, per = summary["ods"], summary["ois"], summary["per_image"]
    best = [ods["threshold"], ods["recall"], ods["precision"], ods["f"], ois["recall"], ois["precision"], ois["f"]]
    curves = zip(*(summary[k].tolist() for k in ("thresholds", "recall", "precision", "f")), strict=True)
    images = zip(*(per[k].tolist() for k in ("threshold", "recall", "precision", "f")), strict=True)
    return {
        "eval_bdry.txt": line(*best, summary["ap"], *(summary[key] for key in extra)),
        "eval_bdry_thr.txt": "".join(line(*row) for row in curves),
        "eval_bdry_img.txt": "".join(f"{i:10d} " + line(*row) for i, row in enumerate(images, start=1)),
    }
