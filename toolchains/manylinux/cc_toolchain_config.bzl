"""zig_cc_toolchain_config: the CcToolchainConfigInfo of @zig_sdk's cc_toolchain.

The tools are @zig_sdk's wrappers (bin/cc = `zig c++ -target x86_64-linux-gnu.2.28`,
bin/ar = `zig ar`). Zig links against stubs of that glibc's symbol versions and links
its own libc++, libc++abi and libunwind statically, so an object built here needs
nothing newer than glibc 2.28 and no libstdc++ at run time. The legacy features Bazel
adds to a tool_paths toolchain (dependency files, PIC, includes, defines, -shared,
libraries to link, param files ...) do the rest; the features below add the flags
that differ per compilation mode.
"""

load("@bazel_tools//tools/build_defs/cc:action_names.bzl", "ACTION_NAMES")
load(
    "@bazel_tools//tools/cpp:cc_toolchain_config_lib.bzl",
    "env_entry",
    "env_set",
    "feature",
    "flag_group",
    "flag_set",
    "tool_path",
    "with_feature_set",
)
load("@rules_cc//cc/common:cc_common.bzl", "cc_common")

_C_COMPILE = [ACTION_NAMES.c_compile, ACTION_NAMES.assemble, ACTION_NAMES.preprocess_assemble]
_CXX_COMPILE = [
    ACTION_NAMES.cpp_compile,
    ACTION_NAMES.cpp_header_parsing,
    ACTION_NAMES.cpp_module_compile,
    ACTION_NAMES.cpp_module_codegen,
    ACTION_NAMES.linkstamp_compile,
]
_COMPILE = _C_COMPILE + _CXX_COMPILE
_LINK = [
    ACTION_NAMES.cpp_link_executable,
    ACTION_NAMES.cpp_link_dynamic_library,
    ACTION_NAMES.cpp_link_nodeps_dynamic_library,
]

# Link flags of every mode and of one mode; zig_runtime links with the same ones, since they
# decide which libc++ Zig builds (opt: optimized, without debug information).
_LINK_FLAGS = ["-Wl,-z,relro,-z,now", "-Wl,--build-id=md5", "-Wl,--hash-style=gnu"]
_MODE_LINK_FLAGS = {"opt": ["-O2", "-Wl,--gc-sections", "-Wl,--strip-debug"]}

# What Bazel adds to fastbuild links under its default --strip=sometimes; it, too, changes
# the libc++ Zig links (without debug information).
_RUNTIME_EXTRA_FLAGS = {"fastbuild": ["-Wl,-S"]}

def _flags(actions, flags, features = None):
    return flag_set(
        actions = actions,
        flag_groups = [flag_group(flags = flags)],
        with_features = [with_feature_set(features = features)] if features else [],
    )

