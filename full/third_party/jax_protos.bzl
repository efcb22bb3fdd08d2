"""@jax_protos: JAX's .proto files in packages of their own, compiled with the graph's protobuf.

Bazel's proto_library takes sources from its own package only, and @jax (this project's
layout of JAX's files) is one package made by jax_rocm_build's extension, whose repository
mapping has no protobuf in kernels mode. So full mode links each .proto JAX's ROCm modules
need into a package of the same path here; `#include "jaxlib/gpu/triton.pb.h"` then works
as in JAX's own build.
"""

def _jax_protos_impl(rctx):
    for label, package in rctx.attr.protos.items():
        src = rctx.path(label)
        if not src.exists:
            fail("@jax_protos: %s is not in @jax (%s). Is the JAX tree (--repo_env=JAX_SOURCE_DIR, or the pin) a JAX release that has it?" % (label.name, src))
        rctx.symlink(src, "%s/%s" % (package, src.basename))
    for package, targets in rctx.attr.packages.items():
        rctx.file(package + "/BUILD.bazel", targets)
    rctx.file("BUILD.bazel", "")

jax_protos = repository_rule(
    implementation = _jax_protos_impl,
    attrs = {
        "protos": attr.label_keyed_string_dict(allow_files = [".proto"], doc = "a .proto of @jax -> the package it goes into"),
        "packages": attr.string_dict(doc = "package -> its BUILD file"),
    },
)
