"""kernel_packs: a multi-arch TheRock toolkit's kernel packs for the build's amdgpu targets.

A multi-arch release keeps each library's device code in .kpack/<artifact>_lib_<target>.kpack
files that librocm_kpack loads at run time. @local_config_rocm gives each library that loads
packs one of these targets as data, so that the runfiles of whatever uses the library hold the
packs of the targets --//rocm:amdgpu_targets names, and no other target's (XLA's BUILD.tpl does
the same with a glob over rocm_gpu_architectures(), a repository-time list)."""

load(":providers.bzl", "AmdgpuTargetsInfo")

def select_kernel_packs(packs, targets):
    """The packs (a dict of anything -> target name) whose target's processor is among the
    processors of `targets` (gfx90a:xnack- selects gfx90a's packs). Pure."""
    wanted = {t.split(":")[0]: True for t in targets}
    return [pack for pack, target in packs.items() if target.split(":")[0] in wanted]

def _kernel_packs_impl(ctx):
    targets = ctx.attr._amdgpu_targets[AmdgpuTargetsInfo].targets
    chosen = select_kernel_packs(ctx.attr.packs, targets)
    files = [f for pack in chosen for f in pack.files.to_list()]
    if files:  # the manifests describe the packs; without a pack they serve nothing
        files += ctx.files.manifests
    runfiles = ctx.runfiles(files = files)

    # data_runfiles too: a native rule's `data` takes a dependency's data runfiles.
    return [DefaultInfo(files = depset(files), default_runfiles = runfiles, data_runfiles = runfiles)]

kernel_packs = rule(
    implementation = _kernel_packs_impl,
    attrs = {
        "packs": attr.label_keyed_string_dict(allow_files = [".kpack"], doc = "Each kernel pack and the amdgpu target it holds."),
        "manifests": attr.label_list(allow_files = [".kpm"], doc = "The .kpm manifests of these packs' artifacts."),
        "_amdgpu_targets": attr.label(default = Label("//rocm:amdgpu_targets"), providers = [AmdgpuTargetsInfo]),
    },
    doc = "The kernel packs of the build's amdgpu targets (--//rocm:amdgpu_targets), as files and runfiles.",
)
