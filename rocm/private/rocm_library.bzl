"""rocm_library: HIP sources compiled for the requested amdgpu targets, consumed as an ordinary CcInfo.

Why a rule with its own toolchain rather than a second cc toolchain: the host C++ of
the whole build (XLA, JAX, protobuf ...) keeps the host compiler and its flags, and
only HIP sources go through the ROCm clang. The result is a static archive of PIC
objects in a CcInfo, so plain cc_library, cc_binary(linkshared) and
cc_shared_library targets link it like any other library (as rules_cuda does).
"""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain", "use_cpp_toolchain")
load("@rules_cc//cc/common:cc_common.bzl", "cc_common")
load("@rules_cc//cc/common:cc_info.bzl", "CcInfo")
load(":actions/hip_compile.bzl", "hip_compile", "hip_shared_args", "splits", "target_flags_in", "unit_args")
load(":amdgpu_targets.bzl", "narrow_amdgpu_targets")
load(":providers.bzl", "AmdgpuTargetsInfo")

ROCM_TOOLCHAIN_TYPE = "//rocm:toolchain_type"

_HIP_EXTENSIONS = [".hip", ".cu", ".cu.cc", ".cc", ".cpp", ".cxx"]
_HEADER_EXTENSIONS = [".h", ".hh", ".hpp", ".hxx", ".inc", ".cuh", ".hip.h"]

def _opt_flags(ctx):
    mode = ctx.var["COMPILATION_MODE"]
    if mode == "opt":
        return ["-O3", "-DNDEBUG"]
    if mode == "dbg":
        return ["-O0", "-g"]
    return []  # fastbuild: host -O0; clang compiles HIP device code at -O3 unless told otherwise

def _object_name(ctx, src):
    # Under the target's name (two targets may compile one source), keep the source's
    # package-relative path so that a/k.hip and b/k.hip do not collide. A source of another
    # repository has the short path ../REPO/PACKAGE/...: without its ../REPO/ the object would
    # leave the target's folder, and every target compiling it would write the same file.
    relative = src.short_path
    if relative.startswith("../"):
        relative = relative.split("/", 2)[2]
    if ctx.label.package and relative.startswith(ctx.label.package + "/"):
        relative = relative[len(ctx.label.package) + 1:]
    return "_objs/%s/%s.pic.o" % (ctx.label.name, relative.rsplit(".", 1)[0])

