"""The assignment kernel gives the very matchings of its frozen pre-speed-up copy (same optimum, same ties).

The solver's pruning, packed heap and first-search shortcut (issue 16) must not change which optimum is found:
``cntP`` depends on which machine pixels are matched, not only on how many. Random sparse graphs with few distinct
costs (many ties), rows without edges and rows left out (``use_row``) are compared entry by entry, for both the
boundary use (``big`` above any total cost) and the weighted-matching use (``big`` = the largest weight).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from segmetrics_torch.ops._kernels.assignment import min_cost_maximum_matching
from tests.boundary._frozen_assignment import min_cost_maximum_matching as frozen


@st.composite
def graphs(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n_rows = draw(st.integers(1, 60))
    n_cols = draw(st.integers(1, 60))
    density = draw(st.floats(0.02, 0.5))
    n_costs = draw(st.sampled_from([1, 2, 3, 10, 500]))
    degree = rng.binomial(n_cols, density, n_rows)
    start = np.zeros(n_rows + 1, np.int64)
    start[1:] = np.cumsum(degree)
    adj = np.concatenate([np.sort(rng.choice(n_cols, d, replace=False)) for d in degree] + [np.zeros(0, int)])
    if draw(st.booleans()):  # lists in arbitrary order, as the GT-side lists or the weighted tables
        for r in range(n_rows):
            rng.shuffle(adj[start[r] : start[r + 1]])
    cost = rng.integers(1, n_costs + 1, len(adj)) * 100
    use = rng.random(n_rows) < draw(st.sampled_from([1.0, 0.7]))
    big = (int(cost.max(initial=1)) + 1) * (n_rows + n_cols + 1) if draw(st.booleans()) else int(cost.max(initial=1))
    return start, adj.astype(np.int32), cost.astype(np.int64), n_cols, big, use


@settings(max_examples=300)
@given(graphs())
def test_same_matching_as_frozen_kernel(graph):
    start, adj, cost, n_cols, big, use = graph
    col4row, row4col = min_cost_maximum_matching(start, adj, cost, n_cols, big, use)
    ref_col4row, ref_row4col = frozen(start, adj, cost, n_cols, big, use)
    np.testing.assert_array_equal(col4row, ref_col4row)
    np.testing.assert_array_equal(row4col, ref_row4col)
