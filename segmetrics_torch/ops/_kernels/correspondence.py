"""Compiled CPU kernels of the boundary benchmark: thinning and pixel correspondence (imported lazily).

Module-level (not nested) so that numba's on-disk cache is keyed by a stable module name. The Python wrappers and
the documentation of the rules live in :mod:`segmetrics_torch.ops.morphology` and
:mod:`segmetrics_torch.ops.matching`.

Images are handled through *padded* uint8 buffers with a one-pixel zero border, so that neighbourhood reads need no
bounds checks; that border is exactly the zero padding of ``scipy.ndimage.correlate(..., mode="constant")`` used by
``skimage.morphology.thin``.
"""

import numba
import numpy as np

# ---------------------------------------------------------------------------------------------------- thinning


@numba.njit(cache=True, nogil=True)
def neighbour_code(img, y, x):  # pragma: no cover - compiled
    # Bit k set iff the k-th neighbour is on, neighbours counted counter-clockwise from East:
    # E, NE, N, NW, W, SW, S, SE (the numbering of the lookup tables in morphology.py).
    return (
        np.int64(img[y, x + 1])
        | (np.int64(img[y - 1, x + 1]) << 1)
        | (np.int64(img[y - 1, x]) << 2)
        | (np.int64(img[y - 1, x - 1]) << 3)
        | (np.int64(img[y, x - 1]) << 4)
        | (np.int64(img[y + 1, x - 1]) << 5)
        | (np.int64(img[y + 1, x]) << 6)
        | (np.int64(img[y + 1, x + 1]) << 7)
    )


@numba.njit(cache=True, nogil=True)
def foreground_coords(img):  # pragma: no cover - compiled
    # Raster-order (row-major) coordinates of the on pixels of a padded image, in padded coordinates.
    h2, w2 = img.shape
    n = 0
    for y in range(1, h2 - 1):
        for x in range(1, w2 - 1):
            if img[y, x]:
                n += 1
    ys = np.empty(n, np.int32)
    xs = np.empty(n, np.int32)
    k = 0
    for y in range(1, h2 - 1):
        for x in range(1, w2 - 1):
            if img[y, x]:
                ys[k] = y
                xs[k] = x
                k += 1
    return ys, xs


@numba.njit(cache=True, nogil=True)
def thin_padded(img, lut1, lut2):  # pragma: no cover - compiled
    # Parallel two-subiteration thinning of a padded uint8 {0,1} image, in place, to convergence. Each subiteration
    # decides every deletion from the image as it was before that subiteration (that is what makes it "parallel"),
    # so deletions are collected first and applied after. Only on pixels are visited: the list of them is kept and
    # compacted, in raster order, after every subiteration that deleted something.
    # Returns the raster-order coordinates (padded) of the remaining pixels.
    ys, xs = foreground_coords(img)
    n = ys.shape[0]
    dels = np.empty(n, np.int32)
    while True:
        removed = 0
        for sub in range(2):
            lut = lut1 if sub == 0 else lut2
            nd = 0
            for k in range(n):
                if lut[neighbour_code(img, ys[k], xs[k])]:
                    dels[nd] = k
                    nd += 1
            if nd == 0:
                continue
            removed += nd
            for d in range(nd):
                img[ys[dels[d]], xs[dels[d]]] = 0
            m = 0
            for k in range(n):
                if img[ys[k], xs[k]]:
                    ys[m] = ys[k]
                    xs[m] = xs[k]
                    m += 1
            n = m
        if removed == 0:
            break
    return ys[:n].copy(), xs[:n].copy()


@numba.njit(cache=True, nogil=True)
def _padded_binary(m, h, w):  # pragma: no cover - compiled
    # m[:h, :w] as a {0, 1} uint8 image with a one-pixel zero border: any non-zero value is "on", so that the
    # neighbour code stays below 256 (the size of the thinning tables) whatever values arrive
    img = np.zeros((h + 2, w + 2), np.uint8)
    for y in range(h):
        for x in range(w):
            if m[y, x]:
                img[y + 1, x + 1] = 1
    return img


@numba.njit(cache=True, nogil=True, parallel=True)
def thin_batch(stack, lut1, lut2):  # pragma: no cover - compiled
    # Thin every (H, W) map of a (N, H, W) uint8 stack in place.
    n, h, w = stack.shape
    for i in numba.prange(n):
        img = _padded_binary(stack[i], h, w)
        thin_padded(img, lut1, lut2)
        stack[i] = img[1:-1, 1:-1]


# ---------------------------------------------------------------------------------------------------- matching


