"""The CPython interpreters wheels are built for: the sandbox's and the host's, with headers;
in host mode (--host) every python3.X on PATH with headers, /usr's included. By default, those
of the Pythons the JAX tree builds for (sources.jax_pythons: its build/requirements_lock_3_NN.txt)."""

from __future__ import annotations

import dataclasses
import functools
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from sandbox.build import ready_root
from sandbox.cache import Paths
from sandbox.layers import OPTIONAL_PYTHONS, PROFILE_PYTHONS

from .inputs import InputError
from .paths import SANDBOX_PROFILE


@dataclasses.dataclass(frozen=True)
class Interpreter:
    version: str  # "3.11"
    path: str  # as seen inside the sandbox (host mode: on this machine)
    bind: str | None  # a host prefix to mount into the sandbox, None for the sandbox's own (and in host mode)



PROBE = "import sys, sysconfig; print('%d.%d' % sys.version_info[:2], sys.base_prefix, sysconfig.get_paths()['include'])"

# The python3.X names looked for in the sandbox's root and on the host (PATH).
_MINORS = range(10, 20)


@functools.cache
def _probe(exe: str) -> tuple[str, ...] | None:
    """(X.Y, base prefix, include folder) of an interpreter; asked once per run of ci_build (the
    checks, then the build, ask again)."""
    result = subprocess.run([exe, "-c", PROBE], capture_output=True, text=True)
    return tuple(result.stdout.split()) if result.returncode == 0 else None


def sandbox_versions() -> tuple[str, ...] | None:
    """The Pythons with headers of the sandbox's ready root, read from its files (nothing runs);
    None where no root is ready."""
    root = ready_root(Paths.default())
    if root is None:
        return None
    return tuple(f"3.{m}" for m in _MINORS if (root / f"usr/bin/python3.{m}").exists()
                 and (root / f"usr/include/python3.{m}/Python.h").exists())


def find_interpreters(predict_from_layers: bool = True) -> list[Interpreter] | None:
    """CPython interpreters with headers: the sandbox's (its ready root's), then the host's
    (mounted into the sandbox). Where no root is ready: with predict_from_layers, those a root of
    the profile is built with (PROFILE_PYTHONS), for answering --python-versions at once; else None
    (a dry run names what it assumes instead). Nothing here builds or runs the sandbox."""
    versions = sandbox_versions()
    if versions is None:
        if not predict_from_layers:
            return None
        versions = PROFILE_PYTHONS[SANDBOX_PROFILE]
    found = {v: Interpreter(v, f"/usr/bin/python{v}", None) for v in versions}
    candidates = [sys.executable] + [shutil.which(f"python3.{minor}") for minor in _MINORS]
    for exe in filter(None, candidates):
        probe = _probe(exe)
        # The host's /usr is not the sandbox's (that is Debian sid's): only an interpreter
        # installed under a prefix of its own (pyenv, python.org, conda) can be mounted in.
        if probe and probe[0] not in found and probe[1] not in ("/usr", "/usr/local") and Path(probe[2], "Python.h").exists():
            found[probe[0]] = Interpreter(probe[0], str(Path(exe).resolve()), probe[1])
    return [found[v] for v in sorted(found, key=lambda v: tuple(map(int, v.split("."))))]


def check_requested(requested: str, supported: Sequence[str], host: bool) -> None:
    """--python-versions against the interpreters that would serve it, before anything runs
    (InputError: pick_interpreters'): in host mode this machine's, else the sandbox's (its root's,
    or those a root is built with) and the host's that can be mounted in."""
    found = find_host_interpreters() if host else find_interpreters(predict_from_layers=True)
    pick_interpreters(requested, found, supported, host)


def find_host_interpreters() -> list[Interpreter]:
    """Host mode: every python3.X on PATH (then the one running ci_build) with headers, under
    /usr too, each at the path PATH gives it; the first of each version wins."""
    found: dict[str, Interpreter] = {}
    candidates = [shutil.which(f"python3.{minor}") for minor in _MINORS] + [sys.executable]
    for exe in filter(None, candidates):
        probe = _probe(exe)
        if probe and probe[0] not in found and Path(probe[2], "Python.h").exists():
            found[probe[0]] = Interpreter(probe[0], exe, None)
    return [found[v] for v in sorted(found, key=lambda v: tuple(map(int, v.split("."))))]


def left_out(found: list[Interpreter], supported: Sequence[str], host: bool = False) -> list[str]:
    """One line for each Python the JAX tree builds for (`supported`) that no interpreter found
    here serves, saying how to add it in this mode (sandbox, or host mode)."""
    have = ", ".join(i.version for i in found) or "none"
    return [f"Python {v} left out: no interpreter with headers (found: {have}); " + _how_to_add(v, host)
            for v in supported if v not in {i.version for i in found}]


def _how_to_add(v: str, host: bool) -> str:
    if host:
        return f"install python{v} and its headers (python{v}-dev, or pyenv, python.org) so that python{v} is on PATH"
    debian = (f"add Debian's to the sandbox (python3 -m sandbox ensure --rocm=full --python={v}), or "
              if v in OPTIONAL_PYTHONS else "")
    return (f"{debian}install python{v} with its headers under a prefix of its own on the host (pyenv, python.org; the "
            "sandbox's /usr is Debian sid's, not the host's) and it is mounted into the sandbox, or build in host "
            f"mode (--host) with your own python{v}-dev")


def assumed_sandbox_interpreters(supported: Sequence[str]) -> list[Interpreter]:
    """What a dry run names before the sandbox exists (find_interpreters gave None): each version
    the JAX tree builds for, as the sandbox's /usr/bin/python3.X (said in a note)."""
    versions = tuple(supported)
    print("# the sandbox is not made yet, so its Pythons are not known: the commands below name "
          f"/usr/bin/python{{{','.join(versions)}}}; a run without --dry-run makes it, then looks", file=sys.stderr)
    return [Interpreter(v, f"/usr/bin/python{v}", None) for v in versions]


def pick_interpreters(requested: str | None, found: list[Interpreter], supported: Sequence[str],
                      host: bool = False) -> list[Interpreter]:
    """The interpreters asked for (InputError naming each one missing; sources.check_local_sources
    has refused any the JAX tree does not build for); by default those found of the versions the
    JAX tree builds for (`supported`)."""
    if not requested:
        return [i for i in found if i.version in supported]
    by_version = {i.version: i for i in found}
    wanted = [v.strip() for v in requested.split(",") if v.strip()]
    missing = [v for v in wanted if v not in by_version]
    if missing:
        have = ", ".join(f"{i.version} ({i.path})" for i in found) or "none"
        first = missing[0]
        how = (f"install python{first} and its headers (python{first}-dev) so that python{first} is on PATH" if host else
               (f"add Debian's to the sandbox (python3 -m sandbox ensure --rocm=full --python={first}), " if
                first in OPTIONAL_PYTHONS else "") +
               f"install python{first} with its headers under a prefix of its own (pyenv, python.org: mounted into the "
               f"sandbox), or build in host mode (--host) with your own python{first}-dev")
        raise InputError(f"--python-versions={requested}: no interpreter with headers for Python {', '.join(missing)}; "
                         f"found: {have}. "
                         f"To add one, {how}; or ask only for the versions found.")
    return [by_version[v] for v in wanted]
