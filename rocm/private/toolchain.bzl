"""The HIP compiler toolchain that @local_config_rocm declares (toolchain type //rocm:toolchain_type)."""

load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load("//toolchains/manylinux:hip_libc.bzl", "HipHostLibcInfo")
load(":providers.bzl", "RocmToolchainInfo")

def _rocm_toolchain_impl(ctx):
    configured = ctx.attr.configured
    in_inputs = ctx.attr.toolkit_in_inputs

    # With the toolkit in the inputs, paths are relative to the exec root, under this
    # repository (external/<its canonical name>/rocm): the links rocm_configure made.
    rocm = ctx.label.workspace_root + "/rocm"
    info = RocmToolchainInfo(
        configured = configured,
        unconfigured_message = ctx.attr.unconfigured_message,
        clang = ctx.file.clang_file if in_inputs else ctx.attr.clang,
        toolkit_in_inputs = in_inputs,
        offload_bundler = (ctx.file.offload_bundler_file if in_inputs else ctx.attr.offload_bundler) or None,
        files = depset(ctx.files.compiler_files),
        clang_version = ctx.attr.clang_version,
        rocm_path = rocm if in_inputs else ctx.attr.rocm_path,
        device_libs_path = rocm + "/amdgcn/bitcode" if in_inputs else ctx.attr.device_libs_path,
        rocm_version = ctx.attr.rocm_version,
        hip_version = ctx.attr.hip_version,
        supported_targets = ctx.attr.supported_targets,
        dist_targets = ctx.attr.dist_targets,
        dist_allowed_targets = ctx.attr.dist_allowed_targets,
        dist_description = ctx.attr.dist_description,
        dist_remedy = ctx.attr.dist_remedy,
        compiler_description = ctx.attr.compiler_description or "no compiler (ROCm is not configured)",
        config_file = ctx.file.config_file,
        runtime = ctx.attr.runtime[CcInfo] if ctx.attr.runtime else None,
        hip_copts = ctx.attr.hip_copts,
        host_libc = ctx.attr.host_libc[HipHostLibcInfo],
    )
    return [platform_common.ToolchainInfo(rocm = info), info]

rocm_toolchain = rule(
    implementation = _rocm_toolchain_impl,
    doc = "One ROCm toolkit's HIP compiler; generated into @local_config_rocm by rocm_configure.",
    attrs = {
        "configured": attr.bool(mandatory = True),
        "unconfigured_message": attr.string(),
        "clang": attr.string(doc = "Absolute path of clang."),
        "toolkit_in_inputs": attr.bool(doc = "Run clang_file and read the toolkit by relative paths (RocmToolchainInfo)."),
        "clang_file": attr.label(allow_single_file = True, doc = "rocm/llvm/bin/clang of this repository"),
        "offload_bundler": attr.string(doc = "Absolute path of clang-offload-bundler; empty if the toolkit has none."),
        "offload_bundler_file": attr.label(allow_single_file = True, doc = "rocm/llvm/bin/clang-offload-bundler of this repository, if any"),
        "compiler_files": attr.label(allow_files = True, doc = "What HIP compiles read of the toolkit"),
        "clang_version": attr.string(),
        "rocm_path": attr.string(),
        "device_libs_path": attr.string(),
        "rocm_version": attr.string(),
        "hip_version": attr.string(doc = "HIP's version as the finder read it (major.minor.patch); empty if unknown."),
        "supported_targets": attr.string_list(),
        "dist_targets": attr.string_list(),
        "dist_allowed_targets": attr.string_list(),
        "dist_description": attr.string(),
        "dist_remedy": attr.string(doc = "How to add device code for a <target> a multi-arch TheRock toolkit lacks."),
        "compiler_description": attr.string(),
        "config_file": attr.label(allow_single_file = [".json"]),
        "runtime": attr.label(providers = [CcInfo]),
        "hip_copts": attr.string_list(
            default = ["-std=c++17", "-fPIC"],
            doc = "The flags every HIP compile starts with (RocmToolchainInfo.hip_copts); a target's copts come after and win.",
        ),
        # Configured with the rule that resolves this toolchain: --config=manylinux_2_28 reaches it.
        "host_libc": attr.label(
            default = Label("//toolchains/manylinux:hip_libc"),
            providers = [HipHostLibcInfo],
            doc = "The host toolchain's C and C++ library headers and flags for HIP compiles (RocmToolchainInfo.host_libc).",
        ),
    },
    provides = [RocmToolchainInfo],
)
