"""jax_source_tree: JAX's sources under this project's BUILD file, without JAX's build graph.

JAX's own BUILD files load jaxlib/jax.bzl, which loads XLA's build macros (and so XLA's
whole dependency graph). The FFI modules need none of it: they are plain C++/HIP over
XLA's FFI headers, abseil, nanobind and ROCm. This rule lays out the files of jaxlib/,
jaxlib/{cpu,gpu,rocm}/ and jax/ (source_tree.py; JAX's BUILD and .bzl files left out)
and puts //third_party/jax:BUILD.jax.bazel at the root, so that //jaxlib/rocm compiles
JAX's files and loads nothing of JAX's.

Where the tree comes from, first match wins:
  --repo_env=JAX_SOURCE_DIR=/abs/path   a JAX checkout (symlinked: edits are seen) or an
                                        archive of one (.tar.gz, .zip; e.g. a git archive)
  third_party/jax/pin.json              the pinned release archive (sha256-checked, cached)
tools/bazel and build/ci_build turn `--override_repository=jax=DIR` and
`--jax-source-dir=DIR` into JAX_SOURCE_DIR.
"""

load(":source_archive.bzl", "PIN_ATTRS", "fetch_pinned")

JAX_SOURCE_ENVIRON = ["JAX_SOURCE_DIR"]

def _jax_source_tree_impl(rctx):
    python = rctx.which("python3")
    if not python:
        fail("jax_source_tree: python3 was not found on PATH; it lays out JAX's sources (third_party/private/source_tree.py). Install Python 3.11 or newer.")
    local = rctx.getenv("JAX_SOURCE_DIR", "").strip()
    args = [python, rctx.path(rctx.attr._tool), "--output", "."]
    pin = None
    if local:
        if not local.startswith("/"):
            fail("jax_source_tree: JAX_SOURCE_DIR=%s is a relative path; give an absolute one (build/ci_build --jax-source-dir and tools/bazel make it absolute for you)." % local)
        path = rctx.path(local)
        if not path.exists:
            fail("jax_source_tree: JAX_SOURCE_DIR=%s does not exist; give a JAX checkout (git clone https://github.com/jax-ml/jax) or an archive of one." % local)
        if path.is_dir and hasattr(rctx, "watch_tree"):
            rctx.watch_tree(path)  # a file added to the checkout re-runs this rule
        args += ["--source", str(path)]
    else:
        archive = "jax-source" + (".zip" if rctx.attr.type == "zip" else ".tar.gz")
        fetch_pinned(rctx, extract = False, output = archive)
        args += ["--source", archive, "--origin", "pinned archive", "--sha256", rctx.attr.sha256]
        pin = {"pin": rctx.attr.pin_file, "url": rctx.attr.urls[0], "commit": rctx.attr.version}
    rctx.report_progress("Laying out JAX's sources")
    result = rctx.execute(args, timeout = 600)
    if not local:
        rctx.delete(archive)  # the repository cache keeps the download
    if result.return_code != 0:
        fail("jax_source_tree: %s" % result.stderr.strip())
    info = json.decode(result.stdout)
    if pin:
        info["commit"] = info["commit"] or pin["commit"]
        info.update({"pin": pin["pin"], "url": pin["url"]})
    info["name"] = "jax"
    rctx.symlink(rctx.attr.build_file, "BUILD.bazel")
    rctx.file("source_info.json", json.encode_indent(info) + "\n")

jax_source_tree = repository_rule(
    implementation = _jax_source_tree_impl,
    doc = "JAX's sources (checkout, archive or pin) with this project's BUILD file; see the file docstring.",
    attrs = PIN_ATTRS | {
        "build_file": attr.label(mandatory = True, doc = "The BUILD file of the laid-out tree."),
        "_tool": attr.label(default = Label("//third_party/private:source_tree.py")),
    },
    environ = JAX_SOURCE_ENVIRON,
)
