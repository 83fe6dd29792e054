"""Compiled boundary correspondence of the BSDS benchmark: per (image, level) matched-pixel counts.

Behind :func:`segmetrics_torch.ops.matching.correspondence_counts` and
:func:`segmetrics_torch.ops.matching.correspond_pixels`, which document the rule. Every machine map is (optionally)
thinned, its pixels are matched one-to-one with each annotator's within the tolerance by the exact assignment of
:mod:`.assignment`, and the matches are counted. Images are handled through padded uint8 buffers (see
:mod:`.thinning`). The batched kernels list each level's candidates (``candidate_lists``, which skips the pixels
with no annotator pixel within the tolerance; soft maps list them once per image for the thin pixels of all its
levels, ``indexed_candidates``). Their counts need the exact assignment only in part: a maximum-cardinality matching
of every annotator's graph gives cntR and the machine pixels matched in every maximum matching (``_certain_rows``),
and the components where some other pixel is not yet matched by any annotator are solved one at a time, each whole
and as ``correspond`` would (``_solve_uncertain``, ``_match_annotator``). ``correspond`` (one pair of maps) solves
the whole graph at once, with the same matching; ``annotator_counts`` counts from it.
"""

import numba
import numpy as np

from .assignment import assign_rows, min_cost_maximum_matching, pack_edge
from .thinning import foreground_coords, padded_binary, thin_listed
from .unionfind import find


@numba.njit(cache=True, nogil=True)
def flat_offsets(off_dy, off_dx, n_off, grid_width):  # pragma: no cover - compiled
    # The offsets as steps in a flattened index grid of `grid_width` columns (one add per candidate cell).
    lin = np.empty(n_off, np.int64)
    for o in range(n_off):
        lin[o] = np.int64(off_dy[o]) * grid_width + off_dx[o]
    return lin


@numba.njit(cache=True, nogil=True)
def _list_cell(gflat, base, lin, off_cost, n_off, adj, cost, p):  # pragma: no cover - compiled
    # Appends at adj[p:] / cost[p:] the GT pixels (and their costs) at the n_off offsets `lin` of the flat cell
    # `base`; returns the new end. Every cell is stored and p advances only past GT pixels (no branch: ~1 in 8 cells
    # is one, so a test would be mispredicted about once per hit).
    for o in range(n_off):
        j = gflat[base + lin[o]]
        adj[p] = j
        cost[p] = off_cost[o]
        p += j >= 0
    return p


@numba.njit(cache=True, nogil=True)
def candidate_lists(my, mx, gflat, grid_width, lin, off_cost, n_off, pad, rows_at, start, adj, cost):
    # pragma: no cover - compiled
    # CSR lists of the GT pixels within the tolerance of each machine pixel that has some, with the cost of each
    # pair, every list ordered by (squared distance, GT row, GT column) because the offsets are. `gflat` is a GT
    # index grid of gt_index_grids, padded by `pad` pixels and flattened (`grid_width` columns, `lin` the offsets
    # as flat steps, see flat_offsets); (my, mx) are unpadded coordinates. A cell of -1 has no GT pixel within the
    # tolerance: its pixel is skipped. Fills the caller's buffers -- rows_at (the machine index of every listed
    # pixel, increasing), start (n + 1), adj and cost (at least n_near * n_off + 1 entries) -- and returns n.
    p = np.int64(0)
    n = 0
    start[0] = 0
    for i in range(my.shape[0]):
        base = (np.int64(my[i]) + pad) * grid_width + mx[i] + pad
        if gflat[base] == -1:
            continue
        p = _list_cell(gflat, base, lin, off_cost, n_off, adj, cost, p)
        if p > start[n]:
            rows_at[n] = i
            n += 1
            start[n] = p
    return n


