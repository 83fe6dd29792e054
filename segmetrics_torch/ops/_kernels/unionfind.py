"""Union-find root lookup with path compression (shared by the correspondence and labelling kernels)."""

import numba


@numba.njit(cache=True, nogil=True)
def find(parent, x):  # pragma: no cover - compiled
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root
