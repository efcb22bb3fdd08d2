"""Every wrong input, as a new user types it, answered in one line before anything runs (issue 56).

Each probe runs `python3 build/ci_build ...` the way a user on a fresh machine does: in a fresh
clone of this checkout, with an empty XDG_CACHE_HOME, HOME and TMPDIR, and a PATH without this
machine's extras (no pyenv, no Bazel). It asserts:
- exit 2 and exactly one line on stderr (nothing on stdout), starting `ci_build: `;
- the line names the input as the user gave it (the flag or the environment variable) and the fix;
- nothing written: the cache, HOME, TMPDIR, the clone and the probe's own files are as they were;
- the time: under one second of CPU for ci_build and everything it started (load-independent),
  and of wall-clock time where the machine is not loaded (the suite's other worker builds; the
  wall times of an idle run are in docs/measurements.md).

The good answers of issues 33 and 46 (wheel dates and versions, targets, toolkits, tarballs,
Pythons, mode conflicts, unwritable folders) are probes here too: none may regress.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CHECKOUT
from tests.infra.copy_workspace import clone_workspace
from tests.infra.input_probes import AS_ROOT, PROBES, fill, machine_is_idle, prepared_files, run_probe, snapshot

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> Path:
    """A clone of this checkout as a user has it (its edits included), shared by the probes: each
    probe checks that it leaves the clone as it was."""
    return clone_workspace(tmp_path_factory.mktemp("fresh") / "jax-rocm-build", CHECKOUT)


@pytest.mark.parametrize("name", PROBES)
def test_each_wrong_input_is_one_line_exit_2_at_once_and_writes_nothing(name, fresh_clone, tmp_path):
    case = PROBES[name]
    if case.skip_as_root and AS_ROOT:
        pytest.skip(f"run as root: {case.skip_as_root}; an ordinary user's run of the suite exercises it")
    files = tmp_path / "files"
    files.mkdir()
    prepared_files(files)
    before = snapshot(fresh_clone, files)
    run = run_probe(case, fresh_clone, tmp_path, files)
    result, wall, cpu = run.result, run.wall, run.cpu
    assert not run.written, f"written: {run.written}"
    assert result.returncode == case.exit, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ci_build: "), result.stderr
    for words in case.says:
        assert fill(words, files) in lines[0], f"{fill(words, files)!r} not in: {lines[0]}"
    assert snapshot(fresh_clone, files) == before, "the probe changed the clone or its files"
    assert cpu < 1.0, f"{cpu:.2f} s of CPU"
    if machine_is_idle():
        assert wall < 1.0, f"{wall:.2f} s"