@numba.njit(cache=True, nogil=True)
def build_adjacency(my, mx, gidx, off_dy, off_dx, off_cost, n_off, pad):  # pragma: no cover - compiled
    # CSR lists of candidate_lists for every machine pixel (an empty list where it has none): start (n1 + 1), adj,
    # cost. `gidx` is a GT index grid of gt_index_grids, padded by `pad` pixels.
    n1 = my.shape[0]
    width = gidx.shape[1]
    gflat = gidx.reshape(-1)
    near = 0
    for i in range(n1):
        if gidx[my[i] + pad, mx[i] + pad] != -1:
            near += 1
    rows_at = np.empty(near, np.int64)
    compact = np.empty(near + 1, np.int64)
    adj = np.empty(near * n_off + 1, np.int32)
    cost = np.empty(near * n_off + 1, np.int64)
    lin = flat_offsets(off_dy, off_dx, n_off, width)
    n = candidate_lists(my, mx, gflat, width, lin, off_cost, n_off, pad, rows_at, compact, adj, cost)
    start = np.zeros(n1 + 1, np.int64)
    q = 0
    for i in range(n1):
        if q < n and rows_at[q] == i:
            q += 1
        start[i + 1] = compact[q]
    return start, adj[: compact[n]], cost[: compact[n]]


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
def row_sides(start, adj, n2):  # pragma: no cover - compiled
    # For every connected component of the candidate graph, solve from its side with fewer pixels: rows that must
    # end unmatched are the expensive searches (they explore their whole component), and there are at most
    # (rows - matches) of them. Returns use-as-rows flags for the machine pixels and for the GT pixels.
    n1 = start.shape[0] - 1
    parent = np.arange(n1 + n2)
    for i in range(n1):
        for p in range(start[i], start[i + 1]):
            a = find(parent, i)
            b = find(parent, n1 + adj[p])
            if a != b:
                parent[max(a, b)] = min(a, b)
    count1 = np.zeros(n1 + n2, np.int64)
    count2 = np.zeros(n1 + n2, np.int64)
    has_edge2 = np.zeros(n2, np.bool_)
    for i in range(n1):
        if start[i + 1] > start[i]:
            count1[find(parent, i)] += 1
        for p in range(start[i], start[i + 1]):
            has_edge2[adj[p]] = True
    for j in range(n2):
        if has_edge2[j]:
            count2[find(parent, n1 + j)] += 1
    use1 = np.zeros(n1, np.bool_)
    use2 = np.zeros(n2, np.bool_)
    for i in range(n1):
        r = find(parent, i)
        use1[i] = count1[r] <= count2[r]
    for j in range(n2):
        r = find(parent, n1 + j)
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
def gt_index_grids(gts, n_gt, dims, pad, off_dy, off_dx, n_off):  # pragma: no cover - compiled
    # Index grids of the annotators' on pixels, raster order, padded by `pad` pixels on every side:
    # (B, A, H + 2 pad, W + 2 pad) int32, plus the pixel count of every annotator (B, A); see index_grid. One
    # parallel task per (image, annotator).
    nb, na, hh, ww = gts.shape
    grids = np.full((nb, na, hh + 2 * pad, ww + 2 * pad), -1, np.int32)
    counts = np.zeros((nb, na), np.int64)
    for task in numba.prange(nb * na):
        b = task // na
        a = task % na
        if a < n_gt[b]:
            counts[b, a] = index_grid(gts, b, a, dims, pad, off_dy, off_dx, n_off, grids[b, a])
    return grids, counts


@numba.njit(cache=True, nogil=True)
def index_grids_of(pairs, gts, dims, pad, off_dy, off_dx, n_off, grids, counts):  # pragma: no cover - compiled
    # gt_index_grids for the (image, annotator) pairs `pairs` (P, 2) only, into grids (filled with -1) and counts:
    # the serial form, for callers that spread the pairs over threads themselves.
    for i in range(pairs.shape[0]):
        b = pairs[i, 0]
        a = pairs[i, 1]
        counts[b, a] = index_grid(gts, b, a, dims, pad, off_dy, off_dx, n_off, grids[b, a])


