"""full/MODULE.bazel pins XLA and rules_ml_toolchain where third_party/*/pin.json do (MODULE.bazel cannot read JSON)."""

from __future__ import annotations

import base64
import json
import re
import subprocess

import pytest

from tests.conftest import CHECKOUT

pytestmark = pytest.mark.unit

MODULE = (CHECKOUT / "full" / "MODULE.bazel").read_text()


def archive_override(module: str) -> dict[str, str]:
    block = re.search(r'archive_override\(\s*module_name = "%s",(.*?)\n\)' % re.escape(module), MODULE, re.DOTALL)
    assert block, f"full/MODULE.bazel has no archive_override of {module}"
    return dict(re.findall(r'(\w+) = \[?"([^"]+)"', block.group(1)))


@pytest.mark.parametrize("module", ["xla", "rules_ml_toolchain"])
def test_full_mode_pins_what_the_pin_file_pins(module):
    pin = json.loads((CHECKOUT / "third_party" / module / "pin.json").read_text())
    override = archive_override(module)
    assert override["integrity"] == "sha256-" + base64.b64encode(bytes.fromhex(pin["sha256"])).decode()
    assert override["urls"] == pin["urls"][0].replace("{commit}", pin["commit"])
    assert override["strip_prefix"] == pin["strip_prefix"].replace("{commit}", pin["commit"])


def test_our_rocm_replaces_xlas_and_rules_ml_toolchains():
    assert 'override_repo(xla_rocm, "local_config_rocm")' in MODULE
    # buildifier puts keyword arguments of MODULE.bazel calls on lines of their own.
    assert re.search(r'override_repo\(\s*hipcc,\s*config_rocm_hipcc = "local_config_rocm",?\s*\)', MODULE)
    assert 'override_repo(sources, "com_google_absl", "xla")' in MODULE


JAX_MODULE = '''
bazel_dep(name = "grpc", version = "1.78.0", repo_name = "com_github_grpc_grpc")
single_version_override(
    module_name = "grpc",
    patch_strip = 1,
    patches = ["//third_party/grpc:grpc.patch"],  # upstreaming
    version = "1.78.0",
)
single_version_override(
    module_name = "protobuf",
    patch_strip = 1,
    patches = ["//third_party/protobuf:a.patch", "//third_party/protobuf:b.patch"],
    version = "32.1",
)
single_version_override(module_name = "rules_cc", patches = ["//x:y.patch"], patch_strip = 3)
single_version_override(module_name = "abseil-cpp", version = "20260526.0")
single_version_override(module_name = "rules_python", version = "1.8.5")
'''


def write_jax_tree(root):
    for relative, text in {"MODULE.bazel": JAX_MODULE, "third_party/grpc/grpc.patch": "--- a/g\n+++ b/g\n",
                           "third_party/protobuf/a.patch": "A\n", "third_party/protobuf/b.patch": "B"}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def test_jax_patches_are_taken_in_jaxs_order_for_the_modules_full_mode_overrides(tmp_path):
    from ci_build_cli import full

    plan = full.jax_patch_plan(JAX_MODULE)
    assert plan == {"abseil-cpp": [], "grpc": ["third_party/grpc/grpc.patch"], "rules_python": [],
                    "protobuf": ["third_party/protobuf/a.patch", "third_party/protobuf/b.patch"]}, "rules_cc is not ours to patch"
    tree = write_jax_tree(tmp_path / "jax")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "abseil-cpp.patch").write_text("from an earlier JAX\n")
    written = full.write_jax_patches(tree, tmp_path / "out")
    assert written == {"abseil-cpp": 0, "grpc": 16, "protobuf": 4, "rules_python": 0}
    assert (tmp_path / "out" / "protobuf.patch").read_text() == "A\nB\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["grpc.patch", "jax_overrides.MODULE.bazel", "protobuf.patch"]
    overrides = (tmp_path / "out" / "jax_overrides.MODULE.bazel").read_text()
    assert 'module_name = "abseil-cpp",\n    patch_strip = 1,\n    patches = [],\n    version = "20260526.0",' in overrides
    assert 'module_name = "grpc",\n    patch_strip = 1,\n    patches = ["//jax_patches:grpc.patch"],\n    version = "1.78.0",' \
        in overrides
    archive = tmp_path / "jax-v0.10.2.tar.gz"
    subprocess.run(["tar", "czf", str(archive), "-C", str(tmp_path), "jax"], check=True)
    assert full.jax_patches(archive) == full.jax_patches(tree), "an archive of the tree gives the same patches"


