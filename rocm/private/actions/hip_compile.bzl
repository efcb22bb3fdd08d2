"""The actions of one HIP source: the command lines (pure functions) and their registration.

A HIP compile is clang's offload pipeline: for every amdgpu target a device compile and link
into a code object, clang-offload-bundler packing the code objects into one fat binary, and
the host compile embedding it (`clang -###` shows exactly these steps inside one clang run).
Where the toolkit has the bundler, each step is an action of its own: a target's device code
compiles in parallel with the others (another core, another remote worker), adding a target
runs only that target's device action and what depends on it, and no single action holds
nine targets' compile time. The result is the same object, byte for byte, as one clang run's
(tests/bazel/test_hip_toolchain.py compares them).
"""

# clang's host triple for x86_64 Linux, as it names the host entry of a HIP fat binary; the
# wheels are x86_64 only.
_HOST_BUNDLE_ENTRY = "host-x86_64-unknown-linux-gnu"
_DEVICE_BUNDLE_PREFIX = "hipv4-amdgcn-amd-amdhsa--"

# clang flags that choose device targets: the targets come from --//rocm:amdgpu_targets and
# the rule's amdgpu_targets only, so that build_info.json's list is what the modules hold.
_TARGET_FLAGS = ["--offload-arch", "--cuda-gpu-arch", "--no-offload-arch"]

# Flags under which the pipeline is not the one split here: relocatable device code is
# linked at the final link (-fgpu-rdc), the new offload driver packs an offload binary
# instead of a bundle. A source compiled with them stays one action.
_WHOLE_FLAGS = ["-fgpu-rdc", "--offload-new-driver", "-foffload-new-driver"]

def target_flags_in(copts):
    """The copts that name an offload target (refused by rocm_library at analysis)."""
    return [c for c in copts if [f for f in _TARGET_FLAGS if c == f or c.startswith(f + "=")]]

def splits(toolchain_facts, copts):
    """Whether a source compiles as per-target actions and a bundle: the toolkit has the bundler
    and no copt chooses a pipeline this does not reproduce (_WHOLE_FLAGS)."""
    return bool(toolchain_facts.offload_bundler) and not [c for c in copts if c in _WHOLE_FLAGS]

def hip_shared_args(toolchain_facts, compilation_context, local_defines, copts):
    """What every clang run of a target's sources shares, after their mode flags: computed once
    per target (its depsets flattened once), then given each source's unit_args."""
    args = list(toolchain_facts.hip_copts) + [
        "--rocm-path=" + toolchain_facts.rocm_path,
        "--rocm-device-lib-path=" + toolchain_facts.device_libs_path,
    ]
    if toolchain_facts.hip_version:
        # The finder read HIP's version exactly; left to itself, clang guesses it from the
        # toolkit's files (share/hip/version) and, where that file is missing, assumes an old
        # HIP whose headers then miss device overloads JAX's kernels call.
        args.append("--hip-version=" + toolchain_facts.hip_version)

    # Objects must not depend on where the execroot is: local and remote builds are byte-identical.
    args.append("-ffile-compilation-dir=.")
    args += ["-D" + d for d in compilation_context.defines.to_list()]

    # Not from the merged context: merging drops local_defines (they are not for dependents).
    args += ["-D" + d for d in local_defines]
    args += ["-iquote" + d for d in compilation_context.quote_includes.to_list()]
    args += ["-I" + d for d in compilation_context.includes.to_list()]
    args += ["-isystem" + d for d in compilation_context.system_includes.to_list()]
    return args + copts

def unit_args(shared, unit):
    """One source's: the shared arguments with its compilation unit's name. `unit` names the
    compilation unit: the same source compiled by two targets (XLA's 30 hipCUB sort kernels,
    one per -D) are two units whose device symbols must not meet at link time. clang names a
    unit (CUID, in device symbol names) by hashing its command line, which may hold the
    toolkit's absolute path: named by the source instead, device code is the same from any
    toolkit location. Every action of the unit (device, host) carries the same one."""
    return ["-cuid=%x" % (hash(unit) & 0xffffffff)] + shared

def _source_args(src_path, out_path):
    return ["-x", "hip", "-c", src_path, "-o", out_path]

# The pipeline the split actions reproduce is the bundler's; a clang that defaulted to the new
# offload driver would otherwise package its device code differently from how the host compile
# embeds it.
_OLD_DRIVER = "--no-offload-new-driver"

