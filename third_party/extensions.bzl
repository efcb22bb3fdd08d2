"""Module extensions for the sources this build compiles and the Pythons it builds for.

    sources = use_extension("//third_party:extensions.bzl", "sources")
    use_repo(sources, "xla", "jax", "nanobind", "xla_ffi_headers")

Each repository comes from a pin, third_party/<name>/pin.json (commit or version,
urls, sha256, strip_prefix, patches), rewritten only by tools/update_pins.py.
Repositories made by an extension have canonical names (`_main~sources~xla` in
Bazel 7, `+sources+xla` in Bazel 8): tools/bazel and build/ci_build translate the
`--override_repository=xla=DIR` users type into that name.

    python = use_extension("//third_party:extensions.bzl", "python")
    use_repo(python, "local_config_python")

@local_config_python describes the interpreters extension modules are built for:
--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.12,/usr/bin/python3.13 (default: python3).
"""

load("//third_party/private:source_archive.bzl", "source_archive")
load("//third_party/python:python_configure.bzl", "python_configure")

# name -> pin file. Order is the order of `use_repo` in MODULE.bazel.
PINS = {
    "xla": "//third_party/xla:pin.json",
    "jax": "//third_party/jax:pin.json",
    "nanobind": "//third_party/nanobind:pin.json",
    "xla_ffi_headers": "//third_party/xla_ffi_headers:pin.json",
}

def _pin_label(pin, field):
    """A file named in a pin, relative to the pin's package."""
    return pin.same_package_label(field)

def _sources_impl(mctx):
    for name, pin_file in PINS.items():
        pin_label = Label(pin_file)
        pin = json.decode(mctx.read(pin_label))
        version = pin.get("commit") or pin.get("version", "")
        missing = [k for k in ("sha256", "urls") if not pin.get(k)]
        if missing:
            fail("%s: the pin has no %s; rewrite it with python3 tools/update_pins.py %s" % (pin_file, ", ".join(missing), name))
        source_archive(
            name = name,
            source_name = name,
            version = version,
            urls = [u.replace("{commit}", version) for u in pin["urls"]],
            sha256 = pin["sha256"],
            strip_prefix = pin.get("strip_prefix", "").replace("{commit}", version),
            type = pin.get("type", ""),
            build_file = _pin_label(pin_label, pin["build_file"]) if pin.get("build_file") else None,
            patches = [_pin_label(pin_label, p) for p in pin.get("patches", [])],
            pin_file = pin_file.replace("//", "").replace(":", "/"),
        )

sources = module_extension(
    implementation = _sources_impl,
    doc = "@xla, @jax, @nanobind, @xla_ffi_headers from their pins in third_party/*/pin.json.",
)

def _python_impl(mctx):
    python_configure(name = "local_config_python")

python = module_extension(
    implementation = _python_impl,
    doc = "@local_config_python: headers and extension suffix of each Python to build for.",
)