def test_jax_patches_that_full_mode_cannot_apply_as_jax_does_are_refused(tmp_path):
    from ci_build_cli import full

    with pytest.raises(full.JaxPatchError, match="patch_strip = 0"):
        full.jax_patch_plan('single_version_override(module_name = "grpc", patches = ["//p:g.patch"])')
    tree = write_jax_tree(tmp_path / "jax")
    (tree / "third_party" / "protobuf" / "b.patch").unlink()
    with pytest.raises(full.JaxPatchError, match="lacks the patch files its MODULE.bazel names: third_party/protobuf/b.patch"):
        full.jax_patches(tree)
    with pytest.raises(full.JaxPatchError, match="has no MODULE.bazel"):
        full.jax_patches(tmp_path)


def test_full_module_takes_the_patched_modules_versions_and_patches_from_jax():
    """full/MODULE.bazel includes what write_jax_patches writes, and overrides none of them itself:
    their versions move with JAX (abseil 20260107.1 in 0.10.2, 20260526.0 in 0.11.0)."""
    from ci_build_cli import full

    text = (CHECKOUT / "full" / "MODULE.bazel").read_text()
    assert f'include("//jax_patches:{full.JAX_OVERRIDES}")' in text
    assert not full.overridden_versions(text).keys() & set(full.PATCHED_MODULES)
    with pytest.raises(full.JaxPatchError, match="no single_version_override of abseil-cpp with a version"):
        full.overrides_file({"grpc": "1.78.0"}, set(), "jax")


def test_jaxs_module_file_hunks_are_re_anchored_on_the_registrys_file():
    """JAX's grpc patch edits MODULE.bazel 4 lines off the registry's file: GNU patch applies it
    there, Bazel's patcher (no offset) refuses it, so full mode writes the same change re-anchored."""
    from ci_build_cli import full

    registry = "".join(f"line {n}\n" for n in range(1, 21))
    jax = ("diff --git a/x.bzl b/x.bzl\n--- a/x.bzl\n+++ b/x.bzl\n@@ -1 +1 @@\n-a\n+b\n"
           "diff --git a/MODULE.bazel b/MODULE.bazel\n--- a/MODULE.bazel\n+++ b/MODULE.bazel\n"
           "@@ -14,3 +14,3 @@\n line 10\n-line 11\n+line eleven\n line 12\n")
    rebased = full.rebased_module_file(jax, registry)
    assert rebased.startswith("diff --git a/x.bzl b/x.bzl\n--- a/x.bzl\n+++ b/x.bzl\n@@ -1 +1 @@\n-a\n+b\n")
    assert "@@ -8,7 +8,7 @@\n line 8\n line 9\n line 10\n-line 11\n+line eleven\n line 12\n" in rebased
    with pytest.raises(full.JaxPatchError, match="does not apply to the registry's"):
        full.rebased_module_file(jax.replace("line 10\n-line 11", "line 10\n-line 99"), registry)
    assert full.overridden_versions(JAX_MODULE)["grpc"] == "1.78.0"


def test_full_modes_bazel_keeps_its_jni_folder_in_the_runs_tmpfs():
    """--nosystem_rc drops the sandbox's rc, which sets the server's tmpdir; debian.bazelrc
    must name the same tmpfs the sandbox mounts for each run."""
    from tools.sandbox_root.environment import BAZEL_JVM_TMPFS, RUN_TMPFS

    assert BAZEL_JVM_TMPFS in RUN_TMPFS
    rc = (CHECKOUT / "full" / "debian.bazelrc").read_text()
    assert f"startup --host_jvm_args=-Djava.io.tmpdir={BAZEL_JVM_TMPFS}\n" in rc
