"""One home for the ROCm configs: rocm/rocm.bazelrc (and the manylinux toolchain's rc) mean
the same in the checkout's root module and in full/, where this project is a dependency; what
full/.bazelrc adds to them is only its one commented block; ci_build's builds expand the
rocm config once; and upstream JAX's config names (its build/rocm/rocm.bazelrc) are all
defined here, with the meaning rocm/rocm.bazelrc's comments give them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from ci_build_cli import cli, dist_wheels
from ci_build_cli.options import RBE_CONFIGS
from ci_build_cli.request import Request
from tests.conftest import require_jax_tree
from tests.infra import bazelrc
from third_party.private import source_tree

pytestmark = pytest.mark.unit

CHECKOUT = Path(__file__).resolve().parents[2]
SHARED = [CHECKOUT / "rocm" / "rocm.bazelrc", CHECKOUT / "toolchains" / "manylinux" / "manylinux.bazelrc"]
ROOT = bazelrc.read(CHECKOUT / ".bazelrc", CHECKOUT)
FULL_RC = CHECKOUT / "full" / ".bazelrc"
FULL = bazelrc.read(FULL_RC, CHECKOUT / "full")
# The one place full/.bazelrc may say something of its own about a shared config.
DIFFERS = "# What differs in full mode"


def shared_configs() -> list[str]:
    return sorted({c for rc in SHARED for c in bazelrc.configs(bazelrc.read(rc, CHECKOUT))})


def rc_lines(text: str, source: Path) -> list[bazelrc.RcLine]:
    """The option lines of rc text, as tests.infra.bazelrc reads them (no imports)."""
    lines = []
    for raw in text.splitlines():
        words = shlex.split(raw, comments=True)
        if words and words[0] not in ("import", "try-import"):
            command, _, config = words[0].partition(":")
            lines.append(bazelrc.RcLine(command, config or None, tuple(words[1:]), source))
    return lines


def full_mode_block() -> list[bazelrc.RcLine]:
    """The lines of full/.bazelrc's commented block (from the DIFFERS comment to the next blank line)."""
    text = FULL_RC.read_text()
    assert text.count(DIFFERS) == 1, f"full/.bazelrc must have exactly one '{DIFFERS}' block"
    return rc_lines(text.split(DIFFERS, 1)[1].split("\n\n", 1)[0], FULL_RC)


def full_mode_additions() -> dict[str, list[str]]:
    """Config -> the options full/.bazelrc's commented block adds to it."""
    additions: dict[str, list[str]] = {}
    for line in full_mode_block():
        additions.setdefault(line.config, []).extend(line.options)
    return additions


def what_full_mode_may_mean() -> list[bazelrc.RcLine]:
    """The checkout's configs with full/.bazelrc's block added and full mode's own configs
    (cc_local) defined: what full mode's shared configs must expand to, nested ones included
    (rocm_release_wheel takes manylinux_2_28's addition with it)."""
    block, shared = full_mode_block(), set(shared_configs())
    own = [line for line in FULL if line.source == FULL_RC and line.config and line.config not in shared
           and line not in block]
    return ROOT + own + block


def test_both_modules_read_the_shared_files():
    for lines, workspace in ((ROOT, CHECKOUT), (FULL, CHECKOUT / "full")):
        sources = {line.source for line in lines}
        assert set(SHARED) <= sources, f"{workspace}/.bazelrc does not import {sorted(set(SHARED) - sources)}"


@pytest.mark.parametrize("command", ["build", "test"])
def test_every_shared_config_means_the_same_in_both_modules(command):
    expected = what_full_mode_may_mean()
    compared = 0
    for config in shared_configs():
        full = bazelrc.expand(FULL, config, command)
        assert full == bazelrc.expand(expected, config, command), f"--config={config} ({command}) differs in full/"
        compared += 1
    # rocm, the nine gfx configs, rocm_release, the RBE, GPU, sanitizer and manylinux ones, JAX's six
    assert compared >= 26


def test_a_config_without_additions_is_the_checkouts_in_full_mode():
    """The expectation above, spelled out where it is simplest: a config the block does not touch,
    nor anything it includes, is word for word the checkout's."""
    for config in ("rocm", "rocm_release", "ci_single_gpu", "single_gpu"):
        assert config not in full_mode_additions()
        assert bazelrc.expand(FULL, config) == bazelrc.expand(ROOT, config)
    assert bazelrc.expand(FULL, "manylinux_2_28") == bazelrc.expand(ROOT, "manylinux_2_28") + \
        full_mode_additions()["manylinux_2_28"]


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


def release_args(rbe: str, host_toolchain: str) -> Request:
    return cli.parse_args(["--sources=examples", "dist_wheels", f"--rbe={rbe}", f"--host-toolchain={host_toolchain}"])


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


# --- upstream JAX's names -----------------------------------------------------------------------

# Every config name of JAX's build/rocm/rocm.bazelrc at jax-v0.10.2, jax-v0.11.0 and main
# (2026-11): test_every_config_name_of_a_real_jax_tree_is_defined_here reads a tree's own.
JAX_ROCM_CONFIGS = ("rocm", "rocm_clang_local", "rocm_clang_hermetic", "rocm_clang_hermetic_local_sysroot",
                    "rocm_release_wheel", "single_gpu", "multi_gpu", "rocm_rbe", "rocm_rbe_dynamic")
