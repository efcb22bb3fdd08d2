"""jax_rocm<N>_plugin: JAX's ROCm FFI extension modules, built by jax-rocm-build.

The modules (rocm_plugin_extension, _linalg, _prng, _solver, _sparse, _hybrid, _rnn,
_triton) are imported by the PJRT plugin's loader (jax_plugins.xla_rocm<N>), which
registers their FFI handlers with JAX. `build_info()` says what they were built from.
"""

import json
from pathlib import Path


def build_info() -> dict:
    """ROCm version, amdgpu targets, JAX version and source pins of this build."""
    return json.loads((Path(__file__).with_name("build_info.json")).read_text())
