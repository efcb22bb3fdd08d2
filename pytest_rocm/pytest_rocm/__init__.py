"""pytest-rocm: one AMD GPU per pytest-xdist worker, and a serial pass for multi-GPU tests.

The pytest plugin is pytest_rocm.plugin (registered through the `pytest11` entry point
when this package is installed); the GPU slots it hands out are pytest_rocm.slots,
which jax-rocm-build's Bazel test wrapper shares. This module imports neither pytest
nor anything else, so the slots can be used without pytest.
"""

__version__ = "0.1.0"
