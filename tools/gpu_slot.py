#!/usr/bin/env python3
"""Run a test holding a GPU of its own: the wrapper of --config=ci_single_gpu.

    gpu_slot.py [--all] [--lock-dir DIR] [--timeout S] COMMAND [ARGS...]

Each concurrently running command takes one free GPU slot, then becomes COMMAND with
the slot's GPU selected (ROCR_VISIBLE_DEVICES=<physical GPU>, HIP_VISIBLE_DEVICES=0).
When every slot is busy it waits. The lock is held by COMMAND's own process, so the
slot is freed the moment the test ends, crashes or is killed. `--all`
(--config=ci_multi_gpu) takes every slot and shows every GPU.

The slots are pytest_rocm.slots' (pytest_rocm/), shared with the pytest plugin:
JAX_ROCM_GPU_COUNT=N forces the GPU count, JAX_ROCM_TESTS_PER_GPU=K shares each GPU,
JAX_ROCM_GPU_LOCK_DIR moves the lock files (default /var/tmp/jax-rocm-gpu-slots). An
inherited ROCR_VISIBLE_DEVICES narrows the GPUs as the ROCm runtime does
(pytest_rocm/pytest_rocm/gpus.py, which the pjrt wheel's loader ships too).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# pytest_rocm is a distribution of its own (pytest_rocm/, its own root): Bazel's //pytest_rocm:slots
# puts it on the path, as does installing it (pip install ./pytest_rocm).
from pytest_rocm.slots import SlotError, acquire_all, acquire_one, child_environment, find_gpus, prepare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="take every GPU (multi-accelerator tests)")
    parser.add_argument("--lock-dir", type=Path, default=None,
                        help="lock files (default $JAX_ROCM_GPU_LOCK_DIR or /var/tmp/jax-rocm-gpu-slots)")
    parser.add_argument("--timeout", type=float, default=None, help="give up after S seconds of waiting (default: wait)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the test command")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("no command to run")
    environ = os.environ
    try:
        gpus = find_gpus(environ)
        lock_dir, slots = prepare(environ, gpus, args.lock_dir)
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
