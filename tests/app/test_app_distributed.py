"""``segmetrics_torch.app.distributed`` without torchrun: identity helpers, the shard rule, rank 1's stderr filter.

The runs under ``torchrun`` themselves are in ``tests/app/test_cli_distributed.py`` (slow, ddp)."""

from __future__ import annotations

import io

import pytest

from segmetrics_torch.app import distributed
from segmetrics_torch.errors import InputError


def test_without_torchrun_nothing_changes(monkeypatch):
    for key in ("WORLD_SIZE", "RANK"):
        monkeypatch.delenv(key, raising=False)
    assert not distributed.launched()
    with distributed.session():
        assert not distributed.active()
        assert (distributed.rank(), distributed.world_size(), distributed.is_main()) == (0, 1, True)
        items = ["a", "b", "c"]
        assert distributed.shard(items) == items and distributed.offset(3) == 0
        assert distributed.gather({"x": 1}) == [{"x": 1}]
        assert distributed.main_decides(lambda: 5) == 5
        found = {"k": None}
        assert distributed.share_cached(found) is found
        distributed.barrier()


@pytest.mark.parametrize(("rank", "block"), [(0, ["i0", "i1", "i2"]), (1, ["i3", "i4", "i5", "i6"])])
def test_shard_is_a_contiguous_block(monkeypatch, rank, block):
    monkeypatch.setitem(distributed._STATE, "active", True)
    monkeypatch.setitem(distributed._STATE, "rank", rank)
    monkeypatch.setitem(distributed._STATE, "world_size", 2)
    items = [f"i{k}" for k in range(7)]
    assert distributed.shard(items) == block
    assert distributed.offset(7) == (0, 3)[rank]
    with pytest.raises(InputError, match="1 image\\(s\\) for 2 processes"):
        distributed.shard(["only"])

    class Bar:  # a progress bar of the whole dataset counts this rank's shard
        total = 7

    bar = Bar()
    distributed.shard_progress(bar, 7)
    assert bar.total == len(block)


def test_other_ranks_stderr_shows_errors_and_tracebacks_only():
    sink = io.StringIO()
    err = distributed._ErrorsOnly(sink, 1)
    err.write("warning: something\nnote: a note\n")
    err.write("error: bad ")
    err.write("input\n")
    err.write("Traceback (most recent call last):\n  File x\nValueError: y\nerror: unexpected ValueError\nlater\n")
    err.flush()
    assert not err.isatty()
    assert sink.getvalue().splitlines() == [
        "[rank 1] error: bad input",
        "[rank 1] Traceback (most recent call last):",
        "[rank 1]   File x",
        "[rank 1] ValueError: y",
        "[rank 1] error: unexpected ValueError",
    ]


def test_world_size_and_rank_without_a_rendezvous_is_one_error_line(monkeypatch, capsys):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    for key in ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_USE_AGENT_STORE"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(SystemExit) as exit_info, distributed.session():
        pass
    assert exit_info.value.code == 2 and not distributed.active()
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: WORLD_SIZE and RANK are set") and "MASTER_ADDR" in line


def test_default_workers_share_the_machines_cores_between_its_ranks(monkeypatch):
    import os

    from segmetrics_torch.app.launch import default_workers

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    for key in ("WORLD_SIZE", "RANK", "LOCAL_WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    assert default_workers() == 4  # 8 cores: 7, at most 4
    monkeypatch.setenv("WORLD_SIZE", "8")
    monkeypatch.setenv("RANK", "5")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert distributed.processes_per_machine() == 4
    assert default_workers() == 1  # 2 cores per rank: 1 decoding worker each
