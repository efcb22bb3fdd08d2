"""The CPython interpreters wheels are built for: the sandbox's and the host's, with headers."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

from .paths import SANDBOX


@dataclasses.dataclass(frozen=True)
class Interpreter:
    version: str  # "3.11"
    path: str  # as seen inside the sandbox
    bind: str | None  # a host prefix to mount into the sandbox, None for the sandbox's own


PROBE = "import sys, sysconfig; print('%d.%d' % sys.version_info[:2], sys.base_prefix, sysconfig.get_paths()['include'])"


def _probe(cmd: list[str]) -> list[str] | None:
    result = subprocess.run(cmd + ["-c", PROBE], capture_output=True, text=True)
    return result.stdout.split() if result.returncode == 0 else None


def find_interpreters() -> list[Interpreter]:
    """CPython interpreters with headers: the sandbox's, then the host's (mounted into the sandbox)."""
    found: dict[str, Interpreter] = {}
    inside = _probe(SANDBOX + ["run", "--", "python3"])
    if inside:
        found[inside[0]] = Interpreter(inside[0], f"/usr/bin/python{inside[0]}", None)
    candidates = [sys.executable] + [shutil.which(f"python3.{minor}") for minor in range(10, 16)]
    for exe in filter(None, candidates):
        probe = _probe([exe])
        if probe and probe[0] not in found and Path(probe[2], "Python.h").exists():
            version, prefix = probe[0], probe[1]
            found[version] = Interpreter(version, str(Path(exe).resolve()), prefix if prefix not in ("/usr", "/usr/local") else None)
    return [found[v] for v in sorted(found, key=lambda v: tuple(map(int, v.split("."))))]


def pick_interpreters(requested: str | None, found: list[Interpreter]) -> list[Interpreter]:
    if not requested:
        return found
    by_version = {i.version: i for i in found}
    wanted = [v.strip() for v in requested.split(",") if v.strip()]
    missing = [v for v in wanted if v not in by_version]
    if missing:
        have = ", ".join(f"{i.version} ({i.path})" for i in found) or "none"
        raise SystemExit(f"ci_build: no interpreter with headers for Python {', '.join(missing)}; found: {have}. "
                         "Install pythonX.Y and its -dev package, or ask only for the versions found.")
    return [by_version[v] for v in wanted]
