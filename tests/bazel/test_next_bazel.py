"""Ready for Bazel 8 and 9 as far as Bazel 7.7.1 shows it: the main job's wheels build under
--config=bazel9 (.bazelrc: the defaults Bazel 8 and 9 flipped that 7.7.1 carries as flags), and
they are the default build's wheels but for the repositories' canonical names, which Bazel 8
spells its own way (build_info.json's stand-in labels; the source paths compiled into the
extension modules). Bazel names them both ways (`bazel mod dump_repo_mapping`)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, without_session

pytestmark = pytest.mark.bazel


def main_job_command() -> list[str]:
    """The main job's Bazel command, as `ci_build --dry-run` prints it (its events file left out),
    for one Python: under the "+" names every action is new, and a second Python's plugin wheel
    would build the same rules again."""
    dry = subprocess.run([sys.executable, str(CHECKOUT / "build" / "ci_build"), "--sources=examples", "--python-versions=3.14",
                          "--dry-run", "dist_wheels"], cwd=CHECKOUT, capture_output=True, text=True, env=without_session())
    assert dry.returncode == 0, dry.stderr
    line = next(line for line in dry.stderr.splitlines() if line.startswith("+ ") and " bazel build " in line)
    return [w for w in shlex.split(line[2:]) if not w.startswith("--build_event_json_file")]


def build_wheels(command: list[str], extra: list[str], into: Path) -> dict[str, Path]:
    """Builds with `extra` after `bazel build`; the wheels (file name -> a copy in `into`)."""
    at = command.index("build", command.index("bazel")) + 1
    result = subprocess.run([*command[:at], *extra, *command[at:]], cwd=CHECKOUT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    into.mkdir()
    wheels = {}
    # This build's wheels, by the descriptions Bazel lists as its outputs (the main job asks for
    # the rocm_wheel_info group): bazel-bin may hold other builds' wheels, of other Pythons.
    for listed in re.findall(r"^\s+(bazel-\S+\.wheel\.json)$", result.stderr, re.M):
        wheel = CHECKOUT / json.loads((CHECKOUT / listed).read_text())["wheel"]  # from the execution root
        wheels[wheel.name] = Path(shutil.copy(wheel, into))
    assert wheels, result.stderr[-2000:]
    return wheels


def canonical_names(command: list[str], extra: list[str]) -> dict[str, str]:
    """The main repository's apparent names -> canonical ones, as Bazel spells them with `extra`."""
    bazel = command[:command.index("bazel") + 1]
    result = subprocess.run([*bazel, "mod", "dump_repo_mapping", *extra, ""], cwd=CHECKOUT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def renamed(text: str, old: dict[str, str], new: dict[str, str]) -> str:
    """`text` with each repository's canonical name under `old` replaced by its name under `new`."""
    for apparent, name in sorted(old.items(), key=lambda item: -len(item[1])):
        if name and apparent in new:
            text = re.sub(rf"@@{re.escape(name)}//", f"@@{new[apparent]}//", text)
    return text


def test_the_main_jobs_wheels_build_under_bazel_8_and_9_defaults(sandbox_root, tmp_path):
    command = main_job_command()
    ours = build_wheels(command, [], tmp_path / "default")
    preview = build_wheels(command, ["--config=bazel9"], tmp_path / "bazel9")
    names, preview_names = canonical_names(command, []), canonical_names(command, ["--config=bazel9"])
    if names == preview_names and names != canonical_names(command, ["--noincompatible_use_plus_in_repo_names"]):
        pytest.skip("--config=bazel9 is on for every build here (docs/testing.md: a tier run under it), so the "
                    "default build is not Bazel 7's to compare with")
    assert names["jax"] != preview_names["jax"], "--config=bazel9 names the repositories its own way"
    assert preview.keys() == ours.keys()
    assert sorted(n.split("-")[0].rsplit("_", 1)[1] + "-" + n.split("-")[2] for n in ours) == ["pjrt-py3", "plugin-cp314"], ours
    for name in ours:
        with zipfile.ZipFile(ours[name]) as a, zipfile.ZipFile(preview[name]) as b:
            assert a.namelist() == b.namelist(), name
            for member in a.namelist():
                if member.endswith(".so") or member.endswith("/RECORD"):
                    continue  # compiled-in source paths name the repositories; RECORD hashes them
                old, new = a.read(member), b.read(member)
                if member.endswith("build_info.json"):
                    assert json.loads(renamed(old.decode(), names, preview_names)) == json.loads(new.decode()), member
                else:
                    assert old == new, f"{name}: {member}"
