"""Every FFI extension module of the plugin wheel imports in this Python and offers FFI handlers."""

import importlib
import importlib.machinery
import sys
from pathlib import Path

from python.runfiles import runfiles

MODULES = sys.argv[1:]  # jaxlib/rocm/modules.bzl's PLUGIN_MODULES, from the BUILD file
if not MODULES:
    sys.exit("extensions_test: no module names given (the BUILD file passes PLUGIN_MODULES as args)")
suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
directory = Path(runfiles.Create().Rlocation(f"_main/jaxlib/rocm/_prng{suffix}")).parent
sys.path.insert(0, str(directory))
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
