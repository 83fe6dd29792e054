"""The first compilation of a package kernel in a process is announced once on ``segmetrics_torch.compile`` (INFO),
and a process that loads the kernel from numba's cache announces nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import logging
logging.basicConfig(level=logging.DEBUG, format="%(name)s %(levelname)s %(message)s")
import numpy as np
from segmetrics_torch.ops._kernels.moments import mask_moments
mask_moments(np.ones((1, 3, 4), np.uint8), np.zeros((1, 10), np.int64))
mask_moments(np.ones((2, 5, 4), np.uint8), np.zeros((2, 10), np.int64))
"""


def _announcements(cache: Path) -> list[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.startswith("segmetrics_torch.compile")]


def test_first_compilation_is_announced_once_and_a_cached_load_is_silent(tmp_path: Path) -> None:
    first = _announcements(tmp_path)
    info = [line for line in first if " INFO " in line]
    assert len(info) == 1 and "compiling segmetrics-torch's CPU kernels" in info[0] and str(tmp_path) in info[0]
    assert any(line.endswith("moments.mask_moments") for line in first if " DEBUG " in line)
    assert _announcements(tmp_path) == []


_PLAIN = """
import numpy as np
from segmetrics_torch.ops._kernels.moments import mask_moments
mask_moments(np.ones((1, 3, 4), np.uint8), np.zeros((1, 10), np.int64))
"""


def test_a_library_user_without_logging_sees_the_compilation_once(tmp_path: Path) -> None:
    """No logging configured (a notebook, a script): the message reaches stderr (WARNING, Python's last-resort
    handler), names the cache folder and how to compile ahead; a cached load prints nothing."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}

    def stderr() -> str:
        proc = subprocess.run([sys.executable, "-c", _PLAIN], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stderr

    first = stderr()
    assert first.count("compiling segmetrics-torch's CPU kernels") == 1
    assert str(tmp_path) in first and "segmetrics warmup" in first
    assert "compiling" not in stderr()