@numba.njit(cache=True, nogil=True)
def index_grid(gts, b, a, dims, pad, off_dy, off_dx, n_off, grid):  # pragma: no cover - compiled
    # Annotator a of image b as an index grid `grid` (H + 2 pad, W + 2 pad) int32, given filled with -1: its on
    # pixels numbered in raster order, padded by `pad` pixels on every side; returns their count. Cells without a GT
    # pixel hold -2 where a machine pixel would have some GT pixel within the tolerance (image b's offsets
    # off_dy[b, :n_off[b]], off_dx[b, :n_off[b]]) and -1 where it would have none, so that candidate_lists skips
    # those machine pixels at once (most pixels of a fine level lie far from every annotator's boundary). The marks
    # are written row by row: for every row offset dy, the cells from dx_min(dy) to dx_max(dy) (the offsets of a
    # disk fill that interval; a larger mark would only cost time, never change a count).
    # per row offset dy in [-pad, pad]: the interval of column offsets
    dx_lo = np.full(2 * pad + 1, 1, np.int64)
    dx_hi = np.full(2 * pad + 1, 0, np.int64)  # empty (lo > hi) unless some offset has this dy
    for o in range(min(n_off[b], off_dy.shape[1])):
        if abs(off_dy[b, o]) > pad or abs(off_dx[b, o]) > pad:
            continue  # outside the padding (not so from offsets_within): no cell to mark, none to read
        i = off_dy[b, o] + pad
        if dx_lo[i] > dx_hi[i]:
            dx_lo[i] = off_dx[b, o]
            dx_hi[i] = off_dx[b, o]
        else:
            dx_lo[i] = min(dx_lo[i], off_dx[b, o])
            dx_hi[i] = max(dx_hi[i], off_dx[b, o])
    n = 0
    for y in range(dims[b, 0]):
        for x in range(dims[b, 1]):
            if gts[b, a, y, x]:
                # a machine pixel at cell (g - offset) has the GT pixel g among its candidates
                for i in range(2 * pad + 1):
                    row = grid[y + 2 * pad - i]
                    for xx in range(x + pad - dx_hi[i], x + pad - dx_lo[i] + 1):
                        row[xx] = row[xx] if row[xx] >= 0 else -2
                grid[y + pad, x + pad] = n  # numbered after its own marks (which cover its cell)
                n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _match_annotator(
    n_rows, rows_at, beg, end, adj, cost, n2, big, acc, unc, work, hkeys, hcols, lstart, ledges, ones, watch
):
    # pragma: no cover - compiled
    # The matching of one annotator's graph (rows 0..n_rows-1 = its active machine pixels, machine indices rows_at,
    # lists adj / cost[beg[r]:end[r]]; columns = GT pixels 0..n2-1), one connected component at a time, each
    # solved from its side with fewer pixels (machine side on a tie), exactly as correspond() solves the whole graph:
    # components do not interact, and the relative order of rows and columns inside a component (the solver's
    # tie-breaking) is kept. Only the components with a row that is uncertain (unc) and not yet in acc are solved,
    # watching those rows (the solver stops once they are decided); marks acc[machine index] of the matched ones.
    n_nodes = n_rows + n2
    parent = np.arange(n_nodes)
    has_col = np.zeros(n2, np.bool_)
    for r in range(n_rows):
        root = find(parent, r)
        for p in range(beg[r], end[r]):
            has_col[adj[p]] = True
            if parent[n_rows + adj[p]] == root:
                continue  # already in this row's set (the common case: neighbouring rows share their columns)
            b = find(parent, n_rows + adj[p])
            if root != b:
                low = min(root, b)
                parent[max(root, b)] = low
                root = low
    # components numbered by their first row; rows and columns grouped per component, in increasing index
    local = np.empty(n_nodes, np.int64)  # the root of every row / used column, then its position in its component
    for r in range(n_rows):
        local[r] = find(parent, r)
    for j in range(n2):
        if has_col[j]:
            local[n_rows + j] = find(parent, n_rows + j)
    # only the components to solve are numbered: those with an uncertain row not yet in acc (the components of one
    # annotator share no machine pixel, so solving one cannot change which others qualify)
    comp = np.full(n_nodes, -1, np.int64)  # component number of a root
    for r in range(n_rows):
        if unc[r] and not acc[rows_at[r]]:
            comp[local[r]] = -2
    n_comp = 0
    for r in range(n_rows):
        if comp[local[r]] == -2:
            comp[local[r]] = n_comp
            n_comp += 1
    row_start = np.zeros(n_comp + 1, np.int64)
    col_start = np.zeros(n_comp + 1, np.int64)
    for r in range(n_rows):
        parent[r] = comp[local[r]]  # from here on parent[] holds component numbers (< 0: not solved)
        row_start[parent[r] + 1] += parent[r] >= 0
    for j in range(n2):
        if has_col[j]:
            parent[n_rows + j] = comp[local[n_rows + j]]
            col_start[parent[n_rows + j] + 1] += parent[n_rows + j] >= 0
    for k in range(n_comp):
        row_start[k + 1] += row_start[k]
        col_start[k + 1] += col_start[k]
    row_fill = row_start[:n_comp].copy()
    col_fill = col_start[:n_comp].copy()
    comp_rows = np.empty(n_rows, np.int64)
    for r in range(n_rows):
        k = parent[r]
        if k >= 0:
            local[r] = row_fill[k] - row_start[k]
            comp_rows[row_fill[k]] = r
            row_fill[k] += 1
    for j in range(n2):
        if has_col[j]:
            k = parent[n_rows + j]
            if k >= 0:
                local[n_rows + j] = col_fill[k] - col_start[k]
                col_fill[k] += 1
    for k in range(n_comp):
        nr = row_start[k + 1] - row_start[k]
        nc = col_start[k + 1] - col_start[k]
        # the machine pixels whose fate is wanted: uncertain and not yet in acc (the others are in acc already; at
        # least one, or the component would not be numbered)
        deficit = np.int64(0)  # rows of the component that a maximum matching leaves unmatched (unc 2)
        for q in range(nr):
            r = comp_rows[row_start[k] + q]
            watch[q] = unc[r] > 0 and not acc[rows_at[r]]
            deficit += unc[r] == 2
        ne = 0
        if nr <= nc:
            # machine pixels as rows: their lists, columns renumbered inside the component
            lstart[0] = 0
            for q in range(nr):
                r = comp_rows[row_start[k] + q]
                for p in range(beg[r], end[r]):
                    ledges[ne] = pack_edge(local[n_rows + adj[p]], cost[p])
                    ne += 1
                lstart[q + 1] = ne
            rest = assign_rows(
                lstart[: nr + 1], ledges, nc, big, ones, work, hkeys, hcols, watch[:nr], np.bool_(False), deficit
            )
            for q in range(nr):
                if work[q] >= 0 or q >= rest:
                    acc[rows_at[comp_rows[row_start[k] + q]]] = True
        else:
            # GT pixels as rows: each lists its machine pixels in increasing machine index (as transpose_adjacency)
            for q in range(nc + 1):
                lstart[q] = 0
            for q in range(nr):
                r = comp_rows[row_start[k] + q]
                for p in range(beg[r], end[r]):
                    lstart[local[n_rows + adj[p]] + 1] += 1
            for q in range(nc):
                lstart[q + 1] += lstart[q]
            for q in range(nr):
                r = comp_rows[row_start[k] + q]
                for p in range(beg[r], end[r]):
                    lc = local[n_rows + adj[p]]
                    e = lstart[lc]
                    ledges[e] = pack_edge(q, cost[p])
                    lstart[lc] = e + 1
            for q in range(nc, 0, -1):
                lstart[q] = lstart[q - 1]
            lstart[0] = 0
            assign_rows(
                lstart[: nc + 1], ledges, nr, big, ones, work, hkeys, hcols, watch[:nr], np.bool_(True), np.int64(-1)
            )
            row4col = work[nc : nc + nr]
            for q in range(nr):
                if row4col[q] >= 0:
                    acc[rows_at[comp_rows[row_start[k] + q]]] = True


