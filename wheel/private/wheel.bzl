"""rocm_wheel: one wheel, written by wheel_builder.py (beside it) from a JSON spec made here.

Everything the spec needs is known at analysis: the ROCm version from
@local_config_rocm, the amdgpu targets from --//rocm:amdgpu_targets, the version
pieces from //wheel:* and JAX's ML_WHEEL_* variables (@ml_wheel_env), the source pins
from @source_pins. The PEP 440 version and the file name are made here (version.bzl), so the
rule declares its `.whl` (<name>/<distribution>-<version>-<tags>.whl) as rules_python's
py_wheel does; the tool checks both again with packaging and writes the archive. Beside it,
the wheel's description (<name>.wheel.json, RocmWheelInfo.description, the rocm_wheel_info
output group): the version, tags and build_info.json, for programs.
"""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load("@local_config_rocm//:build_defs.bzl", "rocm_build_info", "rocm_major", "rocm_release")
load("@ml_wheel_env//:ml_wheel.bzl", "ML_WHEEL")
load("@source_pins//:defs.bzl", "PINS")
load("//rocm:defs.bzl", "AmdgpuTargetsInfo")
load(":version.bzl", "wheel_file_name", "wheel_version")

# Targets of examples/ carry this tag: code of this project's writing standing in for
# XLA's or JAX's (examples/*/README.md). build_info.json names every one a wheel holds.
STAND_IN_TAG = "jax_rocm_stand_in"

RocmWheelInfo = provider(
    doc = "A wheel this project built, named at analysis as rules_python's PyWheelInfo names its wheel.",
    fields = {
        "distribution": "the distribution as the rule was given it, {major} filled in (jax_rocm7_pjrt)",
        "version": "the PEP 440 version, canonical (0.10.2+rocm7.2.4)",
        "python_tag": "cp313, or py3",
        "abi_tag": "cp313, or none",
        "platform_tag": "--//wheel:platform_tag's",
        "wheel": "File: the .whl, <name>/<distribution>-<version>-<tags>.whl",
        "description": "File: JSON of wheel_builder.wheel_description: the .whl's path (from the execution root), " +
                       "distribution, version, tags and build_info.json. Also the rocm_wheel_info output group.",
    },
)

RocmWheelSetInfo = provider(
    doc = "Wheels built together (rocm_wheel_set): each one's RocmWheelInfo, nested sets flattened, in order.",
    fields = {"wheels": "list of RocmWheelInfo"},
)

# The output group of every wheel's description: `bazel cquery --output=files
# --output_groups=rocm_wheel_info //:jax_rocm_wheels` names them, whichever folders they are in.
WHEEL_INFO_GROUP = "rocm_wheel_info"

StandInsInfo = provider(
    doc = "The stand-in targets (tagged STAND_IN_TAG) in a target's dependency closure.",
    fields = {"labels": "depset of label strings"},
)

def _stand_ins_aspect_impl(target, ctx):
    own = [str(target.label)] if STAND_IN_TAG in getattr(ctx.rule.attr, "tags", []) else []
    transitive = [
        dep[StandInsInfo].labels
        for attr in ("deps", "srcs")
        for dep in getattr(ctx.rule.attr, attr, [])
        if type(dep) == "Target" and StandInsInfo in dep
    ]
    return [StandInsInfo(labels = depset(own, transitive = transitive))]

stand_ins_aspect = aspect(
    implementation = _stand_ins_aspect_impl,
    attr_aspects = ["deps", "srcs"],
    doc = "Collects the stand-in targets a wheel's artifacts are built from.",
)

def _source_entry(name, pin, overridden, stand_in_sources):
    if name in stand_in_sources:
        return {"origin": "examples", "note": "built from the examples/%s stand-in, not from this pin" % name, "pin": pin}
    return pin | {"origin": "override" if name in overridden else "pinned"}

def _flag(ctx, name):
    return getattr(ctx.attr, "_" + name)[BuildSettingInfo].value

def _same_commit(a, b):
    """Whether two spellings of a commit name the same one (a full sha and a short one)."""
    a, b = a.lower(), b.lower()
    return a.startswith(b) or b.startswith(a)

