"""Full mode where the graph cannot be complete (offline, no LLVM): what ci_build builds instead
(the closure of what needs nothing missing) and how it ends, with Bazel faked."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from ci_build_cli import cli, full
from ci_build_cli.request import Request

pytestmark = pytest.mark.unit

LLVM_MISSING = ("ERROR: /x/external/xla~/xla/pjrt/gpu/BUILD:614:11: no such package '@@xla~~llvm_extension~llvm-project//mlir': "
                "no such package '@@xla~~third_party_ext~llvm-raw//utils/bazel': java.io.IOException: Error downloading "
                "[https://storage.googleapis.com/mirror.tensorflow.org/github.com/llvm/llvm-project/archive/abc.tar.gz, "
                "https://github.com/llvm/llvm-project/archive/abc.tar.gz] to /x: Unknown host\n"
                "ERROR: command succeeded, but there were loading phase errors\n")
# deps(//:jax_rocm_wheels) as a --keep_going query lists it: one XLA rule free of LLVM, one cut
# by it, one of a repository ci_build does not ask for, and one tagged for CUDA builds only.
GRAPH = """<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="cc_library" location="x" name="@xla//xla/a:free"/>
  <rule class="cc_library" location="x" name="@xla//xla/a:cut"><rule-input name="@llvm-project//llvm:Support"/></rule>
  <rule class="cc_library" location="x" name="@abseil-cpp//absl/base:base"/>
  <rule class="cc_library" location="x" name="@xla//xla/a:cuda"><list name="tags"><string value="cuda-only"/></list></rule>
  <rule class="filegroup" location="x" name="//:jax_rocm_wheels"><rule-input name="@xla//xla/a:cut"/></rule>
</query>
"""


def args(tmp_path: Path, xla: Path | None = None) -> Request:
    return cli.parse_args([*([f"--xla-source-dir={xla}"] if xla else []), "native"])


def fake_bazel(monkeypatch, first_output: str) -> list[list[str]]:
    """Bazel faked: the first build fails with first_output; the closure's build writes its
    event file (the free rule built)."""
    commands: list[list[str]] = []

    def run_bazel(cmd, dry_run):
        commands.append(cmd)
        events = next((a.split("=", 1)[1] for a in cmd if a.startswith("--build_event_json_file=")), None)
        if events:
            listed = Path(next(a.split("=", 1)[1] for a in cmd if a.startswith("--target_pattern_file="))).read_text().split()
            Path(events).write_text("\n".join(json.dumps({"id": {"targetCompleted": {"label": label}}, "completed": {"success": True}})
                                              for label in listed) + "\n")
            return 0, ""
        return 1, first_output

    def spawn(cmd, **kwargs):
        commands.append(cmd)
        return argparse.Namespace(returncode=3, stdout=GRAPH, stderr="")

    monkeypatch.setattr(full.sandbox, "run_bazel", run_bazel)
    monkeypatch.setattr(full.sandbox, "spawn", spawn)
    return commands


def test_without_llvm_the_closure_is_built_and_the_last_line_names_llvms_archive(monkeypatch, tmp_path, capsys):
    xla = tmp_path / "xla"
    (xla / "third_party" / "llvm").mkdir(parents=True)
    (xla / "third_party" / "llvm" / "workspace.bzl").write_text('    LLVM_COMMIT = "abc"\n    LLVM_SHA256 = "' + "f" * 64 + '"\n')
    commands = fake_bazel(monkeypatch, LLVM_MISSING)
    flags = ["--config=rocm_release", "--@jax_rocm_build//rocm:amdgpu_targets=gfx942", "--repo_env=X=1"]
    rc = full.build_what_can_be_built(args(tmp_path, xla), "dist_wheels", ["bazel"], flags, ["//:jax_rocm_wheels"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1
    build, query, closure = commands
    assert build == ["bazel", "build", *flags, "--keep_going", "//:jax_rocm_wheels"]
    # The query takes no build settings; the closure's build takes every flag of the build.
    assert "--@jax_rocm_build//rocm:amdgpu_targets=gfx942" not in query and "deps(//:jax_rocm_wheels)" in query
    assert closure[:2 + len(flags)] == ["bazel", "build", *flags]
    # A library asked for by name is built as its archive: no shared library that no wheel uses.
    assert "--output_groups=archive" in closure
    assert "built 1 of the 1 rules" in err[-2], err  # the free XLA rule; not absl's, the CUDA one or the cut one
    assert err[-1].startswith("ci_build dist_wheels: full mode built what it could"), err[-1]
    assert "https://github.com/llvm/llvm-project/archive/abc.tar.gz" in err[-1] and "f" * 64 in err[-1]
    assert not any("clean --expunge" in line for line in err)


def test_a_failed_compile_gets_the_clean_hint_and_no_closure_pass(monkeypatch, tmp_path, capsys):
    compile_failed = "ERROR: /x/xla/BUILD:3:4: Compiling xla/a.cc failed: (Exit 1): clang failed: error executing\n"
    commands = fake_bazel(monkeypatch, compile_failed)
    rc = full.build_what_can_be_built(args(tmp_path), "native", ["bazel"], [], ["//:xla_rocm_plugin"])
    err = capsys.readouterr().err
    assert rc == 1 and len(commands) == 1  # nothing was missing: no query, no second build
    assert re.search(r"if Compiling xla/a\.cc fails the same way again .* `bazel clean --expunge`", err), err


def test_the_name_check_goes_on_where_jaxs_patches_cannot_be_had_offline(monkeypatch, tmp_path, capsys):
    """`preflight --names-only` with a JAX tree writes JAX's patches for a later build, but the
    name check needs none: offline (no registry to re-anchor them on) it is a note, and the
    check runs; a build (no --names-only) still stops there."""
    from ci_build_cli import cli, inputs, preflight

    xla, jax = tmp_path / "xla", tmp_path / "jax"
    (xla / "xla").mkdir(parents=True)
    jax.mkdir()
    monkeypatch.setattr(preflight.sandbox, "run", lambda cmd, dry_run: 0)
    monkeypatch.setattr(preflight.full, "prepare", lambda a: (_ for _ in ()).throw(inputs.InputError("cannot read grpc")))
    checked = []
    monkeypatch.setattr(preflight.preflight_names, "named_texts", lambda trees: {})
    for check in ("check_rocm_names", "check_rocm_calls", "check_xla_targets"):
        monkeypatch.setattr(preflight, check, lambda *a, name=check: checked.append(name) or 0)
    args = cli.parse_args([f"--xla-source-dir={xla}", f"--jax-source-dir={jax}", "preflight", "--names-only"])
    assert args.mode == "full"
    assert preflight.cmd_preflight(args) == 0
    assert checked == ["check_rocm_names", "check_rocm_calls", "check_xla_targets"]
    assert "note: cannot read grpc (the name check needs no patches; a build does)" in capsys.readouterr().err
    args = cli.parse_args([f"--xla-source-dir={xla}", f"--jax-source-dir={jax}", "preflight"])
    with pytest.raises(inputs.InputError, match="cannot read grpc"):
        preflight.cmd_preflight(args)