def whole_compile_args(common, targets, compress, src_path, out_path):
    """One clang run doing the whole pipeline (a toolkit without the bundler, _WHOLE_FLAGS)."""
    args = _source_args(src_path, out_path) + ["--offload-arch=" + t for t in targets]
    if compress:
        args.append("--offload-compress")
    return args + common

def device_compile_args(common, target, src_path, out_path):
    """One target's device compile and link: the code object clang would bundle."""
    return _source_args(src_path, out_path) + [_OLD_DRIVER, "--cuda-device-only", "--no-gpu-bundle-output", "--offload-arch=" + target] + common

def bundle_order(targets):
    """The targets in the order clang bundles them (its sorted set of offload architectures)."""
    return sorted(targets)

def bundle_args(code_objects, compress, out_path):
    """clang-offload-bundler's arguments: `code_objects` (target, path) in bundle_order; the
    host entry is empty, as clang's is for HIP. --offload-compress compresses the bundle once."""
    args = [
        "-type=o",
        "-bundle-align=4096",
        "-targets=" + ",".join([_HOST_BUNDLE_ENTRY] + [_DEVICE_BUNDLE_PREFIX + t for t, _ in code_objects]),
        "-input=/dev/null",
    ] + ["-input=" + path for _, path in code_objects] + ["-output=" + out_path]
    if compress:
        args.append("--compress")
    return args

def host_compile_args(common, targets, bundle_path, src_path, out_path):
    """The host compile, embedding the bundle as clang's own host step does."""
    return (_source_args(src_path, out_path) + [_OLD_DRIVER, "--cuda-host-only"] + ["--offload-arch=" + t for t in targets] +
            ["-Xclang", "-fcuda-include-gpubinary", "-Xclang", bundle_path] + common)

def _file_stem(target):
    return target.replace(":", "_")  # gfx90a:xnack- -> gfx90a_xnack-

def hip_compile(ctx, toolchain, src, out, targets, compress, common, split, inputs):
    """Registers the actions that compile `src` into the object `out` for `targets`.

    toolchain: RocmToolchainInfo; common: unit_args(); split: splits(); inputs: depset of
    what the compiles read besides the source (headers, the toolkit's files)."""
    compile_inputs = depset([src], transitive = [inputs])
    env = {"PATH": "/usr/bin:/bin"}
    if not split:
        ctx.actions.run(
            executable = toolchain.clang,
            arguments = whole_compile_args(common, targets, compress, src.path, out.path),
            inputs = compile_inputs,
            outputs = [out],
            mnemonic = "HipCompile",
            progress_message = "Compiling HIP %s for %s" % (src.short_path, ",".join(targets)),
            env = env,
        )
        return
    stem = out.basename[:-len(".pic.o")] if out.basename.endswith(".pic.o") else out.basename
    code_objects = []
    for target in bundle_order(targets):
        code_object = ctx.actions.declare_file("%s.%s.hsaco" % (stem, _file_stem(target)), sibling = out)
        ctx.actions.run(
            executable = toolchain.clang,
            arguments = device_compile_args(common, target, src.path, code_object.path),
            inputs = compile_inputs,
            outputs = [code_object],
            mnemonic = "HipDeviceCompile",
            progress_message = "Compiling HIP %s for %s" % (src.short_path, target),
            env = env,
        )
        code_objects.append((target, code_object))
    bundle = ctx.actions.declare_file(stem + ".hipfb", sibling = out)
    ctx.actions.run(
        executable = toolchain.offload_bundler,
        arguments = bundle_args([(t, f.path) for t, f in code_objects], compress, bundle.path),
        inputs = depset([f for _, f in code_objects], transitive = [toolchain.files]),
        outputs = [bundle],
        mnemonic = "HipBundle",
        progress_message = "Bundling the device code of HIP %s (%s)" % (src.short_path, ",".join(targets)),
        env = env,
    )
    ctx.actions.run(
        executable = toolchain.clang,
        arguments = host_compile_args(common, targets, bundle.path, src.path, out.path),
        inputs = depset([bundle], transitive = [compile_inputs]),
        outputs = [out],
        mnemonic = "HipCompile",
        progress_message = "Compiling HIP %s (host code, embedding %s)" % (src.short_path, ",".join(targets)),
        env = env,
    )