def wheel_identity(kind, date, commit, ml):
    """The version's kind, date, commit and suffix from --//wheel:kind, date and commit ("" when
    unset) and JAX's ML_WHEEL_* (`ml`: @ml_wheel_env's ML_WHEEL). A setting given both ways
    must agree: else analysis stops, in one line naming both, before anything is built. Unset
    both ways, the kind is release (this project's default; JAX's is snapshot). The pieces go
    to version.bzl's wheel_version, which says what is missing."""
    ml_kind, ml_date, ml_hash = ml["ML_WHEEL_TYPE"], ml["ML_WHEEL_BUILD_DATE"].replace("-", ""), ml["ML_WHEEL_GIT_HASH"]
    if kind and ml_kind and kind != ml_kind:
        fail("--@jax_rocm_build//wheel:kind=%s and --repo_env=ML_WHEEL_TYPE=%s ask for different wheel versions; drop one (ML_WHEEL_TYPE is JAX's spelling of the kind, with custom and snapshot besides: wheel/README.md)" % (kind, ml_kind))
    if date and ml_date and date != ml_date:
        fail("--@jax_rocm_build//wheel:date=%s and --repo_env=ML_WHEEL_BUILD_DATE=%s name different build dates; drop one or make them the same day" % (date, ml["ML_WHEEL_BUILD_DATE"]))
    if commit and ml_hash and not _same_commit(commit, ml_hash):
        fail("--@jax_rocm_build//wheel:commit=%s and --repo_env=ML_WHEEL_GIT_HASH=%s name different commits; drop one or give the same commit" % (commit, ml_hash))

    # Whose names a missing or bad date or commit is said in: JAX's variables when ML_WHEEL_TYPE chose.
    from_ml = ml_kind != "" and kind == ""
    return {
        "kind": kind or ml_kind or "release",
        "date": date or ml_date,
        "commit": commit or ml_hash,
        "suffix": ml["ML_WHEEL_VERSION_SUFFIX"],
        "ml_wheel": from_ml,
    }

def _without_build_tree_runpath(ctx, library, dest):
    """A copy of a shared library without Bazel's RUNPATH entries into its build tree
    (runpath.py): what it keeps is rocm_path_type's (third_party/gpus/private/runpath.bzl)."""
    out = ctx.actions.declare_file("%s_packed/%s/%s" % (ctx.label.name, dest, library.basename))
    ctx.actions.run(
        executable = ctx.executable._runpath,
        arguments = ["--in", library.path, "--out", out.path],
        inputs = [library],
        outputs = [out],
        mnemonic = "StripBuildTreeRunpath",
        progress_message = "Stripping build-tree RUNPATH entries of %s" % library.short_path,
    )
    return out

def _configured_toolkit(ctx):
    """The toolkit the wheel is built against, from the finder's facts (rocm_config.json): its
    release, major, exact version and what chose it; analysis stops where a wheel cannot be made."""
    major, rocm_version = rocm_major(), rocm_release()
    facts = rocm_build_info()
    if major == 0:
        fail("%s needs a configured ROCm for its name and metadata: add --config=rocm." % ctx.label)
    rocm_path_type = ctx.attr._rocm_path_type[BuildSettingInfo].value
    if rocm_path_type == "hermetic":
        fail("%s: --@local_config_rocm//rocm:rocm_path_type=hermetic keeps Bazel's RUNPATHs into its build tree, which mean nothing once the wheel is installed; wheels take link_only (--config=rocm_release), system or multiple." % ctx.label)
    return struct(
        major = major,
        # The release without a TheRock suffix.
        rocm_version = rocm_version,
        # As the finder read it (7.10.0a20251120 for a TheRock nightly): the wheel's summary and
        # local version say exactly which toolkit it was built with.
        exact_version = facts.get("rocm_version") or rocm_version,
        facts = facts,
        rocm_path_type = rocm_path_type,
    )

def _packed_files(ctx, fmt):
    """(the spec's files, the action's inputs, build_info's artifacts): each file of srcs at its
    folder in the wheel, shared libraries without build-tree RUNPATHs."""
    files, inputs, artifacts = [], [], {}
    for target, dest in ctx.attr.srcs.items():
        stand_ins = sorted(target[StandInsInfo].labels.to_list()) if StandInsInfo in target else []
        origin = ctx.attr.origins.get(str(target.label), "")
        for f in target[DefaultInfo].files.to_list():
            if f.extension == "so":
                f = _without_build_tree_runpath(ctx, f, fmt(dest))
            files.append({"dest": fmt(dest) + "/" + f.basename, "src": f.path, "executable": f.extension == "so"})
            inputs.append(f)
            if origin:
                artifacts[f.basename] = {"origin": "examples" if stand_ins else origin, "stand_ins": stand_ins}
    return files, inputs, artifacts

