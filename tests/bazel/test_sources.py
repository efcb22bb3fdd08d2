"""Pinned sources and overrides through the real mechanism: every spelling, loud failures, clean builds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, EXAMPLES_JAX, require_jax_tree, sandbox, sandbox_binds
from tests.infra.repositories import canonical

pytestmark = pytest.mark.bazel

MARKER = "jax_rocm_example"  # a PJRT attribute only examples/xla's plugin has
PLUGIN = "bazel-bin/xla_rocm_plugin.so"


def plugin_from(in_sandbox, *override: str, bazel: str = "bazel"):
    return in_sandbox("sh", "-c", f"{bazel} build --config=rocm {' '.join(override)} //:xla_rocm_plugin 2>&1 && "
                      f"grep -c {MARKER} {PLUGIN}", check=False)


# {checkout}: filled in by the test, so that the test's id is the same in every pytest-xdist worker.
@pytest.mark.parametrize("spelling", ["xla=examples/xla", "xla={checkout}/examples/xla", "@xla={checkout}/examples/xla",
                                      "@@xla={checkout}/examples/xla"])
def test_every_spelling_users_type_takes_effect(in_sandbox, spelling):
    result = plugin_from(in_sandbox, f"--override_repository={spelling.format(checkout=CHECKOUT)}")
    assert result.returncode == 0 and result.stdout.strip().endswith("1"), result.stdout[-2000:]


def test_plain_bazel_ignores_the_apparent_name_loudly_and_takes_the_canonical_one(in_sandbox):
    # Debian's Bazel without tools/bazel: the apparent name is ignored, so the pinned
    # archive is fetched, which fails here saying what to do instead of building silently.
    ignored = plugin_from(in_sandbox, f"--override_repository=xla={CHECKOUT}/examples/xla", bazel="/usr/bin/bazel")
    assert ignored.returncode != 0 and "xla: cannot download" in ignored.stdout and "--override_repository=xla=" in ignored.stdout
    xla = canonical("xla", in_sandbox("/usr/bin/bazel", "mod", "dump_repo_mapping", "").stdout)  # _main~sources~xla
    canonical_override = plugin_from(in_sandbox, f"--override_repository={xla}={CHECKOUT}/examples/xla", bazel="/usr/bin/bazel")
    assert canonical_override.returncode == 0 and canonical_override.stdout.strip().endswith("1")


def test_a_wrong_sha256_fails_naming_the_pin_file_and_the_real_hash(sandbox_root, scratch_checkout):
    pin_file = scratch_checkout / "third_party/nanobind/pin.json"
    pin = json.loads(pin_file.read_text())
    real = pin["sha256"]
    distdir = sandbox_root.parent.parent / "distdir"
    pin["sha256"] = "0" * 64
    pin["urls"] = [f"file://{distdir}/{pin['urls'][0].rsplit('/', 1)[1]}"]
    pin_file.write_text(json.dumps(pin))
    result = sandbox("run", "--", "sh", "-c", "bazel build @nanobind//:headers; bazel shutdown", cwd=scratch_checkout, check=False)
    assert "nanobind: the archive at file://" in result.stderr
    assert f"has sha256 {real}, but third_party/nanobind/pin.json pins {'0' * 64}" in result.stderr
    assert "python3 -m tools.update_pins nanobind" in result.stderr


@pytest.mark.slow  # a clean output base on purpose: the slow tier (docs/testing.md)
def test_preflight_builds_every_native_artifact_offline_from_a_clean_output_base(sandbox_root, scratch_checkout):
    """`ci_build preflight` against examples/xla, in a fresh copy: a clean output base, no network
    (JAX's modules from the copy's examples/jax, which --sources=examples takes)."""
    xla = scratch_checkout / "examples" / "xla"
    result = subprocess.run([sys.executable, "build/ci_build", "--sources=examples", f"--xla-source-dir={xla}",
                             "--amdgpu-targets=gfx942", "preflight"], cwd=scratch_checkout, capture_output=True, text=True)
    log = result.stdout + result.stderr
    try:
        assert result.returncode == 0, log[-4000:]
        assert "ci_build preflight: OK" in log
        assert "//tests/native:pjrt_plugin_test" in log and "2 tests pass" in log
    finally:
        sandbox("run", "--", "bazel", "shutdown", cwd=scratch_checkout, check=False)


def test_a_missing_symbol_in_the_plugin_fails_at_link_time(sandbox_root, scratch_checkout):
    """-Wl,--no-undefined: an unresolved symbol stops the build instead of the first `import`."""
    source = scratch_checkout / "examples/xla/xla/pjrt/c/pjrt_c_api_gpu.cc"
    source.write_text(source.read_text() + '\nextern "C" int jax_rocm_symbol_nobody_defines();\n'
                      'extern "C" int jax_rocm_calls_it() { return jax_rocm_symbol_nobody_defines(); }\n')
    result = sandbox("run", "--", "sh", "-c", "bazel build --config=rocm --override_repository=xla=examples/xla "
                     "//:xla_rocm_plugin; status=$?; bazel shutdown; exit $status", cwd=scratch_checkout, check=False)
    assert result.returncode != 0
    assert "undefined reference to `jax_rocm_symbol_nobody_defines'" in result.stderr


def jax_checkout_layout(checkout: Path, binds: list[str] = ()) -> tuple[dict, str, str, str]:
    """@jax laid out from a checkout with --override_repository=jax=DIR as users type it
    (tools/bazel): (source_info.json, where jaxlib/gpu/prng.cc links to, how many BUILD files
    jaxlib/gpu has, stand_in.bzl)."""
    script = (f"bazel build --override_repository=jax={checkout} @jax//:headers >/dev/null 2>&1 && "
              "repo=$(python3 -m tests.infra.repositories jax) && cat $repo/source_info.json && "
              "readlink $repo/jaxlib/gpu/prng.cc && (ls $repo/jaxlib/gpu | grep -cx 'BUILD' || true) && "
              "grep '^STAND_IN' $repo/stand_in.bzl")
    out = sandbox("run", *binds, "--", "sh", "-c", script, cwd=CHECKOUT).stdout.splitlines()
    return json.loads("".join(out[:-3])), out[-3], out[-2], out[-1]


def test_a_jax_checkout_is_laid_out_by_symlinks_without_its_bazel_files(sandbox_root):
    """Gated (JAX_ROCM_TEST_JAX_TREE, a checkout): @jax holds the checkout's files as symlinks
    (edits are seen), none of its BUILD/.bzl files, says it is a checkout and no stand-in."""
    checkout = require_jax_tree()
    if not checkout.is_dir():
        pytest.skip(f"JAX_ROCM_TEST_JAX_TREE={checkout} is an archive; this test needs a checkout")
    info, prng, builds, stand_in = jax_checkout_layout(checkout, sandbox_binds(checkout))
    assert (info["origin"], info["path"], info["stand_in"]) == ("local checkout", str(checkout), False)
    assert prng == str(checkout / "jaxlib/gpu/prng.cc"), "a symlink into the checkout"
    assert builds == "0", "JAX's own BUILD files are left out"
    assert stand_in == "STAND_IN = False"


def test_examples_jax_is_laid_out_like_a_checkout_and_labelled_a_stand_in(sandbox_root):
    """The same layout from examples/jax, whose marker makes @jax//:headers (and with it every
    module built from it) a jax_rocm_stand_in target."""
    info, prng, builds, stand_in = jax_checkout_layout(EXAMPLES_JAX)
    assert (info["origin"], info["path"], info["version"], info["stand_in"]) == (
        "local checkout", "examples/jax", "0.10.2", True)
    assert prng == str(EXAMPLES_JAX / "jaxlib/gpu/prng.cc")
    assert builds == "0" and stand_in == "STAND_IN = True"
    tags = sandbox("run", "--", "bazel", "query", f"--override_repository=jax={EXAMPLES_JAX}",
                   "attr(tags, jax_rocm_stand_in, @jax//:headers)", cwd=CHECKOUT).stdout
    jax = canonical("jax", sandbox("run", "--", "bazel", "mod", "dump_repo_mapping", "", cwd=CHECKOUT).stdout)
    assert "@jax//:headers" in tags or f"{jax}//:headers" in tags, tags


def test_without_a_jax_tree_offline_the_failure_says_how_to_give_one(in_sandbox):
    """The pinned JAX archive cannot be downloaded here: the failure names the pin and the way out."""
    result = in_sandbox("bazel", "build", "--config=rocm", "--override_repository=xla=examples/xla", "//jaxlib/rocm:_prng",
                        check=False)
    assert result.returncode != 0
    assert "jax: cannot download https://github.com/jax-ml/jax/archive/refs/tags/jax-v0.10.2.tar.gz" in result.stderr
    assert "(pinned in third_party/jax/pin.json)" in result.stderr and "--override_repository=jax=/path/to/jax" in result.stderr


def test_xlas_own_python_headers_are_used_when_an_xla_tree_has_them(in_sandbox, tmp_path):
    """@xla_python_headers takes numpy.h/numpy.cc/safe_static_init.h/TSL's platform.h from the XLA tree given
    (here a copy of examples/xla with those files added), and this project's stand-ins from
    examples/xla, which has none."""
    import shutil

    xla = tmp_path / "xla"
    shutil.copytree(CHECKOUT / "examples" / "xla", xla)
    for relative in ("xla/tsl/python/lib/core/numpy.h", "xla/tsl/python/lib/core/numpy.cc", "xla/python/safe_static_init.h",
                     "third_party/tsl/tsl/platform/platform.h"):
        (xla / relative).parent.mkdir(parents=True, exist_ok=True)
        (xla / relative).write_text("// from the XLA tree\n")
    script = ("bazel build --override_repository=xla={xla} @xla_python_headers//:source_info.json >/dev/null 2>&1 && "
              "repo=$(python3 -m tests.infra.repositories xla_python_headers) && cat $repo/source_info.json && "
              "head -1 $repo/xla/python/safe_static_init.h")
    given = in_sandbox("sh", "-c", script.format(xla=xla)).stdout
    assert '"origin": "xla"' in given and f'"path": "{xla}"' in given and given.rstrip().endswith("// from the XLA tree")
    stand_in = in_sandbox("sh", "-c", script.format(xla=CHECKOUT / "examples" / "xla")).stdout
    assert '"origin": "jax-rocm-build (third_party/xla_compat)"' in stand_in and "XLA_SOURCE_DIR names a tree without them" in stand_in
    assert "stand-in for XLA's xla/python/safe_static_init.h" in stand_in
