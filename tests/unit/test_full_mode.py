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
    from ci_build_cli import jax_patches

    plan = jax_patches.jax_patch_plan(JAX_MODULE)
    assert plan == {"abseil-cpp": [], "grpc": ["third_party/grpc/grpc.patch"], "rules_python": [],
                    "protobuf": ["third_party/protobuf/a.patch", "third_party/protobuf/b.patch"]}, "rules_cc is not ours to patch"
    tree = write_jax_tree(tmp_path / "jax")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "abseil-cpp.patch").write_text("from an earlier JAX\n")
    written = jax_patches.write_jax_patches(tree, tmp_path / "out")
    assert written == {"abseil-cpp": 0, "grpc": 16, "protobuf": 4, "rules_python": 0}
    assert (tmp_path / "out" / "protobuf.patch").read_text() == "A\nB\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["grpc.patch", "jax_overrides.MODULE.bazel", "protobuf.patch"]
    overrides = (tmp_path / "out" / "jax_overrides.MODULE.bazel").read_text()
    assert 'module_name = "abseil-cpp",\n    patch_strip = 1,\n    patches = [],\n    version = "20260526.0",' in overrides
    assert 'module_name = "grpc",\n    patch_strip = 1,\n    patches = ["//jax_patches:grpc.patch"],\n    version = "1.78.0",' \
        in overrides
    archive = tmp_path / "jax-v0.10.2.tar.gz"
    subprocess.run(["tar", "czf", str(archive), "-C", str(tmp_path), "jax"], check=True)
    assert jax_patches.jax_patches(archive) == jax_patches.jax_patches(tree), "an archive of the tree gives the same patches"


def test_jax_patches_that_full_mode_cannot_apply_as_jax_does_are_refused(tmp_path):
    from ci_build_cli import jax_patches

    with pytest.raises(jax_patches.JaxPatchError, match="patch_strip = 0"):
        jax_patches.jax_patch_plan('single_version_override(module_name = "grpc", patches = ["//p:g.patch"])')
    tree = write_jax_tree(tmp_path / "jax")
    (tree / "third_party" / "protobuf" / "b.patch").unlink()
    with pytest.raises(jax_patches.JaxPatchError, match="lacks the patch files its MODULE.bazel names: third_party/protobuf/b.patch"):
        jax_patches.jax_patches(tree)
    with pytest.raises(jax_patches.JaxPatchError, match="has no MODULE.bazel"):
        jax_patches.jax_patches(tmp_path)


def test_full_module_takes_the_patched_modules_versions_and_patches_from_jax():
    """full/MODULE.bazel includes what write_jax_patches writes, and overrides none of them itself:
    their versions move with JAX (abseil 20260107.1 in 0.10.2, 20260526.0 in 0.11.0)."""
    from ci_build_cli import jax_patches

    text = (CHECKOUT / "full" / "MODULE.bazel").read_text()
    assert f'include("//jax_patches:{jax_patches.JAX_OVERRIDES}")' in text
    assert not jax_patches.overridden_versions(text).keys() & set(jax_patches.PATCHED_MODULES)
    with pytest.raises(jax_patches.JaxPatchError, match="no single_version_override of abseil-cpp with a version"):
        jax_patches.overrides_file({"grpc": "1.78.0"}, set(), "jax")


