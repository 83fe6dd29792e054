"""Meta-measures (how well a measure tells good results from bad ones) and the baselines they use.

:mod:`.baselines`: the SEISM quadtree, a seeded random hierarchy, generic and noise foreground maps, the
swapped-image pairing, the morphological ground-truth perturbation. :mod:`.metameasures`: SIHD, SABD, SISD
(Pont-Tuset & Marques, CVPR 2013) and the generic-map, noise, ground-truth-switch and annotation-error tests
(Margolin et al., CVPR 2014; Fan et al., ICCV 2017 / IJCAI 2018).
"""

from .baselines import (
    centered_circle_map,
    centered_gaussian_map,
    gaussian_noise_maps,
    grid_oversegmentation,
    match_size,
    perturb_ground_truth,
    quadtree_partition,
    quadtree_partitions,
    quadtree_ucm,
    random_hierarchy_partition,
    random_hierarchy_ucm,
    switch_pairing,
)
from .metameasures import (
    AnnotationErrorResult,
    Measure,
    RateResult,
    SIHDResult,
    annotation_error_test,
    as_measure,
    generic_map_test,
    gt_switch_test,
    noise_test,
    sabd,
    shared_computations,
    sihd,
    sihd_from_values,
    sisd,
    spearman_rho,
)

__all__ = [
    "AnnotationErrorResult",
    "Measure",
    "RateResult",
    "SIHDResult",
    "annotation_error_test",
    "as_measure",
    "centered_circle_map",
    "centered_gaussian_map",
    "gaussian_noise_maps",
    "generic_map_test",
    "grid_oversegmentation",
    "gt_switch_test",
    "match_size",
    "noise_test",
    "perturb_ground_truth",
    "quadtree_partition",
    "quadtree_partitions",
    "quadtree_ucm",
    "random_hierarchy_partition",
    "random_hierarchy_ucm",
    "sabd",
    "shared_computations",
    "sihd",
    "sihd_from_values",
    "sisd",
    "spearman_rho",
    "switch_pairing",
]