@numba.njit(cache=True, nogil=True)
def build_adjacency(my, mx, gidx, off_dy, off_dx, off_cost, n_off, pad):  # pragma: no cover - compiled
    # CSR lists of the GT pixels within the tolerance of each machine pixel with the cost of each pair, every list
    # ordered by (squared distance, GT row, GT column) because the offsets are. `gidx` is the GT index grid padded
    # by `pad` pixels of -1 on every side; (my, mx) are unpadded coordinates.
    n1 = my.shape[0]
    start = np.zeros(n1 + 1, np.int64)
    for i in range(n1):
        y = my[i] + pad
        x = mx[i] + pad
        c = 0
        for o in range(n_off):
            if gidx[y + off_dy[o], x + off_dx[o]] >= 0:
                c += 1
        start[i + 1] = start[i] + c
    adj = np.empty(start[n1], np.int32)
    cost = np.empty(start[n1], np.int64)
    for i in range(n1):
        y = my[i] + pad
        x = mx[i] + pad
        p = start[i]
        for o in range(n_off):
            j = gidx[y + off_dy[o], x + off_dx[o]]
            if j >= 0:
                adj[p] = j
                cost[p] = off_cost[o]
                p += 1
    return start, adj, cost


@numba.njit(cache=True, nogil=True)
def transpose_adjacency(start, adj, cost, n2):  # pragma: no cover - compiled
    # The same bipartite graph listed from the other side (lists in increasing machine index).
    n1 = start.shape[0] - 1
    t_start = np.zeros(n2 + 1, np.int64)
    for p in range(start[n1]):
        t_start[adj[p] + 1] += 1
    for j in range(n2):
        t_start[j + 1] += t_start[j]
    fill = t_start[:-1].copy()
    t_adj = np.empty(start[n1], np.int32)
    t_cost = np.empty(start[n1], np.int64)
    for i in range(n1):
        for p in range(start[i], start[i + 1]):
            j = adj[p]
            t_adj[fill[j]] = i
            t_cost[fill[j]] = cost[p]
            fill[j] += 1
    return t_start, t_adj, t_cost


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


@numba.njit(cache=True, nogil=True)
def _find(parent, x):  # pragma: no cover - compiled
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root


@numba.njit(cache=True, nogil=True)
def row_sides(start, adj, n2):  # pragma: no cover - compiled
    # For every connected component of the candidate graph, solve from its side with fewer pixels: rows that must
    # end unmatched are the expensive searches (they explore their whole component), and there are at most
    # (rows - matches) of them. Returns use-as-rows flags for the machine pixels and for the GT pixels.
    n1 = start.shape[0] - 1
    parent = np.arange(n1 + n2)
    for i in range(n1):
        for p in range(start[i], start[i + 1]):
            a = _find(parent, i)
            b = _find(parent, n1 + adj[p])
            if a != b:
                parent[max(a, b)] = min(a, b)
    count1 = np.zeros(n1 + n2, np.int64)
    count2 = np.zeros(n1 + n2, np.int64)
    has_edge2 = np.zeros(n2, np.bool_)
    for i in range(n1):
        if start[i + 1] > start[i]:
            count1[_find(parent, i)] += 1
        for p in range(start[i], start[i + 1]):
            has_edge2[adj[p]] = True
    for j in range(n2):
        if has_edge2[j]:
            count2[_find(parent, n1 + j)] += 1
    use1 = np.zeros(n1, np.bool_)
    use2 = np.zeros(n2, np.bool_)
    for i in range(n1):
        r = _find(parent, i)
        use1[i] = count1[r] <= count2[r]
    for j in range(n2):
        r = _find(parent, n1 + j)
        use2[j] = count1[r] > count2[r]
    return use1, use2


@numba.njit(cache=True, nogil=True)
def correspond(my, mx, gidx, n2, off_dy, off_dx, off_cost, n_off, pad, big):  # pragma: no cover - compiled
    # One-to-one matching between machine pixels (my, mx) and the GT pixels of the index grid `gidx`: maximum
    # cardinality, then least total cost (see min_cost_maximum_matching). Returns the partner arrays
    # (-1 = unmatched) of the machine and the GT pixels.
    start, adj, cost = build_adjacency(my, mx, gidx, off_dy, off_dx, off_cost, n_off, pad)
    n1 = my.shape[0]
    use1, use2 = row_sides(start, adj, n2)
    match1, match2 = min_cost_maximum_matching(start, adj, cost, n2, big, use1)
    if use2.any():
        t_start, t_adj, t_cost = transpose_adjacency(start, adj, cost, n2)
        b2, _b1 = min_cost_maximum_matching(t_start, t_adj, t_cost, n1, big, use2)
        for j in range(n2):
            if use2[j]:
                match2[j] = b2[j]
                if b2[j] >= 0:
                    match1[b2[j]] = j
    return match1, match2


