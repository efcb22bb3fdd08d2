"""`ci_build preflight --names-only`: every @local_config_rocm name a tree uses and every call it
makes into it, the environment variables XLA's rocm_configure reads and the --config names
JAX's rocm.bazelrc defines, asked of Bazel.

On a small tree of the test's own making (always), and on real XLA and JAX trees where
JAX_ROCM_TEST_XLA_TREE / JAX_ROCM_TEST_JAX_TREE name them (a checkout, or for JAX an
archive too); skipped otherwise, naming the variable.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT

pytestmark = pytest.mark.bazel

CI_BUILD = [sys.executable, str(CHECKOUT / "build" / "ci_build")]


def preflight(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CI_BUILD + ["preflight", "--names-only", *args], cwd=CHECKOUT, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


# What makes a folder a JAX tree to ci_build (sources.check_jax_tree): a release it builds.
JAX_VERSION_PY = {"jax/version.py": '_version = "0.11.0"\n'}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """A tree of the test's own: relative path -> text."""
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def timed_preflight(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    result = preflight(*args)
    return result, time.monotonic() - t0


def assert_quick_and_tidy(took: float) -> None:
    assert not list((CHECKOUT / "build" / "preflight_probe").glob("*")), "the probe packages are left behind"
    assert took < 120, f"the pre-flight took {took:.0f} s"


def real_tree(variable: str) -> Path:
    value = os.environ.get(variable)
    if not value:
        pytest.skip(f"{variable} is not set: point it at a real tree to run this test")
    return Path(value)


def test_a_tree_naming_what_we_lack_gets_one_line_per_name(tmp_path, sandbox_root):
    tree = write_tree(tmp_path / "xla", {
        "xla/gpu/BUILD":
            'load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm", "rocm_library", "if_rocm_next_year")\n'
            'cc_library(name = "a", deps = ["@local_config_rocm//rocm:hipblas", "@local_config_rocm//rocm:rocm_quantum"])\n',
        ".bazelrc": "build:rocm --@local_config_rocm//rocm:using_hipcc\n"
                    "build:rocm --extra_toolchains=@local_config_rocm//hipcc:toolchain\n",
    })
    result, took = timed_preflight(f"--xla-source-dir={tree}")
    assert result.returncode == 1, result.stderr
    lines = [line.removeprefix("ci_build preflight: ") for line in result.stderr.splitlines() if "missing" in line]
    assert lines[:3] == [
        "missing target @local_config_rocm//hipcc:toolchain (first used in xla/.bazelrc:2)",
        "missing target @local_config_rocm//rocm:rocm_quantum (first used in xla/xla/gpu/BUILD:2)",
        "missing symbol if_rocm_next_year of @local_config_rocm//rocm:build_defs.bzl (first used in xla/xla/gpu/BUILD:1)",
    ], result.stderr
    assert "lacks 3 of the 8 names" in result.stderr
    assert_quick_and_tidy(took)


def test_a_tree_using_only_what_we_answer_passes(tmp_path, sandbox_root):
    tree = write_tree(tmp_path / "jax", {**JAX_VERSION_PY,
        "jaxlib/rocm/BUILD":
            'load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm_is_configured", "rocm_library")\n'
            'x = ["@local_config_rocm//rocm:rocm_headers", "@local_config_rocm//rocm:hipsolver", '
            '"@local_config_rocm//rocm:hip_runtime"]\n',
    })
    result = preflight(f"--jax-source-dir={tree}")
    assert result.returncode == 0, result.stderr
    assert "answers all 6 names" in result.stderr


CALLING_WRONGLY = """load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm", "rocm_library")

rocm_library(
    name = "fast",
    srcs = ["fast.cu.cc"],
    use_fast_math = True,
)

rocm_library(name = "typed", srcs = "typed.cu.cc")

cc_library(
    name = "keyed",
    copts = select({
        "@local_config_rocm//rocm:rocm_headers": ["-DX"],
        "//conditions:default": [],
    }) + if_rocm(["-DY"]),
)

cc_library(
    name = "macro",
    copts = if_rocm(["-DZ"], when_missing = []),
)

rocm_library(name = "right", srcs = ["right.cu.cc"], deps = ["@local_config_rocm//rocm:rocm_headers"], linkstatic = True)
"""


def test_a_tree_calling_ours_wrongly_gets_one_line_per_call(tmp_path, sandbox_root):
    """Names that exist, used wrongly: an unknown argument (of a rule, of a macro), a wrong
    literal type, a select() key that is no config_setting, a build-setting value ours refuses."""
    tree = write_tree(tmp_path / "jax", {**JAX_VERSION_PY,
        "jaxlib/rocm/BUILD": CALLING_WRONGLY,
        ".bazelrc": "build:rocm --@local_config_rocm//rocm:rocm_path_type=everywhere\n"
                    "build:rocm --@local_config_rocm//rocm:rocm_path_type=link_only\n",
    })
    result, took = timed_preflight(f"--jax-source-dir={tree}")
    assert result.returncode == 1, result.stderr
    assert "answers all 5 names" in result.stderr, "every name exists: the name check passes"
    lines = [line.removeprefix("ci_build preflight: ") for line in result.stderr.splitlines()
             if line.startswith("ci_build preflight: jax/")]
    assert lines == [
        "jax/.bazelrc:1: --@local_config_rocm//rocm:rocm_path_type=everywhere: Error setting "
        "@local_config_rocm//rocm:rocm_path_type: invalid value 'everywhere'. Allowed values are "
        '["system", "hermetic", "multiple", "link_only"]',
        "jax/jaxlib/rocm/BUILD:6: rocm_library(use_fast_math = ...): no such attribute 'use_fast_math' in 'rocm_library' rule",
        "jax/jaxlib/rocm/BUILD:9: rocm_library(srcs = ...): expected value of type 'list(label)' for attribute 'srcs' "
        "in 'rocm_library' rule, but got \"typed.cu.cc\" (string)",
        "jax/jaxlib/rocm/BUILD:14: select() key @local_config_rocm//rocm:rocm_headers: @local_config_rocm//rocm:rocm_headers "
        "is not a valid select() condition for the tree's target.",
        "jax/jaxlib/rocm/BUILD:21: if_rocm(when_missing = ...): if_rocm() got unexpected keyword argument: when_missing",
    ], result.stderr
    assert "rejects 5 of the 9 calls and uses" in result.stderr
    assert_quick_and_tidy(took)


@pytest.mark.parametrize("variables", [("JAX_ROCM_TEST_XLA_TREE",), ("JAX_ROCM_TEST_JAX_TREE",),
                                       ("JAX_ROCM_TEST_XLA_TREE", "JAX_ROCM_TEST_JAX_TREE")], ids=["xla", "jax", "both"])
def test_real_trees_need_nothing_we_lack(variables, sandbox_root):
    trees = {v: real_tree(v) for v in variables}
    flags = [f"--{'xla' if 'XLA' in v else 'jax'}-source-dir={path}" for v, path in trees.items()]
    result = preflight(*flags)
    assert result.returncode == 0, result.stderr
    assert "@local_config_rocm answers all" in result.stderr
    assert "@local_config_rocm accepts all" in result.stderr


# The interface around the names (preflight_interface): XLA's rocm_configure.bzl reads a
# variable ours answers (TF_NEED_ROCM: ROCM_CONFIGURE_ENVIRON), one it says it need not read
# (TMPDIR: XLA_ENVIRON_NOT_NEEDED) and one nobody knows; JAX's rocm.bazelrc defines configs ours
# defines (rocm, and ci_single_gpu for `test` only: asked as `bazel test` would) and two it does not.
MADE_UP_CONFIGURE = '''_MADE_UP = "JAX_ROCM_MADE_UP_VARIABLE"

def _impl(repository_ctx):
    if get_host_environ(repository_ctx, "TF_NEED_ROCM") == "1":
        return repository_ctx.os.environ.get(_MADE_UP, "")

rocm_configure = repository_rule(implementation = _impl, environ = ["TF_NEED_ROCM", "TMPDIR", _MADE_UP])
'''
MADE_UP_BAZELRC = """common:rocm --repo_env=TF_NEED_ROCM=1
test:ci_single_gpu --test_output=all
build:jax_rocm_made_up_config --copt=-O3
test:jax_rocm_made_up_test_config --test_output=all
"""


def test_a_made_up_variable_and_configs_get_one_line_each_at_their_line(tmp_path, sandbox_root):
    xla = write_tree(tmp_path / "xla", {"third_party/gpus/rocm_configure.bzl": MADE_UP_CONFIGURE, "xla/BUILD": ""})
    jax = write_tree(tmp_path / "jax", {**JAX_VERSION_PY, "build/rocm/rocm.bazelrc": MADE_UP_BAZELRC})
    result, took = timed_preflight(f"--xla-source-dir={xla}", f"--jax-source-dir={jax}")
    assert result.returncode == 1, result.stderr
    lines = [line.removeprefix("ci_build preflight: ") for line in result.stderr.splitlines()
             if line.startswith(("ci_build preflight: xla/third_party", "ci_build preflight: jax/build"))]
    assert lines == [
        "xla/third_party/gpus/rocm_configure.bzl:5: JAX_ROCM_MADE_UP_VARIABLE: XLA's rocm_configure reads it "
        "(os.environ.get); ours neither reads it (ROCM_CONFIGURE_ENVIRON) nor says why it need not (XLA_ENVIRON_NOT_NEEDED)",
        "jax/build/rocm/rocm.bazelrc:3: --config=jax_rocm_made_up_config: JAX defines it (build); this project's .bazelrc "
        "does not (Bazel: Config value 'jax_rocm_made_up_config' is not defined in any .rc file)",
        "jax/build/rocm/rocm.bazelrc:4: --config=jax_rocm_made_up_test_config: JAX defines it (test); this project's "
        ".bazelrc does not (Bazel: Config value 'jax_rocm_made_up_test_config' is not defined in any .rc file)",
    ], result.stderr
    assert "ours does not answer 1 of the 3 environment variables" in result.stderr
    assert "this project's .bazelrc lacks 2 of the 4 --config names" in result.stderr
    assert "note: --config=" not in result.stderr, "ci_single_gpu is defined, and test's no-targets stop is no note"
    assert_quick_and_tidy(took)


def interface_summary(stderr: str, start: str) -> str:
    found = [line for line in stderr.splitlines() if line.startswith(f"ci_build preflight: {start}")]
    return found[0] if found else ""


def test_the_real_xla_tree_reads_no_variable_ours_does_not_answer(sandbox_root):
    xla = real_tree("JAX_ROCM_TEST_XLA_TREE")
    result, took = timed_preflight(f"--xla-source-dir={xla}")
    print(interface_summary(result.stderr, "ours "), f"({took:.0f} s in all)")
    assert interface_summary(result.stderr, "ours answers all "), result.stderr


def test_the_real_jax_tree_uses_no_config_ours_lacks(sandbox_root):
    jax = real_tree("JAX_ROCM_TEST_JAX_TREE")
    result, took = timed_preflight(f"--jax-source-dir={jax}")
    print(interface_summary(result.stderr, "this project's .bazelrc "), f"({took:.0f} s in all)")
    assert interface_summary(result.stderr, "this project's .bazelrc defines all "), result.stderr
