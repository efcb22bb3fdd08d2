"""How ci_build finds the wheels a build made: from the build's own events (Bazel's answer),
which name each wheel's description (wheel/private/wheel.bzl's rocm_wheel_info output group),
never by folder names in bazel-bin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_build_cli import wheels
from ci_build_cli.inputs import InputError
from ci_build_cli.paths import CHECKOUT
from tools.modules import module_environment

pytestmark = pytest.mark.unit

PJRT = "jax_rocm7_pjrt-0.10.2-py3-none-linux_x86_64.whl"
PLUGIN = "jax_rocm7_plugin-0.10.2-cp313-cp313-linux_x86_64.whl"


def write_events(path: Path, root: Path, groups: dict[str, list[list[str]]], success: bool = True) -> None:
    """A build event file as Bazel 7 writes it (--build_event_json_file): the workspace event,
    one named set per group (its files as pathPrefix + name; a second set nested in the first),
    and the requested target's completion."""
    events = [{"id": {"workspace": {}}, "workspaceInfo": {"localExecRoot": str(root)}}]
    completed = []
    for n, (group, files) in enumerate(groups.items()):
        first, nested = f"{n}a", f"{n}b"
        entries = [{"name": "/".join(f[1:]), "pathPrefix": f[:1], "uri": "file:///ignored"} for f in files]
        events.append({"id": {"namedSet": {"id": nested}}, "namedSetOfFiles": {"files": entries[1:]}})
        events.append({"id": {"namedSet": {"id": first}}, "namedSetOfFiles": {"files": entries[:1], "fileSets": [{"id": nested}]}})
        completed.append({"name": group, "fileSets": [{"id": first}]})
    events.append({"id": {"targetCompleted": {"label": "//:jax_rocm_wheels"}}, "completed": {"success": success, "outputGroup": completed}})
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


@pytest.fixture
def built(tmp_path) -> tuple[Path, Path]:
    """(execution root, events file) of a build whose wheel rule wrote its wheels into folders
    named like nothing ci_build knows, and left an earlier build's wheel where the old glob looked."""
    root = tmp_path / "execroot"
    described = []
    for n, (folder, name, info) in enumerate([("out/renamed", PJRT, {}),
                                              ("out/other/cp313", PLUGIN, {"artifacts": {"_linalg.so": {"origin": "examples"}}})]):
        (root / folder).mkdir(parents=True)
        (root / folder / name).write_bytes(b"wheel")
        (root / "out" / f"described_{n}.json").write_text(json.dumps({"wheel": f"{folder}/{name}", "build_info": info}))
        described.append(["out", f"described_{n}.json"])
    stale = root / "bazel-out/k8-opt/bin/jax_rocm_pjrt_wheel"
    stale.mkdir(parents=True)
    (stale / "jax_rocm7_pjrt-0.9.0-py3-none-linux_x86_64.whl").write_bytes(b"an earlier build's")
    events = tmp_path / "events.json"
    write_events(events, root, {"default": [["out", "renamed", PJRT]], wheels.WHEEL_INFO_GROUP: described})
    return root, events


def test_the_wheels_are_those_the_builds_events_describe_whatever_their_folders(built):
    root, events = built
    got = wheels.built_wheels(events)
    assert [w.path for w in got] == [root / "out/renamed" / PJRT, root / "out/other/cp313" / PLUGIN]
    assert got[0].stand_ins == [] and got[1].stand_ins == ["_linalg.so"]


def test_a_failed_target_or_no_events_names_no_wheel(built, tmp_path, capsys):
    root, events = built
    write_events(events, root, {wheels.WHEEL_INFO_GROUP: [["out", "described_0.json"]]}, success=False)
    assert wheels.built_wheels(events) == []
    assert wheels.built_wheels(tmp_path / "none.json") == []
    assert "cannot read the build's events" in capsys.readouterr().err


def test_the_build_asks_for_the_descriptions_and_its_events():
    flags = wheels.event_flags(Path("/tmp/x/e.json"))
    assert flags == ["--output_groups=+rocm_wheel_info", "--build_event_json_file=/tmp/x/e.json"]


def test_the_group_is_the_wheel_rules():
    """One name in two languages: the rule's constant and ci_build's."""
    assert f'WHEEL_INFO_GROUP = "{wheels.WHEEL_INFO_GROUP}"' in (CHECKOUT / "wheel/private/wheel.bzl").read_text()


def test_the_events_file_is_this_users_and_this_checkouts_under_tmp():
    events = wheels.events_file()
    assert events.parent.parent == Path("/tmp") and str(os.getuid()) in events.parent.name
    assert events == wheels.events_file()  # the same path each time: a dry run prints what a run runs
    # Another ci_build of this checkout (another process) writes elsewhere: it cannot empty or
    # remove this one's folder while this one builds (seen: the unit tests beside a real run).
    other = subprocess.run([sys.executable, "-c", "from ci_build_cli import wheels; print(wheels.events_file())"],
                           cwd=CHECKOUT, env=module_environment(), capture_output=True, text=True, check=True).stdout.strip()
    assert Path(other) != events and Path(other).parent.parent == events.parent.parent


def test_an_earlier_events_file_is_removed_and_a_foreign_folder_refused(tmp_path):
    events = tmp_path / "mine" / "wheel-events.json"
    wheels.prepare_events_file(events)
    events.write_text("an earlier build's")
    wheels.prepare_events_file(events)
    assert events.parent.is_dir() and not events.exists()
    assert events.parent.stat().st_mode & 0o077 == 0
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match="is not a folder of this user's"):
        wheels.prepare_events_file(tmp_path / "linked" / "wheel-events.json")
