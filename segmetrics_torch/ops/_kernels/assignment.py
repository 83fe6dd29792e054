"""Compiled exact assignment: a least-cost maximum-cardinality matching of a sparse bipartite graph.

Behind :mod:`segmetrics_torch.ops.matching` (boundary pixel correspondence) and
:func:`segmetrics_torch.ops.contingency.max_matching_weights` (maximum-weight region matchings).
"""

import numba
import numpy as np

_COLUMN = np.int64(0xFFFFFFFF)  # the column bits of a packed edge (pack_edge)
_COST_LIMIT = np.int64(1) << 31


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
def _packed_sift_up(keys, pos, i, entry, col_mask):  # pragma: no cover - compiled
    # 4-ary min-heap of packed int64 entries ((key << shift) | column: one comparison orders by key, then column),
    # with the position of every column's entry in pos[column]: places `entry` at slot i or above (a new entry at
    # i = size, or a lowered key of the entry at i = pos[column]).
    while i > 0:
        parent = (i - 1) >> 2
        up = keys[parent]
        if up < entry:
            break
        keys[i] = up
        pos[up & col_mask] = i
        i = parent
    keys[i] = entry
    pos[entry & col_mask] = i


@numba.njit(cache=True, nogil=True)
def _packed_pop(keys, pos, size, col_mask):  # pragma: no cover - compiled
    # Removes the top (read it before calling); returns the new size.
    size -= 1
    last = keys[size]
    i = 0
    while True:
        first = 4 * i + 1
        if first >= size:
            break
        m = first
        low = keys[first]
        for q in range(first + 1, min(first + 4, size)):
            if keys[q] < low:
                low = keys[q]
                m = q
        if last < low:
            break
        keys[i] = low
        pos[low & col_mask] = i
        i = m
    keys[i] = last
    pos[last & col_mask] = i
    return size


