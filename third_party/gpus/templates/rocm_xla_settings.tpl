
# --- XLA's settings and platforms (the same whether ROCm is configured or not) -----------

# XLA's tsl.bzl selects on it: --define=using_rocm_hipcc=true.
config_setting(
    name = "using_hipcc",
    values = {"define": "using_rocm_hipcc=true"},
)

# The remote-execution platform XLA's and JAX's rocm bazelrc configs name
# (--extra_execution_platforms / --host_platform): Linux x86_64 with clang, and the
# worker properties XLA reads from TF_ROCM_RBE_DOCKER_IMAGE and TF_ROCM_RBE_POOL.
platform(
    name = "linux_x64",
    constraint_values = [
        "@platforms//os:linux",
        "@platforms//cpu:x86_64",
        "@bazel_tools//tools/cpp:clang",
    ],
    exec_properties = %{rbe_exec_properties},
)