def _impl(ctx):
    features = [
        feature(name = "opt"),
        feature(name = "dbg"),
        feature(name = "fastbuild"),
        feature(name = "supports_pic", enabled = True),
        feature(name = "supports_dynamic_linker", enabled = True),
        feature(
            name = "default_compile_flags",
            enabled = True,
            flag_sets = [
                _flags(_COMPILE, [
                    # zig cc turns UBSan on (as traps) when no -O is given; Bazel's fastbuild
                    # gives none, and a trap is not what a wheel's users should get.
                    "-fno-sanitize=undefined",
                    # Reproducible objects: no dates, no absolute paths of the execroot.
                    "-Wno-builtin-macro-redefined",
                    "-D__DATE__=\"redacted\"",
                    "-D__TIMESTAMP__=\"redacted\"",
                    "-D__TIME__=\"redacted\"",
                    "-ffile-compilation-dir=.",
                    "-fstack-protector",
                    "-fno-omit-frame-pointer",
                ]),
                _flags(_CXX_COMPILE, ["-std=c++17"]),
                _flags(_COMPILE, ["-g0", "-O2", "-DNDEBUG", "-ffunction-sections", "-fdata-sections"], ["opt"]),
                _flags(_COMPILE, ["-g", "-O0"], ["dbg"]),
                # fastbuild: -O1 (the sandbox's gcc has -O0) keeps the modules small, at some
                # compile time (bench/bench_manylinux.py). ci_build ships opt (--config=rocm_release).
                _flags(_COMPILE, ["-O1"], ["fastbuild"]),
            ],
        ),
        feature(
            name = "default_link_flags",
            enabled = True,
            flag_sets = [
                _flags(_LINK, _LINK_FLAGS),
                # zig builds the libc++ it links in the mode the link line names, with debug
                # information when none is named: opt links an optimized one, and release
                # wheels carry no debug sections (measured: 12.1 MB plugin wheel without these).
                _flags(_LINK, _MODE_LINK_FLAGS["opt"], ["opt"]),
            ],
        ),
        # Where the wrapper finds Zig's runtime, an input of every link (zig_runtime below).
        feature(
            name = "zig_runtime_cache",
            enabled = True,
            env_sets = [env_set(
                actions = _LINK,
                env_entries = [env_entry(key = "ZIG_RUNTIME_CACHE", value = ctx.file.runtime.path)],
            )],
        ),
    ]
    tools = {
        "gcc": "bin/cc",
        "cpp": "bin/cc",
        "ld": "bin/cc",
        "ar": "bin/ar",
        "nm": "bin/nm",
        "objdump": "bin/objdump",
        "strip": "bin/strip",
        "gcov": "bin/gcov",
    }
    return cc_common.create_cc_toolchain_config_info(
        ctx = ctx,
        features = features,
        # Relative to @zig_sdk (the toolchain's package): Zig's lib/, by exec-root-relative path.
        cxx_builtin_include_directories = ["sdk/lib"],
        toolchain_identifier = "zig_%s_%s" % (ctx.attr.zig_version, ctx.attr.target),
        host_system_name = "x86_64-unknown-linux-gnu",
        target_system_name = ctx.attr.target,
        target_cpu = "k8",
        target_libc = "glibc_" + ctx.attr.glibc,
        compiler = "clang",
        abi_version = "glibc_" + ctx.attr.glibc,
        abi_libc_version = "glibc_" + ctx.attr.glibc,
        tool_paths = [tool_path(name = name, path = path) for name, path in tools.items()],
    )

zig_cc_toolchain_config = rule(
    implementation = _impl,
    doc = "The configuration of a cc_toolchain over Zig's `zig c++ -target <target>` wrappers.",
    attrs = {
        "target": attr.string(mandatory = True, doc = "Zig's target, e.g. x86_64-linux-gnu.2.28"),
        "glibc": attr.string(mandatory = True),
        "zig_version": attr.string(mandatory = True),
        "runtime": attr.label(mandatory = True, allow_single_file = True, doc = "zig_runtime: the cache link actions start from"),
    },
    provides = [CcToolchainConfigInfo],
)

def _zig_runtime_impl(ctx):
    mode = ctx.var["COMPILATION_MODE"]
    out = ctx.actions.declare_directory(ctx.label.name + "_" + mode)
    ctx.actions.run(
        executable = ctx.executable.tool,
        arguments = [out.path] + _LINK_FLAGS + _MODE_LINK_FLAGS.get(mode, []) + _RUNTIME_EXTRA_FLAGS.get(mode, []),
        inputs = ctx.files.zig + [ctx.file.restamp],
        outputs = [out],
        mnemonic = "ZigRuntime",
        progress_message = "Building Zig's libc++, libunwind and glibc stubs (%s)" % mode,
    )
    return [DefaultInfo(files = depset([out]))]

zig_runtime = rule(
    implementation = _zig_runtime_impl,
    doc = """Zig's runtime (libc++, libc++abi, libunwind, glibc stubs, crt objects) for the target's
    compilation mode, built once into a tree artifact that is Zig's cache: each link action
    copies it into its private cache instead of rebuilding it (about 110 s a link on 2 cores),
    and restamps the copy (`restamp`, built into the tree from zig_cache_restamp.c) so that it
    hits wherever the link runs. A link whose flags ask for another runtime still succeeds:
    Zig then builds it privately.""",
    attrs = {
        "restamp": attr.label(mandatory = True, allow_single_file = [".c"]),
        "tool": attr.label(mandatory = True, allow_single_file = True, executable = True, cfg = "exec"),
        "zig": attr.label(mandatory = True, allow_files = True),
    },
)
