"""The `rocm` module extension: how MODULE.bazel says where ROCm comes from.

    rocm = use_extension("//rocm:extensions.bzl", "rocm")
    rocm.therock(
        urls = ["https://rocm.nightlies.amd.com/tarball/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"],
        sha256 = "...",
    )
    # or: rocm.local(path = "/opt/rocm-7.2.0")
    # or nothing: search $ROCM_PATH, /opt/rocm, /opt/rocm-* (newest first), /usr
    use_repo(rocm, "local_config_rocm")

On the command line, XLA's names (--repo_env=ROCM_PATH=DIR, TF_ROCM_MULTIPLE_PATHS,
ROCM_DISTRO_URL with ROCM_DISTRO_HASH, ROCM_DISTRO_VERSION) and this project's
THEROCK_URL with THEROCK_SHA256 override the module's choice (the order:
third_party/gpus/rocm_configure.bzl). ROCm is only looked for when TF_NEED_ROCM=1,
which --config=rocm sets.

TheRock tarballs are named therock-dist-linux-<family>-<version>.tar.gz; the
family says which amdgpu targets the tarball has device code for (see
THEROCK_FAMILIES in third_party/gpus/find_rocm_config.py and docs/rocm.md), and a
build that asks for targets outside it is refused.
"""

load("//third_party/gpus:rocm_configure.bzl", "rocm_configure", "rocm_toolkit_archive")

_therock = tag_class(
    doc = "A TheRock release tarball: downloaded once, sha256-checked, cached in Bazel's repository cache.",
    attrs = {
        "urls": attr.string_list(mandatory = True, doc = "Mirrors of the tarball: https://, file:// or an absolute path."),
        "sha256": attr.string(mandatory = True, doc = "SHA-256 of the tarball (sha256sum FILE)."),
        "strip_prefix": attr.string(doc = "Directory inside the tarball that is the toolkit root, if any."),
        "family": attr.string(doc = "amdgpu family (gfx94X-dcgpu, gfx950-dcgpu, gfx110X-all, gfx120X-all ...); default: from the file name."),
    },
)

_local = tag_class(
    doc = "A toolkit already on disk: an extracted TheRock tarball, /opt/rocm-X.Y.Z, or /usr (distribution packages).",
    attrs = {"path": attr.string(mandatory = True, doc = "Absolute path of the toolkit's root.")},
)

def _describe(module, kind, tag):
    what = tag.path if kind == "local" else (tag.urls[0] if tag.urls else "")
    return "rocm.%s(%s) in module %s" % (kind, what, module.name)

def _rocm_impl(mctx):
    declared = []
    for module in mctx.modules:
        for tag in module.tags.therock:
            declared.append((module, "therock", tag))
        for tag in module.tags.local:
            declared.append((module, "local", tag))
    if len(declared) > 1:
        fail("rocm: %s and %s both say where ROCm comes from; keep exactly one (in the root module), or override both with --repo_env=ROCM_PATH=... / THEROCK_URL=..." % (
            _describe(*declared[0]),
            _describe(*declared[1]),
        ))
    therock = [t for _, kind, t in declared if kind == "therock"]
    local = [t for _, kind, t in declared if kind == "local"]
    for tag in therock:
        if len(tag.sha256) != 64:
            fail("rocm.therock: sha256 = %r is not a SHA-256 (64 hex digits); compute it with sha256sum on the tarball." % tag.sha256)
    rocm_toolkit_archive(
        name = "rocm_toolkit_archive",
        urls = therock[0].urls if therock else [],
        sha256 = therock[0].sha256 if therock else "",
        strip_prefix = therock[0].strip_prefix if therock else "",
        family = therock[0].family if therock else "",
        local_path = local[0].path if local else "",
    )
    rocm_configure(
        name = "local_config_rocm",
        toolkit_archive = "@rocm_toolkit_archive//:toolkit.json",
    )

rocm = module_extension(
    implementation = _rocm_impl,
    doc = "Declares @local_config_rocm (and the TheRock download it may use).",
    tag_classes = {"therock": _therock, "local": _local},
)
