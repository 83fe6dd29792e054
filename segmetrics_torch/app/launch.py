"""What the process was launched as, from the environment alone (no torch): whether ``torchrun`` started it, how
many ranks share this machine, and so how many decoding processes a run takes by default.

The parser reads these (``--workers``' default) and every command starts with them (whether to join a process
group), so they live apart from :mod:`.distributed`, which imports torch: building the parser, ``--help`` and a
mistyped option answer without loading torch (0.1 s instead of 1.3 s on a quiet 2-core machine).
"""

from __future__ import annotations

import os

__all__ = ["default_workers", "launched", "processes_per_machine"]


def launched() -> bool:
    """Whether the environment describes a ``torchrun`` worker (``WORLD_SIZE`` and ``RANK`` are set)."""
    return "WORLD_SIZE" in os.environ and "RANK" in os.environ


def processes_per_machine() -> int:
    """The ranks torchrun starts on this machine (``LOCAL_WORLD_SIZE``; 1 without torchrun)."""
    if not launched():
        return 1
    try:
        return max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        return 1


def default_workers() -> int:
    """Decoding processes by default: the cores but one (the measures run in the main process), at most 4; under
    torchrun, of the cores' share of each of the machine's ranks (``LOCAL_WORLD_SIZE``)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cores //= processes_per_machine()  # under torchrun the ranks of a machine share its cores
    return max(0, min(4, cores - 1))