def _build_info(ctx, toolkit, artifacts, fmt):
    """build_info.json's part analysis knows (None: the wheel has none)."""
    if not ctx.attr.build_info_dest:
        return None

    # A source whose every artifact here was built from stand-ins is not in this wheel at all.
    stand_in_sources = [
        origin
        for origin in ctx.attr.origins.values()
        if not [a for a in artifacts.values() if a["origin"] == origin]
    ]

    # The keys jax_plugins/rocm/__init__.py documents that analysis knows; the tool completes
    # them once (wheel_builder.complete_build_info: source_info_files, plugin_version).
    overridden = _flag(ctx, "source_overrides")
    return {
        "dest": fmt(ctx.attr.build_info_dest),
        "data": {
            "built_by": "jax-rocm-build",
            "jax_version": _flag(ctx, "version"),
            "rocm_version": toolkit.rocm_version,
            "rocm_major": toolkit.major,
            "rocm_package_version": toolkit.exact_version,
            "hip_version": toolkit.facts.get("hip_version", ""),
            "clang_version": toolkit.facts.get("clang_version", ""),
            "rocm_layout": toolkit.facts.get("layout", ""),
            "rocm_source": toolkit.facts.get("source", ""),
            "rocm_therock_family": toolkit.facts.get("therock_family", ""),
            "amdgpu_targets": ctx.attr._amdgpu_targets[AmdgpuTargetsInfo].targets,
            "rocm_path_type": toolkit.rocm_path_type,
            "python_tag": ctx.attr.python_tag,
            "sources": {
                name: _source_entry(name, pin, overridden, stand_in_sources)
                for name, pin in PINS.items()
                if name in ctx.attr.sources
            },
            "artifacts": artifacts,
        },
        # Files whose JSON replaces sources[name]: what a repository rule found (e.g. @jax's tree).
        "source_info_files": {name: f.path for name, f in zip(ctx.attr.source_info_names, ctx.files.source_infos)},
    }

def _spec(ctx, fmt, distribution, version, platform_tag, files, build_info):
    """The JSON spec wheel_builder.py reads (its spec_from_json)."""
    return {
        "distribution": distribution,
        "version": version,
        "python_tag": ctx.attr.python_tag,
        "abi_tag": ctx.attr.abi_tag,
        "platform_tag": platform_tag,
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
    }

def _rocm_wheel_impl(ctx):
    toolkit = _configured_toolkit(ctx)

    def fmt(text):
        return text.replace("{major}", str(toolkit.major)).replace("{rocm_version}", toolkit.exact_version)

    version, problem = wheel_version(
        base = _flag(ctx, "version"),
        post = _flag(ctx, "post_release"),
        local = toolkit.facts.get("wheel_local", "rocm" + toolkit.exact_version) if _flag(ctx, "rocm_version_extra") else "",
        **wheel_identity(_flag(ctx, "kind"), _flag(ctx, "date"), _flag(ctx, "commit"), ML_WHEEL)
    )
    if problem:
        fail("%s: %s" % (ctx.label, problem))
    distribution, platform_tag = fmt(ctx.attr.distribution), _flag(ctx, "platform_tag")
    file_name, problem = wheel_file_name(distribution, version, ctx.attr.python_tag, ctx.attr.abi_tag, platform_tag)
    if problem:
        fail("%s: %s" % (ctx.label, problem))

    files, inputs, artifacts = _packed_files(ctx, fmt)
    build_info = _build_info(ctx, toolkit, artifacts, fmt)
    if build_info:
        inputs += ctx.files.source_infos

    spec = ctx.actions.declare_file(ctx.label.name + ".spec.json")
    ctx.actions.write(spec, json.encode_indent(_spec(ctx, fmt, distribution, version, platform_tag, files, build_info)) + "\n")

    # In a folder of the target's name, as before the name was known here: bazel-bin/<package>/<name>/.
    wheel = ctx.actions.declare_file("%s/%s" % (ctx.label.name, file_name))
    description = ctx.actions.declare_file(ctx.label.name + ".wheel.json")
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = ["--quiet", "--spec", spec.path, "--out", wheel.path, "--description-out", description.path],
        inputs = inputs + [spec] + ([ctx.file.description] if ctx.file.description else []),
        outputs = [wheel, description],
        # --action_env=SOURCE_DATE_EPOCH (build/ci_build passes it on) sets the entries' time.
        use_default_shell_env = True,
        mnemonic = "Wheel",
        progress_message = "Writing wheel %s" % file_name,
    )
    return [
        DefaultInfo(files = depset([wheel])),
        RocmWheelInfo(
            distribution = distribution,
            version = version,
            python_tag = ctx.attr.python_tag,
            abi_tag = ctx.attr.abi_tag,
            platform_tag = platform_tag,
            wheel = wheel,
            description = description,
        ),
        OutputGroupInfo(**{WHEEL_INFO_GROUP: depset([description])}),
    ]

