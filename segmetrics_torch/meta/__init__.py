"""Meta-measures and the baselines they use (issue 8 builds the meta-measures; the quadtree baseline is here)."""

from .baselines import quadtree_partition, quadtree_ucm

__all__ = ["quadtree_partition", "quadtree_ucm"]
