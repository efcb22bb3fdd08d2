"""GPU slots: which AMD GPUs a machine has, and one lock file per GPU for whoever uses it.

Shared by the pytest plugin (pytest_rocm.plugin: one GPU per pytest-xdist worker) and
jax-rocm-build's Bazel test wrapper (tools/gpu_slot.py, --config=ci_single_gpu), so a
pytest run and a Bazel run on the same machine never hand out the same GPU.

A slot is an flock on a file in a lock directory (default /var/tmp/jax-rocm-gpu-slots,
or $JAX_ROCM_GPU_LOCK_DIR): held by a process, released by the kernel the moment it
exits, crashes or is killed. A process that holds a slot selects its GPU the way
upstream JAX CI pairs the variables: ROCR_VISIBLE_DEVICES=<physical GPU> (the ROCm
runtime shows only that GPU) and HIP_VISIBLE_DEVICES=0 (HIP sees it as device 0).

GPUs: JAX_ROCM_GPU_COUNT=N (or upstream's TF_GPU_COUNT) forces N, e.g. to exercise the
slots on a machine without GPUs; otherwise they are the GPU nodes of the KFD topology in
sysfs, left as the ROCm runtime leaves them by an ROCR_VISIBLE_DEVICES already set (a CI
runner's share of the host), then `rocminfo`'s. Reading the topology and
ROCR_VISIBLE_DEVICES is pytest_rocm.gpus, the same file as the pjrt wheel's loader uses
(gpus.py, which jax-rocm-build's pjrt wheel ships too). Without a topology (a forced count, or
rocminfo) the tokens of ROCR_VISIBLE_DEVICES, as given, are the GPUs.
JAX_ROCM_TESTS_PER_GPU=K lets K users share each GPU.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable, Mapping

from .gpus import KFD_NODES, kfd_gpus, rocr_visible

DEFAULT_LOCK_DIR = Path("/var/tmp/jax-rocm-gpu-slots")
FORCE_VARIABLES = ("JAX_ROCM_GPU_COUNT", "TF_GPU_COUNT")


def lock_dir_from(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("JAX_ROCM_GPU_LOCK_DIR") or DEFAULT_LOCK_DIR)


def tests_per_gpu_from(environ: Mapping[str, str]) -> int:
    value = environ.get("JAX_ROCM_TESTS_PER_GPU", "1").strip() or "1"
    if not value.isdigit():
        raise SlotError(f"JAX_ROCM_TESTS_PER_GPU={value!r} is not a number")
    return int(value)


class SlotError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Slot:
    gpu: str  # the physical GPU given to ROCR_VISIBLE_DEVICES (see find_gpus)
    share: int  # which of the JAX_ROCM_TESTS_PER_GPU shares of that GPU

    @property
    def lock_name(self) -> str:
        return f"gpu{self.gpu}-{self.share}.lock"


@dataclasses.dataclass(frozen=True)
class Gpus:
    ids: tuple[str, ...]
    source: str  # where the count came from, for messages


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


def _as_given(count: int, rocr: str | None) -> tuple[str, ...]:
    """Ids of `count` GPUs with no topology to resolve ROCR_VISIBLE_DEVICES against: its first
    `count` tokens as given (rocminfo has already applied it), else 0..count-1."""
    tokens = [t.strip() for t in (rocr or "").split(",") if t.strip()]
    return tuple(tokens[:count]) if tokens else tuple(str(i) for i in range(count))


def find_gpus(environ: Mapping[str, str], root: Path = Path("/"),
              rocminfo: Callable[[], str | None] = _rocminfo) -> Gpus:
    """The GPUs to make slots of; root is "/" but for tests."""
    rocr = environ.get("ROCR_VISIBLE_DEVICES")
    limited = f", limited to ROCR_VISIBLE_DEVICES={rocr}" if (rocr or "").strip() else ""
    forced = next(((v, environ[v]) for v in FORCE_VARIABLES if environ.get(v, "").strip()), None)
    shown = Path("/") / KFD_NODES
    if forced:  # no detection, as JAX_ROCM_GPU_COUNT means to the pjrt wheel's loader
        name, value = forced
        if not value.strip().isdigit() or int(value) < 1:
            raise SlotError(f"{name}={value!r} is not a positive GPU count")
        ids, source = _as_given(int(value), rocr), f"{name}={value}{limited}"
    elif found := kfd_gpus(root / KFD_NODES):
        # A slot's id is the GPU's index in KFD node order (the ROCm runtime's numbering), not
        # the token as the inherited ROCR_VISIBLE_DEVICES spells it (a UUID, 0x1, 01): the
        # slot's ROCR_VISIBLE_DEVICES=<index> replaces the inherited one and still selects that
        # physical GPU (upstream's pairing with HIP_VISIBLE_DEVICES=0 holds), and the GPU's
        # lock file has one name however a run spells it, so two runs cannot both hold it.
        visible = found if rocr is None else rocr_visible(rocr, found)
        ids = tuple(str(g.index) for g in visible)
        source = f"{len(found)} GPU node(s) in {shown}"
        if rocr is not None:
            source += f", {len(ids)} of them visible with ROCR_VISIBLE_DEVICES={rocr!r}"
    else:
        output = rocminfo()
        count = rocminfo_gpu_count(output) if output is not None else 0
        ids = _as_given(count, rocr)
        source = f"rocminfo{limited}" if count else f"no GPU node in {shown}, nor in rocminfo"
    if not ids:
        raise SlotError(
            f"no AMD GPU found ({source}). On a GPU host check that /dev/kfd is accessible (group render/video); "
            "to exercise the wrapper without GPUs set JAX_ROCM_GPU_COUNT=N"
        )
    return Gpus(ids, source)


def plan_slots(gpus: Gpus, tests_per_gpu: int) -> list[Slot]:
    """Slots ordered GPU-first, so that K tests per GPU fill every GPU once before sharing."""
    if tests_per_gpu < 1:
        raise SlotError(f"JAX_ROCM_TESTS_PER_GPU={tests_per_gpu} must be at least 1")
    return [Slot(gpu, share) for share in range(tests_per_gpu) for gpu in gpus.ids]


def prepare(environ: Mapping[str, str], gpus: Gpus, lock_dir: Path | None = None) -> tuple[Path, list[Slot]]:
    """The lock directory (created; lock_dir_from(environ) unless given) and the slots of `gpus`."""
    lock_dir = lock_dir or lock_dir_from(environ)
    lock_dir.mkdir(parents=True, exist_ok=True)
    return lock_dir, plan_slots(gpus, tests_per_gpu_from(environ))


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