def _rocm_wheel_set_impl(ctx):
    wheels = []
    for w in ctx.attr.wheels:
        if RocmWheelInfo in w:
            wheels.append(w[RocmWheelInfo])
        elif RocmWheelSetInfo in w:
            wheels.extend(w[RocmWheelSetInfo].wheels)
        else:
            fail("%s: wheels = [%s]: not a rocm_wheel or rocm_wheel_set (it provides neither RocmWheelInfo nor RocmWheelSetInfo); list only those" % (ctx.label, w.label))
    return [
        RocmWheelSetInfo(wheels = wheels),
        DefaultInfo(files = depset(transitive = [w[DefaultInfo].files for w in ctx.attr.wheels])),
        OutputGroupInfo(**{WHEEL_INFO_GROUP: depset(transitive = [w[OutputGroupInfo][WHEEL_INFO_GROUP] for w in ctx.attr.wheels])}),
    ]

rocm_wheel_set = rule(
    implementation = _rocm_wheel_set_impl,
    doc = "Wheels built together: their files, each one's RocmWheelInfo (RocmWheelSetInfo) and their rocm_wheel_info output group.",
    attrs = {
        "wheels": attr.label_list(mandatory = True, doc = "rocm_wheel or rocm_wheel_set targets"),
    },
    provides = [RocmWheelSetInfo],
)

rocm_wheel = rule(
    implementation = _rocm_wheel_impl,
    doc = "A wheel of ROCm artifacts; `{major}` and `{rocm_version}` in strings are the configured ROCm's.",
    attrs = {
        "distribution": attr.string(mandatory = True, doc = "e.g. jax_rocm{major}_pjrt"),
        "srcs": attr.label_keyed_string_dict(allow_files = True, aspects = [stand_ins_aspect], doc = "target -> folder in the wheel its files go to"),
        "sources": attr.string_list(doc = "The pinned sources (@source_pins) this wheel's code is built from."),
        "origins": attr.string_dict(doc = "label of a srcs target -> whose code it is (jax, xla); build_info.json's artifacts"),
        "source_infos": attr.label_list(allow_files = [".json"], doc = "JSON files describing source trees, e.g. @jax//:source_info.json"),
        "source_info_names": attr.string_list(doc = "The source each of source_infos describes (jax ...)."),
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
        "_builder": attr.label(default = "//wheel/private:wheel_builder", executable = True, cfg = "exec"),
        "_runpath": attr.label(default = "//wheel/private:runpath", executable = True, cfg = "exec"),
        "_amdgpu_targets": attr.label(default = "//rocm:amdgpu_targets"),
        "_rocm_path_type": attr.label(default = "@local_config_rocm//rocm:rocm_path_type"),
        "_version": attr.label(default = "//wheel:version"),
        "_kind": attr.label(default = "//wheel:kind"),
        "_date": attr.label(default = "//wheel:date"),
        "_commit": attr.label(default = "//wheel:commit"),
        "_post_release": attr.label(default = "//wheel:post_release"),
        "_rocm_version_extra": attr.label(default = "//wheel:rocm_version_extra"),
        "_platform_tag": attr.label(default = "//wheel:platform_tag"),
        "_source_overrides": attr.label(default = "//wheel:source_overrides"),
    },
    provides = [RocmWheelInfo],
)
