"""What ROCm's clang needs to compile HIP sources against the host toolchain's C and C++ libraries.

The HIP toolchain (rocm/private/toolchain.bzl) carries //toolchains/manylinux:hip_libc's
HipHostLibcInfo, which rocm_library reads as RocmToolchainInfo.host_libc: empty by default
(ROCm's clang uses the build host's glibc and libstdc++ like the host compiler does), and under --config=manylinux_2_28 the
directories and defines @zig_sdk read from `zig c++ -###`: glibc 2.28's headers and Zig's
libc++ with its configuration, so that host objects and HIP objects agree on every type and
symbol (no __isoc23_* or other symbol newer than the target glibc, one std::).
"""

HipHostLibcInfo = provider(
    doc = "Extra ROCm clang flags for the host side of HIP compiles, and the headers they name.",
    fields = {
        "copts": "list of flags, added after the target's own",
        "files": "depset of the headers: inputs of every HIP compile",
        "glibc": "the glibc the headers are for ('' = the build host's)",
    },
)

def _hip_host_libc_impl(ctx):
    if not ctx.attr.stdlibxx_dirs:
        return [HipHostLibcInfo(copts = [], files = depset(), glibc = ctx.attr.glibc)]

    # The directories are relative to this target's repository (@zig_sdk): prefixed with its
    # exec-root-relative path (external/<canonical name>), so that no command line names the
    # output base and the headers come from the action's inputs.
    root = ctx.label.workspace_root
    copts = [
        # The HIP runtime headers come from @local_config_rocm (rocm_headers), not from
        # --rocm-path's include directory, which on Debian is /usr/include with the build
        # host's glibc: -nogpuinc drops it, and with it the wrapper header, included back here.
        "-nogpuinc",
        "-include",
        "__clang_hip_runtime_wrapper.h",
        # No system directories; clang's builtin headers (and HIP's cuda_wrappers) stay.
        "-nostdlibinc",
    ]
    for d in ctx.attr.stdlibxx_dirs:
        copts += ["-stdlib++-isystem", root + "/" + d]
    for d in ctx.attr.libc_dirs:
        copts += ["-idirafter", root + "/" + d]
    copts += ["-D" + d for d in ctx.attr.defines]
    return [HipHostLibcInfo(copts = copts, files = depset(ctx.files.headers), glibc = ctx.attr.glibc)]

hip_host_libc = rule(
    implementation = _hip_host_libc_impl,
    doc = "Flags that point ROCm's clang at a host toolchain's libc and C++ library headers.",
    attrs = {
        "stdlibxx_dirs": attr.string_list(doc = "C++ library header directories, relative to this repository, in order"),
        "libc_dirs": attr.string_list(doc = "C library header directories (searched after clang's own), relative to this repository"),
        "defines": attr.string_list(doc = "What the host compiler defines for this libc (e.g. __GLIBC_MINOR__=28)"),
        "headers": attr.label(allow_files = True, doc = "Every header under those directories"),
        "glibc": attr.string(),
    },
    provides = [HipHostLibcInfo],
)
