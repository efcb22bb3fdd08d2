"""tests/infra/grpc_stub.py: the load-only grpc module, from trees of the test's own making."""

from __future__ import annotations

import re

import pytest

from tests.infra import grpc_stub

pytestmark = pytest.mark.unit


def tree(tmp_path, files: dict[str, str]):
    root = tmp_path / "tree"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_every_name_loaded_from_grpc_is_defined_in_its_file_and_nothing_else(tmp_path):
    xla = tree(tmp_path, {
        # XLA at JAX's pin names the module com_github_grpc_grpc, XLA main grpc; loads span lines.
        "xla/tsl/platform/default/build_config.bzl":
            'load(\n    "@com_github_grpc_grpc//bazel:cc_grpc_library.bzl",\n    "cc_grpc_library",\n)\n'
            'load("@grpc//bazel:python_rules.bzl", "py_grpc_library")\n',
        "workspace0.bzl": 'load("@com_github_grpc_grpc//bazel:grpc_extra_deps.bzl", "grpc_extra_deps")\n',
        "xla/BUILD": 'load("@grpc//bazel:grpc_build_system.bzl", grpc_thing = "grpc_cc_library")\n'
                     'load("@other//bazel:cc_grpc_library.bzl", "not_grpcs")\n',
        "README.md": 'load("@grpc//bazel:ignored.bzl", "not_starlark")\n',
    })
    dest = tmp_path / "grpc"
    written = grpc_stub.write_stub(dest, [xla])
    assert written == {"bazel/cc_grpc_library.bzl": ["cc_grpc_library"], "bazel/grpc_build_system.bzl": ["grpc_cc_library"],
                       "bazel/grpc_extra_deps.bzl": ["grpc_extra_deps"], "bazel/python_rules.bzl": ["py_grpc_library"]}
    assert 'module(name = "grpc")' in (dest / "MODULE.bazel").read_text()
    assert (dest / "BUILD.bazel").is_file()
    assert (dest / "bazel" / "BUILD.bazel").read_text() == (
        'exports_files(["cc_grpc_library.bzl", "grpc_build_system.bzl", "grpc_extra_deps.bzl", "python_rules.bzl"])\n')
    cc = (dest / "bazel" / "cc_grpc_library.bzl").read_text()
    # The arguments XLA passes (JAX's patch adds plugin_flags), and a dependency on grpc's C++ code,
    # which the module lacks: what needs it does not load, and says so.
    signature = re.search(r"def cc_grpc_library\(([^)]*)\)", cc)[1]
    for argument in ("name", "srcs", "deps", "generate_mocks", "grpc_only", "plugin_flags", "**kwargs"):
        assert argument in signature, argument
    assert 'Label("//:grpc++_codegen_proto")' in cc and "native.cc_library(" in cc
    assert "pass" in (dest / "bazel" / "grpc_extra_deps.bzl").read_text()  # Bzlmod never calls it
    generic = (dest / "bazel" / "grpc_build_system.bzl").read_text()
    assert "def grpc_cc_library(*args, **kwargs):" in generic and 'Label("//:grpc++")' in generic
    assert not (dest / "bazel" / "ignored.bzl").exists()


def test_a_second_run_replaces_the_stub_and_a_tree_without_grpc_is_refused(tmp_path):
    dest = tmp_path / "grpc"
    first = tree(tmp_path, {"BUILD": 'load("@grpc//bazel:old.bzl", "old")\n'})
    grpc_stub.write_stub(dest, [first])
    (first / "BUILD").write_text('load("@grpc//bazel:cc_grpc_library.bzl", "cc_grpc_library")\n')
    grpc_stub.write_stub(dest, [first])
    assert sorted(p.name for p in (dest / "bazel").iterdir()) == ["BUILD.bazel", "cc_grpc_library.bzl"]
    (first / "BUILD").write_text("cc_library(name = 'a')\n")
    with pytest.raises(ValueError, match="no load of grpc's .bzl files"):
        grpc_stub.write_stub(dest, [first])
    assert grpc_stub.main(["--dest", str(dest), str(first)]) == 1


def test_a_folder_of_other_files_is_never_emptied(tmp_path):
    source = tree(tmp_path, {"BUILD": 'load("@grpc//bazel:cc_grpc_library.bzl", "cc_grpc_library")\n'})
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep\n")
    with pytest.raises(ValueError, match="did not write"):
        grpc_stub.write_stub(tmp_path / "mine", [source])
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep\n"
