"""A venv of this host's own Debian Python with real jax from PyPI and the built wheels, for the
e2e tests that check the wheels outside the sandbox (Debian 12's glibc, no ROCm installed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

HOST_PYTHON = Path("/usr/bin/python3.11")  # Debian 12's own, not the sandbox's 3.14
JAX = ["jax==0.10.2", "jaxlib==0.10.2"]


def make_host_venv(root: Path, wheel_dir: Path) -> Path:
    """Its python: jax and jaxlib from PyPI, then our plugin wheel (and the pjrt wheel it
    requires) from wheel_dir by name, so that pip must accept their platform tag here."""
    if not HOST_PYTHON.exists():
        pytest.skip(f"{HOST_PYTHON} (the host's Debian Python) is absent")
    if not list(wheel_dir.glob("jax_rocm7_plugin-*-cp311-*.whl")):
        pytest.skip("the main job made no plugin wheel for Python 3.11, this host's: the sandbox serves a host Python "
                    "only under a prefix of its own (pyenv, python.org; its /usr is sid's), and this user has none "
                    "(ci_build said which versions it left out)")
    subprocess.run([str(HOST_PYTHON), "-m", "venv", str(root)], check=True)
    python = root / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", *JAX], check=True)
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "--find-links", str(wheel_dir),
                              "jax-rocm7-plugin"], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    return python
