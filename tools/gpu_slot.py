#!/usr/bin/env python3
"""Run a test holding a GPU of its own: the wrapper of --config=ci_single_gpu.

    gpu_slot.py [--all] [--lock-dir DIR] [--timeout S] COMMAND [ARGS...]

Each concurrently running command takes one free slot (an flock on a file in the lock
directory), then becomes COMMAND with the slot's GPU selected the way upstream JAX CI
pairs the variables: ROCR_VISIBLE_DEVICES=<physical GPU> (the ROCm runtime shows only
that GPU) and HIP_VISIBLE_DEVICES=0 (HIP sees it as device 0). When every slot is busy
it waits. The lock is held by COMMAND's own process, so the slot is freed the moment the
test ends, crashes or is killed; nothing is left to clean up.

`--all` (--config=ci_multi_gpu) takes every slot and shows every GPU.

GPUs: JAX_ROCM_GPU_COUNT=N (or upstream's TF_GPU_COUNT) forces N, e.g. to exercise the
wrapper on a machine without GPUs; otherwise the KFD topology in sysfs is counted, then
`rocminfo`. An ROCR_VISIBLE_DEVICES already set (a CI runner's share of the host) limits
the slots to those GPUs. JAX_ROCM_TESTS_PER_GPU=K lets K tests share each GPU.
JAX_ROCM_GPU_LOCK_DIR moves the lock files (default /var/tmp/jax-rocm-gpu-slots).
"""

from __future__ import annotations

import argparse
import dataclasses
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

DEFAULT_LOCK_DIR = Path("/var/tmp/jax-rocm-gpu-slots")
KFD_NODES = Path("/sys/class/kfd/kfd/topology/nodes")
FORCE_VARIABLES = ("JAX_ROCM_GPU_COUNT", "TF_GPU_COUNT")


class SlotError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Slot:
    gpu: str  # the physical GPU index given to ROCR_VISIBLE_DEVICES
    share: int  # which of the JAX_ROCM_TESTS_PER_GPU shares of that GPU

    @property
    def lock_name(self) -> str:
        return f"gpu{self.gpu}-{self.share}.lock"


@dataclasses.dataclass(frozen=True)
class Gpus:
    ids: tuple[str, ...]
    source: str  # where the count came from, for messages


def kfd_gpu_count(nodes: Path = KFD_NODES) -> int | None:
    """GPU nodes of the KFD topology (CPU nodes have simd_count 0); None without KFD."""
    if not nodes.is_dir():
        return None
    count = 0
    for properties in nodes.glob("*/properties"):
        match = re.search(r"^simd_count\s+(\d+)", properties.read_text(errors="replace"), re.M)
        if match and int(match.group(1)) > 0:
            count += 1
    return count


def rocminfo_gpu_count(output: str) -> int:
    """Agents that `rocminfo` lists with `Device Type: GPU`."""
    return len(re.findall(r"^\s*Device Type:\s*GPU\s*$", output, re.M))


