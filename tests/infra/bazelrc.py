"""A reader of .bazelrc files as Bazel expands them, for tests that compare what a config means
in two workspaces (the checkout's root module and full/) without running Bazel: import and
try-import (with %workspace%), `command:config` lines, and --config expanded in place, a
config's `common:` lines before its `build:` lines before its `test:` lines (as Bazel applies
them; rocm/rocm.bazelrc's header says why that order matters)."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

# A command's options include those of the commands it inherits from (Bazel's command
# hierarchy, as far as this project's rc files use it).
PARENTS = {"common": (), "build": ("common",), "test": ("common", "build"), "query": ("common",)}


@dataclasses.dataclass(frozen=True)
class RcLine:
    command: str
    config: str | None
    options: tuple[str, ...]
    source: Path


def read(path: Path, workspace: Path, optional: bool = False) -> list[RcLine]:
    """Every option line of `path` and of the files it imports, in Bazel's order."""
    if not path.is_file():
        if optional:
            return []
        raise FileNotFoundError(f"{path}: imported, but there is no such file")
    lines: list[RcLine] = []
    for raw in path.read_text().splitlines():
        words = shlex.split(raw, comments=True)
        if not words:
            continue
        if words[0] in ("import", "try-import"):
            target = Path(words[1].replace("%workspace%", str(workspace))).resolve()
            lines += read(target, workspace, optional=words[0] == "try-import")
            continue
        command, _, config = words[0].partition(":")
        lines.append(RcLine(command, config or None, tuple(words[1:]), path))
    return lines


def configs(lines: list[RcLine]) -> set[str]:
    return {line.config for line in lines if line.config}


def expand(lines: list[RcLine], config: str, command: str = "build", seen: tuple[str, ...] = ()) -> list[str]:
    """The options --config=`config` stands for on `command`, nested configs expanded in place;
    a config that includes itself is an error (Bazel's too)."""
    if config in seen:
        raise ValueError(f"--config={config} includes itself: {' -> '.join((*seen, config))}")
    if config not in configs(lines):
        raise KeyError(f"--config={config} is defined in none of the rc files read")
    options: list[str] = []
    for level in (*PARENTS[command], command):
        for line in lines:
            if line.config == config and line.command == level:
                for option in line.options:
                    if option.startswith("--config="):
                        options += expand(lines, option.split("=", 1)[1], command, (*seen, config))
                    else:
                        options.append(option)
    return options


def expansions(lines: list[RcLine], config: str, command: str = "build") -> list[str]:
    """Every config that --config=`config` expands, itself included, once per expansion (a name
    twice in the list: Bazel's 'The following configs were expanded more than once')."""
    names = [config]
    for level in (*PARENTS[command], command):
        for line in lines:
            if line.config == config and line.command == level:
                for option in line.options:
                    if option.startswith("--config="):
                        names += expansions(lines, option.split("=", 1)[1], command)
    return names
