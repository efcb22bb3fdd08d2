"""The plugin wheel's extension modules as the build names them (jaxlib/rocm/modules.bzl: plain
list assignments, which Python reads as they are)."""

from __future__ import annotations

from tests.conftest import CHECKOUT


def plugin_modules() -> list[str]:
    names: dict = {}
    exec(compile((CHECKOUT / "jaxlib/rocm/modules.bzl").read_text(), "modules.bzl", "exec"), names)
    return list(names["PLUGIN_MODULES"])
