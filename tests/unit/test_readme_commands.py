"""Every whole ci_build command README.md shows, run as written (with --dry-run): it is accepted,
and it builds in the graph the README promises: upstream's (full/) for a real XLA or the pins,
this project's for the stand-ins (issue 43: "every full-mode command the README shows works").

The user's paths the README names (`~/src/jax`, `~/xla`, `$HOME/xla`, ...) are made in a home of
the test's own: the gated tier's real trees where JAX_ROCM_TEST_JAX_TREE/JAX_ROCM_TEST_XLA_TREE
are set, else copies of the stand-ins (which ci_build takes for a user's trees all the same),
and `/opt/rocm` a toolkit folder. The pre-flight's name check needs a real XLA: without one that
command skips, naming the variable. What a dry run cannot show (downloads, the build) the
bazel and gated tiers run.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, MACHINE_BUILD_ENV, jax_tree_from_env

pytestmark = pytest.mark.unit

README = CHECKOUT / "README.md"
SUBCOMMANDS = ("dist_wheels", "native", "preflight")
HEX = "ab" * 32  # the README's placeholder for a sha256


def readme_commands() -> list[str]:
    """The whole ci_build commands of README.md: the lines of its shell blocks (continuations
    joined, comments dropped) and the code spans that are a command line with flags (not the
    command table's bare names)."""
    text = README.read_text()
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            if re.match(r"\s*python3 build/ci_build\b", line):
                commands.append(" ".join(line.split(" #")[0].split()))
    for span in re.findall(r"`((?:python3 )?build/ci_build(?: --[^`\s]+)+ (?:%s))`" % "|".join(SUBCOMMANDS), text):
        commands.append(span if span.startswith("python3 ") else "python3 " + span)
    return list(dict.fromkeys(commands))


def test_the_readme_shows_the_three_ways_and_full_modes_commands():
    commands = readme_commands()
    assert "python3 build/ci_build --sources=examples dist_wheels" in commands
    assert any("--therock-path=https://" in c for c in commands)
    assert any("--jax-source-dir=~/src/jax --xla-source-dir=~/src/xla dist_wheels" in c for c in commands)
    assert "python3 build/ci_build dist_wheels" in commands
    assert any(c.endswith(" preflight") for c in commands)
    assert len(commands) >= 9, commands


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A user's home holding the folders the README's commands name."""
    home = tmp_path_factory.mktemp("home")
    xla = os.environ.get("JAX_ROCM_TEST_XLA_TREE")
    jax = jax_tree_from_env()
    for name, real in (("xla", xla), ("jax", jax)):
        for place in (home / name, home / "src" / name):
            place.parent.mkdir(parents=True, exist_ok=True)
            if real and Path(real).is_dir():
                place.symlink_to(Path(real).resolve())
            else:
                shutil.copytree(CHECKOUT / "examples" / name, place, symlinks=True)
    return home


def as_typed(command: str, home: Path) -> list[str]:
    """The command's words as a shell gives them to ci_build: `~` and `$HOME` expanded, the
    README's placeholders filled in."""
    words = shlex.split(command.replace("$HOME", str(home)).replace("=HEX", f"={HEX}"))
    words = [re.sub(r"(^|=)~/", lambda m: f"{m[1]}{home}/", w) for w in words]
    return [w.replace("=/opt/rocm", f"={CHECKOUT / 'examples'}") for w in words]


@pytest.mark.parametrize("command", readme_commands())
def test_each_readme_command_runs_as_written_in_the_graph_it_promises(command, home):
    if command.endswith(" preflight") and not os.environ.get("JAX_ROCM_TEST_XLA_TREE"):
        pytest.skip("JAX_ROCM_TEST_XLA_TREE is unset: the pre-flight's name check needs a real XLA tree")
    words = as_typed(command, home)
    env = {k: v for k, v in os.environ.items() if k not in MACHINE_BUILD_ENV} | {"HOME": str(home)}
    result = subprocess.run([sys.executable, *words[1:], "--dry-run"], cwd=CHECKOUT, env=env, capture_output=True,
                            text=True, timeout=120)
    pythons = re.search(r"--python-versions=([\d.,]+)", " ".join(words))
    missing = re.search(r"no interpreter with headers for Python (3\.\d+)", result.stderr)
    if pythons and missing and result.returncode == 2:
        # Written for a machine with that Python: the refusal says how to add one.
        assert missing[1] in pythons[1].split(",") and "To add one" in result.stderr, result.stderr
        return
    assert result.returncode == 0, f"{command}\n{result.stderr[-3000:]}"
    builds = [line for line in result.stderr.splitlines() if re.search(r"\bbazel (?:\S+ )*build --", line)]
    assert builds, result.stderr[-3000:]
    real_xla = "--sources=examples" not in words
    in_full = [f"{CHECKOUT / 'full'} " in line for line in builds]
    assert all(in_full) if real_xla else not any(in_full), f"{command}: {builds}"
    if words[-1] == "dist_wheels" and real_xla and not pythons:
        # One Bazel run per Python, the PJRT wheel by the first only.
        wheel_builds = [line for line in builds if "//:jax_rocm_" in line]
        assert "//:jax_rocm_wheels" in wheel_builds[0]
        assert all("//:jax_rocm_plugin_wheel" in line for line in wheel_builds[1:])
        versions = [re.search(r"HERMETIC_PYTHON_VERSION=(3\.\d+)", line)[1] for line in wheel_builds]
        assert len(set(versions)) == len(versions), versions