# JAX's GPU test pools (its single_gpu and multi_gpu set all three of XLA's variables to one).
JAX_POOLS = {"single_gpu": "linux_x64_gpu", "multi_gpu": "linux_x64_multigpu"}
POOL_VARIABLES = ("TF_ROCM_RBE_POOL", "TF_ROCM_RBE_SINGLE_GPU_POOL", "TF_ROCM_RBE_MULTI_GPU_POOL")


def ours() -> set[str]:
    return bazelrc.configs(bazelrc.read(CHECKOUT / "rocm" / "rocm.bazelrc", CHECKOUT))


def test_jax_config_names_are_defined_here():
    assert set(JAX_ROCM_CONFIGS) <= ours(), sorted(set(JAX_ROCM_CONFIGS) - ours())


def test_every_config_name_of_a_real_jax_tree_is_defined_here():
    """Gated (JAX_ROCM_TEST_JAX_TREE, a checkout or archive): the names of the tree's own
    build/rocm/rocm.bazelrc, on build:, common: or test: lines (any command)."""
    tree = require_jax_tree()
    wanted = "build/rocm/rocm.bazelrc"
    found = source_tree.read_files(tree, [wanted])
    assert wanted in found, f"{tree} has no {wanted}: JAX moved its ROCm configs; find them and update this test"
    theirs = bazelrc.configs(rc_lines(found[wanted].decode(), tree / wanted))
    assert {"rocm", "rocm_release_wheel"} <= theirs, sorted(theirs)  # the file read is the one meant
    assert theirs <= ours(), f"JAX's {wanted} names configs rocm/rocm.bazelrc lacks: {sorted(theirs - ours())}"


def test_reading_jax_names_sees_every_command(tmp_path):
    """The reader the gated test uses finds a name whatever the command of its line."""
    text = 'common:a --x\nbuild:b --y\ntest:c --z\nbuild --w\n# build:d --v\nbuild:e --repo_env X="1 2"\n'
    assert bazelrc.configs(rc_lines(text, tmp_path / "rc")) == {"a", "b", "c", "e"}


@pytest.mark.parametrize("lines", [ROOT, FULL], ids=["kernels", "full"])
def test_rocm_release_wheel_is_ci_builds_release_build(lines):
    """JAX's release-wheel config is, option for option, the configs ci_build dist_wheels passes for
    a local release build (rocm_release, manylinux_2_28), rocm expanded once."""
    ci_build = [o for config in dist_wheels.release_configs(release_args("off", "manylinux_2_28"))
                for o in bazelrc.expand(lines, config)]
    assert bazelrc.expand(lines, "rocm_release_wheel") == ci_build
    assert bazelrc.expansions(lines, "rocm_release_wheel").count("rocm") == 1
    options = bazelrc.expand(lines, "rocm_release_wheel")
    assert "--@local_config_rocm//rocm:rocm_path_type=link_only" in options  # JAX's own rocm_release_wheel sets it
    assert "--@jax_rocm_build//toolchains/manylinux:glibc=2.28" in options


@pytest.mark.parametrize("lines", [ROOT, FULL], ids=["kernels", "full"])
def test_rocm_clang_hermetic_is_rocm_with_the_hermetic_host_toolchain(lines):
    options = bazelrc.expand(lines, "rocm_clang_hermetic")
    assert options == bazelrc.expand(lines, "rocm") + bazelrc.expand(lines, "manylinux_2_28")
    assert "--compilation_mode=opt" not in options  # the release settings are rocm_release_wheel's, as in JAX


@pytest.mark.parametrize("config", ["rocm_clang_local", "rocm_clang_hermetic_local_sysroot"])
def test_the_machines_toolchain_configs(config):
    """rocm in the checkout (its host C++ is the machine's); full mode adds cc_local, its machine toolchain."""
    assert bazelrc.expand(ROOT, config) == bazelrc.expand(ROOT, "rocm")
    assert bazelrc.expand(FULL, config) == bazelrc.expand(FULL, "rocm") + bazelrc.expand(FULL, "cc_local")
    assert "--@rules_ml_toolchain//common:enable_hermetic_cc=False" in bazelrc.expand(FULL, config)


@pytest.mark.parametrize("config", sorted(JAX_POOLS))
@pytest.mark.parametrize("command", ["build", "test"])
def test_single_and_multi_gpu_choose_jaxs_pools(config, command):
    """JAX's meaning: XLA's three pool variables, all set to JAX's pool; nothing else (a tag filter
    would replace the one JAX's CI script passes before them)."""
    assert bazelrc.expand(ROOT, config, command) == [f"--repo_env={v}={JAX_POOLS[config]}" for v in POOL_VARIABLES]


def test_the_pool_variables_are_ones_local_config_rocm_reads():
    configure = (CHECKOUT / "third_party" / "gpus" / "rocm_configure.bzl").read_text()
    environ = configure.split("ROCM_CONFIGURE_ENVIRON = ", 1)[1].split("\n]\n", 1)[0]
    for variable in POOL_VARIABLES:
        assert f'"{variable}"' in environ, variable
