"""Every FFI extension module of the plugin wheel imports in this Python and offers FFI handlers.

The modules are imported by name from //jaxlib/rocm's folder in the runfiles, which the BUILD
file puts on the test's import path (its `imports`).
"""

import importlib
import sys

MODULES = sys.argv[1:]  # jaxlib/rocm/modules.bzl's PLUGIN_MODULES, from the BUILD file
if not MODULES:
    sys.exit("extensions_test: no module names given (the BUILD file passes PLUGIN_MODULES as args)")
failures = []
for name in MODULES:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        failures.append(f"{name}: {exc}")
        continue
    handlers = module.registrations() if hasattr(module, "registrations") else {}
    kinds = {type(v).__name__ for v in handlers.values()}
    print(f"{name}: {sorted(handlers)}")
    if name != "rocm_plugin_extension" and not handlers:
        failures.append(f"{name}: registrations() is empty")
    if kinds - {"PyCapsule", "dict", "list", "tuple"}:
        failures.append(f"{name}: handlers of unexpected types {kinds}")
sys.exit("\n".join(failures) if failures else 0)
