"""Plain numpy/scipy oracles of the partition (region) measures, written for readability (loops allowed).

What this is
------------
Slow, single-image implementations written from the reference code's formulas; the yardstick the fast code of this
package is tested against. Imports nothing from ``segmetrics_torch`` (numpy, scipy and the stdlib only).

Ported from
-----------
* SEISM (Pont-Tuset & Marques, "Measures and meta-measures for the supervised evaluation of image segmentation",
  CVPR 2013; github.com/jponttuset/seism @ 6af0cad, v3):

  - ``src/misc/intersection_matrix.hpp``: :func:`relabel`, :func:`intersection_matrix`;
  - ``src/measures/fop.hpp``: :func:`fop` (precision-recall for objects and parts);
  - ``src/measures/pri_fr.hpp``: :func:`fr`, :func:`rand_index`, :func:`pri`;
  - ``src/measures/voi.hpp``: :func:`variation_of_information`, :func:`voi`, :func:`nvoi`;
  - ``src/measures/sc.hpp``: :func:`segmentation_covering`, :func:`sc`, :func:`ssc`;
  - ``src/measures/dhd.hpp``: :func:`directional_hamming`, :func:`dhd`, :func:`sdhd`, :func:`vd`;
  - ``src/measures/bgm.hpp``: :func:`bgm` (``scipy.optimize.linear_sum_assignment`` instead of SEISM's LAP);
  - ``src/measures/bce_gce_lce.hpp``: :func:`bce`, :func:`gce`, :func:`lce`;
  - ``src/measures/mex_eval_segm.cpp`` / ``eval_segm.m``: the multi-GT combination and the similarity conversions,
    gathered by :func:`partition_measures`;
  - ``src/misc/gridbmap2seg.m``, ``src/io/read_one_ucm.m``: :func:`gridbmap2seg`, :func:`ucm_to_partition`,
    :func:`region_count_threshold`;
  - ``src/baseline/create_quad_tree.m``, ``src/baseline/griducm2seg.m``: :func:`create_quad_tree`,
    :func:`griducm2seg`, and :func:`seism_quadtree_partition` (the partition behind the published QuadTree results:
    the 481 x 321 portrait tree, rotated by ``eval_method.m``'s ``imrotate(.., 90)`` for landscape images);
  - ``src/scripts/gather_measure.m``, ``general_ods.m``, ``general_ois.m``, ``general_ap.m``: :func:`seism_gather`,
    :func:`seism_ods_ois_ap`.

* BSR (the Berkeley benchmark, github.com/BIDS/BSDS500 @ a04b7c6, ``bench/benchmarks``):
  ``evaluation_reg_image.m``, ``match_segmentations.m``, ``match_segmentations2.m``: :func:`evaluation_reg_image`
  and :func:`bsr_ucm_to_partition`; ``collect_eval_reg.m``: :func:`collect_eval_reg`.

Conventions
-----------
* A partition is a 2-D integer label array. SEISM relabels every map by first appearance in a row-major scan
  (rows outer, columns inner) and builds the intersection (contingency) table ``n`` with **rows = partition regions
  i, columns = ground-truth (GT) regions j**; ``a_i`` are the row sums (partition areas), ``b_j`` the column sums
  (GT areas), ``N`` the pixel count. Any integer label is a region (0 and negative labels included: SEISM has no
  ignore label; SEISM itself would refuse negative labels when converting to uint32).
* ``gts`` is a sequence of GT label arrays (one per annotator). Unless stated, the multi-GT value is the arithmetic
  mean over annotators of the single-GT value, accumulated in annotator order as the C++ does.
* Similarities are 1 for a perfect partition. Distances: :func:`variation_of_information` / :func:`voi` (bits),
  :func:`directional_hamming` (pixels).
* Degenerate inputs follow IEEE arithmetic as the C++ does (0/0 -> NaN): the Rand index of a 1-pixel image, the
  region precision when every partition region is a single pixel (``n11 + n10 = 0``), the region recall when every
  GT region is a single pixel. :func:`fr` then returns F = 0 (the C++ test ``prr + rer > 0`` is false for NaN).
* BSR's region benchmark uses labels 1..K as array indices (label 0 is excluded from the covering, and is an error
  for RI / VoI); SEISM does not.

Checked (``tests/reference/test_partition_reference.py``)
--------------------------------------------------------
* VoI = scikit-image ``variation_of_information`` summed; Fr = scikit-image ``adapted_rand_error`` (precision and
  recall swapped, see :func:`fr`); RI = scikit-learn ``rand_score``; BGM = brute force; covering, Hamming and
  consistency errors = mask / per-pixel definitions (random maps, 1e-9).
* SEISM's published per-image gPb-UCM Fop (``gridbmap2seg(ucm2 > t)``) and QuadTree Fop
  (:func:`seism_quadtree_partition`) to 5e-7 (the files' ``%f``); SEISM's gPb-UCM fb / fop PR summaries
  character for character; BSR's bench/data region outputs (test_1, test_4, test_5) to every printed digit with
  ``collect_eval_reg(..., round_like_files=True)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from scipy import ndimage
from scipy.optimize import linear_sum_assignment

__all__ = [
    "bce",
    "bgm",
    "bsr_ucm_to_partition",
    "collect_eval_reg",
    "create_quad_tree",
    "dhd",
    "directional_hamming",
    "evaluation_reg_image",
    "fop",
    "fr",
    "gce",
    "gridbmap2seg",
    "griducm2seg",
    "intersection_matrix",
    "lce",
    "matlab_colon",
    "matlab_linspace",
    "nvoi",
    "partition_measures",
    "pri",
    "rand_index",
    "region_count_threshold",
    "relabel",
    "sc",
    "sdhd",
    "segmentation_covering",
    "seism_gather",
    "seism_ods_ois_ap",
    "seism_quadtree_partition",
    "ssc",
    "ucm_to_partition",
    "variation_of_information",
    "vd",
    "voi",
]

NOT_CLASSIFIED, OBJECT, PART = 0, 1, 2  # fop.hpp RegionClassificationTypes
AREA_PERCENTILE = 0.99  # fop.hpp _area_percentile


# ----------------------------------------------------------------------------------------------------------------
# MATLAB helpers
# ----------------------------------------------------------------------------------------------------------------
def matlab_linspace(d1: float, d2: float, n: int) -> np.ndarray:
    """MATLAB ``linspace(d1, d2, n)``: ``d1 + (k * (d2 - d1)) / (n - 1)`` for k = 0..n-1, both ends exact."""
    if n < 2:
        return np.array([d2], dtype=np.float64)
    k = np.arange(n, dtype=np.float64)
    y = d1 + (k * (d2 - d1)) / (n - 1)
    y[0], y[-1] = d1, d2
    return y


def matlab_colon(a: float, step: float, b: float) -> np.ndarray:
    """MATLAB ``a:step:b`` for a positive, non-integer step (MathWorks' ``colonop.m`` description).

    ``n = round((b - a) / step)`` intervals (one less if ``a + n*step`` overshoots ``b`` by more than
    ``tol = 2 eps max(|a|, |b|)``); the end ``c = a + n*step`` snaps to ``b`` when within ``tol``; the vector is
    built symmetrically, ``v(1+k) = a + k*step`` and ``v(n+1-k) = c - k*step`` for k = 0..floor(n/2), with the
    middle element ``(a + c)/2`` when n is even. So ``0:.01:1`` is not exactly ``k * 0.01`` everywhere.
    """
    tol = 2.0 * np.spacing(1.0) * max(abs(a), abs(b))
    n = round((b - a) / step)
    if a + n * step - b > tol:
        n -= 1
    c = a + n * step
    if c - b > -tol:
        c = b
    v = np.zeros(n + 1, dtype=np.float64)
    for k in range(n // 2 + 1):
        v[k] = a + k * step
        v[n - k] = c - k * step
    if n % 2 == 0:
        v[n // 2] = (a + c) / 2
    return v


def _first_argmax(values: np.ndarray) -> int:
    """MATLAB ``[~, i] = max(v)``: the FIRST index of the maximum (NaN ignored unless all are NaN)."""
    values = np.asarray(values, dtype=np.float64)
    if np.all(np.isnan(values)):
        return 0
    return int(np.nanargmax(values))


def _first_argmin(values: np.ndarray) -> int:
    """MATLAB ``[~, i] = min(v)``: the FIRST index of the minimum (NaN ignored unless all are NaN)."""
    values = np.asarray(values, dtype=np.float64)
    if np.all(np.isnan(values)):
        return 0
    return int(np.nanargmin(values))


def _div(num: float, den: float) -> float:
    """IEEE double division as in C++: ``x / 0`` is +-inf and ``0 / 0`` is NaN (no Python exception)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(num) / np.float64(den))