@numba.njit(cache=True, nogil=True)
def _max_cardinality(beg, end, adj, n2, mate_row, mate_col, seen, srow, spos, scol, visited):
    # pragma: no cover - compiled
    # A maximum-cardinality matching (any one) of the graph whose rows r list the columns adj[beg[r]:end[r]] (columns
    # 0..n2-1): greedy, then a depth-first augmenting search from every row left unmatched (Kuhn). The columns a
    # failed search visits stay closed to the later searches (seen[c] = -2): each is matched and its mate's columns
    # were all visited, so no alternating path through them reaches a free column, and no later augmentation enters
    # the set or changes its mates. Fills mate_row / mate_col (-1 = unmatched); returns the cardinality.
    n_rows = beg.shape[0]
    for c in range(n2):
        mate_col[c] = -1
        seen[c] = -1
    size = 0
    for r in range(n_rows):
        mate_row[r] = -1
        for p in range(beg[r], end[r]):
            c = adj[p]
            if mate_col[c] < 0:
                mate_col[c] = r
                mate_row[r] = c
                size += 1
                break
    closed = -2
    for r in range(n_rows):
        if mate_row[r] >= 0:
            continue
        n_vis = 0
        top = 0
        srow[0] = r
        spos[0] = beg[r]
        free = -1
        while top >= 0:
            row = srow[top]
            p = spos[top]
            nxt = -1
            while p < end[row]:
                c = adj[p]
                p += 1
                if seen[c] == r or seen[c] == closed:
                    continue
                seen[c] = r
                visited[n_vis] = c
                n_vis += 1
                if mate_col[c] < 0:
                    free = c
                else:
                    nxt = c
                break
            if free >= 0:
                break
            if nxt < 0:
                top -= 1  # this row's columns are exhausted: back to the row before
                continue
            spos[top] = p
            scol[top] = nxt
            top += 1
            srow[top] = mate_col[nxt]
            spos[top] = beg[srow[top]]
        if free >= 0:
            # augment: the last row takes the free column, every row before it the column that led to the next
            c = free
            for i in range(top, -1, -1):
                row = srow[i]
                mate_col[c] = row
                mate_row[row] = c
                if i > 0:
                    c = scol[i - 1]
            size += 1
        else:
            for i in range(n_vis):
                seen[visited[i]] = closed
    return size


