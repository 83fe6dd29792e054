"""Bad and edge inputs of the object-proposal family (overlaps, best overlaps, summaries, ProposalRecall)."""

from __future__ import annotations

import math

import pytest
import torch

from segmetrics_torch import ProposalRecall
from segmetrics_torch.functional.proposals import (
    best_overlaps,
    proposal_boundary_overlaps,
    proposal_overlaps,
    proposal_summary,
)

from .cases import close, meta, metric_run, raises, run_case, value


def _objects() -> torch.Tensor:
    o = torch.zeros(2, 8, 12, dtype=torch.bool)
    o[0, 1:4, 1:5] = True
    o[1, 4:8, 6:12] = True
    return o


def _pool() -> torch.Tensor:
    p = torch.zeros(3, 8, 12, dtype=torch.bool)
    p[0, 1:4, 1:6] = True
    p[1, 4:8, 5:12] = True
    p[2] = True
    return p


def _labels() -> torch.Tensor:
    lab = torch.zeros(8, 12, dtype=torch.int64)
    lab[1:4, 1:6] = 1
    lab[4:8, 5:12] = 2
    return lab


OBJ, POOL, LAB = _objects(), _pool(), _labels()
COUNTS = (1, 2, 3)


def _ov(proposals, objects=OBJ, **kw):
    out = proposal_overlaps(proposals, objects, **kw)
    return {"inter": out.inter, "fp": out.fp, "fn": out.fn}


def _recall(updates, **kw):
    kw.setdefault("counts", COUNTS)
    return metric_run(ProposalRecall, updates, **kw)


