"""How the programs of this checkout run each other: as modules of the checkout, the one
package root of its Python (`python3 -m sandbox ...`).

A program started from the checkout (`python3 -m X`) has the checkout on its sys.path through
its working folder; its children may run elsewhere (`sandbox run` runs its command in the
caller's folder), so they are given the checkout on PYTHONPATH instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def module_command(module: str, *args: str) -> list[str]:
    """`python -m module args...` with this Python: run from the checkout, or with module_environment()."""
    return [sys.executable, "-m", module, *args]


def module_environment(base: Mapping[str, str] | None = None, checkout: Path = CHECKOUT) -> dict[str, str]:
    """`base` (default: this process's environment) with `checkout` (default: this one) first on
    PYTHONPATH."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join([str(checkout), *filter(None, [env.get("PYTHONPATH")])])
    return env


def restore_caller_pythonpath() -> None:
    """Takes the checkout off the front of PYTHONPATH, where the launchers (build/ci_build,
    tools/bazel) put it for their module alone: what they start (Bazel, its repository rules, the
    user's programs) gets the caller's PYTHONPATH. This process keeps its sys.path."""
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if entries and entries[0] == str(CHECKOUT):
        rest = os.pathsep.join(entries[1:])
        if rest:
            os.environ["PYTHONPATH"] = rest
        else:
            del os.environ["PYTHONPATH"]


SANDBOX = module_command("sandbox")
