#!/usr/bin/env python3
"""Imports //jaxlib/rocm's extension modules and prints what they expose, as JSON.

    PYTHONPATH=bazel-bin/jaxlib/rocm python3 -m tests.infra.check_modules

Run from the checkout (a module of it); the modules are imported by name, from the folder
PYTHONPATH gives.

For each module: the file it was loaded from, the examples/jax stand-in marker
(`_jax_rocm_example`, None for JAX's own modules), and each FFI target of
registrations() with its type and capsule name (an FFI handler capsule is an unnamed
PyCapsule holding a non-null pointer). rocm_plugin_extension's get_device_ordinal(0) is
called too: without a GPU it must raise, not crash. Used by the bazel test tier.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import sys

MODULES = ("_prng", "_linalg", "_solver", "_sparse", "_hybrid", "_rnn", "_triton", "rocm_plugin_extension")

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.argtypes, _get_name.restype = [ctypes.py_object], ctypes.c_char_p
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.argtypes, _get_pointer.restype = [ctypes.py_object, ctypes.c_char_p], ctypes.c_void_p


def describe_target(value) -> dict:
    entry = {"type": type(value).__name__}
    if entry["type"] == "PyCapsule":
        name = _get_name(value)
        entry["capsule_name"] = name.decode() if name is not None else None
        entry["has_pointer"] = bool(_get_pointer(value, name))
    return entry


def describe_module(name: str) -> dict:
    module = importlib.import_module(name)
    report = {
        "file": module.__file__,
        "marker": getattr(module, "_jax_rocm_example", None),
        "registrations": {k: describe_target(v) for k, v in sorted(module.registrations().items())},
    }
    if hasattr(module, "get_device_ordinal"):
        try:
            report["get_device_ordinal(0)"] = {"value": module.get_device_ordinal(0)}
        except Exception as exc:  # the point is that it raises cleanly
            report["get_device_ordinal(0)"] = {"error": type(exc).__name__, "message": str(exc)}
    return report


def main(argv: list[str]) -> int:
    if argv[1:]:
        print("check_modules: no arguments; give the modules' folder on PYTHONPATH", file=sys.stderr)
        return 2
    print(json.dumps({name: describe_module(name) for name in MODULES}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
