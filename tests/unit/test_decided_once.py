"""Facts are decided once on ci_build's path (issue 57): the amdgpu targets are split once,
checked against the toolkit's clang once and against a TheRock tarball's family once; the
toolkit travels as a typed value and is never read back out of the Bazel flags made from it."""

from __future__ import annotations

import collections
import re

import pytest

from ci_build_cli import cli, dist_wheels, sandbox, toolkit
from ci_build_cli.paths import CHECKOUT
from third_party.gpus import find_rocm_config as finder

pytestmark = pytest.mark.unit

SPIED = ("split_targets", "unknown_targets", "tarball_targets")


@pytest.fixture
def calls(monkeypatch):
    """How often ci_build's path calls each of the finder's target functions (the CLI calls them
    as finder.X, so wrapping the module's attribute sees every call)."""
    counted: collections.Counter[str] = collections.Counter()
    for name in SPIED:
        real = getattr(finder, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            counted[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(finder, name, spy)
    monkeypatch.setattr(sandbox, "provision", lambda request, profile: 0)  # no sandbox root
    return counted


def up_to_the_compile(argv: list[str]) -> None:
    """ci_build's dist_wheels path up to its Bazel build: parse, check (cli.main's order), then
    what runs before the compile (the toolkit's announcement, the sandbox, the toolkit probe)."""
    request = dist_wheels.check_dist_wheels(cli.parse_args(argv))
    assert dist_wheels.prepare_toolkit(request) == 0


def test_a_toolkit_folders_targets_are_split_once_and_checked_against_its_clang_once(calls, monkeypatch, tmp_path):
    config = {"rocm_toolkit_path": str(tmp_path), "clang_path": f"{tmp_path}/llvm/bin/clang",
              "amdgpu_targets_supported": ["gfx90a", "gfx942", "gfx1100"], "rocm_version": "7.2.4"}
    monkeypatch.setattr(dist_wheels, "probe_toolkit", lambda request: (f"the toolkit at {tmp_path}", config))
    up_to_the_compile([f"--rocm-path={tmp_path}", "--amdgpu-targets=gfx942,gfx90a", "--sources=examples", "dist_wheels"])
    assert calls == {"split_targets": 1, "unknown_targets": 1}


def test_a_tarballs_targets_are_split_once_and_checked_against_its_family_once(calls, capsys):
    url = "https://rocm.nightlies.amd.com/tarball/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
    argv = [f"--therock-path={url}", "--therock-sha256=" + "ab" * 32, "--amdgpu-targets=gfx942", "--sources=examples"]
    up_to_the_compile([*argv, "dist_wheels"])
    assert calls == {"split_targets": 1, "tarball_targets": 1}


def test_the_family_note_is_decided_with_the_checks_and_said_once(calls, capsys):
    url = "https://rocm.nightlies.amd.com/tarball/therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
    request = dist_wheels.check_dist_wheels(cli.parse_args(
        [f"--therock-path={url}", "--therock-sha256=" + "ab" * 32, "--amdgpu-targets=gfx942", "--sources=examples",
         "dist_wheels"]))
    assert [n for n in request.notes if n.startswith("TheRock family gfx94X-dcgpu")] == [
        "TheRock family gfx94X-dcgpu (device code for gfx942): amdgpu targets gfx942 (--amdgpu-targets)"]
    dist_wheels.prepare_toolkit(request)
    assert "TheRock family" not in capsys.readouterr().err, "prepare_toolkit says it again"


# A flag string read back: a method that splits or tests text starting with a flag that carries
# the toolkit (--repo_env, --action_env) or the targets (--//rocm:amdgpu_targets). Leaving all
# build settings out of a query (`not f.startswith("--@")`) reads nothing back.
FLAG_READ_BACK = re.compile(r"""\.(?:startswith|removeprefix|partition|split|index|find)\(\s*f?["']"""
                            r"""(?:--repo_env|--action_env|--@[^"']*amdgpu_targets|--//rocm)""")
FLAG_MEMBERSHIP = re.compile(r"""f?["']--(?:repo_env|action_env)=[A-Z_]*["']\s+in\b""")


def read_backs(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if FLAG_READ_BACK.search(line) or FLAG_MEMBERSHIP.search(line)]


def test_the_scan_finds_a_flag_read_back():
    planted = ('url = next(f for f in flags if f.startswith("--repo_env=THEROCK_URL="))\n'
               'if "--repo_env=ROCM_PATH" in flags:\n'
               'flags.append(f"--repo_env=ROCM_PATH={path}")\n'
               'targets = flag.removeprefix("--@jax_rocm_build//rocm:amdgpu_targets=").split(",")\n'
               'query_flags = [f for f in flags if not f.startswith("--@")]\n')
    assert read_backs(planted) == [1, 2, 4]


def test_no_cli_module_reads_the_toolkit_back_out_of_flags():
    found = {path.name: lines for path in sorted((CHECKOUT / "build" / "ci_build_cli").glob("*.py"))
             if (lines := read_backs(path.read_text()))}
    assert found == {}, f"the toolkit is a typed value (RocmSource): read it, not its flags: {found}"
    assert toolkit.RocmSource.__module__ == "ci_build_cli.request"
