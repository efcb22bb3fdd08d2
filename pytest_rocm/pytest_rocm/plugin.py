"""pytest plugin: one AMD GPU per pytest-xdist worker; multi-GPU tests in a serial pass.

    pytest -n auto --rocm-gpus=auto -m "not slow"     # parallel pass: a GPU per worker
    pytest --rocm-multi-accelerator                    # serial pass: every GPU, one process

Parallel pass (--rocm-gpus=N|auto, or upstream's JAX_ENABLE_ROCM_XDIST=N): every
pytest-xdist worker (or this process, without xdist) takes a GPU slot of its own before
conftest.py files are imported, then selects its GPU the way upstream JAX CI pairs the
variables: ROCR_VISIBLE_DEVICES=<physical GPU>, HIP_VISIBLE_DEVICES=0. Without the pair,
workers either all see device 0 or crash on contention. `-n auto` starts one worker per
slot; more workers than slots is refused up front. A worker that crashes frees its slot
at once (an flock held by the worker process), so its replacement takes the same GPU.
Tests marked `multiaccelerator` are deselected.

Serial pass (--rocm-multi-accelerator): only the tests marked `multiaccelerator`, in
this one process, with every GPU visible; it first takes every slot, so it waits for
parallel runs (and jax-rocm-build's Bazel test wrapper) to leave the GPUs.

GPUs come from the system (KFD topology, filtered by an inherited ROCR_VISIBLE_DEVICES as
the ROCm runtime filters it, in pytest_rocm.gpus; then rocminfo) and can be forced with
JAX_ROCM_GPU_COUNT=N; see pytest_rocm.slots.
The fixture `rocm_gpus` is the tuple of physical GPU ids this test process sees.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from pytest_rocm import slots

MARKER = "multiaccelerator"
UPSTREAM_VARIABLE = "JAX_ENABLE_ROCM_XDIST"  # upstream JAX CI's switch: its value is the GPU count
SELECTION_VARIABLES = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "JAX_ROCM_GPU_SLOT")


@dataclasses.dataclass
class State:
    mode: str  # "parallel" | "serial"
    gpus: slots.Gpus  # every GPU of the run
    lock_dir: Path
    planned: list[slots.Slot]  # the run's slots: JAX_ROCM_TESTS_PER_GPU of each GPU
    visible: tuple[str, ...] = ()  # the physical GPUs this process sees (empty on an xdist controller)
    slot: str = ""
    fds: list[int] = dataclasses.field(default_factory=list)


STATE = pytest.StashKey[State]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rocm", "AMD GPUs (pytest-rocm)")
    group.addoption("--rocm-gpus", metavar="N|auto", default=None,
                    help="give every pytest-xdist worker (or this process) one AMD GPU of its own, out of the first N "
                         f"or every one found; deselects tests marked {MARKER}. Default: ${UPSTREAM_VARIABLE}, else off")
    group.addoption("--rocm-multi-accelerator", action="store_true", default=False,
                    help=f"run only the tests marked {MARKER}, in this process, with every GPU visible (no -n)")
    group.addoption("--rocm-slot-timeout", type=float, default=None, metavar="S",
                    help="give up waiting for a free GPU after S seconds (default: wait)")


def requested(namespace: object, environ: Mapping[str, str]) -> str | None:
    """The --rocm-gpus value in force: the option, else $JAX_ENABLE_ROCM_XDIST, else None (off)."""
    value = getattr(namespace, "rocm_gpus", None) or environ.get(UPSTREAM_VARIABLE, "").strip()
    return value or None


def select_gpus(value: str, environ: Mapping[str, str]) -> slots.Gpus:
    """The GPUs of a run: every one found for `auto`, else the first N (fewer found is an error)."""
    gpus = slots.find_gpus(environ)
    if value == "auto":
        return gpus
    if not value.isdigit() or int(value) < 1:
        raise slots.SlotError(f"--rocm-gpus={value!r}: give a positive number of GPUs or `auto`")
    if int(value) > len(gpus.ids):
        raise slots.SlotError(f"--rocm-gpus={value} asks for {value} GPUs; {len(gpus.ids)} found ({gpus.source})")
    return slots.Gpus(gpus.ids[:int(value)], gpus.source)


def worker_index(environ: Mapping[str, str]) -> int | None:
    """k of the xdist worker gw<k> this process is, None outside xdist workers."""
    worker = environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else None


def _apply(environment: Mapping[str, str]) -> None:
    for name in SELECTION_VARIABLES:
        if name in environment:
            os.environ[name] = environment[name]
        else:
            os.environ.pop(name, None)


def _usage(message: str) -> pytest.UsageError:
    return pytest.UsageError(f"pytest-rocm: {message}")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Takes this process's GPUs before any conftest.py can import jax (HIP reads the variables once)."""
    options = early_config.known_args_namespace
    serial = bool(getattr(options, "rocm_multi_accelerator", False))
    value = requested(options, os.environ)
    if not serial and value is None:
        return
    worker = worker_index(os.environ)
    workers = getattr(options, "numprocesses", None)
    try:
        if serial and (worker is not None or workers not in (None, 0, "0")):
            raise _usage("--rocm-multi-accelerator runs in one process with every GPU: drop -n")
        gpus = select_gpus(value or "auto", os.environ)
        lock_dir, planned = slots.prepare(os.environ, gpus)
        if serial:
            state = State("serial", gpus, lock_dir, planned, gpus.ids, "all", slots.acquire_all(lock_dir, planned))
        else:
            state = State("parallel", gpus, lock_dir, planned)
            if worker is not None or workers in (None, 0, "0"):  # a process that runs tests
                state = _take_one(state, worker or 0, options)
    except slots.SlotError as e:
        raise _usage(str(e)) from None
    _apply(slots.child_environment(os.environ, state.visible, state.slot) if state.visible else {})
    early_config.stash[STATE] = state