@numba.njit(cache=True, nogil=True)
def _certain_rows(rows, beg, end, adj, n2, acc, unc, mate_row, mate_col, seen, srow, spos, scol, visited):
    # pragma: no cover - compiled
    # The part of one annotator's matching that does not depend on the costs. Every least-cost maximum matching is a
    # maximum matching, so its cardinality (this annotator's cntR) is that of any maximum matching, and a machine
    # pixel is matched by all of them unless some maximum matching leaves it unmatched -- the rows reached by an
    # alternating path from a row that a maximum matching leaves unmatched (Dulmage-Mendelsohn; here the rows left
    # unmatched and the mates of the columns closed by their failed searches). Those rows get unc[r] = 1, or 2 for
    # the rows this maximum matching leaves unmatched (their number per component is the deficit); every
    # other matched row is marked in acc[machine index] now. Returns the cardinality. The exact assignment
    # (_solve_uncertain) then only has to say which of the uncertain rows end matched.
    n_rows = rows.shape[0]
    size = _max_cardinality(beg, end, adj, n2, mate_row, mate_col, seen, srow, spos, scol, visited)
    for r in range(n_rows):
        unc[r] = 2 if mate_row[r] < 0 else 0
    for c in range(n2):
        if seen[c] == -2:
            unc[mate_col[c]] = 1  # a matched row (the mate of a closed column)
    for r in range(n_rows):
        if not unc[r]:
            acc[rows[r]] = True
    return size


@numba.njit(cache=True, nogil=True)
def _solve_uncertain(rows, beg, end, adj, cost, n2, big, acc, unc):  # pragma: no cover - compiled
    # The exact assignment of one annotator's graph (rows: machine indices with candidates, lists adj / cost[beg:end])
    # where it can still change acc: per connected component (_match_annotator), only where some uncertain row
    # (_certain_rows) is not yet in acc. The union acc over the annotators does not depend on the order in which
    # their matchings are added, and a component whose uncertain rows are all in acc adds nothing whichever of them
    # its matching keeps, so skipping it leaves cntP as it is; the components solved are solved whole, as before.
    n_rows = rows.shape[0]
    todo = False
    for r in range(n_rows):
        if unc[r] and not acc[rows[r]]:
            todo = True
            break
    if not todo:
        return
    n_edges = 0
    for r in range(n_rows):
        n_edges += end[r] - beg[r]
    nodes = n_rows + n2
    work = np.empty(10 * nodes, np.int64)
    hkeys = np.empty(n_edges + nodes + 1, np.int64)
    hcols = np.empty(n_edges + nodes + 1, np.int64)
    lstart = np.empty(nodes + 1, np.int64)
    ledges = np.empty(n_edges, np.int64)
    ones = np.ones(nodes, np.bool_)
    watch = np.empty(n_rows, np.bool_)
    _match_annotator(
        n_rows, rows, beg, end, adj, cost, n2, big, acc, unc, work, hkeys, hcols, lstart, ledges, ones, watch
    )


@numba.njit(cache=True, nogil=True)
def _pass_buffers(n1, n2s, n_gt):  # pragma: no cover - compiled
    # Workspaces of the two passes over one map's annotators (_certain_rows, then _solve_uncertain): the maximum
    # matching's (mate_row, mate_col, seen, srow, spos, scol, visited; shared by the annotators) and every
    # annotator's uncertain rows (unc, (n_gt, n1 + 1)).
    n2max = 1
    for a in range(n_gt):
        n2max = max(n2max, n2s[a])
    rows = n1 + 1
    return (
        np.empty(rows, np.int64),
        np.empty(n2max, np.int64),
        np.empty(n2max, np.int64),
        np.empty(rows, np.int64),
        np.empty(rows, np.int64),
        np.empty(rows, np.int64),
        np.empty(n2max, np.int64),
        np.empty((n_gt, rows), np.uint8),
    )