def _rocm_library_impl(ctx):
    toolchain = ctx.toolchains[ROCM_TOOLCHAIN_TYPE].rocm
    if not toolchain.configured:
        fail("%s compiles HIP, but ROCm is not configured: %s" % (ctx.label, toolchain.unconfigured_message))
    targets, error = narrow_amdgpu_targets(ctx.attr._amdgpu_targets[AmdgpuTargetsInfo].targets, ctx.attr.amdgpu_targets)
    if error:
        fail("%s: amdgpu_targets = %s: %s" % (ctx.label, ctx.attr.amdgpu_targets, error))
    compress = ctx.attr._offload_compress[BuildSettingInfo].value

    private_headers = [f for f in ctx.files.srcs if any([f.basename.endswith(e) for e in _HEADER_EXTENSIONS])]
    repo_root = ctx.label.workspace_root or "."
    own_context = cc_common.create_compilation_context(
        headers = depset(ctx.files.hdrs + private_headers),
        # #include "pkg/file.h" from the repository root, as cc_library allows.
        quote_includes = depset([repo_root, ctx.bin_dir.path + ("/" + ctx.label.workspace_root if ctx.label.workspace_root else "")]),
        defines = depset(ctx.attr.defines),
        includes = depset([
            (ctx.label.workspace_root + "/" if ctx.label.workspace_root else "") +
            (ctx.label.package + "/" + i if ctx.label.package else i)
            for i in ctx.attr.includes
        ]),
    )
    dep_infos = [d[CcInfo] for d in ctx.attr.deps] + [toolchain.runtime]
    compilation_context = cc_common.merge_compilation_contexts(
        compilation_contexts = [own_context] + [i.compilation_context for i in dep_infos],
    )
    own_copts = [ctx.expand_make_variables("copts", c, {}) for c in ctx.attr.copts]
    global_copts = ctx.attr._copts[BuildSettingInfo].value
    for where, flags in (("copts", own_copts), ("--//rocm:copts", global_copts)):
        if target_flags_in(flags):
            fail("%s: %s name amdgpu targets (%s): the targets come from --//rocm:amdgpu_targets, narrowed by this rule's amdgpu_targets attribute, so that build_info.json lists what the modules hold; remove them from %s" % (
                ctx.label,
                where,
                " ".join(target_flags_in(flags)),
                where,
            ))
    copts = _opt_flags(ctx) + global_copts + own_copts

    # The host toolchain's libc and C++ library headers (--config=manylinux_2_28: glibc
    # 2.28 and Zig's libc++), so that HIP objects link with host objects as one.
    host_libc = toolchain.host_libc
    copts = copts + host_libc.copts

    # The toolkit's compiler files and the host libc headers are inputs: with a TheRock
    # tarball and --config=manylinux_2_28 the actions read nothing outside their inputs but
    # the OS (tests/bazel/test_hermetic.py).
    compile_inputs = depset([toolchain.config_file], transitive = [compilation_context.headers, toolchain.files, host_libc.files])
    split = ctx.attr._per_target[BuildSettingInfo].value and splits(toolchain, copts)
    shared = hip_shared_args(toolchain, compilation_context, ctx.attr.local_defines, copts)
    objects = []
    for src in ctx.files.srcs:
        if any([src.basename.endswith(e) for e in _HEADER_EXTENSIONS]):
            continue
        out = ctx.actions.declare_file(_object_name(ctx, src))
        common = unit_args(shared, "%s %s" % (ctx.label.name, src.short_path))
        hip_compile(ctx, toolchain, src, out, targets, compress, common, split, compile_inputs)
        objects.append(out)

    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )

    # The toolchain's own archiver action (CppArchive, its tool and flags), as cc_library
    # archives; no shared library of this target's own. The objects are PIC (hip_copts): they
    # are given as both kinds, as Bazel links an executable from the non-PIC archive and a
    # shared library from the PIC one.
    linking_context, linking_outputs = cc_common.create_linking_context_from_compilation_outputs(
        actions = ctx.actions,
        name = ctx.label.name,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        compilation_outputs = cc_common.create_compilation_outputs(objects = depset(objects), pic_objects = depset(objects)),
        user_link_flags = ctx.attr.linkopts,
        alwayslink = ctx.attr.alwayslink,
        disallow_dynamic_library = True,
    )
    archive = linking_outputs.library_to_link.pic_static_library
    public_context = cc_common.create_compilation_context(
        headers = depset(ctx.files.hdrs),
        defines = depset(ctx.attr.defines),
        includes = own_context.includes,
    )
    cc_info = cc_common.merge_cc_infos(
        direct_cc_infos = [CcInfo(compilation_context = public_context, linking_context = linking_context)],
        cc_infos = dep_infos,
    )
    return [
        DefaultInfo(files = depset([archive])),
        cc_info,
        OutputGroupInfo(hip_objects = depset(objects)),
    ]

rocm_library = rule(
    implementation = _rocm_library_impl,
    doc = "Compiles HIP sources with the configured ROCm clang for --//rocm:amdgpu_targets; provides CcInfo.",
    attrs = {
        "srcs": attr.label_list(allow_files = _HIP_EXTENSIONS + _HEADER_EXTENSIONS, doc = "HIP sources (any listed C++ file is compiled as HIP) and private headers."),
        "hdrs": attr.label_list(allow_files = _HEADER_EXTENSIONS, doc = "Public headers."),
        "deps": attr.label_list(providers = [CcInfo], doc = "cc_library/rocm_library targets (headers and link inputs)."),
        "copts": attr.string_list(doc = "Extra clang flags for these sources."),
        "defines": attr.string_list(doc = "-D for this library and its dependents."),
        "local_defines": attr.string_list(doc = "-D for this library only."),
        "includes": attr.string_list(doc = "Package-relative include directories for this library and its dependents."),
        "linkopts": attr.string_list(doc = "Linker flags dependents link with."),
        "alwayslink": attr.bool(doc = "Link every object even if unreferenced (kernels registered only by constructors)."),
        "linkstatic": attr.bool(default = True, doc = "cc_library's attribute, which XLA passes: a rocm_library is a static archive whatever its value (no shared library is made)."),
        "amdgpu_targets": attr.string_list(doc = "Compile for these of --//rocm:amdgpu_targets only (as rules_cuda's archs narrows its flag); empty: all of them. A target the flag does not list is refused: build_info.json records the flag's list."),
        "_amdgpu_targets": attr.label(default = "//rocm:amdgpu_targets", providers = [AmdgpuTargetsInfo]),
        "_offload_compress": attr.label(default = "//rocm:offload_compress"),
        "_per_target": attr.label(default = "//rocm:hip_compile_per_target"),
        "_copts": attr.label(default = "//rocm:copts"),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    toolchains = [ROCM_TOOLCHAIN_TYPE] + use_cpp_toolchain(),
    fragments = ["cpp"],
    provides = [CcInfo],
)
