"""One home for the ROCm configs: rocm/rocm.bazelrc (and the manylinux toolchain's rc) mean
the same in the checkout's root module and in full/, where this project is a dependency; what
full/.bazelrc adds to them is only its one commented block; and ci_build's builds expand the
rocm config once."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from build.ci_build_cli import dist_wheels
from build.ci_build_cli.options import RBE_CONFIGS
from tests.infra import bazelrc

pytestmark = pytest.mark.unit

CHECKOUT = Path(__file__).resolve().parents[2]
SHARED = [CHECKOUT / "rocm" / "rocm.bazelrc", CHECKOUT / "toolchains" / "manylinux" / "manylinux.bazelrc"]
ROOT = bazelrc.read(CHECKOUT / ".bazelrc", CHECKOUT)
FULL = bazelrc.read(CHECKOUT / "full" / ".bazelrc", CHECKOUT / "full")
# The one place full/.bazelrc may say something of its own about a shared config.
DIFFERS = "# What differs in full mode"


def shared_configs() -> list[str]:
    return sorted({c for rc in SHARED for c in bazelrc.configs(bazelrc.read(rc, CHECKOUT))})


def full_mode_additions() -> dict[str, list[str]]:
    """Config -> the options full/.bazelrc's commented block adds to it (the block: from the
    DIFFERS comment to the next blank line)."""
    text = (CHECKOUT / "full" / ".bazelrc").read_text()
    assert text.count(DIFFERS) == 1, f"full/.bazelrc must have exactly one '{DIFFERS}' block"
    block = text.split(DIFFERS, 1)[1].split("\n\n", 1)[0]
    additions: dict[str, list[str]] = {}
    for line in block.splitlines():
        if line.strip() and not line.startswith("#"):
            head, *options = line.split()
            additions.setdefault(head.partition(":")[2], []).extend(options)
    return additions


def test_both_modules_read_the_shared_files():
    for lines, workspace in ((ROOT, CHECKOUT), (FULL, CHECKOUT / "full")):
        sources = {line.source for line in lines}
        assert set(SHARED) <= sources, f"{workspace}/.bazelrc does not import {sorted(set(SHARED) - sources)}"


@pytest.mark.parametrize("command", ["build", "test"])
def test_every_shared_config_means_the_same_in_both_modules(command):
    additions = full_mode_additions()
    compared = 0
    for config in shared_configs():
        root, full = bazelrc.expand(ROOT, config, command), bazelrc.expand(FULL, config, command)
        assert full == root + additions.get(config, []), f"--config={config} ({command}) differs in full/"
        compared += 1
    assert compared >= 20  # rocm, the nine gfx configs, rocm_release, the RBE, GPU, sanitizer and manylinux ones


def test_full_mode_restates_no_shared_config_outside_its_one_block():
    block_configs = set(full_mode_additions())
    own = {line.config for line in FULL if line.source == CHECKOUT / "full" / ".bazelrc" and line.config}
    restated = (own & set(shared_configs())) - block_configs
    assert not restated, f"full/.bazelrc restates {sorted(restated)}: change rocm/rocm.bazelrc instead"


def test_the_shared_files_name_this_project_so_that_both_modules_mean_it():
    """A main-repository label (--//rocm:..., //tools:...) would name full/'s own packages there."""
    for rc in SHARED:
        for line in bazelrc.read(rc, CHECKOUT):
            main_relative = [o for o in line.options if re.search(r"(^--(no)?//|[=\"]//)", o)]
            assert not main_relative, f"{rc.name}: {line.command}:{line.config} names {main_relative}; spell @jax_rocm_build//"


def test_the_comparison_can_fail(tmp_path):
    """The reader sees a difference where there is one: a config restated with another value."""
    (tmp_path / "rocm").mkdir()
    (tmp_path / "rocm" / "a.bazelrc").write_text("common:rocm --repo_env=A=1\ncommon:rocm_release --config=rocm\n")
    (tmp_path / ".bazelrc").write_text("import %workspace%/rocm/a.bazelrc\nbuild:rocm --repo_env=A=2\n")
    lines = bazelrc.read(tmp_path / ".bazelrc", tmp_path)
    assert bazelrc.expand(lines, "rocm_release") == ["--repo_env=A=1", "--repo_env=A=2"]


def release_args(rbe: str, host_toolchain: str) -> argparse.Namespace:
    return argparse.Namespace(rbe=rbe, host_toolchain=host_toolchain)


@pytest.mark.parametrize("rbe", sorted(RBE_CONFIGS))
@pytest.mark.parametrize("host_toolchain", ["manylinux_2_28", "sandbox"])
@pytest.mark.parametrize("lines", [ROOT, FULL], ids=["kernels", "full"])
def test_a_release_build_expands_the_rocm_config_once(rbe, host_toolchain, lines):
    configs = dist_wheels.release_configs(release_args(rbe, host_toolchain))
    expanded = [name for config in configs for name in bazelrc.expansions(lines, config)]
    assert expanded.count("rocm") == 1, expanded
    options = [o for config in configs for o in bazelrc.expand(lines, config)]
    # The release settings, whatever the execution: link_only RUNPATHs and compressed device code.
    assert "--@local_config_rocm//rocm:rocm_path_type=link_only" in options
    assert "--@jax_rocm_build//rocm:offload_compress" in options
    if RBE_CONFIGS[rbe]:
        assert f"--config={RBE_CONFIGS[rbe]}" not in options and RBE_CONFIGS[rbe] in expanded
    if host_toolchain == "manylinux_2_28":
        assert "--@jax_rocm_build//toolchains/manylinux:glibc=2.28" in options
