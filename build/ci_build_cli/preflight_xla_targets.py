"""The other half of a pre-flight's names: the XLA targets this project's BUILD files name.

`preflight_names` asks whether this project answers every name XLA and JAX use of
`@local_config_rocm`. The reverse breaks too: XLA HEAD renames or moves a target this
project depends on (`@xla//xla/pjrt/c:pjrt_c_api_gpu`, `@xla//xla/python:py_client_gpu` ...),
and a build learns it only after fetching XLA's whole dependency graph. The XLA tree's BUILD
files say it in milliseconds, without Bazel: each label's package must have a BUILD file
that declares the target, by its name or, for the `_cc` library of a proto macro
(`xla_data_proto_cc`), by the proto's name.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

# This project's files that name XLA's targets, per mode, relative to the checkout. Kernels mode:
# the plugin and the stand-in modules; full mode: the plugin and JAX's modules with XLA's
# dependencies (jax_targets.bzl: the transcription both modes share, whose kernels-mode targets
# name no XLA target).
OUR_BUILD_FILES = {
    "kernels": ("BUILD.bazel", "jaxlib/rocm/BUILD.bazel"),
    "full": ("BUILD.bazel", "full/BUILD.bazel", "jaxlib/rocm/private/jax_targets.bzl", "full/jaxlib/rocm/defs.bzl"),
}

_XLA_LABEL = re.compile(r"[\"']@xla//([A-Za-z0-9_./+-]*)(?::([A-Za-z0-9_./+-]+))?[\"']")
_NAME = re.compile(r"\bname\s*=\s*[\"']([^\"']+)[\"']")
# Macros that declare `<name>_cc` beside the `<name>` they are given (tf_proto_library,
# xla_proto_library, cc_proto_library wrappers).
_GENERATED_SUFFIXES = ("_cc",)


@dataclasses.dataclass(frozen=True, order=True)
class Missing:
    label: str  # "@xla//xla/python:py_client_gpu"
    used_in: str  # "jaxlib/rocm/private/jax_targets.bzl:580"
    why: str  # "no BUILD file in xla/python" or "xla/python/BUILD declares no py_client_gpu"


def xla_labels(texts: Iterable[tuple[str, str]]) -> dict[str, str]:
    """`@xla//pkg:name` -> its first use (`file:line`), over (file, text) pairs."""
    first: dict[str, str] = {}
    for file, text in texts:
        for number, line in enumerate(text.splitlines(), 1):
            code = line.split("#", 1)[0]
            for m in _XLA_LABEL.finditer(code):
                package, name = m.group(1), m.group(2) or PurePosixPath(m.group(1)).name
                first.setdefault(f"@xla//{package}:{name}", f"{file}:{number}")
    return first


def declared(build_text: str) -> set[str]:
    """The target names a BUILD file declares (`name = "..."` of any rule or macro call)."""
    names = set(_NAME.findall(build_text))
    return names | {n + suffix for n in names for suffix in _GENERATED_SUFFIXES}


def build_files(texts: Iterable[tuple[str, str]]) -> dict[str, str]:
    """package -> its BUILD file's text, from a tree's (relative path, text) pairs."""
    packages: dict[str, str] = {}
    for relative, text in texts:
        path = PurePosixPath(relative)
        if path.name in ("BUILD", "BUILD.bazel"):
            package = "" if str(path.parent) == "." else str(path.parent)
            packages.setdefault(package, text)  # BUILD.bazel wins: listed first by name order
    return packages


def missing(used: dict[str, str], packages: dict[str, str]) -> list[Missing]:
    found = []
    for label, where in sorted(used.items()):
        package, name = label.removeprefix("@xla//").split(":", 1)
        if package not in packages:
            found.append(Missing(label, where, f"no BUILD file in {package or 'the root'}"))
        elif name not in declared(packages[package]):
            found.append(Missing(label, where, f"{package}/BUILD declares no {name}"))
    return found


def our_texts(checkout: Path, mode: str) -> list[tuple[str, str]]:
    return [(f, (checkout / f).read_text()) for f in OUR_BUILD_FILES[mode]]