@numba.njit(cache=True, nogil=True, parallel=True)
def gt_index_grids(gts, n_gt, dims, pad):  # pragma: no cover - compiled
    # Index grids of the annotators' on pixels, raster order, padded by `pad` pixels of -1 on every side:
    # (B, A, H + 2 pad, W + 2 pad) int32, plus the pixel count of every annotator (B, A).
    nb, na, hh, ww = gts.shape
    grids = np.full((nb, na, hh + 2 * pad, ww + 2 * pad), -1, np.int32)
    counts = np.zeros((nb, na), np.int64)
    for task in numba.prange(nb * na):
        b = task // na
        a = task % na
        if a >= n_gt[b]:
            continue
        n = 0
        for y in range(dims[b, 0]):
            for x in range(dims[b, 1]):
                if gts[b, a, y, x]:
                    grids[b, a, y + pad, x + pad] = n
                    n += 1
        counts[b, a] = n
    return grids, counts


@numba.njit(cache=True, nogil=True)
def level_counts(img, grids, n2s, n_gt, lut1, lut2, do_thin, off_dy, off_dx, off_cost, n_off, pad, big, out, b, k):
    # pragma: no cover - compiled
    # Counts of one machine map (padded uint8 `img`) against the n_gt annotators of image b: writes
    # out[0, b, k] = cntR (matched GT pixels summed over annotators), out[1, b, k] = cntP (machine pixels matched
    # in at least one annotator), out[2, b, k] = sumP (machine pixels after thinning).
    if do_thin:
        ys, xs = thin_padded(img, lut1, lut2)
    else:
        ys, xs = foreground_coords(img)
    n1 = ys.shape[0]
    my = ys - 1
    mx = xs - 1
    acc = np.zeros(n1, np.bool_)
    cnt_r = 0
    for a in range(n_gt):
        match1, _ = correspond(my, mx, grids[a], n2s[a], off_dy, off_dx, off_cost, n_off, pad, big)
        for i in range(n1):
            if match1[i] >= 0:
                acc[i] = True
                cnt_r += 1
    cnt_p = 0
    for i in range(n1):
        if acc[i]:
            cnt_p += 1
    out[0, b, k] = cnt_r
    out[1, b, k] = cnt_p
    out[2, b, k] = n1


@numba.njit(cache=True, nogil=True, parallel=True)
def soft_map_counts(pb, thresholds, tasks, dims, gts, n_gt, lut1, lut2, do_thin, off_dy, off_dx, off_cost, n_off, pad,
                    big):
    # pragma: no cover - compiled
    # Soft maps (B, H, W) float64 (padded to a common size; dims[b] = true (H, W)) at thresholds (K,): machine map
    # `pb >= t`. Returns (3, B, K) int64 [cntR, cntP, sumP], filled for the (image, threshold) pairs of `tasks`
    # (T, 2), one parallel task each.
    nb = pb.shape[0]
    nk = thresholds.shape[0]
    grids, n2s = gt_index_grids(gts, n_gt, dims, pad)
    out = np.zeros((3, nb, nk), np.int64)
    for task in numba.prange(tasks.shape[0]):
        b = tasks[task, 0]
        k = tasks[task, 1]
        h = dims[b, 0]
        w = dims[b, 1]
        t = thresholds[k]
        img = np.zeros((h + 2, w + 2), np.uint8)
        for y in range(h):
            for x in range(w):
                if pb[b, y, x] >= t:
                    img[y + 1, x + 1] = 1
        level_counts(
            img, grids[b], n2s[b], n_gt[b], lut1, lut2, do_thin,
            off_dy[b], off_dx[b], off_cost[b], n_off[b], pad, big, out, b, k,
        )
    return out


@numba.njit(cache=True, nogil=True, parallel=True)
def stack_counts(maps, dims, gts, n_gt, lut1, lut2, do_thin, off_dy, off_dx, off_cost, n_off, pad, big):
    # pragma: no cover - compiled
    # Binary machine maps (B, K, H, W) uint8, one per level (e.g. the boundaries of K segmentations).
    nb = maps.shape[0]
    nk = maps.shape[1]
    grids, n2s = gt_index_grids(gts, n_gt, dims, pad)
    out = np.zeros((3, nb, nk), np.int64)
    for task in numba.prange(nb * nk):
        b = task // nk
        k = task % nk
        h = dims[b, 0]
        w = dims[b, 1]
        img = _padded_binary(maps[b, k], h, w)
        level_counts(
            img, grids[b], n2s[b], n_gt[b], lut1, lut2, do_thin,
            off_dy[b], off_dx[b], off_cost[b], n_off[b], pad, big, out, b, k,
        )
    return out