@numba.njit(cache=True, nogil=True)
def _store_counts(acc, cnt_r, out, b, k):  # pragma: no cover - compiled
    # out[:, b, k] = [cntR, cntP (the machine pixels marked in acc), sumP (all machine pixels)]
    cnt_p = 0
    for i in range(acc.shape[0]):
        cnt_p += acc[i]
    out[0, b, k] = cnt_r
    out[1, b, k] = cnt_p
    out[2, b, k] = acc.shape[0]


@numba.njit(cache=True, nogil=True)
def level_counts(my, mx, grids, n2s, n_gt, off_dy, off_dx, off_cost, n_off, pad, big, out, b, k):
    # pragma: no cover - compiled
    # Counts of one machine map (thinned already where asked: its on pixels at the unpadded raster-order coordinates
    # my, mx) against the n_gt annotators of image b: writes out[0, b, k] = cntR (matched GT pixels summed over
    # annotators), out[1, b, k] = cntP (machine pixels matched in at least one annotator), out[2, b, k] = sumP
    # (machine pixels). Each annotator's candidate graph lists this map's candidates (candidate_lists); the
    # counts come from _certain_rows and _solve_uncertain.
    n1 = my.shape[0]
    acc = np.zeros(n1, np.bool_)
    # list buffers shared by the annotators (no list is longer than n_off; only the used part is touched)
    rows_at = np.empty(n1, np.int64)
    start = np.empty(n1 + 1, np.int64)
    adj = np.empty(n1 * n_off + 1, np.int32)
    cost = np.empty(n1 * n_off + 1, np.int64)
    width = grids.shape[2]
    lin = flat_offsets(off_dy, off_dx, n_off, width)
    mate_row, mate_col, seen, srow, spos, scol, visited, unc = _pass_buffers(n1, n2s, n_gt)
    # first the part of every annotator's matching that needs no costs, then the exact assignments where they can
    # still add a pixel (the lists are listed again for those: cheaper than keeping every annotator's)
    cnt_r = np.int64(0)
    some_unc = np.zeros(n_gt, np.bool_)
    for a in range(n_gt):
        n = candidate_lists(my, mx, grids[a].reshape(-1), width, lin, off_cost, n_off, pad, rows_at, start, adj, cost)
        cnt_r += _certain_rows(
            rows_at[:n],
            start[:n],
            start[1 : n + 1],
            adj,
            n2s[a],
            acc,
            unc[a],
            mate_row,
            mate_col,
            seen,
            srow,
            spos,
            scol,
            visited,
        )
        some_unc[a] = unc[a, :n].any()
    for a in range(n_gt):
        if some_unc[a]:
            n = candidate_lists(
                my, mx, grids[a].reshape(-1), width, lin, off_cost, n_off, pad, rows_at, start, adj, cost
            )
            _solve_uncertain(rows_at[:n], start[:n], start[1 : n + 1], adj, cost, n2s[a], big, acc, unc[a])
    _store_counts(acc, cnt_r, out, b, k)


@numba.njit(cache=True, nogil=True)
def level_index(pb, thresholds, dims, levels):  # pragma: no cover - compiled
    # levels[b, y, x] = the number of thresholds t with pb[b, y, x] >= t, for sorted (non-decreasing) thresholds:
    # those t form a prefix, so the pixel is on at the m-th smallest threshold iff levels[b, y, x] > m (the very
    # comparison `pb >= t` of the machine map, NaN off everywhere). True areas only (dims). Returns the (B, K + 1)
    # int64 histogram of these numbers per image: the on pixels of every level, and which levels repeat a map.
    nk = thresholds.shape[0]
    hist = np.zeros((pb.shape[0], nk + 1), np.int64)
    for b in range(pb.shape[0]):
        m = 0
        for y in range(dims[b, 0]):
            for x in range(dims[b, 1]):
                v = pb[b, y, x]
                # the previous pixel's number first (neighbours mostly share it), else a binary search
                if not ((m == 0 or v >= thresholds[m - 1]) and (m == nk or not v >= thresholds[m])):
                    lo = 0
                    hi = nk
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if v >= thresholds[mid]:
                            lo = mid + 1
                        else:
                            hi = mid
                    m = lo
                levels[b, y, x] = m
                hist[b, m] += 1
    return hist


