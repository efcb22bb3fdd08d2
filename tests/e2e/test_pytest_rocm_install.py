"""pytest-rocm as adopters get it: `pip install ./pytest_rocm[xdist]` into a fresh venv,
found through its pytest11 entry point (no -p), then `pytest -n auto --rocm-gpus=auto`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import venv

import pytest

from tests.conftest import CHECKOUT

pytestmark = pytest.mark.e2e

SUITE = '''
import json, os

def test_gpu(tmp_path_factory, rocm_gpus):
    out = os.path.join(os.environ["RECORD_DIR"], os.environ["PYTEST_XDIST_WORKER"] + ".json")
    with open(out, "w") as f:
        json.dump(dict(rocr=os.environ["ROCR_VISIBLE_DEVICES"], hip=os.environ["HIP_VISIBLE_DEVICES"],
                       fixture=list(rocm_gpus)), f)
'''


def test_installed_plugin_pins_each_worker_to_its_own_gpu(tmp_path):
    root = tmp_path / "venv"
    venv.create(root, with_pip=True)
    python = root / "bin" / "python"
    # From a copy: setuptools builds in the source tree (build/, *.egg-info), never in the checkout.
    source = shutil.copytree(CHECKOUT / "pytest_rocm", tmp_path / "pytest_rocm")
    install = subprocess.run([python, "-m", "pip", "install", "-q", f"{source}[xdist]"],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    suite = tmp_path / "suite"
    suite.mkdir()
    for i in range(4):
        (suite / f"test_{i}.py").write_text(SUITE)
    records = tmp_path / "records"
    records.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "ROCR_", "HIP_", "PYTEST_", "PYTHONPATH"))}
    env |= {"JAX_ROCM_GPU_COUNT": "4", "JAX_ROCM_GPU_LOCK_DIR": str(tmp_path / "locks"), "RECORD_DIR": str(records)}
    result = subprocess.run([python, "-m", "pytest", "-n", "auto", "--rocm-gpus=auto", "-p", "no:cacheprovider"],
                            cwd=suite, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    seen = {p.stem: json.loads(p.read_text()) for p in records.glob("*.json")}
    assert sorted(seen) == ["gw0", "gw1", "gw2", "gw3"], seen
    assert sorted(r["rocr"] for r in seen.values()) == ["0", "1", "2", "3"]
    assert all(r["hip"] == "0" and r["fixture"] == [r["rocr"]] for r in seen.values())