CASES = [
    # ---- the pool
    raises("pool-none", lambda: _ov(None), TypeError, r"`proposals` to be a tensor or a list of tensors"),
    raises("pool-str", lambda: _ov("proposals.mat"), TypeError, r"`proposals` to be a tensor or a list"),
    raises("pool-list-of-str", lambda: _ov(["a", "b"]), TypeError, r"`proposals\[0\]` to be a torch.Tensor"),
    raises(
        "pool-list-missized",
        lambda: _ov([POOL[0], POOL[1, :4]]),
        ValueError,
        r"`proposals\[1\]` to be an \(H, W\) mask of size \(8, 12\)",
    ),
    raises("pool-list-3d-item", lambda: _ov([POOL]), ValueError, r"`proposals\[0\]` to be an \(H, W\) mask"),
    raises("pool-list-meta", lambda: _ov([POOL[0], meta(POOL[1])]), ValueError, r"`proposals\[1\]` to hold values"),
    raises("pool-list-values", lambda: _ov([POOL[0].long() * 3]), ValueError, r"`proposals\[0\]` to be boolean"),
    raises("pool-empty-list", lambda: _ov([]), ValueError, r"at least one proposal in `proposals`"),
    raises("pool-empty-stack", lambda: _ov(POOL[:0]), ValueError, r"at least one proposal in `proposals`"),
    raises("pool-stack-missized", lambda: _ov(POOL[:, :, :10]), ValueError, r"`proposals` of size \(8, 12\)"),
    raises("pool-4d", lambda: _ov(POOL[None]), ValueError, r"`proposals` of shape \(P, H, W\) or an \(H, W\) label"),
    raises("pool-stack-meta", lambda: _ov(meta(POOL)), ValueError, r"`proposals` to hold values"),
    raises("pool-stack-values", lambda: _ov(POOL.long() * 2), ValueError, r"`proposals` to be boolean"),
    raises("pool-stack-complex", lambda: _ov(POOL.to(torch.complex64)), TypeError, r"`proposals` to be bool"),
    raises("labels-float", lambda: _ov(LAB.double()), TypeError, r"`proposals` as a label map to be an integer"),
    raises("labels-missized", lambda: _ov(LAB[:4]), ValueError, r"`proposals` of size \(8, 12\)"),
    raises("labels-negative", lambda: _ov(LAB - 1), ValueError, r"`proposals` labels >= 0"),
    raises(
        "labels-negative-unvalidated", lambda: _ov(LAB - 1, validate_args=False), ValueError, r"`proposals` labels >= 0"
    ),
    raises("labels-all-zero", lambda: _ov(torch.zeros_like(LAB)), ValueError, r"at least one proposal in `proposals`"),
    raises("labels-huge", lambda: _ov(LAB * 2**40), ValueError, r"proposal labels to be ranks 1..P"),
    raises("labels-meta", lambda: _ov(meta(LAB)), ValueError, r"`proposals` to hold values"),
    # ---- objects, void
    raises("objects-none", lambda: _ov(POOL, None), TypeError, r"`objects` to be a torch.Tensor"),
    raises("objects-4d", lambda: _ov(POOL, OBJ[None]), ValueError, r"`objects` of shape \(K, H, W\)"),
    raises("objects-empty", lambda: _ov(POOL, OBJ[:0]), ValueError, r"at least one object in `objects`"),
    raises(
        "objects-zero-size",
        lambda: _ov(POOL[:, :0], OBJ[:, :0]),
        ValueError,
        r"`objects` to have non-empty images",
    ),
    raises(
        "objects-zero-size-labels",
        lambda: _ov(LAB[:0], OBJ[:, :0]),
        ValueError,
        r"`objects` to have non-empty images",
    ),
    raises(
        "objects-zero-size-boundary",
        lambda: proposal_boundary_overlaps(POOL[:, :0], OBJ[:, :0]),
        ValueError,
        r"`objects` to have non-empty images",
    ),
    raises("objects-values", lambda: _ov(POOL, OBJ.long() * 5), ValueError, r"`objects` to be boolean"),
    raises("objects-meta", lambda: _ov(POOL, meta(OBJ)), ValueError, r"`objects` to hold values"),
    raises("void-shape", lambda: _ov(POOL, void=OBJ[0, :4]), ValueError, r"`void` of shape \(8, 12\)"),
    raises("void-values", lambda: _ov(POOL, void=OBJ[0].long() * 255), ValueError, r"`void` to be boolean"),
    raises("chunk-size-zero", lambda: _ov(POOL, chunk_size=0), ValueError, r"`chunk_size` to be a positive int"),
    raises("chunk-size-float", lambda: _ov(POOL, chunk_size=1.5), ValueError, r"`chunk_size`"),
    raises("backend-choice", lambda: _ov(POOL, backend="cuda"), ValueError, r"`backend` to be one of 'auto', 'numba'"),
    raises("bound-th-negative", lambda: proposal_boundary_overlaps(POOL, OBJ, bound_th=-1), ValueError, r"`bound_th`"),
    value(
        "bound-th-huge",
        lambda: proposal_boundary_overlaps(POOL, OBJ, bound_th=1e6)._asdict(),
        close(lambda: proposal_boundary_overlaps(POOL, OBJ, bound_th=math.hypot(8, 12))._asdict()),
    ),
    # ---- valid edge inputs: equal outcomes
    value("labels-equal-stack", lambda: _ov(LAB), close(lambda: _ov(POOL[:2]))),
    value("list-equal-stack", lambda: _ov(list(POOL)), close(lambda: _ov(POOL))),
    value(
        "list-mixed-dtypes", lambda: _ov([POOL[0], POOL[1].to(torch.uint8), POOL[2].double()]), close(lambda: _ov(POOL))
    ),
    value("stack-requires-grad", lambda: _ov(POOL.double().requires_grad_()), close(lambda: _ov(POOL))),
    value("labels-sparse-ranks", lambda: _ov(LAB * 3)["inter"][[2, 5]], close(lambda: _ov(POOL[:2])["inter"])),
    value("labels-non-contiguous", lambda: _ov(LAB.T.contiguous().T), close(lambda: _ov(LAB))),
    value(
        "empty-object",
        lambda: best_overlaps(proposal_overlaps(POOL, torch.zeros_like(OBJ)), COUNTS)["jaccard"],
        close(torch.zeros(3, 2, dtype=torch.float64)),
    ),
    value(
        "one-pixel",
        lambda: _ov(torch.ones(1, 1, 1), torch.ones(1, 1, 1)),
        close({"inter": torch.ones(1, 1), "fp": torch.zeros(1, 1), "fn": torch.zeros(1, 1)}),
    ),
    value(
        "all-void",
        lambda: _ov(POOL, void=torch.ones(8, 12, dtype=torch.bool)),
        close({"inter": torch.zeros(3, 2), "fp": torch.zeros(3, 2), "fn": torch.zeros(3, 2)}),
    ),
    # ---- best overlaps and summaries
    raises(
        "best-counts-fraction",
        lambda: best_overlaps(proposal_overlaps(POOL, OBJ), [2.7]),
        ValueError,
        r"`counts` to be positive whole numbers",
    ),
    raises("best-counts-zero", lambda: best_overlaps(proposal_overlaps(POOL, OBJ), [0]), ValueError, r"`counts`"),
    raises("best-counts-empty", lambda: best_overlaps(proposal_overlaps(POOL, OBJ), []), ValueError, r"`counts`"),
    raises("best-counts-str", lambda: best_overlaps(proposal_overlaps(POOL, OBJ), "all"), ValueError, r"`counts`"),
    value(
        "best-counts-beyond-pool",
        lambda: best_overlaps(proposal_overlaps(POOL, OBJ), [1000])["num_proposals"],
        close(torch.tensor([3])),
    ),
    raises(
        "summary-no-objects",
        lambda: proposal_summary(torch.zeros(3, 0), torch.ones(3, 1)),
        ValueError,
        r"\(L, O\) best overlaps with O >= 1 objects",
    ),
    raises(
        "summary-classes-no-counts",
        lambda: proposal_summary(torch.zeros(3, 2), torch.ones(3, 1), classes=torch.tensor([0, 1])),
        ValueError,
        r"`classes` needs the best proposals' `inter`, `fp` and `fn`",
    ),
    # ---- ProposalRecall
    raises("Recall-counts", lambda: ProposalRecall(counts=[2.7]), ValueError, r"`counts` to be positive whole"),
    raises("Recall-counts-str", lambda: ProposalRecall(counts="all"), ValueError, r"`counts`"),
    raises("Recall-counts-none", lambda: ProposalRecall(counts=None), ValueError, r"`counts`"),
    raises("Recall-chunk-size", lambda: ProposalRecall(chunk_size=0), ValueError, r"`chunk_size`"),
    raises("Recall-num-classes", lambda: ProposalRecall(num_classes=0), ValueError, r"`num_classes`"),
    raises("Recall-boundary", lambda: ProposalRecall(boundary="yes"), TypeError, r"`boundary` to be a bool"),
    raises("Recall-bound-th", lambda: ProposalRecall(bound_th=float("nan")), ValueError, r"`bound_th`"),
    raises("Recall-validate-args", lambda: ProposalRecall(validate_args="no"), TypeError, r"`validate_args`"),
    raises(
        "Recall-compute-before-update",
        lambda: ProposalRecall(counts=COUNTS).compute(),
        ValueError,
        r"No objects were evaluated",
    ),
    raises(
        "Recall-update-missized-list",
        lambda: _recall([([POOL[0], POOL[1, :4]], OBJ)]),
        ValueError,
        r"`proposals\[1\]` to be an \(H, W\) mask",
    ),
    raises(
        "Recall-update-lists-length",
        lambda: _recall([([POOL, POOL], [OBJ])]),
        ValueError,
        r"`proposals` and `objects` lists of the same length",
    ),
    raises("Recall-update-objects-str", lambda: _recall([(POOL, "objects")]), TypeError, r"`objects`"),
    raises(
        "Recall-update-void-length",
        lambda: _recall([([POOL, POOL], [OBJ, OBJ], [OBJ[0]])]),
        ValueError,
        r"`void` to be a list with one entry per image \(2\)",
    ),
    raises(
        "Recall-update-classes-missing",
        lambda: _recall([(POOL, OBJ)], num_classes=3),
        ValueError,
        r"Expected `classes`",
    ),
    raises(
        "Recall-update-classes-count",
        lambda: _recall([(POOL, OBJ, None, [0])], num_classes=3),
        ValueError,
        r"`classes` to hold 2 class ids",
    ),
    raises(
        "Recall-update-classes-range",
        lambda: _recall([(POOL, OBJ, None, [0, 3])], num_classes=3),
        ValueError,
        r"`classes` to hold class ids in \[0, 3\)",
    ),
    raises(
        "Recall-update-classes-range-unvalidated",
        lambda: _recall([(POOL, OBJ, None, [0, -1])], num_classes=3, validate_args=False),
        ValueError,
        r"`classes` to hold class ids in \[0, 3\)",
    ),
    raises(
        "Recall-update-classes-fraction",
        lambda: _recall([(POOL, OBJ, None, [0, 1.5])], num_classes=3),
        ValueError,
        r"`classes` to be whole-number class ids",
    ),
    raises(
        "Recall-update-classes-str",
        lambda: _recall([(POOL, OBJ, None, ["cat", "dog"])], num_classes=3),
        TypeError,
        r"`classes` to be \(K,\) integer class ids",
    ),
    value(
        "Recall-boundary-one-object",
        lambda: _recall([(torch.arange(12).view(3, 4) + 1, torch.ones(1, 3, 4, dtype=torch.bool))], boundary=True)[
            "boundary_f_object"
        ],
        close(torch.zeros(3, dtype=torch.float64)),
    ),
    value("Recall-labels-equal-stack", lambda: _recall([(LAB, OBJ)]), close(lambda: _recall([(POOL[:2], OBJ)]))),
    value(
        "Recall-classes-float-whole",
        lambda: _recall([(POOL, OBJ, None, [0.0, 2.0])], num_classes=3),
        close(lambda: _recall([(POOL, OBJ, None, [0, 2])], num_classes=3)),
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_proposals_bad_input(case):
    run_case(case)


def test_enough_cases():
    assert len({c.id for c in CASES}) == len(CASES) >= 30
