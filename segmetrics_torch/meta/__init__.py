"""Meta-measures (how well a measure tells good results from bad ones) and the baselines they use.

:mod:`.baselines`: the SEISM quadtree, a seeded random hierarchy, generic and noise foreground maps, the
swapped-image pairing, the morphological ground-truth perturbation. :mod:`.metameasures`: SIHD, SABD, SISD
(Pont-Tuset & Marques, CVPR 2013) and the generic-map, noise, ground-truth-switch and annotation-error tests
(Margolin et al., CVPR 2014; Fan et al., ICCV 2017 / IJCAI 2018).
"""

from . import baselines, metameasures
from .baselines import *  # noqa: F403  (each submodule's __all__ lists its public names)
from .metameasures import *  # noqa: F403

__all__ = [*baselines.__all__, *metameasures.__all__]
