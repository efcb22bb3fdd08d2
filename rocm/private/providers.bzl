"""Providers of the ROCm rules (public through //rocm:defs.bzl)."""

RocmToolchainInfo = provider(
    doc = "The HIP compiler of one ROCm toolkit, as @local_config_rocm found it.",
    fields = {
        "configured": "False when the build was not configured for ROCm; every other field is then empty.",
        "unconfigured_message": "What to do when `configured` is False.",
        "clang": "The toolkit's clang (the HIP driver): a File, exec-root-relative, when the toolkit is in the " +
                 "action's inputs (toolkit_in_inputs); else its absolute path, which a remote worker's image must " +
                 "then have (see rocm_rbe).",
        "toolkit_in_inputs": "True when the toolkit lies in Bazel's external repositories (a TheRock tarball): clang, " +
                             "its tools, resource headers and device libraries are action inputs, by relative paths.",
        "files": "depset of the toolkit's compiler files (clang, device libraries ...): inputs of every HIP compile.",
        "offload_bundler": "clang-offload-bundler beside clang (a File or an absolute path, as `clang`); None where the " +
                           "toolkit lacks it, and each HIP source then compiles in one action (actions/hip_compile.bzl).",
        "clang_version": "clang's version, e.g. '22.1.8'.",
        "rocm_path": "The toolkit root passed as --rocm-path (exec-root-relative with toolkit_in_inputs).",
        "device_libs_path": "The amdgcn bitcode directory passed as --rocm-device-lib-path.",
        "rocm_version": "The ROCm release, e.g. '7.2.4'.",
        "hip_version": "HIP's version as the finder read it, e.g. '7.2.53211', passed as --hip-version ('' if unknown).",
        "supported_targets": "amdgpu processors this clang can compile for (--print-supported-cpus).",
        "dist_targets": "The targets a TheRock toolkit has device code for: its dist_info.json's, else its family's " +
                        "(empty: no such limit).",
        "dist_allowed_targets": "What a build may ask for under dist_targets' limit, as the finder decided " +
                                "(find_rocm_config.py allowed_targets: the one implementation of that policy).",
        "dist_description": "'the TheRock toolkit of family gfx950-dcgpu': what limits dist_targets, for messages.",
        "dist_remedy": "How to add device code for a '<target>' dist_targets lacks (a multi-arch TheRock " +
                       "release's device package or tarball); '' otherwise.",
        "compiler_description": "'clang 22.1.8 of ROCm 7.2.4', for messages.",
        "config_file": "hip_action_key.json: an input of every HIP action, so a toolkit change re-runs them (the " +
                       "toolkit's facts, free of the output base's path when the toolkit is in the inputs).",
        "runtime": "CcInfo of the HIP runtime (headers and libamdhip64) that HIP objects need.",
        "hip_copts": "The flags every HIP compile of this toolchain starts with, before a rule's and a target's " +
                     "own: the C++ standard and position-independent code (-std=c++17 -fPIC, as XLA's hipcc " +
                     "toolchain and JAX's build compile HIP).",
        "host_libc": "HipHostLibcInfo: the host C and C++ library headers HIP compiles take, and their flags " +
                     "(empty but under --config=manylinux_2_28: glibc 2.28's and Zig's libc++).",
    },
)

AmdgpuTargetsInfo = provider(
    doc = "The amdgpu targets device code is compiled for (--//rocm:amdgpu_targets).",
    fields = {"targets": "Validated, de-duplicated list such as ['gfx942', 'gfx90a:xnack-']."},
)