def _rocminfo() -> str | None:
    rocminfo = shutil.which("rocminfo")
    if not rocminfo:
        return None
    try:
        return subprocess.run([rocminfo], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None


def find_gpus(environ: Mapping[str, str], kfd: Callable[[], int | None] = kfd_gpu_count,
              rocminfo: Callable[[], str | None] = _rocminfo) -> Gpus:
    forced = next(((v, environ[v]) for v in FORCE_VARIABLES if environ.get(v, "").strip()), None)
    if forced:
        name, value = forced
        if not value.strip().isdigit() or int(value) < 1:
            raise SlotError(f"{name}={value!r} is not a positive GPU count")
        count, source = int(value), f"{name}={value}"
    else:
        count, source = kfd(), f"KFD topology ({KFD_NODES})"
        if not count:
            output = rocminfo()
            count, source = (rocminfo_gpu_count(output), "rocminfo") if output is not None else (0, source)
    visible = [v.strip() for v in environ.get("ROCR_VISIBLE_DEVICES", "").split(",") if v.strip()]
    ids = tuple(visible[:count]) if visible else tuple(str(i) for i in range(count))
    if visible:
        source += f", limited to ROCR_VISIBLE_DEVICES={','.join(visible)}"
    if not ids:
        raise SlotError(
            f"no AMD GPU found ({source} shows none, and rocminfo none). On a GPU host check that "
            "/dev/kfd is accessible (group render/video); to exercise the wrapper without GPUs set JAX_ROCM_GPU_COUNT=N"
        )
    return Gpus(ids, source)


def plan_slots(gpus: Gpus, tests_per_gpu: int) -> list[Slot]:
    """Slots ordered GPU-first, so that K tests per GPU fill every GPU once before sharing."""
    if tests_per_gpu < 1:
        raise SlotError(f"JAX_ROCM_TESTS_PER_GPU={tests_per_gpu} must be at least 1")
    return [Slot(gpu, share) for share in range(tests_per_gpu) for gpu in gpus.ids]


def _try_lock(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def acquire_one(lock_dir: Path, slots: list[Slot], timeout: float | None, on_wait: Callable[[], None],
                start: int = 0) -> tuple[int, Slot]:
    """Lock the first free slot (searching from `start`), waiting while all are busy."""
    deadline = None if timeout is None else time.monotonic() + timeout
    delay, waited = 0.02, False
    while True:
        for i in range(len(slots)):
            slot = slots[(start + i) % len(slots)]
            fd = _try_lock(lock_dir / slot.lock_name)
            if fd is not None:
                return fd, slot
        if deadline is not None and time.monotonic() > deadline:
            raise SlotError(f"no GPU slot became free within {timeout:g} s ({len(slots)} slots, all busy)")
        if not waited:
            on_wait()
            waited = True
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


def acquire_all(lock_dir: Path, slots: list[Slot]) -> list[int]:
    """Lock every slot, in one fixed order so that two `--all` runs cannot deadlock."""
    fds = []
    for slot in sorted(slots, key=lambda s: s.lock_name):
        fd = os.open(lock_dir / slot.lock_name, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
        fds.append(fd)
    return fds


def child_environment(environ: Mapping[str, str], gpus: tuple[str, ...], slot_name: str) -> dict[str, str]:
    env = dict(environ)
    env["ROCR_VISIBLE_DEVICES"] = ",".join(gpus)
    if len(gpus) == 1:
        env["HIP_VISIBLE_DEVICES"] = "0"  # ROCR has already narrowed the runtime to that GPU
    else:
        env.pop("HIP_VISIBLE_DEVICES", None)
    env["JAX_ROCM_GPU_SLOT"] = slot_name
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="take every GPU (multi-accelerator tests)")
    parser.add_argument("--lock-dir", type=Path, default=None, help=f"lock files (default $JAX_ROCM_GPU_LOCK_DIR or {DEFAULT_LOCK_DIR})")
    parser.add_argument("--timeout", type=float, default=None, help="give up after S seconds of waiting (default: wait)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the test command")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("no command to run")
    environ = os.environ
    lock_dir = args.lock_dir or Path(environ.get("JAX_ROCM_GPU_LOCK_DIR") or DEFAULT_LOCK_DIR)
    try:
        gpus = find_gpus(environ)
        per_gpu = environ.get("JAX_ROCM_TESTS_PER_GPU", "1").strip() or "1"
        if not per_gpu.isdigit():
            raise SlotError(f"JAX_ROCM_TESTS_PER_GPU={per_gpu!r} is not a number")
        slots = plan_slots(gpus, int(per_gpu))
        lock_dir.mkdir(parents=True, exist_ok=True)
        if args.all:
            fds = acquire_all(lock_dir, slots)
            env = child_environment(environ, gpus.ids, "all")
        else:
            def say_waiting() -> None:
                print(f"gpu_slot: all {len(slots)} GPU slots in {lock_dir} are busy; waiting", file=sys.stderr, flush=True)

            fd, slot = acquire_one(lock_dir, slots, args.timeout, say_waiting, start=os.getpid() % len(slots))
            fds = [fd]
            env = child_environment(environ, (slot.gpu,), slot.lock_name.removesuffix(".lock"))
    except (SlotError, OSError) as exc:
        print(f"gpu_slot: {exc}", file=sys.stderr)
        return 2
    for fd in fds:
        os.set_inheritable(fd, True)  # the test itself holds the slot, until it exits or dies
    try:
        os.execvpe(args.command[0], args.command, env)
    except OSError as exc:
        print(f"gpu_slot: cannot run {args.command[0]}: {exc}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main())