@numba.njit(cache=True, nogil=True)
def indexed_candidates(u_base, n_u, gflat, lin, off_cost, n_off, start, adj, cost):  # pragma: no cover - compiled
    # CSR lists (start, n_u + 1 entries; an empty list where a pixel has none) of the GT pixels within the tolerance
    # of every pixel u of an image's union list, given as its flat cell u_base[u] in the padded GT index grid
    # `gflat`: the lists of candidate_lists, in the same order (the same _list_cell); adj and cost
    # hold at least (pixels whose cell is not -1) * n_off + 1 entries. Returns the number of entries.
    p = np.int64(0)
    for u in range(n_u):
        start[u] = p
        base = u_base[u]
        if gflat[base] == -1:
            continue
        p = _list_cell(gflat, base, lin, off_cost, n_off, adj, cost, p)
    start[n_u] = p
    return p


@numba.njit(cache=True, nogil=True)
def _level_rows(uidx, n1, so, l_start, rows_at, beg, end):  # pragma: no cover - compiled
    # One annotator's rows of a map given by union indices (see indexed_task_counts): the machine indices i with
    # some candidate, and where their lists begin and end in the annotator's lists (CSR l_start[so:]); returns n.
    n = 0
    for i in range(n1):
        u = so + uidx[i]
        s = l_start[u]
        e = l_start[u + 1]
        rows_at[n] = i
        beg[n] = s
        end[n] = e
        n += e > s
    return n


#: the one signature indexed_task_counts is called with (compiled ahead in a second process on a first run, see
#: :mod:`._compile_aside`; a test checks that the calls have exactly these types)
INDEXED_TASK_COUNTS_SIGNATURE = (
    "void(int64[::1], int64, int64[::1], int64[:, ::1], int32[::1], int64[::1], int64[::1], int64[::1], int64[::1], "
    "int64[::1], int64[::1], int64[::1], int32[::1], int64[::1], int64[:, ::1], int64, int64[:, :, ::1])"
)


@numba.njit(cache=True, nogil=True)
def indexed_task_counts(
    qs, q0, order, tasks, buf, slot, n_thin, n_gt, pair_first, s_off, e_off, l_start, l_adj, l_cost, n2s, big, out
):
    # pragma: no cover - compiled
    # level_counts of the tasks qs of a wave of soft-map tasks (see soft_map_stages): task q (image b, threshold k,
    # tasks[order[q0 + q]]) is a machine map given as the union indices buf[slot[q]:][:n_thin[q]] of its pixels
    # (raster order), whose candidate lists are already listed per annotator a (pair pair_first[b] + a: CSR
    # l_start[s_off:], entries at l_adj / l_cost[e_off:], see indexed_candidates); its counts go to out[:, b, k].
    # Each annotator's graph has the rows and lists that candidate_lists would build for this map (the machine
    # pixels with some candidate, in raster order), read in place through begin / end positions instead of copied
    # (and listed again for the second pass: one annotator's rows at a time, so memory does not grow with the
    # annotators). The loop over tasks is here rather than in a caller: numba optimises a kernel together with
    # every kernel it calls, so one level less saves a second of the first compilation.
    for i in range(qs.shape[0]):
        q = qs[i]
        task = order[q0 + q]
        b = tasks[task, 0]
        uidx = buf[slot[q] :]
        n1 = n_thin[q]
        pair0 = pair_first[b]
        acc = np.zeros(n1, np.bool_)
        rows_at = np.empty(n1 + 1, np.int64)  # + 1: _level_rows stores before it decides
        beg = np.empty(n1 + 1, np.int64)
        end = np.empty(n1 + 1, np.int64)
        mate_row, mate_col, seen, srow, spos, scol, visited, unc = _pass_buffers(n1, n2s[b], n_gt[b])
        some_unc = np.zeros(n_gt[b], np.bool_)
        # first the part of every annotator's matching that needs no costs, then the exact assignments where they
        # can still add a pixel (see _certain_rows and _solve_uncertain)
        cnt_r = np.int64(0)
        for a in range(n_gt[b]):
            n = _level_rows(uidx, n1, s_off[pair0 + a], l_start, rows_at, beg, end)
            cnt_r += _certain_rows(
                rows_at[:n],
                beg[:n],
                end[:n],
                l_adj[e_off[pair0 + a] :],
                n2s[b, a],
                acc,
                unc[a],
                mate_row,
                mate_col,
                seen,
                srow,
                spos,
                scol,
                visited,
            )
            some_unc[a] = unc[a, :n].any()
        for a in range(n_gt[b]):
            if some_unc[a]:
                n = _level_rows(uidx, n1, s_off[pair0 + a], l_start, rows_at, beg, end)
                eo = e_off[pair0 + a]
                _solve_uncertain(rows_at[:n], beg[:n], end[:n], l_adj[eo:], l_cost[eo:], n2s[b, a], big, acc, unc[a])
        _store_counts(acc, cnt_r, out, b, tasks[task, 1])


