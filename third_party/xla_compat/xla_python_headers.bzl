"""@xla_python_headers: the XLA and TSL headers JAX's FFI modules include outside xla/ffi/api.

`xla/tsl/python/lib/core/numpy.h` (+ numpy.cc), `xla/python/safe_static_init.h` and TSL's
`tsl/platform/platform.h` (JAX's LAPACK kernels include it since after 0.11.0) come from
XLA's own tree when one is given (--repo_env=XLA_SOURCE_DIR=DIR, which tools/bazel sets
beside `--override_repository=xla=DIR`, and so `ci_build --xla-source-dir`) and it has them;
otherwise from this project's own implementation of their interface in third_party/xla_compat
(README.md there). source_info.json says which, for the wheels.
"""

XLA_PYTHON_HEADERS_ENVIRON = ["XLA_SOURCE_DIR"]

# Path in this repository (and in third_party/xla_compat) -> path in an XLA tree (TSL lives
# in XLA's third_party/tsl).
FILES = {
    "xla/tsl/python/lib/core/numpy.h": "xla/tsl/python/lib/core/numpy.h",
    "xla/tsl/python/lib/core/numpy.cc": "xla/tsl/python/lib/core/numpy.cc",
    "xla/python/safe_static_init.h": "xla/python/safe_static_init.h",
    "tsl/platform/platform.h": "third_party/tsl/tsl/platform/platform.h",
}

def _xla_python_headers_impl(rctx):
    xla = rctx.getenv("XLA_SOURCE_DIR", "").strip()
    compat = str(rctx.path(Label("//third_party/xla_compat:README.md")).dirname)
    from_xla = bool(xla) and all([rctx.path(xla + "/" + f).exists for f in FILES.values()])
    for f, in_xla in FILES.items():
        rctx.symlink(xla + "/" + in_xla if from_xla else compat + "/" + f, f)
    rctx.symlink(rctx.attr.build_file, "BUILD.bazel")
    if from_xla:
        info = {"origin": "xla", "path": xla, "files": FILES.values()}
    else:
        info = {
            "origin": "jax-rocm-build (third_party/xla_compat)",
            "stands_in_for": FILES.keys(),
            # No path here: build_info.json must not depend on where the checkout is.
            "why": "no XLA tree with these files was given (XLA_SOURCE_DIR %s)" % ("names a tree without them" if xla else "is unset") +
                   "; these implement the interface JAX's modules use (third_party/xla_compat/README.md)",
        }
    rctx.file("source_info.json", json.encode_indent(info) + "\n")

xla_python_headers = repository_rule(
    implementation = _xla_python_headers_impl,
    doc = "XLA's numpy.h/numpy.cc/safe_static_init.h and TSL's platform.h from XLA_SOURCE_DIR, else this project's stand-ins.",
    attrs = {"build_file": attr.label(mandatory = True)},
    environ = XLA_PYTHON_HEADERS_ENVIRON,
)
