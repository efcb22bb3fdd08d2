"""Where ci_build finds the checkout, its cache, and the programs it runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent.parent
SANDBOX = [sys.executable, str(CHECKOUT / "tools" / "sandbox.py")]
PREFETCH = [sys.executable, str(CHECKOUT / "tools" / "prefetch.py")]
# This project's cache (tools/sandbox_root/cache.py): the sandbox, Bazel's output root, clones.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-rocm-build"
