"""JAX's ROCm extension modules of the jax_rocm<N>_plugin wheel, named once.

Loaded by jaxlib/rocm/BUILD.bazel (the targets), the root BUILD.bazel and full/BUILD.bazel
(the wheels) and tests/native (the import test); jax_plugins/rocm/__init__.py's
EXTENSION_MODULES, which the installed loader imports, is checked against it by
tests/unit/test_plugin_loader.py.
"""

# Compiled from JAX's own files (@jax), in either graph.
JAX_KERNEL_MODULES = ["_hybrid", "_linalg", "_prng", "_rnn", "_solver", "_sparse"]

# They need XLA's internals: kernels mode builds stand-ins from examples/jax, full mode JAX's own.
XLA_INTERNAL_MODULES = ["_triton", "rocm_plugin_extension"]

PLUGIN_MODULES = JAX_KERNEL_MODULES + XLA_INTERNAL_MODULES