def test_jaxs_module_file_hunks_are_re_anchored_on_the_registrys_file():
    """JAX's grpc patch edits MODULE.bazel 4 lines off the registry's file: GNU patch applies it
    there, Bazel's patcher (no offset) refuses it, so full mode writes the same change re-anchored."""
    from ci_build_cli import jax_patches

    registry = "".join(f"line {n}\n" for n in range(1, 21))
    jax = ("diff --git a/x.bzl b/x.bzl\n--- a/x.bzl\n+++ b/x.bzl\n@@ -1 +1 @@\n-a\n+b\n"
           "diff --git a/MODULE.bazel b/MODULE.bazel\n--- a/MODULE.bazel\n+++ b/MODULE.bazel\n"
           "@@ -14,3 +14,3 @@\n line 10\n-line 11\n+line eleven\n line 12\n")
    rebased = jax_patches.rebased_module_file(jax, registry)
    assert rebased.startswith("diff --git a/x.bzl b/x.bzl\n--- a/x.bzl\n+++ b/x.bzl\n@@ -1 +1 @@\n-a\n+b\n")
    assert "@@ -8,7 +8,7 @@\n line 8\n line 9\n line 10\n-line 11\n+line eleven\n line 12\n" in rebased
    with pytest.raises(jax_patches.JaxPatchError, match="does not apply to the registry's"):
        jax_patches.rebased_module_file(jax.replace("line 10\n-line 11", "line 10\n-line 99"), registry)
    assert jax_patches.overridden_versions(JAX_MODULE)["grpc"] == "1.78.0"


def test_full_modes_bazel_keeps_its_jni_folder_in_the_runs_tmpfs(tmp_path):
    """--nosystem_rc drops the sandbox's rc; full mode's Bazel reads its shared part instead,
    which sets the server's tmpdir to the tmpfs the sandbox mounts for each run (and the action
    cache every workspace shares), but not the kernels-mode stand-in modules."""
    from ci_build_cli import full
    from sandbox import cache, environment

    assert environment.BAZEL_JVM_TMPFS in environment.RUN_TMPFS
    assert full.SHARED_BAZELRC == environment.SHARED_BAZELRC
    bazel = full.FULL_BAZEL
    assert bazel[1:4] == ["--nosystem_rc", f"--bazelrc={full.SHARED_BAZELRC}", "--bazelrc=debian.bazelrc"]
    paths = cache.Paths(tmp_path)
    shared = environment.bazel_shared_rc(paths, tmp_path / "actions")
    assert f"startup --host_jvm_args=-Djava.io.tmpdir={environment.BAZEL_JVM_TMPFS}\n" in shared
    assert f"build --disk_cache={tmp_path / 'actions'}\n" in shared and "--override_module" not in shared
    assert environment.bazel_system_rc(paths, environment.CHECKOUT).startswith(environment.bazel_shared_rc(paths))
    binds = {b.target: b for b in environment.standard_binds(paths)}
    assert binds[full.SHARED_BAZELRC].readonly and binds[full.SHARED_BAZELRC].source.read_text() == \
        environment.bazel_shared_rc(paths)
    # Said once: debian.bazelrc no longer repeats it.
    assert "java.io.tmpdir" not in (CHECKOUT / "full" / "debian.bazelrc").read_text()


# --- a full-mode build that stopped: what Bazel could not fetch, in one closing line ----------

LLVM_COMMIT = "0123456789abcdef0123456789abcdef01234567"
LLVM_SHA256 = "ab" * 32
# Bazel's words for repositories it could not fetch, and a target a laid-out tree lacks.
OFFLINE = (
    "ERROR: no such package '@@xla~~llvm_extension~llvm-raw//utils/bazel': java.io.IOException: Error downloading "
    f"[https://storage.googleapis.com/mirror.tensorflow.org/github.com/llvm/llvm-project/archive/{LLVM_COMMIT}.tar.gz, "
    f"https://github.com/llvm/llvm-project/archive/{LLVM_COMMIT}.tar.gz] to /o/external/xla~~llvm_extension~llvm-raw/"
    "temp.tar.gz: Unknown host: storage.googleapis.com\n"
    "ERROR: /home/me/jax-rocm-build/full/BUILD.bazel:10:6: no such package '@@xla~~llvm_extension~llvm-raw//utils/bazel': "
    "java.io.IOException: Error downloading [https://example.com/other.tar.gz] to ...\n"
    "ERROR: no such package '@@rules_python~//python': the module rules_python~ could not be fetched\n"
    "ERROR: /home/me/jax-rocm-build/full/BUILD.bazel:3:4: no such target '@@grpc~//:grpc++': target 'grpc++' not declared\n"
    "ERROR: /home/me/jax-rocm-build/full/BUILD.bazel:3:4: no such target '@@grpc~//:grpc++': target 'grpc++' not declared\n"
    "ERROR: Build did NOT complete successfully\n")