@numba.njit(cache=True, nogil=True, parallel=True)
def stack_counts(maps, tasks, dims, gts, n_gt, lut1, lut2, do_thin, off_dy, off_dx, off_cost, n_off, pad, big):
    # pragma: no cover - compiled
    # Binary machine maps (B, K, H, W) uint8, one per level (e.g. the boundaries of K segmentations). Returns
    # (3, B, K) int64 [cntR, cntP, sumP], filled for the (image, level) pairs of `tasks` (T, 2), one parallel task
    # each (pairs outside the stack are skipped).
    nb = maps.shape[0]
    nk = maps.shape[1]
    grids, n2s = gt_index_grids(gts, n_gt, dims, pad, off_dy, off_dx, n_off)
    out = np.zeros((3, nb, nk), np.int64)
    for task in numba.prange(tasks.shape[0]):
        b = tasks[task, 0]
        k = tasks[task, 1]
        if b < 0 or b >= nb or k < 0 or k >= nk:
            continue
        h = dims[b, 0]
        w = dims[b, 1]
        img = padded_binary(maps[b, k], h, w)
        ys, xs = foreground_coords(img)
        if do_thin:
            ys, xs = thin_listed(img, ys, xs, lut1, lut2)
        level_counts(
            ys - 1, xs - 1, grids[b], n2s[b], n_gt[b], off_dy[b], off_dx[b], off_cost[b], n_off[b], pad, big, out, b, k
        )
    return out


@numba.njit(cache=True, nogil=True)
def annotator_counts(my, mx, grids, n2s, annotators, off_dy, off_dx, off_cost, n_off, pad, big):
    # pragma: no cover - compiled
    # Match the machine pixels (my, mx) (unpadded, raster order) with each annotator of `annotators` (indices into
    # the index grids `grids` and their pixel counts `n2s`): returns (cntR, cntP), the matched GT pixels summed over
    # the annotators and the machine pixels matched to at least one of them.
    n1 = my.shape[0]
    acc = np.zeros(n1, np.bool_)
    cnt_r = 0
    for a in annotators:
        match1, _ = correspond(my, mx, grids[a], n2s[a], off_dy, off_dx, off_cost, n_off, pad, big)
        for i in range(n1):
            if match1[i] >= 0:
                acc[i] = True
                cnt_r += 1
    cnt_p = 0
    for i in range(n1):
        if acc[i]:
            cnt_p += 1
    return cnt_r, cnt_p


@numba.njit(cache=True, nogil=True, parallel=True)
def pair_counts(
    m_start,
    m_ys,
    m_xs,
    grids,
    n2s,
    item_machine,
    item_start,
    item_annotators,
    off_dy,
    off_dx,
    off_cost,
    n_off,
    pad,
    big,
):
    # pragma: no cover - compiled
    # Many (machine map, annotators) pairs of one image size drawn from shared maps: the (thin) machine maps as pixel
    # lists (CSR m_start, unpadded raster-order m_ys/m_xs) and the annotators' index grids (G, H + 2 pad, W + 2 pad)
    # of gt_index_grids (built with these offsets), each built once for all the pairs that use it. Pair t matches
    # machine item_machine[t] with the annotators item_annotators[item_start[t]:item_start[t+1]]. Returns (3, T)
    # int64 [cntR, cntP, sumP]; a pair naming a map outside the arrays is left at 0.
    nt = item_machine.shape[0]
    n_machines = m_start.shape[0] - 1
    n_grids = grids.shape[0]
    out = np.zeros((3, nt), np.int64)
    for t in numba.prange(nt):
        m = item_machine[t]
        lo = item_start[t]
        hi = item_start[t + 1]
        if m < 0 or m >= n_machines or lo < 0 or hi > item_annotators.shape[0] or lo > hi:
            continue
        annotators = item_annotators[lo:hi]
        ok = True
        for a in annotators:
            if a < 0 or a >= n_grids:
                ok = False
        if not ok:
            continue
        my = m_ys[m_start[m] : m_start[m + 1]]
        mx = m_xs[m_start[m] : m_start[m + 1]]
        cnt_r, cnt_p = annotator_counts(my, mx, grids, n2s, annotators, off_dy, off_dx, off_cost, n_off, pad, big)
        out[0, t] = cnt_r
        out[1, t] = cnt_p
        out[2, t] = my.shape[0]
    return out