@numba.njit(cache=True, nogil=True)
def assign_rows(start, edges, n_cols, big, use_row, work, hkeys, hcols, watch, watch_cols, deficit):
    # pragma: no cover - compiled
    # Among the maximum-cardinality matchings of the bipartite graph (rows = CSR lists of packed edges
    # (cost << 32) | column, see pack_edge; columns 0..n_cols-1), one of
    # least total cost. Hungarian method with sparse Dijkstra (shortest augmenting path per row, Johnson potentials
    # u, v with reduced costs w - u - v >= 0, zero on matched edges), on the graph extended by one private "unmatched"
    # column per row of cost `big`: with `big` larger than any total cost, the optimum matches as many rows as
    # possible, then minimises the cost. Rows are added in index order; the heap orders by (reduced distance * 2 +
    # [column is matched], column), so ties prefer a free column, then the smaller index. Only rows with
    # use_row[r] are added (whole connected components, so the others cannot interfere).
    #
    # Pruning (exact): a search stops at the first free column it settles, and the heap always holds the best entry
    # (key, column) of a free column seen so far, so an entry above that one is never popped. Such entries are not
    # pushed (and their distance is not recorded: a later, better entry is still pushed, with the same predecessor
    # as without pruning, and a never-settled column's distance plays no role). The matching, the potentials and
    # the tie-breaking are those of the search without pruning. A row's private column is relaxed before its edges
    # (only that row reaches it, so the order changes no predecessor, and the heap order does not depend on the
    # order of pushes): the first one, of the new row s (u[s] = v = 0 there), bounds every key pushed in the search
    # by 2 * big, which lets a heap entry be one packed int64. The packed heap keeps one entry per column: a shorter
    # distance lowers the column's entry in place (its slot in `pos`) instead of pushing a second one, so pops never
    # meet stale entries (a third of them before) and the heap stays smaller; it pops the same (key, column)
    # sequence, the smallest live entry each time.
    #
    # Early stop (with a non-empty `watch`; an empty one solves every row): when only the fate of some rows or
    # columns is wanted (watch[i] true; i a row, or a column with watch_cols), the rows are added only until it is
    # decided, and nothing else is then final. It is decided because a row left on its private column stays there
    # (only that row reaches it, so no later augmenting path passes through it) and a matched real column stays
    # matched (augmenting paths re-match every column on them): for watched rows, once the last of them has been
    # added and none holds a real column; for watched columns, once all are matched. With watched rows, a known
    # `deficit` (>= 0: the rows a maximum matching leaves unmatched, every row having a candidate and use_row) stops
    # it earlier: each search either matches one more real column or leaves one more row on its private column, so
    # once `deficit` rows are on theirs, every later search augments -- no held column is given up and every row not
    # yet added will be matched. Returns that first row not added (n_rows when all were, or when the rows left
    # were not decided); rows from it on count as matched.
    #
    # Workspace (caller-allocated, reused between calls; only the first entries are used): `work` int64
    # (8 * (n_rows + n_cols) + 2 * n_rows) or larger; hkeys, hcols int64 of at least (edges + n_rows + 1).
    # Writes col4row (real columns only, -1 = unmatched) into work[0:n_rows] and row4col into
    # work[n_rows:n_rows + n_cols]; see min_cost_maximum_matching for the allocating form.
    n_rows = start.shape[0] - 1
    n_all = n_cols + n_rows
    inf = np.int64(1) << 62
    col4row = work[0:n_rows]
    row4col = work[n_rows : n_rows + n_all]
    u = work[n_rows + n_all : 2 * n_rows + n_all]
    v = work[2 * n_rows + n_all : 2 * n_rows + 2 * n_all]
    dist = work[2 * n_rows + 2 * n_all : 2 * n_rows + 3 * n_all]
    pred = work[2 * n_rows + 3 * n_all : 2 * n_rows + 4 * n_all]
    scanned_dist = work[2 * n_rows + 4 * n_all : 2 * n_rows + 5 * n_all]
    touched = work[2 * n_rows + 5 * n_all : 2 * n_rows + 6 * n_all]
    scanned = work[2 * n_rows + 6 * n_all : 2 * n_rows + 7 * n_all]
    pos = work[2 * n_rows + 7 * n_all : 2 * n_rows + 8 * n_all]
    for r in range(n_rows):
        col4row[r] = -1
        u[r] = 0
    for c in range(n_all):
        row4col[c] = -1
        v[c] = 0
        dist[c] = inf
    # heap entries packed into one int64 when (key << shift) | column cannot overflow: every pushed key is at most
    # 2 * big + 1 (see the pruning note), so that holds unless big is near 2**(62 - shift)
    shift = np.int64(1)
    while (np.int64(1) << shift) <= n_all:
        shift += 1
    col_mask = (np.int64(1) << shift) - 1
    packed = shift < 60 and 2 * big + 2 < (np.int64(1) << (61 - shift))
    # the early stop: watched rows / columns still to be decided (rows: not yet added, or holding a real column)
    pending = 0
    last_watched = -1
    stop = watch.shape[0] > 0
    if stop:
        for i in range(watch.shape[0]):
            if watch[i]:
                pending += 1
                last_watched = i
    watched_rows = not watch_cols
    holding = 0  # watched rows that hold a real column
    dropped = 0  # rows on their private column
    rest = n_rows
    for s in range(n_rows):
        if stop:
            if watched_rows:
                if s > last_watched and holding == 0:
                    break
                if dropped == deficit:
                    rest = s
                    break
            elif pending == 0:
                break
        if start[s + 1] == start[s] or not use_row[s]:
            continue  # no candidate (stays unmatched) or solved from the other side
        # Shortcut (exact): the first column settled is the least (key, column) among the new row's candidates, all
        # with u[s] = 0. When that one is free, the search ends there: match it directly, without the heap.
        bkey = np.int64(2) * big  # the private column of s: distance big, free
        bcol = n_cols + s
        for p in range(start[s], start[s + 1]):
            e = edges[p]
            c = e & _COLUMN
            key = ((e >> 32) - v[c]) * 2 + (1 if row4col[c] >= 0 else 0)
            if key < bkey or (key == bkey and c < bcol):
                bkey = key
                bcol = c
        if bkey & 1 == 0:
            u[s] = bkey >> 1
            row4col[bcol] = s
            col4row[s] = bcol
            if stop:
                if bcol >= n_cols:
                    dropped += 1
                elif watched_rows:
                    holding += watch[s]
                else:
                    pending -= watch[bcol]
            continue
        n_touched = 0
        n_scanned = 0
        hsize = np.int64(0)
        row = s
        base = np.int64(0)
        sink = -1
        bkey = inf  # best (key, column) of a free column pushed in this search
        bcol = n_all
        while True:
            # relax the private column of `row`, reached at distance `base`, then its edges (a settled column has
            # dist -1, below any distance, so it is never relaxed again)
            reach = base - u[row]
            first = start[row]
            for p in range(first - 1, start[row + 1]):
                if p < first:  # the private column first (a test on the loop index, not on loaded data)
                    c = n_cols + row
                    nd = reach + big - v[c]
                else:
                    e = edges[p]
                    c = e & _COLUMN
                    nd = reach + (e >> 32) - v[c]
                if nd < dist[c]:
                    flag = 1 if row4col[c] >= 0 else 0
                    key = nd * 2 + flag
                    if key > bkey or (key == bkey and c > bcol):
                        continue  # never popped before the sink: pruned
                    if flag == 0:
                        bkey = key
                        bcol = c
                    if packed:
                        if dist[c] == inf:  # new in this search
                            _packed_sift_up(hkeys, pos, hsize, (key << shift) | c, col_mask)
                            hsize += 1
                        else:  # in the heap (dist is finite from a push until the column is settled)
                            _packed_sift_up(hkeys, pos, pos[c], (key << shift) | c, col_mask)
                    else:
                        hsize = _heap_push(hkeys, hcols, hsize, key, c)
                    if dist[c] == inf:
                        touched[n_touched] = c
                        n_touched += 1
                    dist[c] = nd
                    pred[c] = row
            # next column: smallest tentative distance not yet settled
            c = np.int64(-1)
            while hsize > 0:
                if packed:
                    top = hkeys[0] & col_mask
                    key = hkeys[0] >> shift
                    hsize = _packed_pop(hkeys, pos, hsize, col_mask)
                else:
                    top = hcols[0]
                    key = hkeys[0]
                    hsize = _heap_pop(hkeys, hcols, hsize)
                if key >> 1 == dist[top]:  # not stale, not settled (always so in the packed heap)
                    c = top
                    break
            if c < 0:
                break  # unreachable: every row has its private column
            base = dist[c]
            dist[c] = -1  # settled
            scanned[n_scanned] = c
            scanned_dist[n_scanned] = base
            n_scanned += 1
            if row4col[c] < 0:
                sink = c
                break
            row = row4col[c]
        dmin = base
        u[s] += dmin
        for k in range(n_scanned):
            c = scanned[k]
            if c == sink:
                continue
            delta = dmin - scanned_dist[k]
            u[row4col[c]] += delta
            v[c] -= delta
        if stop:
            dropped += sink >= n_cols
            if watched_rows:
                # s ends on a real column unless the sink is its own private one; the row whose private column is
                # the sink (another row) gives up its real column
                if sink != n_cols + s:
                    holding += watch[s]
                    if sink >= n_cols:
                        holding -= watch[sink - n_cols]
            elif sink < n_cols:
                pending -= watch[sink]
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
    for r in range(n_rows):
        if col4row[r] >= n_cols:
            col4row[r] = -1
    return rest