def xla_tree(root):
    """An XLA tree as far as stop_line reads it: third_party/llvm/workspace.bzl pins LLVM."""
    (root / "xla").mkdir(parents=True)
    (root / "third_party" / "llvm").mkdir(parents=True)
    (root / "third_party" / "llvm" / "workspace.bzl").write_text(
        'load("//third_party:repo.bzl", "tf_http_archive")\n\ndef repo(name):\n'
        f'    """Imports LLVM."""\n    LLVM_COMMIT = "{LLVM_COMMIT}"\n    LLVM_SHA256 = "{LLVM_SHA256}"\n')
    return root


def test_what_bazel_could_not_fetch_is_named_once_each_in_its_order():
    from ci_build_cli import full

    repos, targets = full.unfetched(OFFLINE)
    assert repos == {"llvm-raw": "https://storage.googleapis.com/mirror.tensorflow.org/github.com/llvm/llvm-project/"
                                 f"archive/{LLVM_COMMIT}.tar.gz", "rules_python": ""}
    assert targets == ["@grpc//:grpc++"]
    assert full.unfetched("ERROR: /x/BUILD:1:2: Compiling a.cc failed: (Exit 1)\n") == ({}, [])
    assert [full.graph_name(n) for n in ("xla~~llvm_extension~llvm-raw", "rules_python~", "xla")] == [
        "llvm-raw", "rules_python", "xla"]


def test_the_stop_line_names_llvms_archive_by_the_xla_trees_url_and_sha256(tmp_path):
    from ci_build_cli import full

    xla = xla_tree(tmp_path / "xla")
    line = full.stop_line(OFFLINE, xla)
    assert "\n" not in line
    assert line.startswith("full mode built what it could (--keep_going) and stopped: Bazel could not fetch llvm-raw "
                           f"(https://github.com/llvm/llvm-project/archive/{LLVM_COMMIT}.tar.gz (sha256 {LLVM_SHA256}, "
                           f"{xla}/third_party/llvm/workspace.bzl)), rules_python; targets the laid-out trees lack: "
                           "@grpc//:grpc++: put those archives in a --distdir=DIR")
    # Without the tree (the pinned XLA): the URL Bazel tried first.
    assert "could not fetch llvm-raw (https://storage.googleapis.com/mirror.tensorflow.org/" in full.stop_line(OFFLINE, None)
    assert full.llvm_archive(tmp_path / "no-tree") is None
    # Nothing Bazel could not fetch: the way to provide everything, without naming anything.
    other = full.stop_line("ERROR: /x/BUILD:1:2: Compiling a.cc failed: (Exit 1)\n", xla)
    assert other.startswith("full mode's build failed (above).") and "--registry=DIR" in other