# ----------------------------------------------------------------------------------------------------------------
# contingency table (intersection_matrix.hpp)
# ----------------------------------------------------------------------------------------------------------------
def relabel(labels: np.ndarray) -> np.ndarray:
    """SEISM ``relabel`` (``src/misc/intersection_matrix.hpp``): labels 0..K-1 in order of first appearance.

    The scan is row-major (C order: rows outer, columns inner) over the 2-D array, as the C++ loops ``ii`` (rows)
    outer and ``jj`` (columns) inner over the MATLAB matrix. Returns int64 of the same shape. Any integer labels
    (negative, non-contiguous) are accepted.
    """
    labels = np.asarray(labels)
    flat = labels.ravel(order="C")
    values, first_position, inverse = np.unique(flat, return_index=True, return_inverse=True)
    # value v gets the rank of its first position among the first positions of all values
    order_of_appearance = np.argsort(first_position, kind="stable")
    new_label_of_value = np.empty(len(values), dtype=np.int64)
    new_label_of_value[order_of_appearance] = np.arange(len(values), dtype=np.int64)
    return new_label_of_value[inverse.ravel()].reshape(labels.shape)


def intersection_matrix(partition: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """SEISM ``intersection_matrix``: int64 table ``n`` of shape (K_S, K_G).

    ``n[i, j]`` = number of pixels in partition region i and GT region j, both maps relabelled by :func:`relabel`
    (rows = partition, columns = GT). Shapes must match.
    """
    partition = np.asarray(partition)
    gt = np.asarray(gt)
    if partition.shape != gt.shape:
        raise ValueError(f"partition {partition.shape} and ground truth {gt.shape} differ in shape")
    s = relabel(partition).ravel()
    g = relabel(gt).ravel()
    k_s = int(s.max()) + 1 if s.size else 0
    k_g = int(g.max()) + 1 if g.size else 0
    # pixel (i, j) counts once in cell i * K_G + j
    return np.bincount(s * k_g + g, minlength=k_s * k_g).astype(np.int64).reshape(k_s, k_g)


def _tables(partition: np.ndarray, gts: Sequence[np.ndarray] | np.ndarray) -> list[np.ndarray]:
    """One intersection table per annotator (a single 2-D GT array is one annotator, as ``eval_segm.m`` does)."""
    if isinstance(gts, np.ndarray) and gts.ndim == 2:
        gts = [gts]
    if len(gts) == 0:
        raise ValueError("at least one ground truth is needed")
    return [intersection_matrix(partition, g) for g in gts]


# ----------------------------------------------------------------------------------------------------------------
# Fop: precision-recall for objects and parts (fop.hpp)
# ----------------------------------------------------------------------------------------------------------------
def _fop_candidates(areas: np.ndarray, image_area: int) -> np.ndarray:
    """fop.hpp "remove percentile of small area": which regions are candidates (bool per region).

    The C++ inserts ``(area_i / image_area, i)`` into a ``std::multimap<double, uint32>`` for i = 0..K-1 and walks it
    with a reverse iterator: descending area fraction, and among equal fractions the REVERSE insertion order (a
    multimap appends equal keys after the existing ones), i.e. the higher region index first. A region is a
    candidate iff the running sum of the fractions visited before it is ``< 0.99`` (the running sum is accumulated
    in that visiting order, in float64).
    """
    fractions = [float(a) / float(image_area) for a in areas]
    visiting_order = sorted(range(len(fractions)), key=lambda i: (fractions[i], i), reverse=True)
    candidate = np.zeros(len(fractions), dtype=bool)
    cumulative = 0.0
    for i in visiting_order:
        candidate[i] = cumulative < AREA_PERCENTILE
        cumulative += fractions[i]
    return candidate


def fop(
    partition: np.ndarray,
    gts: Sequence[np.ndarray],
    gamma_obj: float = 0.9,
    gamma_part: float = 0.25,
    beta: float = 0.1,
) -> tuple[float, float, float]:
    """SEISM ``fop.hpp`` (CVPR'13 §3, Alg. 1): ``(F, P, R)`` of the precision-recall for objects and parts.

    Per pair (partition region i, GT region j of annotator k): ``O_G = n_ij / b_j`` (called recall in the code),
    ``O_S = n_ij / a_i`` (precision). Candidates: :func:`_fop_candidates`, for the partition and each GT separately.

    Classification, looping annotator k, then GT region j, then partition region i, only when both are candidates:

    1. ``O_G >= g_o and O_S >= g_o``: GT j := OBJECT and partition i := OBJECT (overwrites a PART);
    2. else ``O_G >= g_p and O_S >= g_o`` (i inside j): partition i := PART, only if i is still NOT_CLASSIFIED;
    3. else ``O_G >= g_o and O_S >= g_p`` (j inside i): GT j := PART (unconditionally, as the C++ does).

    Fragmentation, for every pair (candidates or not): if ``O_S >= g_o and O_G < g_o`` then ``fragGT[k][j] += O_G``,
    else if ``O_G >= g_o and O_S < g_o`` then ``fragPart[i] += O_S``.

    Counts: partition objects / parts; ``frag_S`` = sum of ``fragPart[i]`` over candidate unclassified i, divided by
    the number of annotators; the GT side is pooled over all annotators (objects, parts, ``frag_G`` = sum of
    ``fragGT[k][j]`` over candidate unclassified (k, j), candidates = sum over annotators).

    ``P = (objects_S + frag_S + beta * parts_S) / candidates_S``, ``R = (objects_G + frag_G + beta * parts_G) /
    candidates_G``, ``F = 2PR / (P + R)`` and 0 when P = R = 0.

    Constants: SEISM uses ``gamma_obj = 0.9`` everywhere in code (the CVPR'13 text says 0.95; the published results
    are reproduced with 0.9), ``gamma_part = 0.25``, ``beta = 0.1``; comparisons are ``>=``.
    Pairs with ``n_ij = 0`` cannot satisfy any rule when both thresholds are > 0; they are skipped then.
    """
    tables = _tables(partition, gts)
    n_gts = len(tables)
    areas_part = tables[0].sum(axis=1)
    image_area = int(areas_part.sum())
    k_s = len(areas_part)

    candidate_part = _fop_candidates(areas_part, image_area)
    class_part = [NOT_CLASSIFIED] * k_s
    frag_part = [0.0] * k_s

    candidate_gt, class_gt, frag_gt, areas_gt = [], [], [], []
    for table in tables:
        b = table.sum(axis=0)
        areas_gt.append(b)
        candidate_gt.append(_fop_candidates(b, image_area))
        class_gt.append([NOT_CLASSIFIED] * len(b))
        frag_gt.append([0.0] * len(b))

    skip_zero_pairs = gamma_obj > 0 and gamma_part > 0
    for k, table in enumerate(tables):
        for j in range(table.shape[1]):
            rows = np.flatnonzero(table[:, j]) if skip_zero_pairs else range(k_s)
            for i in rows:
                n_ij = float(table[i, j])
                recall = n_ij / float(areas_gt[k][j])  # O_G
                precision = n_ij / float(areas_part[i])  # O_S
                if candidate_gt[k][j] and candidate_part[i]:
                    if recall >= gamma_obj and precision >= gamma_obj:
                        class_gt[k][j] = OBJECT
                        class_part[i] = OBJECT
                    elif recall >= gamma_part and precision >= gamma_obj:
                        if class_part[i] == NOT_CLASSIFIED:
                            class_part[i] = PART
                    elif recall >= gamma_obj and precision >= gamma_part:
                        class_gt[k][j] = PART
                # degree of fragmentation, candidates or not, objects excluded
                if precision >= gamma_obj and recall < gamma_obj:
                    frag_gt[k][j] += recall
                elif recall >= gamma_obj and precision < gamma_obj:
                    frag_part[i] += precision

    objects_s = parts_s = candidates_s = 0
    frag_s = 0.0
    for i in range(k_s):
        candidates_s += int(candidate_part[i])
        if class_part[i] == PART:
            parts_s += 1
        elif class_part[i] == OBJECT:
            objects_s += 1
        elif candidate_part[i]:
            frag_s += frag_part[i]
    frag_s = frag_s / n_gts

    objects_g = parts_g = candidates_g = 0
    frag_g = 0.0
    for k in range(n_gts):
        for j in range(len(areas_gt[k])):
            candidates_g += int(candidate_gt[k][j])
            if class_gt[k][j] == PART:
                parts_g += 1
            elif class_gt[k][j] == OBJECT:
                objects_g += 1
            elif candidate_gt[k][j]:
                frag_g += frag_gt[k][j]

    precision = (objects_s + frag_s + beta * parts_s) / candidates_s
    recall = (objects_g + frag_g + beta * parts_g) / candidates_g
    f = 0.0 if precision == 0 and recall == 0 else 2 * precision * recall / (precision + recall)
    return float(f), float(precision), float(recall)


# ----------------------------------------------------------------------------------------------------------------
# pairs of pixels: Fr and (P)RI (pri_fr.hpp)
# ----------------------------------------------------------------------------------------------------------------
def _pair_counts(table: np.ndarray) -> tuple[int, int, int, int]:
    """pri_fr.hpp ``PairsOfPixels::calculate``: ``(n11, n00, n10, n01)`` over unordered pixel pairs (exact ints).

    ``n11 = (sum n^2 - N)/2`` (same region in both), ``n10 = (sum a^2 - sum n^2)/2`` (same partition region only),
    ``n01 = (sum b^2 - sum n^2)/2`` (same GT region only), ``n00 = (N^2 - sum a^2 - sum b^2 + sum n^2)/2``.
    """
    n = [int(x) for x in np.asarray(table, dtype=np.int64).ravel()]
    a = [int(x) for x in table.sum(axis=1)]
    b = [int(x) for x in table.sum(axis=0)]
    big_n = sum(n)
    sum_n2 = sum(x * x for x in n)
    sum_a2 = sum(x * x for x in a)
    sum_b2 = sum(x * x for x in b)
    n11 = (sum_n2 - big_n) // 2
    n00 = (big_n * big_n - sum_a2 - sum_b2 + sum_n2) // 2
    n10 = (sum_a2 - sum_n2) // 2
    n01 = (sum_b2 - sum_n2) // 2
    return n11, n00, n10, n01


def rand_index(partition: np.ndarray, gt: np.ndarray) -> float:
    """Rand index (pri_fr.hpp ``rand_index``): ``(n11 + n00) / (n11 + n00 + n10 + n01)``; NaN for a 1-pixel image."""
    n11, n00, n10, n01 = _pair_counts(intersection_matrix(partition, gt))
    return _div(n11 + n00, n11 + n00 + n01 + n10)


def pri(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """Probabilistic Rand index (``mex_eval_segm.cpp`` "pri"): mean over annotators of :func:`rand_index`."""
    tables = _tables(partition, gts)
    total = 0.0
    for table in tables:
        n11, n00, n10, n01 = _pair_counts(table)
        total += _div(n11 + n00, n11 + n00 + n01 + n10)
    return total / len(tables)


def fr(partition: np.ndarray, gts: Sequence[np.ndarray]) -> tuple[float, float, float]:
    """Precision-recall for regions (``mex_eval_segm.cpp`` "fr", Martin's thesis): ``(F, Pr, Rr)``.

    Per annotator ``Pr = n11 / (n11 + n10)``, ``Rr = n11 / (n11 + n01)`` (:func:`_pair_counts`); Pr and Rr are
    averaged over annotators, then ``F = 2 Pr Rr / (Pr + Rr)``, and F = 0 unless ``Pr + Rr > 0`` (so also when a
    degenerate 0/0 made Pr or Rr NaN). Single annotator: scikit-image ``adapted_rand_error(image_true=gt,
    image_test=partition, ignore_labels=())`` returns ``(1 - F, Rr, Pr)``.
    """
    tables = _tables(partition, gts)
    prr = rer = 0.0
    for table in tables:
        n11, _, n10, n01 = _pair_counts(table)
        prr += _div(n11, n11 + n10)
        rer += _div(n11, n11 + n01)
    prr /= len(tables)
    rer /= len(tables)
    f = 2 * prr * rer / (prr + rer) if prr + rer > 0 else 0.0
    return float(f), float(prr), float(rer)


# ----------------------------------------------------------------------------------------------------------------
# variation of information (voi.hpp)
# ----------------------------------------------------------------------------------------------------------------
def _voi_of_table(table: np.ndarray) -> float:
    """``H(S) + H(G) - 2 I(S; G)`` in bits from the intersection table (voi.hpp, Meila 2005)."""
    n = np.asarray(table, dtype=np.float64)
    a = n.sum(axis=1)
    b = n.sum(axis=0)
    big_n = n.sum()
    entropy_s = -np.sum(a * np.log(a / big_n)) / np.log(2.0) / big_n
    entropy_g = -np.sum(b * np.log(b / big_n)) / np.log(2.0) / big_n
    i, j = np.nonzero(n)
    mutual = np.sum(n[i, j] * np.log(big_n * n[i, j] / a[i] / b[j])) / np.log(2.0) / big_n
    return float(entropy_s + entropy_g - 2.0 * mutual)


def variation_of_information(partition: np.ndarray, gt: np.ndarray) -> float:
    """SEISM ``voi.hpp``: ``VoI = H(S) + H(G) - 2 I(S; G)`` in bits (natural logs divided by ``log 2``).

    ``H(S) = -sum_i (a_i / N) log2(a_i / N)``, ``I = sum_ij (n_ij / N) log2(N n_ij / (a_i b_j))`` over ``n_ij > 0``.
    Equals the sum of scikit-image ``variation_of_information(gt, partition, ignore_labels=())``. 0 iff the
    partitions are equal up to relabelling (up to rounding: it can be a tiny negative number like -1e-16).
    """
    return _voi_of_table(intersection_matrix(partition, gt))


def voi(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "voi": mean over annotators of :func:`variation_of_information` (a distance)."""
    tables = _tables(partition, gts)
    total = 0.0
    for table in tables:
        total += _voi_of_table(table)
    return total / len(tables)


def nvoi(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "nvoi": mean over annotators of ``1 - VoI / (2 log2(max(K_S, K_G)))``.

    The term is 1 when ``max(K_S, K_G) = 1`` (both maps are one region). Similarity in [0, 1] since
    ``VoI <= log2 K_S + log2 K_G``.
    """
    tables = _tables(partition, gts)
    total = 0.0
    for table in tables:
        k_max = max(table.shape)
        if k_max == 1:
            total += 1.0
        else:
            total += 1.0 - _voi_of_table(table) / (2.0 * math.log(k_max) / math.log(2.0))
    return total / len(tables)


# ----------------------------------------------------------------------------------------------------------------
# segmentation covering (sc.hpp) and directional Hamming distance (dhd.hpp)
# ----------------------------------------------------------------------------------------------------------------
def _covering_of_rows(table: np.ndarray) -> float:
    """sc.hpp ``segmentation_covering``: ``(1/N) sum_rows r  area_r * max_cols J_rc`` with the Jaccard index
    ``J_rc = n_rc / (area_r + area_c - n_rc)``; the running maximum starts at 0 (strict ``<``)."""
    n = np.asarray(table, dtype=np.int64)
    row_areas = n.sum(axis=1)
    col_areas = n.sum(axis=0)
    total = 0.0
    for r in range(n.shape[0]):
        best = 0.0
        for c in range(n.shape[1]):
            jaccard = float(n[r, c]) / float(row_areas[r] + col_areas[c] - n[r, c])
            if best < jaccard:
                best = jaccard
        total += best * float(row_areas[r])
    return total / float(n.sum())


def segmentation_covering(partition: np.ndarray, gt: np.ndarray) -> float:
    """SEISM ``sc`` for one GT: covering OF THE PARTITION by the GT, ``(1/N) sum_i a_i max_j J_ij``.

    The sum runs over PARTITION regions (rows). This is C({G} -> S) of CVPR'13 Table 2; the BSDS covering (sum over
    GT regions) is :func:`ssc`.
    """
    return _covering_of_rows(intersection_matrix(partition, gt))


def sc(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "sc": mean over annotators of :func:`segmentation_covering`."""
    tables = _tables(partition, gts)
    return sum(_covering_of_rows(t) for t in tables) / len(tables)


def ssc(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "ssc": the covering on the transposed table, ``(1/N) sum_j b_j max_i J_ij`` (sum over
    GT regions = the BSDS covering of the GT by the partition, C(S -> {G})), mean over annotators."""
    tables = _tables(partition, gts)
    return sum(_covering_of_rows(t.T) for t in tables) / len(tables)


def _hamming_of_cols(table: np.ndarray) -> int:
    """dhd.hpp ``directional_hamming_distance``: ``N - sum_cols max_rows n_rc`` (an integer)."""
    n = np.asarray(table, dtype=np.int64)
    total_max = 0
    for c in range(n.shape[1]):
        total_max += int(n[:, c].max())
    return int(n.sum()) - total_max


def directional_hamming(partition: np.ndarray, gt: np.ndarray) -> int:
    """SEISM ``dhd.hpp`` distance for one GT: ``N - sum_j max_i n_ij`` (sum over GT regions) = D_H(S => G)."""
    return _hamming_of_cols(intersection_matrix(partition, gt))


def dhd(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "dhd": ``1 - mean_k(D_H) / N`` (mean distance over annotators, then / N, then 1 -)."""
    tables = _tables(partition, gts)
    distance = 0.0
    for table in tables:
        distance += float(_hamming_of_cols(table))
    distance /= len(tables)
    distance /= float(tables[0].sum())
    return 1.0 - distance


def sdhd(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "sdhd": as :func:`dhd` on the transposed table, ``N - sum_i max_j n_ij`` = D_H(G => S)."""
    tables = _tables(partition, gts)
    distance = 0.0
    for table in tables:
        distance += float(_hamming_of_cols(table.T))
    distance /= len(tables)
    distance /= float(tables[0].sum())
    return 1.0 - distance


def vd(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``eval_segm.m`` "vd" (van Dongen): ``0.5 * (dhd + sdhd)`` = ``1 - d_vD / (2N)``."""
    return 0.5 * (dhd(partition, gts) + sdhd(partition, gts))


# ----------------------------------------------------------------------------------------------------------------
# bipartite graph matching (bgm.hpp)
# ----------------------------------------------------------------------------------------------------------------
def bgm(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "bgm": ``1 - mean_k(N - M_k) / N`` with ``M_k`` the maximum-weight one-to-one matching
    of partition and GT regions, weights ``n_ij``.

    SEISM solves a square LAP on ``-n`` padded to ``max(K_S, K_G)`` (float32 costs, exact for N < 2^24); here
    ``linear_sum_assignment(n, maximize=True)`` on the rectangular table (the same optimum, exact integers).
    """
    tables = _tables(partition, gts)
    distance = 0.0
    for table in tables:
        rows, cols = linear_sum_assignment(table, maximize=True)
        matched = int(table[rows, cols].sum())
        distance += float(int(table.sum()) - matched)
    distance /= len(tables)
    distance /= float(tables[0].sum())
    return 1.0 - distance


# ----------------------------------------------------------------------------------------------------------------
# consistency errors (bce_gce_lce.hpp)
# ----------------------------------------------------------------------------------------------------------------
def _cells(table: np.ndarray) -> Iterator[tuple[int, float, float]]:
    """``(n_ij, a_i, b_j)`` of the nonzero cells of a contingency table with its row and column sums, column by
    column as ``bce_gce_lce.hpp`` visits them."""
    a = table.sum(axis=1)
    b = table.sum(axis=0)
    for j in range(table.shape[1]):
        for i in range(table.shape[0]):
            n = int(table[i, j])
            if n:
                yield n, float(a[i]), float(b[j])


def _bce_of_table(table: np.ndarray) -> float:
    """``BCE = (1/N) sum_ij n_ij max((a_i - n_ij)/a_i, (b_j - n_ij)/b_j)`` (Martin 2001, bidirectional)."""
    total = 0.0
    for n, a, b in _cells(table):
        total += max((a - n) / a, (b - n) / b) * n
    return total / float(table.sum())


def _gce_of_table(table: np.ndarray) -> float:
    """``GCE = min(sum_ij n_ij (b_j - n_ij)/b_j, sum_ij n_ij (a_i - n_ij)/a_i) / N`` (the two global refinements)."""
    gt_side = part_side = 0.0
    for n, a, b in _cells(table):
        gt_side += (b - n) * n / b
        part_side += (a - n) * n / a
    return min(gt_side, part_side) / float(table.sum())


def _lce_of_table(table: np.ndarray) -> float:
    """``LCE = (1/N) sum_ij min(n_ij (b_j - n_ij)/b_j, n_ij (a_i - n_ij)/a_i)`` (refinement chosen per pixel)."""
    total = 0.0
    for n, a, b in _cells(table):
        total += min((b - n) * n / b, (a - n) * n / a)
    return total / float(table.sum())


def _one_minus_mean_error(
    partition: np.ndarray, gts: Sequence[np.ndarray], error_of_table: Callable[[np.ndarray], float]
) -> float:
    tables = _tables(partition, gts)
    total = 0.0
    for table in tables:
        total += error_of_table(table)
    total /= len(tables)
    return 1.0 - total


def bce(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "bce": ``1 - mean_k BCE`` (:func:`_bce_of_table`; not Martin's per-pixel BCE* min)."""
    return _one_minus_mean_error(partition, gts, _bce_of_table)


def gce(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "gce": ``1 - mean_k GCE`` (:func:`_gce_of_table`)."""
    return _one_minus_mean_error(partition, gts, _gce_of_table)


def lce(partition: np.ndarray, gts: Sequence[np.ndarray]) -> float:
    """``mex_eval_segm.cpp`` "lce": ``1 - mean_k LCE`` (:func:`_lce_of_table`)."""
    return _one_minus_mean_error(partition, gts, _lce_of_table)


# ----------------------------------------------------------------------------------------------------------------
# everything at once
# ----------------------------------------------------------------------------------------------------------------
def partition_measures(partition: np.ndarray, gts: Sequence[np.ndarray], gamma_obj: float = 0.9) -> dict[str, float]:
    """Every SEISM partition measure of one image (``eval_segm.m`` names; Fb is the boundary family, not here).

    Keys: fop, fop_precision, fop_recall, fr, fr_precision, fr_recall, pri, voi (a distance, bits), nvoi, sc, ssc,
    dhd, sdhd, vd, bgm, bce, gce, lce.
    """
    if isinstance(gts, np.ndarray) and gts.ndim == 2:
        gts = [gts]
    f_op, p_op, r_op = fop(partition, gts, gamma_obj=gamma_obj)
    f_r, p_r, r_r = fr(partition, gts)
    d = dhd(partition, gts)
    sd = sdhd(partition, gts)
    return {
        "fop": f_op,
        "fop_precision": p_op,
        "fop_recall": r_op,
        "fr": f_r,
        "fr_precision": p_r,
        "fr_recall": r_r,
        "pri": pri(partition, gts),
        "voi": voi(partition, gts),
        "nvoi": nvoi(partition, gts),
        "sc": sc(partition, gts),
        "ssc": ssc(partition, gts),
        "dhd": d,
        "sdhd": sd,
        "vd": 0.5 * (d + sd),
        "bgm": bgm(partition, gts),
        "bce": bce(partition, gts),
        "gce": gce(partition, gts),
        "lce": lce(partition, gts),
    }


# ----------------------------------------------------------------------------------------------------------------
# hierarchies -> partitions (gridbmap2seg.m, read_one_ucm.m, griducm2seg.m, create_quad_tree.m; BSR bwlabel)
# ----------------------------------------------------------------------------------------------------------------
FOUR_CONNECTED = ndimage.generate_binary_structure(2, 1)
EIGHT_CONNECTED = ndimage.generate_binary_structure(2, 2)


def gridbmap2seg(grid: np.ndarray) -> np.ndarray:
    """SEISM ``gridbmap2seg.m``: (2H+1, 2W+1) boundary grid -> (H, W) labels.

    Sets every grid corner (MATLAB ``(1:2:end, 1:2:end)``, 0-based even/even) to boundary, labels the 4-connected
    components of the non-boundary pixels (MATLAB ``bwlabel(1 - tmp', 4)``), and samples the pixel centres
    (MATLAB ``(2:2:end, 2:2:end)``, 0-based odd/odd). The MATLAB transposes only change the numbering (not
    reproduced: the numbering is irrelevant, every measure relabels). Labels are >= 1 when no pixel centre is itself
    marked as boundary (a marked centre would get label 0, as in MATLAB).
    """
    tmp = np.array(grid, dtype=bool)
    if tmp.ndim != 2 or tmp.shape[0] % 2 != 1 or tmp.shape[1] % 2 != 1:
        raise ValueError(f"expected a (2H+1, 2W+1) grid, got shape {tmp.shape}")
    tmp[0::2, 0::2] = True
    labels, _ = ndimage.label(~tmp, structure=FOUR_CONNECTED)
    return labels[1::2, 1::2].astype(np.int64)


def ucm_to_partition(ucm2: np.ndarray, threshold: float) -> np.ndarray:
    """SEISM ``read_one_ucm.m`` for a threshold parameter: ``gridbmap2seg(ucm2 > threshold)`` (strict ``>``)."""
    return gridbmap2seg(np.asarray(ucm2) > threshold)


def bsr_ucm_to_partition(ucm2: np.ndarray, threshold: float) -> np.ndarray:
    """BSR ``evaluation_reg_image.m``: ``labels2 = bwlabel(ucm2 <= t)`` (8-connectivity, MATLAB's default) sampled at
    MATLAB ``(2:2:end, 2:2:end)``. Labels >= 1 on a proper ucm2 (its pixel centres are 0)."""
    labels, _ = ndimage.label(np.asarray(ucm2) <= threshold, structure=EIGHT_CONNECTED)
    return labels[1::2, 1::2].astype(np.int64)


def region_count_threshold(ucm2: np.ndarray, num_regions: int) -> float:
    """SEISM ``read_one_ucm.m`` for a parameter > 1 (a number of regions): the threshold used with ``ucm2 > thr``.

    ``all_th = unique(ucm2)`` without 0 (ascending); ``thr = all_th(end - num_regions + 1)`` (the num_regions-th
    largest level), or 0 when ``num_regions > numel(all_th)``. The resulting partition need not have exactly
    ``num_regions`` regions (the rule counts levels, not regions).
    """
    levels = np.unique(np.asarray(ucm2, dtype=np.float64))
    levels = levels[levels != 0]
    if num_regions > len(levels):
        return 0.0
    return float(levels[len(levels) - num_regions])


def griducm2seg(grid_ucm: np.ndarray, num_regs: int) -> np.ndarray:
    """SEISM ``src/baseline/griducm2seg.m``: ``ths = unique(grid_ucm)`` (0 KEPT, unlike ``read_one_ucm.m``),
    ``sel = ths(end - num_regs + 1)`` or 0 when ``num_regs > numel(ths)``, then :func:`gridbmap2seg` of
    ``grid_ucm > sel``. (For a non-negative grid this is the same partition as ``read_one_ucm.m``.)"""
    levels = np.unique(np.asarray(grid_ucm, dtype=np.float64))
    threshold = 0.0 if num_regs > len(levels) else float(levels[len(levels) - num_regs])
    return gridbmap2seg(np.asarray(grid_ucm) > threshold)


def create_quad_tree(sx: int, sy: int) -> np.ndarray:
    """SEISM ``src/baseline/create_quad_tree.m``: the quadtree baseline as a (2*sx+1, 2*sy+1) grid UCM (float64).

    Per axis: ``tmp = floor(linspace(1, res + 1, 33))``, interior ``tmp(2:end-1)`` (31 cuts), level-1 cut positions
    ``2*tmp - 1`` on the grid (MATLAB 1-based), each coarser level keeps ``(2:2:end-1)`` of the previous one
    (31, 15, 7, 3, 1 cuts: 32, 16, 8, 4, 2 cells). For levels 1..4 the horizontal lines (rows of level l) are drawn
    segment by segment between the column cuts of level l, then the vertical lines (columns of level l) between the
    row cuts of level l+1, each segment with a new, increasing value (``curr_max``); coarser levels overwrite finer
    ones. Level 5 gets ``curr_max + 1..3``, then the border rows/columns copy their inner neighbours. The image has
    ``sx`` rows and ``sy`` columns. (SEISM's second output, the normalised single-size ucm, is not returned.)
    """
    res = (int(sx), int(sy))
    bounds: list[list[np.ndarray]] = []
    for size in res:
        tmp = np.floor(matlab_linspace(1.0, size + 1.0, 33)).astype(np.int64)[1:-1]
        levels = [2 * tmp - 1]  # MATLAB 1-based grid indices
        for _ in range(4):
            levels.append(levels[-1][1:-1:2])  # MATLAB (2:2:end-1)
        bounds.append(levels)
    rows_b, cols_b = bounds
    grid = np.zeros((2 * res[0] + 1, 2 * res[1] + 1), dtype=np.float64)
    n_rows, n_cols = grid.shape

    # MATLAB grid(r, c1:c2) with 1-based inclusive c1..c2 is grid[r-1, c1-1:c2] here (empty when c2 < c1)
    value = 1
    for level in range(4):
        cuts_r, cuts_c = rows_b[level], cols_b[level]
        for r in cuts_r:
            grid[r - 1, 1 : cuts_c[0]] = value  # 2 : c(1)
            value += 1
            for kk in range(len(cuts_c) - 1):
                grid[r - 1, cuts_c[kk] : cuts_c[kk + 1]] = value  # c(kk)+1 : c(kk+1)
                value += 1
            grid[r - 1, cuts_c[-1] : n_cols - 1] = value  # c(end)+1 : end-1
            value += 1
        next_r = rows_b[level + 1]
        for c in cuts_c:
            grid[1 : next_r[0], c - 1] = value  # 2 : r(1)
            value += 1
            for kk in range(len(next_r) - 1):
                grid[next_r[kk] : next_r[kk + 1], c - 1] = value  # r(kk)+1 : r(kk+1)
                value += 1
            grid[next_r[-1] : n_rows - 1, c - 1] = value  # r(end)+1 : end-1
            value += 1

    last_r, last_c = rows_b[4], cols_b[4]  # one cut each
    grid[last_r - 1, 1 : last_c[0]] = value + 1  # 2 : c
    grid[last_r - 1, last_c[0] :] = value + 2  # c+1 : end
    grid[1:, last_c - 1] = value + 3  # 2 : end

    grid[:, 0] = grid[:, 1]
    grid[:, -1] = grid[:, -2]
    grid[0, :] = grid[1, :]
    grid[-1, :] = grid[-2, :]
    return grid


def seism_quadtree_partition(height: int, width: int, num_regs: int) -> np.ndarray:
    """The QuadTree baseline partition behind SEISM's published ``results/BSDS500/QuadTree/test_*_<num_regs>.txt``.

    ``griducm2seg(create_quad_tree(rows, cols), num_regs)`` built for the PORTRAIT size (``rows = max(h, w)``,
    ``cols = min(h, w)``); for a landscape image the partition is then rotated by ``imrotate(partition, 90)``
    (counter-clockwise, ``np.rot90``), which is what SEISM's ``eval_method.m`` does when the partition and the GT
    sizes differ. (BSDS500: every image uses the 481 x 321 tree.) Checked here against the published per-image
    QuadTree Fop of the 20 sample images: ``griducm2seg(create_quad_tree(h, w), n)`` does NOT reproduce the
    landscape images (the cuts fall at other positions), the rotated portrait tree does, to 1e-6.
    ``num_regs`` counts levels of the grid UCM (read_one_ucm.m / griducm2seg.m), not regions.
    """
    rows, cols = max(height, width), min(height, width)
    seg = griducm2seg(create_quad_tree(rows, cols), num_regs)
    if seg.shape != (height, width):
        seg = np.rot90(seg)
    return np.ascontiguousarray(seg)


# ----------------------------------------------------------------------------------------------------------------
# BSR region benchmark (evaluation_reg_image.m, match_segmentations*.m, collect_eval_reg.m)
# ----------------------------------------------------------------------------------------------------------------
def _check_bsr_labels(labels: np.ndarray, what: str) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.size == 0 or labels.min() < 0:
        raise ValueError(f"BSR {what} labels must be non-negative integers (1..K)")
    return labels.astype(np.int64)


def _bsr_covering_matches(seg: np.ndarray, gts: Sequence[np.ndarray]) -> np.ndarray:
    """``match_segmentations.m``: Jaccard table (total_gt, max(seg)), GT regions of all annotators stacked.

    For each annotator, the confusion ``conf`` over labels 0..max (label 0 included, so region areas are the whole
    label areas) gives ``J(j, i) = conf(j, i) / (|G_j| + |S_i| - conf(j, i))`` for GT labels j = 1..max(gt) and
    segment labels i = 1..max(seg) (``accuracies(2:end, 2:end)``: label 0 dropped). Labels absent from a map are
    zero-area regions (``J = 0``, or NaN = 0/0 when both are absent). Returned as (GT regions, seg regions).
    """
    seg = _check_bsr_labels(seg, "segmentation")
    max_seg = int(seg.max())
    blocks = []
    for gt in gts:
        gt = _check_bsr_labels(gt, "ground-truth")
        max_gt = int(gt.max())
        cells = gt.ravel() * (max_seg + 1) + seg.ravel()  # cell (gt label, seg label), labels 0..max
        conf = np.bincount(cells, minlength=(max_gt + 1) * (max_seg + 1)).astype(np.float64)
        conf = conf.reshape(max_gt + 1, max_seg + 1)
        gt_areas = conf.sum(axis=1)
        seg_areas = conf.sum(axis=0)
        union = gt_areas[:, None] + seg_areas[None, :] - conf  # |G_j| + |S_i| - |G_j & S_i| for every (j, i)
        with np.errstate(divide="ignore", invalid="ignore"):
            accuracies = conf / union
        blocks.append(accuracies[1:, 1:])
    return np.concatenate(blocks, axis=0)


def _bsr_ri_voi(seg: np.ndarray, gt: np.ndarray) -> tuple[float, float]:
    """``match_segmentations2.m`` (after Allen Yang) for one annotator: ``(RI, VoI)``.

    ``n`` = confusion (max(seg), max(gt)) with labels used as 1-based indices (label 0 is an error in MATLAB).
    ``RI = 1 - (sum(nu^2)/2 + sum(nv^2)/2 - sum(n^2)) / (N(N-1)/2)`` with ``nu``/``nv`` the row/column sums;
    ``VoI = H1 + H2 - 2 MI`` in bits with the ``log2_quotient`` zero guards of the .m file.
    """
    if seg.min() < 1 or gt.min() < 1:
        raise ValueError("match_segmentations2.m uses labels as indices: labels must be >= 1")
    num_1, num_2 = int(seg.max()), int(gt.max())
    cells = (seg.ravel() - 1) * num_2 + (gt.ravel() - 1)  # confcounts(u, v), 0-based
    n = np.bincount(cells, minlength=num_1 * num_2).astype(np.float64).reshape(num_1, num_2)
    big_n = n.sum()
    n_u = n.sum(axis=1)
    n_v = n.sum(axis=0)
    n_choose_2 = big_n * (big_n - 1) / 2
    ri = 1 - (np.sum(n_u * n_u) / 2 + np.sum(n_v * n_v) / 2 - np.sum(n * n)) / n_choose_2

    joint = n / big_n
    marginal_2 = joint.sum(axis=0)  # over the GT labels (row vector)
    marginal_1 = joint.sum(axis=1)  # over the segment labels (column vector)
    h1 = -np.sum(marginal_1 * np.log2(marginal_1 + (marginal_1 == 0)))
    h2 = -np.sum(marginal_2 * np.log2(marginal_2 + (marginal_2 == 0)))
    outer = np.outer(marginal_1, marginal_2)
    quotient = np.log2((joint + (joint == 0) * outer + (outer == 0)) / (outer + (outer == 0)))
    mi = np.sum(joint * quotient)
    return float(ri), float(h1 + h2 - 2 * mi)


def evaluation_reg_image(segs: Sequence[np.ndarray], gts: Sequence[np.ndarray]) -> dict[str, np.ndarray | float]:
    """BSR ``evaluation_reg_image.m`` for one image, given its L partitions (levels / thresholds) and annotators.

    Partitions and GTs carry BSR labels (>= 1; use :func:`bsr_ucm_to_partition` for a ucm2). Per level t:

    * covering (``match_segmentations.m``, :func:`_bsr_covering_matches`): ``cntR = sum_{GT regions r of all
      annotators} |r| max_S J(r, S)``, ``sumR = sum |r|`` (= annotators x N), ``cntP = sum_{S} |S| max_r J(r, S)``,
      ``sumP = N`` (regionprops areas of labels 1..max: label-0 pixels are not counted);
    * ``ri``, ``voi``: means over annotators of ``match_segmentations2.m`` (:func:`_bsr_ri_voi`).

    ``cntR_best = sum_r |r| max_t J_t(r)`` (per GT region, best over levels). MATLAB's ``max`` ignores NaN.
    Returns ``{"cntR", "sumR", "cntP", "sumP", "ri", "voi"}`` (float64 arrays of length L) and ``"cntR_best"``.
    """
    gts = [_check_bsr_labels(g, "ground-truth") for g in gts]
    if not gts:
        raise ValueError("at least one ground truth is needed")
    # regionprops(gt, 'Area') of every annotator, stacked: labels 1..max(gt), absent labels have area 0
    gt_region_areas = np.concatenate([np.bincount(g.ravel(), minlength=int(g.max()) + 1)[1:] for g in gts])
    num_levels = len(segs)
    out = {key: np.zeros(num_levels, dtype=np.float64) for key in ("cntR", "sumR", "cntP", "sumP", "ri", "voi")}
    best_matches_gt = np.zeros(len(gt_region_areas), dtype=np.float64)
    for t, seg in enumerate(segs):
        seg = _check_bsr_labels(seg, "segmentation")
        ri_sum = voi_sum = 0.0
        for g in gts:
            ri_g, voi_g = _bsr_ri_voi(seg, g)
            ri_sum += ri_g
            voi_sum += voi_g
        out["ri"][t] = ri_sum / len(gts)
        out["voi"][t] = voi_sum / len(gts)

        matches = _bsr_covering_matches(seg, gts)  # (GT regions, seg regions)
        with np.errstate(invalid="ignore"):
            matches_seg = _nanmax_matlab(matches, axis=0)  # best GT region per seg region
            matches_gt = _nanmax_matlab(matches, axis=1)  # best seg region per GT region
        seg_region_areas = np.bincount(seg.ravel(), minlength=int(seg.max()) + 1)[1:]
        for r in range(len(seg_region_areas)):
            out["cntP"][t] += seg_region_areas[r] * matches_seg[r]
            out["sumP"][t] += seg_region_areas[r]
        for r in range(len(gt_region_areas)):
            out["cntR"][t] += gt_region_areas[r] * matches_gt[r]
            out["sumR"][t] += gt_region_areas[r]
        best_matches_gt = np.fmax(best_matches_gt, matches_gt)  # MATLAB max(a, b) ignores NaN
    cnt_r_best = 0.0
    for r in range(len(gt_region_areas)):
        cnt_r_best += gt_region_areas[r] * best_matches_gt[r]
    result: dict[str, np.ndarray | float] = dict(out)
    result["cntR_best"] = float(cnt_r_best)
    return result


def _nanmax_matlab(x: np.ndarray, axis: int) -> np.ndarray:
    """MATLAB ``max(x, [], dim)``: NaNs are ignored; an all-NaN slice gives NaN."""
    all_nan = np.all(np.isnan(x), axis=axis)
    filled = np.where(np.isnan(x), -np.inf, x)
    result = filled.max(axis=axis) if x.shape[axis] else np.full(all_nan.shape, np.nan)
    return np.where(all_nan, np.nan, result)


def _g(x: float) -> float:
    """A value as written with ``%10g`` (6 significant digits) and read back by ``dlmread``."""
    return float(f"{float(x):g}")


def collect_eval_reg(
    per_image: Sequence[dict], thresholds: Sequence[float] | np.ndarray, round_like_files: bool = True
) -> dict[str, np.ndarray]:
    """BSR ``collect_eval_reg.m`` from per-image :func:`evaluation_reg_image` outputs (in the images' file order).

    ``round_like_files=True`` (default) reproduces the MATLAB pipeline, where every per-image value (thresholds,
    cntR, sumR, cntP, sumP in ``*_ev2.txt``, cntR_best in ``*_ev3.txt``, thresholds, RI, VoI in ``*_ev4.txt``) is
    written with ``%10g`` (6 significant digits) and read back before being summed.

    Outputs (each a float64 array, one row per line of the file):

    * ``eval_cover_img`` (images, 4): ``[i, bestT, bestR, bestP]`` with the FIRST maximum of the per-image covering
      ``R = cntR / sumR`` (``P = cntP / sumP``), ``i`` 1-based;
    * ``eval_cover_th`` (L, 2): ``[thresh, R_total]`` with ``R_total = sum_img cntR / sum_img sumR``;
    * ``eval_cover`` (4,): ``[bestT, ODS, OIS, Best]``: ODS = max of R_total (threshold of the FIRST maximum);
      OIS = pooled counts at each image's LAST maximum (``ff(end)``); Best = ``sum_img cntR_best / sumR_total(1)``;
    * ``eval_RI_VOI_thr`` (L, 3): ``[thresh, mean_img RI, mean_img VoI]``;
    * ``eval_RI_VOI`` (6,): ``[thr_RI, ODS_RI, OIS_RI, thr_VoI, ODS_VoI, OIS_VoI]``: ODS = max mean RI / min mean
      VoI (first), OIS = mean over images of the per-image max RI / min VoI.

    ``x / (y + (y == 0))`` guards are as in the .m file (0 when the denominator is 0).
    """
    rnd = _g if round_like_files else float
    thresh = np.array([rnd(t) for t in thresholds], dtype=np.float64)
    num_levels = len(thresh)
    cnt_r_total = np.zeros(num_levels)
    sum_r_total = np.zeros(num_levels)
    cnt_p_total = np.zeros(num_levels)
    sum_p_total = np.zeros(num_levels)
    cnt_r_ois = sum_r_ois = cnt_p_ois = sum_p_ois = 0.0
    global_ri = np.zeros(num_levels)
    global_voi = np.zeros(num_levels)
    ri_best = voi_best = 0.0
    cnt_r_best_total = 0.0
    scores = np.zeros((len(per_image), 4))

    for i, img in enumerate(per_image):
        cnt_r = np.array([rnd(x) for x in img["cntR"]])
        sum_r = np.array([rnd(x) for x in img["sumR"]])
        cnt_p = np.array([rnd(x) for x in img["cntP"]])
        sum_p = np.array([rnd(x) for x in img["sumP"]])
        r = cnt_r / (sum_r + (sum_r == 0))
        p = cnt_p / (sum_p + (sum_p == 0))
        k = _first_argmax(r)
        scores[i] = [i + 1, thresh[k], r[k], p[k]]
        cnt_r_total += cnt_r
        sum_r_total += sum_r
        cnt_p_total += cnt_p
        sum_p_total += sum_p
        last = int(np.nonzero(r == r.max())[0][-1])
        cnt_r_ois += cnt_r[last]
        sum_r_ois += sum_r[last]
        cnt_p_ois += cnt_p[last]
        sum_p_ois += sum_p[last]
        cnt_r_best_total += rnd(img["cntR_best"])
        ri = np.array([rnd(x) for x in img["ri"]])
        vi = np.array([rnd(x) for x in img["voi"]])
        global_ri += ri
        global_voi += vi
        ri_best += ri[np.nonzero(ri == ri.max())[0][-1]]
        voi_best += vi[np.nonzero(vi == vi.min())[0][-1]]

    r_total = cnt_r_total / (sum_r_total + (sum_r_total == 0))
    k = _first_argmax(r_total)
    r_ois = cnt_r_ois / (sum_r_ois + (sum_r_ois == 0))
    r_best_total = cnt_r_best_total / sum_r_total[0]
    n_img = len(per_image)
    global_ri /= n_img
    global_voi /= n_img
    ri_best /= n_img
    voi_best /= n_img
    k_ri = _first_argmax(global_ri)
    k_voi = _first_argmin(global_voi)
    return {
        "eval_cover_img": scores,
        "eval_cover_th": np.column_stack([thresh, r_total]),
        "eval_cover": np.array([thresh[k], r_total[k], r_ois, r_best_total]),
        "eval_RI_VOI_thr": np.column_stack([thresh, global_ri, global_voi]),
        "eval_RI_VOI": np.array([thresh[k_ri], global_ri[k_ri], ri_best, thresh[k_voi], global_voi[k_voi], voi_best]),
    }


# ----------------------------------------------------------------------------------------------------------------
# SEISM dataset summaries (gather_measure.m, general_ods.m, general_ois.m, general_ap.m)
# ----------------------------------------------------------------------------------------------------------------
def seism_gather(per_image_values: np.ndarray, kind: str) -> dict[str, np.ndarray]:
    """SEISM ``gather_measure.m`` for a (num_images, num_params[, columns]) array of per-image results.

    Columns as in SEISM's per-image result files: ``kind="fb"``: ``F P R cntR sumR cntP sumP``; ``"fop"`` / ``"fr"``:
    ``F P R``; any other kind: the value (2-D array, or 3-D with the value in column 0).

    * fb: counts pooled over images per parameter; where ``sumR == 0 and cntP == 0``: R = 1, P = 0; then where
      ``sumP == 0 and cntR == 0``: R = 0, P = 1 (overwriting); where ``sumP != 0 and cntR != 0``: R = cntR/sumR,
      P = cntP/sumP; elsewhere R = P = 0 (the zero initialisation -- note ``cntR == 0`` with ``sumP != 0`` keeps
      P = 0 even if cntP > 0). Inconsistent counts (sumR = 0 < cntP or sumP = 0 < cntR) raise, as the asserts do.
      F = 2PR/(P+R), 0 where P + R = 0.
    * fop / fr: mean over images of P and of R, then F of the means (NaN -> error "Not a Number found").
    * other: mean over images of the value.

    Returns ``values`` (per image, F or value), ``mean_value`` and, for fb/fop/fr, ``prec``, ``rec``, ``mean_prec``,
    ``mean_rec`` (and the per-image ``cntR``, ``sumR``, ``cntP``, ``sumP`` for fb).
    """
    data = np.asarray(per_image_values, dtype=np.float64)
    stats: dict[str, np.ndarray] = {}
    if kind in ("fb", "fop", "fr"):
        stats["prec"] = data[:, :, 1]
        stats["rec"] = data[:, :, 2]
    stats["values"] = data[:, :, 0] if data.ndim == 3 else data
    if kind == "fb":
        for col, key in ((3, "cntR"), (4, "sumR"), (5, "cntP"), (6, "sumP")):
            stats[key] = data[:, :, col]
        cnt_r = stats["cntR"].sum(axis=0)
        sum_r = stats["sumR"].sum(axis=0)
        cnt_p = stats["cntP"].sum(axis=0)
        sum_p = stats["sumP"].sum(axis=0)
        mean_rec = np.zeros(len(sum_p))
        mean_prec = np.zeros(len(sum_p))
        if np.any((sum_r == 0) & (cnt_p != 0)) or np.any((sum_p == 0) & (cnt_r != 0)):
            raise AssertionError("gather_measure.m: inconsistent boundary counts")
        m = (sum_r == 0) & (cnt_p == 0)
        mean_rec[m], mean_prec[m] = 1, 0
        m = (sum_p == 0) & (cnt_r == 0)
        mean_rec[m], mean_prec[m] = 0, 1
        m = (sum_p != 0) & (cnt_r != 0)
        mean_rec[m] = cnt_r[m] / sum_r[m]
        mean_prec[m] = cnt_p[m] / sum_p[m]
        total = mean_rec + mean_prec
        mean_value = np.zeros(len(sum_p))
        nz = total != 0
        mean_value[nz] = 2 * mean_prec[nz] * mean_rec[nz] / (mean_prec[nz] + mean_rec[nz])
        stats.update(mean_rec=mean_rec, mean_prec=mean_prec, mean_value=mean_value)
    elif kind in ("fop", "fr"):
        mean_prec = stats["prec"].mean(axis=0)
        mean_rec = stats["rec"].mean(axis=0)
        with np.errstate(invalid="ignore"):
            mean_value = 2 * (mean_prec * mean_rec) / (mean_prec + mean_rec)
        stats.update(mean_rec=mean_rec, mean_prec=mean_prec, mean_value=mean_value)
    else:
        stats["mean_value"] = stats["values"].mean(axis=0)
    if kind in ("fb", "fop", "fr") and np.any(np.isnan(stats["mean_value"])):
        raise ValueError("gather_measure.m: Not a Number found")
    return stats


def _seism_ap(mean_rec: np.ndarray, mean_prec: np.ndarray, unique_occurrence: str) -> float:
    """``general_ap.m``: ``[~, k] = unique(mean_rec)``, reversed (descending recall), ``interp1(rec, prec, 0:.01:1)``
    (linear; NaN outside the recall range), NaNs dropped, sum / 100; 0 with fewer than 2 distinct recalls.

    ``unique_occurrence`` picks the precision kept for a repeated recall: MATLAB >= R2013a returns the FIRST
    occurrence, older versions (and ``'legacy'``) the LAST. Irrelevant when recalls are all distinct.
    """
    values = np.unique(mean_rec)
    keep = []
    for v in values:
        where = np.nonzero(mean_rec == v)[0]
        keep.append(where[0] if unique_occurrence == "first" else where[-1])
    rec = mean_rec[keep]
    prec = mean_prec[keep]
    if len(rec) <= 1:
        return 0.0
    query = matlab_colon(0.0, 0.01, 1.0)
    interpolated = np.interp(query, rec, prec)  # rec ascending here; interp1 sorts a descending x the same way
    inside = (query >= rec[0]) & (query <= rec[-1])
    return float(np.sum(interpolated[inside]) / 100)


def seism_ods_ois_ap(per_image_values: np.ndarray, kind: str, unique_occurrence: str = "first") -> dict[str, object]:
    """SEISM dataset summaries: ``general_ods.m``, ``general_ois.m``, ``general_ap.m`` on :func:`seism_gather`.

    * ODS: the FIRST maximum over parameters of ``mean_value`` (no interpolation between parameters, unlike BSR;
      for distances such as voi the maximum is taken too), with ``mean_prec`` / ``mean_rec`` there.
    * OIS: per image the FIRST argmax over parameters of the per-image value (column F); fb pools the counts at
      those parameters (``eval_segm.m`` 0/0 conventions: sumR = 0 -> R = 1, P = 0; sumP = 0 -> R = 0, P = 1; F = 0
      when P + R = 0); fop/fr average P and R over images and take F of the means; other kinds: mean of the maxima.
    * AP: :func:`_seism_ap` on the (mean_rec, mean_prec) curve (0 for kinds without precision).

    Returns ``{"ods": {"value", "precision", "recall", "index"}, "ois": {"value", "precision", "recall"}, "ap",
    "mean_value", "mean_prec", "mean_rec"}`` (precision / recall entries are None for other kinds). SEISM's
    ``*_ods_f.txt`` prints ``2PR/(P+R)`` at the ODS, ``*_ods.txt`` prints P and R with ``%f``, ``*_ois_f.txt`` and
    ``*_ap.txt`` use ``%.3f``, the curve file ``mean_prec mean_rec`` with 4 significant digits.
    """
    stats = seism_gather(per_image_values, kind)
    has_pr = "mean_prec" in stats
    k = _first_argmax(stats["mean_value"])
    ods = {
        "value": float(stats["mean_value"][k]),
        "precision": float(stats["mean_prec"][k]) if has_pr else None,
        "recall": float(stats["mean_rec"][k]) if has_pr else None,
        "index": k,
    }
    values = stats["values"]
    best = [_first_argmax(row) for row in values]
    rows = np.arange(values.shape[0])
    if not has_pr:
        ois = {"value": float(np.mean(values[rows, best])), "precision": None, "recall": None}
    elif kind == "fb":
        cnt_r = float(stats["cntR"][rows, best].sum())
        sum_r = float(stats["sumR"][rows, best].sum())
        cnt_p = float(stats["cntP"][rows, best].sum())
        sum_p = float(stats["sumP"][rows, best].sum())
        if sum_r == 0:
            if cnt_p != 0:
                raise ValueError("general_ois.m: Something wrong with this result")
            rec, prec = 1.0, 0.0
        elif sum_p == 0:
            if cnt_r != 0:
                raise ValueError("general_ois.m: Something wrong with this result")
            rec, prec = 0.0, 1.0
        else:
            rec, prec = cnt_r / sum_r, cnt_p / sum_p
        f = 0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec)
        ois = {"value": f, "precision": prec, "recall": rec}
    else:
        prec = float(np.mean(stats["prec"][rows, best]))
        rec = float(np.mean(stats["rec"][rows, best]))
        ois = {"value": _div(2 * (prec * rec), prec + rec), "precision": prec, "recall": rec}
    ap = _seism_ap(stats["mean_rec"], stats["mean_prec"], unique_occurrence) if has_pr else 0.0
    return {
        "ods": ods,
        "ois": ois,
        "ap": ap,
        "mean_value": stats["mean_value"],
        "mean_prec": stats.get("mean_prec"),
        "mean_rec": stats.get("mean_rec"),
    }
