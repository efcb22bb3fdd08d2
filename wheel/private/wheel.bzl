"""rocm_wheel: one wheel, written by tools/wheel_builder.py from a JSON spec made here.

Everything the spec needs is known at analysis: the ROCm version from
@local_config_rocm, the amdgpu targets from --//rocm:amdgpu_targets, the version
pieces from //wheel:*, the source pins from @source_pins. The tool computes the
PEP 440 version and the file name, so the output is a directory holding the wheel.
"""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load("@local_config_rocm//:build_defs.bzl", "rocm_build_info", "rocm_version_number")
load("@source_pins//:defs.bzl", "PINS")
load("//rocm/private:providers.bzl", "AmdgpuTargetsInfo")

def rocm_versions():
    """(major, 'X.Y.Z') of the configured ROCm, from XLA's encoding 70204."""
    number = rocm_version_number()
    return number // 10000, "%d.%d.%d" % (number // 10000, (number // 100) % 100, number % 100)

def _flag(ctx, name):
    return getattr(ctx.attr, "_" + name)[BuildSettingInfo].value

def _rocm_wheel_impl(ctx):
    major, rocm_version = rocm_versions()
    if major == 0:
        fail("%s needs a configured ROCm for its name and metadata: add --config=rocm." % ctx.label)

    def fmt(text):
        return text.replace("{major}", str(major)).replace("{rocm_version}", rocm_version)

    files, inputs = [], []
    for target, dest in ctx.attr.srcs.items():
        for f in target[DefaultInfo].files.to_list():
            files.append({"dest": fmt(dest) + "/" + f.basename, "src": f.path, "executable": f.extension == "so"})
            inputs.append(f)

    version = {
        "base": _flag(ctx, "version"),
        "kind": _flag(ctx, "kind"),
        "date": _flag(ctx, "date"),
        "commit": _flag(ctx, "commit"),
        "post": _flag(ctx, "post_release"),
        "local": ("rocm" + rocm_version) if _flag(ctx, "rocm_version_extra") else "",
    }
    build_info = None
    if ctx.attr.build_info_dest:
        # The keys jax_plugins/rocm/__init__.py documents; the tool adds plugin_version.
        toolkit = rocm_build_info()
        overridden = _flag(ctx, "source_overrides")
        build_info = {
            "dest": fmt(ctx.attr.build_info_dest),
            "data": {
                "built_by": "jax-rocm-build",
                "jax_version": version["base"],
                "rocm_version": rocm_version,
                "rocm_major": major,
                "rocm_package_version": toolkit.get("rocm_version", ""),
                "hip_version": toolkit.get("hip_version", ""),
                "clang_version": toolkit.get("clang_version", ""),
                "rocm_layout": toolkit.get("layout", ""),
                "rocm_source": toolkit.get("source", ""),
                "rocm_therock_family": toolkit.get("therock_family", ""),
                "amdgpu_targets": ctx.attr._amdgpu_targets[AmdgpuTargetsInfo].targets,
                "python_tag": ctx.attr.python_tag,
                "sources": {
                    name: pin | {"origin": "override" if name in overridden else "pinned"}
                    for name, pin in PINS.items()
                },
            },
        }

    spec = ctx.actions.declare_file(ctx.label.name + ".spec.json")
    ctx.actions.write(spec, json.encode_indent({
        "distribution": fmt(ctx.attr.distribution),
        "version": version,
        "python_tag": ctx.attr.python_tag,
        "abi_tag": ctx.attr.abi_tag,
        "platform_tag": _flag(ctx, "platform_tag"),
        "summary": fmt(ctx.attr.summary),
        "description_file": ctx.file.description.path if ctx.file.description else None,
        "requires_python": ctx.attr.requires_python,
        "requires_dist": [fmt(r) for r in ctx.attr.requires_dist],
        "extras": {fmt(k): [fmt(r) for r in v] for k, v in ctx.attr.extras.items()},
        "classifiers": ctx.attr.classifiers,
        "license": "Apache-2.0",
        "home_page": "https://github.com/jax-ml/jax",
        "author": "JAX team and jax-rocm-build",
        "entry_points": {group: {fmt(k): fmt(v) for k, v in json.decode(points).items()} for group, points in ctx.attr.entry_points.items()},
        "files": files,
        "root_is_purelib": False,
        "build_info": build_info,
    }) + "\n")
    out = ctx.actions.declare_directory(ctx.label.name)
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = ["--quiet", "--spec", spec.path, "--out-dir", out.path],
        inputs = inputs + [spec] + ([ctx.file.description] if ctx.file.description else []),
        outputs = [out],
        # --action_env=SOURCE_DATE_EPOCH (build/ci_build passes it on) sets the entries' time.
        use_default_shell_env = True,
        mnemonic = "Wheel",
        progress_message = "Writing wheel %s" % fmt(ctx.attr.distribution),
    )
    return [DefaultInfo(files = depset([out]))]

rocm_wheel = rule(
    implementation = _rocm_wheel_impl,
    doc = "A wheel of ROCm artifacts; `{major}` and `{rocm_version}` in strings are the configured ROCm's.",
    attrs = {
        "distribution": attr.string(mandatory = True, doc = "e.g. jax_rocm{major}_pjrt"),
        "srcs": attr.label_keyed_string_dict(allow_files = True, doc = "target -> folder in the wheel its files go to"),
        "build_info_dest": attr.string(doc = "Where build_info.json goes (empty: none)."),
        "python_tag": attr.string(default = "py3"),
        "abi_tag": attr.string(default = "none"),
        "summary": attr.string(mandatory = True),
        "description": attr.label(allow_single_file = True),
        "requires_python": attr.string(default = ">=3.11"),
        "requires_dist": attr.string_list(),
        "extras": attr.string_list_dict(),
        "classifiers": attr.string_list(),
        "entry_points": attr.string_dict(doc = "group -> JSON object {name: module}"),
        "_builder": attr.label(default = "//tools:wheel_builder", executable = True, cfg = "exec"),
        "_amdgpu_targets": attr.label(default = "//rocm:amdgpu_targets"),
        "_version": attr.label(default = "//wheel:version"),
        "_kind": attr.label(default = "//wheel:kind"),
        "_date": attr.label(default = "//wheel:date"),
        "_commit": attr.label(default = "//wheel:commit"),
        "_post_release": attr.label(default = "//wheel:post_release"),
        "_rocm_version_extra": attr.label(default = "//wheel:rocm_version_extra"),
        "_platform_tag": attr.label(default = "//wheel:platform_tag"),
        "_source_overrides": attr.label(default = "//wheel:source_overrides"),
    },
)
