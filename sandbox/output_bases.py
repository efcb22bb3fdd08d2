"""Bazel output bases under the sandbox's --output_user_root, and which of them are orphans.

Bazel names an output base after its workspace's path and never deletes one. A checkout
copied to a temporary folder (as the tests and benchmarks do) leaves 0.1-4 GB behind once
the folder is gone, and with caches reused across CI runs those add up until the disk is
full. An orphan is an output base whose workspace no longer exists: nothing can use it
again, since a new checkout at that path would start from `bazel clean --expunge` anyway.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

# Bazel writes this line into <output_base>/README when it creates the output base.
WORKSPACE_LINE = "WORKSPACE: "


@dataclasses.dataclass(frozen=True)
class OutputBase:
    path: Path
    workspace: Path | None  # None: no README naming one (not an output base Bazel finished creating)


def workspace_of(readme_text: str) -> Path | None:
    for line in readme_text.splitlines():
        if line.startswith(WORKSPACE_LINE):
            return Path(line[len(WORKSPACE_LINE):].strip())
    return None


def output_bases(user_root: Path) -> list[OutputBase]:
    """The output bases under `user_root` (Bazel's install/ and the repository cache are not)."""
    found = []
    for path in sorted(user_root.glob("*/README")):
        try:
            workspace = workspace_of(path.read_text(errors="replace"))
        except OSError:
            workspace = None
        found.append(OutputBase(path.parent, workspace))
    return found


def default_name(workspace: Path) -> str:
    """Bazel's name for a workspace's output base: the MD5 of the workspace's path."""
    return hashlib.md5(str(workspace).encode()).hexdigest()


def orphans(bases: list[OutputBase], exists=Path.exists) -> list[OutputBase]:
    """The output bases whose workspace is gone. Only those named as Bazel names a workspace's
    own output base count: the README's first line is then confirmed by the folder's name."""
    return [b for b in bases
            if b.workspace is not None and b.path.name == default_name(b.workspace) and not exists(b.workspace)]
