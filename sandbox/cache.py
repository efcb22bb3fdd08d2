"""Where the sandbox keeps its state, and the locks that guard it.

The build lock serialises `ensure`s; the use lock is held shared by every `run`
and exclusively by whatever deletes a root, so a root in use is never removed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
from pathlib import Path
from typing import Iterator

from . import log
from .action_cache import root_key


def nearest_existing(path: Path) -> Path:
    """`path`, or the nearest of its parents that exists: where a folder that is not made yet
    would be made (its permissions, its disk)."""
    while not path.exists():
        path = path.parent
    return path


@dataclasses.dataclass(frozen=True)
class Paths:
    cache: Path  # ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build

    @staticmethod
    def default() -> "Paths":
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Paths(Path(base).absolute() / "jax-rocm-build")

    @property
    def sandbox(self) -> Path:
        return self.cache / "sandbox"

    @property
    def current(self) -> Path:
        return self.sandbox / "current"

    @property
    def build_lock(self) -> Path:
        return self.sandbox / "build.lock"

    @property
    def use_lock(self) -> Path:
        return self.sandbox / "use.lock"

    @property
    def logs(self) -> Path:
        return self.sandbox / "logs"

    @property
    def apt_archives(self) -> Path:
        """Downloaded .deb files, kept across rebuilds so a rebuild downloads nothing."""
        return self.cache / "apt-archives"

    @property
    def bazel_user_root(self) -> Path:
        """Bazel's --output_user_root: outside the root so outputs survive a rebuild."""
        return self.cache / "bazel"

    @property
    def action_caches(self) -> Path:
        """Bazel's --disk_cache, one folder per root (action_cache.py): shared by every workspace."""
        return self.cache / "actions"

    def action_cache(self, root: Path) -> Path:
        """The action cache of this root (named by its exact packages, action_cache.root_key)."""
        return self.action_caches / root_key(root)

    @property
    def distdir(self) -> Path:
        """Bazel's --distdir: pinned archives fetched by ordinary clients (tools/prefetch.py)."""
        return self.cache / "distdir"


# --------------------------------------------------------------------------
# Locks
# --------------------------------------------------------------------------


@contextlib.contextmanager
def flock(path: Path, exclusive: bool, waiting_msg: str) -> Iterator[int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            log(waiting_msg)
            fcntl.flock(fd, mode)
        yield fd
    finally:
        os.close(fd)


def try_flock_exclusive(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except BlockingIOError:
        os.close(fd)
        return None