def test_a_failed_full_mode_build_closes_with_the_stop_line_and_no_clean_hint(monkeypatch, tmp_path, capsys):
    from ci_build_cli import cli, dist_wheels, full, pythons, sandbox, wheels

    xla = xla_tree(tmp_path / "xla")
    builds, queries = [], []
    monkeypatch.setattr(sandbox, "run_bazel", lambda cmd, dry_run: builds.append(cmd) or (1, OFFLINE))
    # The closure pass's query (tests/unit/test_full_mode_closure.py covers it): nothing listed here.
    monkeypatch.setattr(sandbox, "spawn", lambda cmd, **kw: queries.append(cmd) or subprocess.CompletedProcess(cmd, 3, "", ""))
    args = cli.parse_args([f"--xla-source-dir={xla}", "dist_wheels"])
    python = pythons.Interpreter("3.14", "/usr/bin/python3.14", None)
    plan = dist_wheels.BuildPlan(full.full_bazel(args), ["--config=rocm"], "//:jax_rocm_wheels", [python],
                                 events=tmp_path / "events" / "wheel-events.json")
    assert dist_wheels.build_one(args, plan, None) == 1
    # The wheels' build writes the events that name them; the closure's query takes no build-only flag.
    event_flags = wheels.event_flags(plan.events)
    assert builds[0][-4:] == [*event_flags, "--keep_going", "//:jax_rocm_wheels"]
    assert queries and "query" in queries[0] and "--config=rocm" in queries[0]
    assert not set(event_flags) & set(queries[0])
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"ci_build dist_wheels: {full.stop_line(OFFLINE, xla)}"
    assert not any("clean --expunge" in line for line in err)
    # A compile that failed as well: the clean hint first, then the same closing line.
    failed = OFFLINE + "ERROR: /x/BUILD:1:2: Compiling a.cc failed: (Exit 1): clang failed\n"
    monkeypatch.setattr(sandbox, "run_bazel", lambda cmd, dry_run: (1, failed))
    assert dist_wheels.build_one(args, plan, None) == 1
    hint, stop = capsys.readouterr().err.splitlines()[-2:]
    assert hint.startswith("ci_build dist_wheels: if Compiling a.cc fails the same way again") and "clean --expunge" in hint
    assert stop == f"ci_build dist_wheels: {full.stop_line(failed, xla)}"


def test_full_modes_inputs_are_checked_before_anything_runs(monkeypatch, tmp_path):
    from ci_build_cli import cli, full, inputs

    xla = xla_tree(tmp_path / "xla")

    def parsed(*argv):
        return cli.parse_args([f"--xla-source-dir={xla}", *argv, "dist_wheels"])

    monkeypatch.setattr(full, "registry_unreachable", lambda timeout=10: "[Errno -3] Temporary failure in name resolution")
    with pytest.raises(inputs.InputError, match=r"resolves from the Bazel Central Registry \(https://bcr.bazel.build: "
                                                r"\[Errno -3\] Temporary failure in name resolution\)\. Offline, pass "
                                                r"--registry=DIR --distdir=DIR --bazelrc=FILE"):
        full.check_inputs(parsed())
    full.check_inputs(parsed("--dry-run"))  # a dry run asks no network
    (tmp_path / "bcr" / "modules").mkdir(parents=True)
    (tmp_path / "full.bazelrc").write_text("common --override_module=grpc=/trees/grpc\n")
    full.check_inputs(parsed(f"--registry={tmp_path / 'bcr'}", f"--bazelrc={tmp_path / 'full.bazelrc'}"))
    with pytest.raises(inputs.InputError, match="is not a Bazel registry"):
        full.check_inputs(parsed(f"--registry={tmp_path}"))
    with pytest.raises(inputs.InputError, match="is a folder, not a file"):
        full.check_inputs(parsed(f"--registry={tmp_path / 'bcr'}", f"--bazelrc={tmp_path / 'bcr'}"))
    monkeypatch.setattr(full, "registry_unreachable", lambda timeout=10: None)
    full.check_inputs(parsed())  # online
    # The --bazelrc file's folder and the trees it names are mounted; it is read after full/'s own rc files.
    args = parsed(f"--registry={tmp_path / 'bcr'}", f"--bazelrc={tmp_path / 'full.bazelrc'}")
    assert str(tmp_path) in full.full_binds(args) and "/trees/grpc" in full.full_binds(args)
    bazel = full.full_bazel(args)
    assert bazel[bazel.index("--bazelrc=debian.bazelrc") + 2:] == [f"--bazelrc={tmp_path / 'full.bazelrc'}"]
