"""Copy this checkout's files (tracked, and untracked but not ignored) to DEST.

    python3 -m tests.infra.copy_workspace DEST
    python3 -m tests.infra.copy_workspace --remove-stale-clones   # of killed test runs (run_tests.py does)

What a fresh clone plus local edits would hold: benchmarks and tests build in such a
copy so that they get a private Bazel output base and never edit the checkout.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]


def git_names(checkout: Path, *options: str) -> list[str]:
    listed = subprocess.run(["git", "-C", str(checkout), "ls-files", *options, "-z"], check=True, capture_output=True)
    return list(filter(None, listed.stdout.decode().split("\0")))


def copy_workspace(dest: Path, checkout: Path = CHECKOUT) -> Path:
    for name in git_names(checkout, "-co", "--exclude-standard"):
        src = checkout / name
        if not src.exists() and not src.is_symlink():  # deleted in the work tree
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        if (dest / name).is_symlink():  # a clone's own checkout of it (copy2 would not replace a link)
            (dest / name).unlink()
        shutil.copy2(src, dest / name, follow_symlinks=False)
    return dest


def clone_workspace(dest: Path, checkout: Path = CHECKOUT) -> Path:
    """A git clone of the checkout at `dest` whose working tree and index hold the checkout's
    (edits, deletions and what is staged included): a repository of its own (git works in it,
    inside the sandbox too), at the same commit, with the same files as copy_workspace gives
    and the same `git status`. It borrows the checkout's objects (--shared), the staged ones too."""
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(checkout), str(dest)], check=True)
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", head.stdout.strip()], check=True)
    copy_workspace(dest, checkout)
    for name in git_names(checkout, "-d"):
        (dest / name).unlink(missing_ok=True)
    index = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--path-format=absolute", "--git-path", "index"],
                           check=True, capture_output=True, text=True).stdout.strip()
    shutil.copyfile(index, dest / ".git" / "index")
    return dest


WORKER_CLONES = "jax-rocm-tests-"
# Held (shared) by each worker with a clone for as long as it runs: a folder whose lock nobody
# holds is left over from a killed run (remove_stale_clones).
_held_locks: list = []


def worker_checkout(checkout: Path, worker: str | None, run_id: str | None) -> Path:
    """The checkout a pytest-xdist worker builds in: `checkout` for the first worker (gw0)
    and without xdist; for the others a clone under /tmp (the sandbox shares /tmp), made
    once per worker and run, with the checkout's folder name."""
    if worker in (None, "gw0"):
        return checkout
    run = Path(tempfile.gettempdir()) / f"{WORKER_CLONES}{run_id or os.getpid()}"
    dest = run / worker / checkout.name
    run.mkdir(parents=True, exist_ok=True)
    lock = open(run / ".lock", "a")  # noqa: SIM115  (held until the process ends)
    fcntl.flock(lock, fcntl.LOCK_SH)
    _held_locks.append(lock)
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial = dest.with_name(dest.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        clone_workspace(partial, checkout)
        os.rename(partial, dest)
    return dest


def release_clones() -> None:
    """Lets go of this process's hold on its run's clones (its session is over): the last
    worker to let go makes the run removable by remove_stale_clones."""
    while _held_locks:
        _held_locks.pop().close()


def holds_clones() -> bool:
    """Whether this process still holds its run's clones (a worker does until its session ends)."""
    return bool(_held_locks)


def remove_stale_clones(tmp: Path | None = None) -> list[Path]:
    """Removes the workers' clones of runs no worker holds any more (a killed or interrupted
    suite); returns them. Their Bazel output bases go with `python3 -m sandbox prune` after."""
    removed = []
    for run in sorted(Path(tmp or tempfile.gettempdir()).glob(f"{WORKER_CLONES}*")):
        try:
            with open(run / ".lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(run, ignore_errors=True)
                removed.append(run)
        except OSError:  # held by a running suite, or not ours to remove
            continue
    return removed


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--remove-stale-clones":
        for run in remove_stale_clones():
            print(f"copy_workspace: removed {run}, the test workers' clones of an interrupted run", file=sys.stderr)
    else:
        copy_workspace(Path(sys.argv[1]))
