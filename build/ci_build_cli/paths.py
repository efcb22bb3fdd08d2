"""Where ci_build finds the checkout, its cache, and the programs it runs."""

from __future__ import annotations

import os
from pathlib import Path

from tools.modules import module_command

CHECKOUT = Path(__file__).resolve().parent.parent.parent
# Programs of the checkout, run as its modules (tools/modules.py) from the checkout (cwd).
SANDBOX = module_command("sandbox")
PREFETCH = module_command("tools.prefetch")
# This project's cache (sandbox/cache.py): the sandbox, Bazel's output root, clones.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-rocm-build"
# This project's packages as a Bazel flag names them from either root module: the checkout's
# MODULE.bazel, or full/MODULE.bazel, where this project is the module jax_rocm_build.
OURS = "@jax_rocm_build//"
# The sandbox profile every build provisions (sandbox/layers.py PROFILES).
SANDBOX_PROFILE = "full"
