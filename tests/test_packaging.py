"""What a release does: build the wheel and the sdist, install the wheel into a fresh venv, run ``segmetrics demo``.

The fresh venv gets the package from the wheel only; its dependencies (torch and the rest, GBs) are borrowed from the
running environment through a ``.pth`` line, which Python appends *after* the fresh venv's own site-packages, so the
installed wheel, not the working tree, is what runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    pytest.importorskip("build", reason="the `build` package (in the test extras) builds the distributions")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return out


def test_wheel_and_sdist_ship_the_license_and_the_type_marker(dist):
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    assert "segmetrics_torch/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "segmetrics_torch/app/cli.py" in names
    assert not any("/tests/" in n or n.startswith("tests/") for n in names)
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert any(m.endswith("/LICENSE") for m in members)
    assert any(m.endswith("segmetrics_torch/py.typed") for m in members)


def test_installed_wheel_runs_the_demo(dist, tmp_path):
    (wheel,) = dist.glob("*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # outside the source tree and without PYTHONPATH: an egg-info there would make pip think it is installed
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=env,
    ).stdout.strip()
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "zz_borrowed_dependencies.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    found = subprocess.run(
        [python, "-c", "import segmetrics_torch; print(segmetrics_torch.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).is_relative_to(env_dir), found.stdout
    run = subprocess.run(
        [env_dir / "bin" / "segmetrics", "demo", "--n", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert "MAE" in run.stdout
