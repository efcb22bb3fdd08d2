"""The action cache every Bazel inside the sandbox shares: one Bazel disk cache per root.

Bazel keys an action by its command line, environment and declared inputs. The compilers and
libraries of the root itself (the sandbox's gcc, Debian's ROCm clang under /usr) are not
declared inputs, so a result is only reusable by the same root: each root gets its own
folder, named by a digest of its installed packages (dpkg's status file), and a root with any
package changed starts a new one. Within one root, two checkouts, a test's scratch copy or a
rebuilt output base get each other's results: what Bazel would rebuild bit for bit.

Bazel bounds a disk cache itself only while a server sits idle; the sandbox's servers die with
their `run`, so the bound is kept here: `trim` deletes the least recently used entries (Bazel
refreshes an entry's mtime on every hit) under Bazel's own garbage-collection lock, `gc/lock`,
which Bazel takes with fcntl locks, as `fcntl.lockf` does. A build that finds an entry gone
while it runs takes it as a miss and runs the action.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import os
import time
from pathlib import Path
from typing import Iterator

# JAX_ROCM_ACTION_CACHE=off: no action cache for this command (what tests of real execution set).
SWITCH_ENV = "JAX_ROCM_ACTION_CACHE"
# JAX_ROCM_ACTION_CACHE_GB=N: the bound of each root's cache.
BOUND_ENV = "JAX_ROCM_ACTION_CACHE_GB"
DEFAULT_BOUND_GB = 20.0
# Trimming goes below the bound, so that the next build does not trim again at once.
TRIM_TO = 0.8
# Entries touched this recently are never trimmed: a running build may be about to read them.
IN_USE_SECONDS = 600
# How often `run` looks at the cache's size (a scan stats every entry).
TRIM_INTERVAL_SECONDS = 3600
STORES = ("ac", "cas")


def enabled(env: dict[str, str]) -> bool:
    return env.get(SWITCH_ENV, "").strip().lower() not in ("off", "0", "no", "false")


def bound_bytes(env: dict[str, str]) -> int:
    """The bound JAX_ROCM_ACTION_CACHE_GB sets (default 20 GB); a bad value is a one-line error."""
    value = env.get(BOUND_ENV, "").strip()
    if not value:
        return int(DEFAULT_BOUND_GB * 1e9)
    try:
        gb = float(value)
    except ValueError:
        gb = -1.0
    if gb <= 0:
        raise ValueError(f"{BOUND_ENV}={value!r} is not a size in GB; give a positive number such as 20, or unset it")
    return int(gb * 1e9)


def root_key(root: Path) -> str:
    """The digest that names a root's action cache: its exact installed package versions."""
    return hashlib.sha256((root / "var/lib/dpkg/status").read_bytes()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class Entry:
    path: Path
    size: int
    mtime: float


def entries(cache: Path) -> list[Entry]:
    """Every stored blob and action result (not Bazel's tmp/ or gc/ folders)."""
    found = []
    for store in STORES:
        for dirpath, _dirs, files in os.walk(cache / store):
            for name in files:
                path = Path(dirpath) / name
                try:
                    st = path.lstat()
                except FileNotFoundError:  # taken by another trim or replaced by Bazel meanwhile
                    continue
                found.append(Entry(path, st.st_size, st.st_mtime))
    return found


def victims(found: list[Entry], bound: int, now: float) -> list[Entry]:
    """The least recently used entries to delete so that the rest fit in TRIM_TO of `bound`;
    none while the cache fits in `bound`. Entries used in the last IN_USE_SECONDS are kept even
    when that leaves the cache above its target."""
    total = sum(e.size for e in found)
    if total <= bound:
        return []
    goal = int(bound * TRIM_TO)
    chosen = []
    for entry in sorted(found, key=lambda e: e.mtime):
        if total <= goal or now - entry.mtime < IN_USE_SECONDS:
            break
        chosen.append(entry)
        total -= entry.size
    return chosen


@contextlib.contextmanager
def gc_lock(cache: Path) -> Iterator[bool]:
    """Bazel's own garbage-collection lock (<disk cache>/gc/lock), exclusive and without
    waiting: yields False when another collector (Bazel's or ours) holds it."""
    lock = cache / "gc" / "lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            yield False
            return
        yield True
    finally:
        os.close(fd)


@dataclasses.dataclass(frozen=True)
class TrimResult:
    entries: int
    size: int  # bytes before trimming
    deleted: int
    freed: int
    skipped: bool = False  # another collector held the lock


def trim(cache: Path, bound: int, now: float | None = None) -> TrimResult:
    """Deletes least recently used entries until `cache` fits (see victims)."""
    with gc_lock(cache) as held:
        if not held:
            return TrimResult(0, 0, 0, 0, skipped=True)
        found = entries(cache)
        chosen = victims(found, bound, time.time() if now is None else now)
        freed = 0
        for entry in chosen:
            with contextlib.suppress(FileNotFoundError):
                entry.path.unlink()
                freed += entry.size
        return TrimResult(len(found), sum(e.size for e in found), len(chosen), freed)


def due(cache: Path, now: float | None = None) -> bool:
    """Whether `run` should trim: the last trim (its stamp's mtime) is over TRIM_INTERVAL_SECONDS old."""
    try:
        last = (cache / "gc" / "trimmed").stat().st_mtime
    except FileNotFoundError:
        return True
    return (time.time() if now is None else now) - last >= TRIM_INTERVAL_SECONDS


def mark_trimmed(cache: Path) -> None:
    stamp = cache / "gc" / "trimmed"
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
