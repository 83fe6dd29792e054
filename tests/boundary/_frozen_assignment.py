"""Frozen copy of the assignment kernel before the issue-16 speed-up (189b3fb), the oracle of test_assignment_frozen.

Do not edit: the current kernel must give the very same matchings (same optimum, same tie-breaking).
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _heap_push(keys, cols, size, key, col):  # pragma: no cover - compiled
    # Binary min-heap on (key, col); returns the new size.
    i = size
    keys[i] = key
    cols[i] = col
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] < keys[i] or (keys[parent] == keys[i] and cols[parent] < cols[i]):
            break
        keys[i], keys[parent] = keys[parent], keys[i]
        cols[i], cols[parent] = cols[parent], cols[i]
        i = parent
    return size + 1


@numba.njit(cache=True, nogil=True)
def _heap_pop(keys, cols, size):  # pragma: no cover - compiled
    # Removes the top (read it before calling); returns the new size.
    size -= 1
    keys[0] = keys[size]
    cols[0] = cols[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        m = left
        right = left + 1
        if right < size and (keys[right] < keys[left] or (keys[right] == keys[left] and cols[right] < cols[left])):
            m = right
        if keys[i] < keys[m] or (keys[i] == keys[m] and cols[i] < cols[m]):
            break
        keys[i], keys[m] = keys[m], keys[i]
        cols[i], cols[m] = cols[m], cols[i]
        i = m
    return size


@numba.njit(cache=True, nogil=True)
def min_cost_maximum_matching(start, adj, cost, n_cols, big, use_row):  # pragma: no cover - compiled
    # Among the maximum-cardinality matchings of the bipartite graph (rows = CSR lists, columns 0..n_cols-1), one of
    # least total cost. Hungarian method with sparse Dijkstra (shortest augmenting path per row, Johnson potentials
    # u, v with reduced costs w - u - v >= 0, zero on matched edges), on the graph extended by one private "unmatched"
    # column per row of cost `big`: with `big` larger than any total cost, the optimum matches as many rows as
    # possible, then minimises the cost. Rows are added in index order; the heap orders by (reduced distance * 2 +
    # [column is matched], column), so ties prefer a free column, then the smaller index. Only rows with
    # use_row[r] are added (whole connected components, so the others cannot interfere). Returns col4row (real
    # columns only, -1 = unmatched) and row4col.
    n_rows = start.shape[0] - 1
    n_all = n_cols + n_rows
    inf = np.int64(1) << 62
    u = np.zeros(n_rows, np.int64)
    v = np.zeros(n_all, np.int64)
    col4row = np.full(n_rows, -1, np.int64)
    row4col = np.full(n_all, -1, np.int64)
    dist = np.full(n_all, inf, np.int64)
    pred = np.empty(n_all, np.int64)
    settled = np.zeros(n_all, np.bool_)
    touched = np.empty(n_all, np.int64)
    scanned = np.empty(n_all, np.int64)
    # every row is expanded at most once per search, so a search pushes at most (edges + private columns) entries
    cap = start[n_rows] + n_rows + 1
    hkeys = np.empty(cap, np.int64)
    hcols = np.empty(cap, np.int64)
    for s in range(n_rows):
        if start[s + 1] == start[s] or not use_row[s]:
            continue  # no candidate (stays unmatched) or solved from the other side
        n_touched = 0
        n_scanned = 0
        hsize = 0
        row = s
        base = np.int64(0)
        sink = -1
        while True:
            # relax the edges of `row`, reached at distance `base`, and its private column
            for p in range(start[row], start[row + 1] + 1):
                if p < start[row + 1]:
                    c = np.int64(adj[p])
                    w = cost[p]
                else:
                    c = n_cols + row
                    w = big
                if settled[c]:
                    continue
                nd = base + w - u[row] - v[c]
                if nd < dist[c]:
                    if dist[c] == inf:
                        touched[n_touched] = c
                        n_touched += 1
                    dist[c] = nd
                    pred[c] = row
                    flag = 1 if row4col[c] >= 0 else 0
                    hsize = _heap_push(hkeys, hcols, hsize, nd * 2 + flag, c)
            # next column: smallest tentative distance not yet settled
            c = -1
            while hsize > 0:
                top = hcols[0]
                key = hkeys[0]
                hsize = _heap_pop(hkeys, hcols, hsize)
                if not settled[top] and key >> 1 == dist[top]:
                    c = top
                    break
            if c < 0:
                break  # unreachable: every row has its private column
            settled[c] = True
            scanned[n_scanned] = c
            n_scanned += 1
            if row4col[c] < 0:
                sink = c
                break
            row = row4col[c]
            base = dist[c]
        dmin = dist[sink]
        u[s] += dmin
        for k in range(n_scanned):
            c = scanned[k]
            if c == sink:
                continue
            delta = dmin - dist[c]
            u[row4col[c]] += delta
            v[c] -= delta
        c = sink
        while True:
            r = pred[c]
            prev = col4row[r]
            row4col[c] = r
            col4row[r] = c
            if r == s:
                break
            c = prev
        for k in range(n_touched):
            c = touched[k]
            dist[c] = inf
            settled[c] = False
    for r in range(n_rows):
        if col4row[r] >= n_cols:
            col4row[r] = -1
    return col4row, row4col[:n_cols].copy()
