"""What ROCm's clang needs to compile HIP sources against the host toolchain's C and C++ libraries.

rocm_library (rocm/private/rocm_library.bzl) reads HipHostLibcInfo from
//toolchains/manylinux:hip_libc: empty by default (ROCm's clang uses the build host's
glibc and libstdc++ like the host compiler does), and under --config=manylinux_2_28 the
flags @zig_sdk read from `zig c++ -###`: glibc 2.28's headers and Zig's libc++ with
its configuration, so that host objects and HIP objects agree on every type and symbol
(no __isoc23_* or other symbol newer than the target glibc, one std::).
"""

HipHostLibcInfo = provider(
    doc = "Extra ROCm clang flags for the host side of HIP compiles.",
    fields = {
        "copts": "list of flags, added after the target's own",
        "glibc": "the glibc the headers are for ('' = the build host's)",
    },
)

def _hip_host_libc_impl(ctx):
    return [HipHostLibcInfo(copts = ctx.attr.copts, glibc = ctx.attr.glibc)]

hip_host_libc = rule(
    implementation = _hip_host_libc_impl,
    doc = "Flags that point ROCm's clang at a host toolchain's libc and C++ library headers.",
    attrs = {
        "copts": attr.string_list(),
        "glibc": attr.string(),
    },
    provides = [HipHostLibcInfo],
)