@numba.njit(cache=True, nogil=True)
def pack_edge(column, cost):  # pragma: no cover - compiled
    # One edge of assign_rows' lists: (cost << 32) | column, for 0 <= cost < 2**31 and 0 <= column < 2**32 (one load
    # per relaxed edge instead of two)
    return (np.int64(cost) << 32) | np.int64(column)


@numba.njit(cache=True, nogil=True)
def min_cost_maximum_matching(start, adj, cost, n_cols, big, use_row):  # pragma: no cover - compiled
    # The allocating form of assign_rows, on separate column and cost lists (costs 0 <= cost < 2**31, else a
    # ValueError): returns col4row (real columns only, -1 = unmatched) and row4col.
    n_rows = start.shape[0] - 1
    edges = np.empty(start[n_rows], np.int64)
    for p in range(start[n_rows]):
        if cost[p] < 0 or cost[p] >= _COST_LIMIT:
            raise ValueError("min_cost_maximum_matching: every cost must be in [0, 2**31)")
        edges[p] = pack_edge(adj[p], cost[p])
    work = np.empty(8 * (n_rows + n_cols) + 2 * n_rows, np.int64)
    cap = start[n_rows] + n_rows + 1
    hkeys = np.empty(cap, np.int64)
    hcols = np.empty(cap, np.int64)
    assign_rows(
        start, edges, n_cols, big, use_row, work, hkeys, hcols, np.zeros(0, np.bool_), np.bool_(False), np.int64(-1)
    )
    return work[0:n_rows].copy(), work[n_rows : n_rows + n_cols].copy()
