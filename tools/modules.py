"""How the programs of this checkout run each other: as modules, with its Python roots on
PYTHONPATH (`python3 -m sandbox ...`).

The project's Python has three roots, named here once (docs/layout.md):
  - the checkout: sandbox, tools, third_party, tests, bench (`python3 -m X` from the checkout
    has it on sys.path through its working folder);
  - build/: ci_build's package, ci_build_cli;
  - wheel/private/: the programs the wheel rules run (wheel_builder, runpath).
build/ and wheel/ are folders, not packages, so that PyPA's `build` and `wheel` are what
`import build` and `import wheel` find wherever these roots are on the path. The children of a
program may run elsewhere (`sandbox run` runs its command in the caller's folder), so they are
given every root on PYTHONPATH (module_environment).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
# build/ci_build, which runs before any of these can be imported, spells the same list (a unit
# test keeps them equal); so do pytest.ini's pythonpath and ruff.toml's src.
PYTHON_ROOTS = (CHECKOUT, CHECKOUT / "build", CHECKOUT / "wheel" / "private")


def module_command(module: str, *args: str) -> list[str]:
    """`python -m module args...` with this Python: run from the checkout, or with module_environment()."""
    return [sys.executable, "-m", module, *args]


def python_roots(checkout: Path = CHECKOUT) -> list[str]:
    """PYTHON_ROOTS of `checkout` (another copy of this one: a test worker's clone)."""
    return [str(checkout / root.relative_to(CHECKOUT)) for root in PYTHON_ROOTS]


def module_environment(base: Mapping[str, str] | None = None, checkout: Path = CHECKOUT) -> dict[str, str]:
    """`base` (default: this process's environment) with the Python roots of `checkout` (default:
    this one) first on PYTHONPATH."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join([*python_roots(checkout), *filter(None, [env.get("PYTHONPATH")])])
    return env


def restore_caller_pythonpath() -> None:
    """Takes the Python roots off the front of PYTHONPATH, where the launchers (build/ci_build,
    tools/bazel) put them for their module alone: what they start (Bazel, its repository rules, the
    user's programs) gets the caller's PYTHONPATH. This process keeps its sys.path."""
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    roots = python_roots()
    lead = next((n for n in range(len(roots), 0, -1) if entries[:n] == roots[:n]), 0)
    if lead:
        rest = os.pathsep.join(entries[lead:])
        if rest:
            os.environ["PYTHONPATH"] = rest
        else:
            del os.environ["PYTHONPATH"]


SANDBOX = module_command("sandbox")