def _take_one(state: State, index: int, options: object) -> State:
    def say_waiting() -> None:
        print(f"pytest-rocm: all {len(state.planned)} GPU slots in {state.lock_dir} are busy; waiting",
              file=sys.stderr, flush=True)

    fd, slot = slots.acquire_one(state.lock_dir, state.planned, getattr(options, "rocm_slot_timeout", None),
                                 say_waiting, start=index % len(state.planned))
    return dataclasses.replace(state, visible=(slot.gpu,), slot=slot.lock_name.removesuffix(".lock"), fds=[fd])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: needs several GPUs; runs only in the serial pass "
                                       "(pytest --rocm-multi-accelerator)")
    state = config.stash.get(STATE, None)
    workers = getattr(config.option, "numprocesses", None)
    if state is None or state.mode != "parallel" or not isinstance(workers, int):
        return
    capacity = len(state.planned)
    if workers > capacity:
        raise _usage(f"-n {workers} starts more workers than there are GPU slots ({capacity}: {state.gpus.source}); "
                     f"use -n {capacity} or -n auto")


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # before xdist's own answer, the CPU count
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: one worker per GPU slot."""
    state = config.stash.get(STATE, None)
    if state is None or state.mode != "parallel":
        return None
    return len(state.planned)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    keep_marked = state.mode == "serial"
    kept = [item for item in items if (item.get_closest_marker(MARKER) is not None) == keep_marked]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(STATE, None)
    if state is None:
        return None
    if state.mode == "serial":
        return f"rocm: serial pass, {MARKER} tests only, GPUs {','.join(state.visible)} ({state.gpus.source})"
    where = f"this process has GPU {state.visible[0]}" if state.visible else "one per xdist worker"
    return (f"rocm: {len(state.gpus.ids)} GPUs ({state.gpus.source}); {where}; {MARKER} tests deselected "
            "(run them with --rocm-multi-accelerator)")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    for fd in state.fds if state else ():
        os.close(fd)


@pytest.fixture
def rocm_gpus(pytestconfig: pytest.Config) -> tuple[str, ...]:
    """The physical GPU ids this test process sees (ROCR_VISIBLE_DEVICES); () when pytest-rocm is off."""
    state = pytestconfig.stash.get(STATE, None)
    return state.visible if state else ()
