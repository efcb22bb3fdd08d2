"""--//rocm:amdgpu_targets: which amdgpu code objects HIP sources are compiled into."""

load(":providers.bzl", "AmdgpuTargetsInfo", "RocmToolchainInfo")

# Target features a code object may be specialised for: gfx90a:xnack-, gfx942:sramecc+.
_FEATURES = ["xnack+", "xnack-", "sramecc+", "sramecc-"]

def _flag_name(label):
    name = str(label)
    return "--" + (name[2:] if name.startswith("@@//") else name)

def _near(name, supported):
    """Supported names a typo most likely meant: same prefix, longest first."""
    for cut in range(len(name), 3, -1):
        hits = [s for s in supported if s.startswith(name[:cut])]
        if hits:
            return hits[:6]
    return []

# The semicolon and ASCII white space (split_targets' re.ASCII \s): Bazel's str.split() wants a separator.
_SEPARATORS = [";", " ", "\t", "\n", "\r", "\f", "\v"]

def split_amdgpu_targets(values):
    """['gfx942,gfx950', 'gfx90a'] or 'gfx942;gfx950' -> ['gfx942', 'gfx950', 'gfx90a'].

    The rule of find_rocm_config.py split_targets, which splits the same lists before the
    build (TF_ROCM_AMDGPU_TARGETS, a dist_info.json's): commas, semicolons and ASCII white
    space separate, empty items are dropped, repeats too (order kept). Starlark cannot call
    it, so this is its one Starlark form: a value means the same on either side."""
    if type(values) == "string":
        values = [values]
    out = []
    for value in values:
        for separator in _SEPARATORS:
            value = value.replace(separator, ",")
        for part in value.split(","):
            if part and part not in out:
                out.append(part)
    return out

def check_amdgpu_targets(requested, supported, dist_targets, dist_allowed, compiler, flag, dist_description = "the TheRock toolkit", dist_remedy = ""):
    """Returns (targets, error message or None); pure, so the rule stays a thin shell.

    supported: what the compiler knows; dist_targets: what a TheRock toolkit has device code
    for (its dist_info.json's or its family's; empty: no limit), described by dist_description;
    dist_allowed: the supported targets a build may ask for under that limit, decided by the
    finder (find_rocm_config.py allowed_targets): this only looks them up. dist_remedy: how to
    add device code for a <target> (a multi-arch release's package or tarball; the finder's
    device_code_remedy), else a tarball of another family is named."""
    targets = split_amdgpu_targets(requested)
    if not targets:
        return [], "%s is empty: name at least one amdgpu target, e.g. %s=gfx942." % (flag, flag)
    problems = []
    uncovered = []
    for target in targets:
        parts = target.split(":")
        base = parts[0]
        for feature in parts[1:]:
            if feature not in _FEATURES:
                problems.append("'%s': unknown target feature '%s' (valid: %s)" % (target, feature, ", ".join(_FEATURES)))
        if supported and base not in supported:
            near = _near(base, supported)
            hint = " (did you mean %s?)" % ", ".join(near) if near else ""
            problems.append("'%s' is not an amdgpu target %s can compile for%s" % (base, compiler, hint))
        elif dist_targets and base not in dist_allowed:
            uncovered.append(base)
    if uncovered:
        problems.append("%s %s not covered by %s, which has device code for %s only" % (
            ", ".join(["'%s'" % t for t in uncovered]),
            "is" if len(uncovered) == 1 else "are",
            dist_description,
            " ".join(dist_targets),
        ))
    if not problems:
        return targets, None
    if uncovered and len(problems) == 1:
        elsewhere = "build with a TheRock tarball of a family that covers %s" % ", ".join(uncovered)
        if dist_remedy:
            elsewhere = "for %s, %s" % (", ".join(uncovered), dist_remedy.replace("<target>", uncovered[0]))
        advice = "Ask only for targets it covers: %s=%s, or leave the flag unset to get them by default; or %s." % (
            flag,
            ",".join(dist_targets),
            elsewhere,
        )
    else:
        advice = "Valid targets: %s.\nExample: %s=gfx942,gfx950, or --config=gfx942." % (
            ", ".join(supported) if supported else "(unknown: ROCm is not configured)",
            flag,
        )
    return [], "%s=%s: %s.\n%s" % (flag, ",".join(targets), "; ".join(problems), advice)

def _amdgpu_targets_flag_impl(ctx):
    toolkit = ctx.attr.toolkit[RocmToolchainInfo]
    flag = _flag_name(ctx.label)
    targets, error = check_amdgpu_targets(
        ctx.build_setting_value,
        toolkit.supported_targets,
        toolkit.dist_targets,
        toolkit.dist_allowed_targets,
        toolkit.compiler_description,
        flag,
        toolkit.dist_description,
        toolkit.dist_remedy,
    )
    if error and toolkit.configured:
        fail(error)
    return [AmdgpuTargetsInfo(targets = targets)]

amdgpu_targets_flag = rule(
    implementation = _amdgpu_targets_flag_impl,
    build_setting = config.string_list(flag = True),
    attrs = {
        # The toolkit's facts come as a provider (not by loading @local_config_rocm's
        # build_defs.bzl, which loads this package: a load cycle).
        "toolkit": attr.label(mandatory = True, providers = [RocmToolchainInfo], doc = "@local_config_rocm//:hip_compiler"),
    },
    doc = "A comma-separated list of amdgpu targets, validated against the configured clang at analysis.",
)

def narrow_amdgpu_targets(flag_targets, requested):
    """(targets, error or None): a rule's amdgpu_targets narrowing --//rocm:amdgpu_targets, as
    rules_cuda's archs does. Empty: the flag's targets. Otherwise those of the flag's targets
    (in the flag's order) that `requested` names, by name or by processor (gfx90a names
    gfx90a:xnack-): a library meant for some GPUs builds in any build that includes one of
    them, and never for a target the build's build_info.json does not list."""
    wanted = split_amdgpu_targets(requested)
    if not wanted:
        return flag_targets, None
    targets = [t for t in flag_targets if t in wanted or t.split(":")[0] in wanted]
    if not targets:
        return [], "none of %s is among the build's targets (--//rocm:amdgpu_targets=%s); add one to the flag, or leave this library out of this build" % (
            ", ".join(wanted),
            ",".join(flag_targets),
        )
    return targets, None
