"""build/ci_build_cli/preflight_names.py: the @local_config_rocm names a tree's Bazel files use, and Bazel's answer read back."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from ci_build_cli import preflight_names as pn

pytestmark = pytest.mark.unit

BUILD = '''\
load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm", shim = "rocm_library")
load("//other:defs.bzl", "not_ours")
# "@local_config_rocm//rocm:only_in_a_comment" is not a use
cc_library(
    name = "a",
    deps = ["@local_config_rocm//rocm:hipblas", "@local_config_rocm//rocm"] + if_rocm([
        "@@local_config_rocm//rocm:miopen",
    ]),
    tags = ["@local_config_rocm//rocm:%s" % "formatted"],
)
'''

BAZELRC = ("build:rocm --@local_config_rocm//rocm:rocm_path_type=hermetic\n"
           "build:rocm --crosstool_top=@local_config_rocm//crosstool:toolchain\n")


def names(uses):
    return {(u.kind, n) for n, u in uses.items()}


def test_labels_and_symbols_of_one_file_with_their_lines():
    uses = {u.name: u for u in reversed(pn.scan_text(BUILD, "xla/BUILD"))}
    assert names(uses) == {
        ("symbol", "@local_config_rocm//rocm:build_defs.bzl%if_rocm"),
        ("symbol", "@local_config_rocm//rocm:build_defs.bzl%rocm_library"),
        ("label", "@local_config_rocm//rocm:build_defs.bzl"),
        ("label", "@local_config_rocm//rocm:hipblas"),
        ("label", "@local_config_rocm//rocm:rocm"),  # a package label names its last segment
        ("label", "@local_config_rocm//rocm:miopen"),  # @@ is the same repository
    }
    assert uses["@local_config_rocm//rocm:miopen"].where == "xla/BUILD:7"
    assert uses["@local_config_rocm//rocm:build_defs.bzl%rocm_library"].line == 1


def test_bazelrc_flags_name_the_setting_not_its_value():
    assert {u.name for u in pn.scan_text(BAZELRC, ".bazelrc")} == {
        "@local_config_rocm//rocm:rocm_path_type", "@local_config_rocm//crosstool:toolchain"}


def test_a_load_spread_over_lines_and_an_alias():
    text = 'load(\n    "@local_config_rocm//rocm:build_defs.bzl",\n    "if_rocm_is_configured",\n    x = "rocm_copts",\n)\n'
    assert {u.name for u in pn.scan_text(text, "f.bzl") if u.kind == "symbol"} == {
        "@local_config_rocm//rocm:build_defs.bzl%if_rocm_is_configured", "@local_config_rocm//rocm:build_defs.bzl%rocm_copts"}


def test_a_tree_keeps_the_first_use_and_skips_git_and_bazel_links(tmp_path):
    tree = tmp_path / "xla"
    (tree / "a").mkdir(parents=True)
    (tree / "b").mkdir()
    (tree / ".git").mkdir()
    (tree / "bazel-out").mkdir()
    (tree / "a" / "BUILD").write_text('x = "@local_config_rocm//rocm:hip"\n')
    (tree / "b" / "BUILD.bazel").write_text('\n\nx = "@local_config_rocm//rocm:hip"\n')
    (tree / "b" / "defs.bzl").write_text('y = "@local_config_rocm//rocm:rccl"\n')
    (tree / "b" / "notes.txt").write_text('"@local_config_rocm//rocm:not_bazel"\n')
    (tree / ".git" / "BUILD").write_text('"@local_config_rocm//rocm:in_git"\n')
    (tree / "bazel-out" / "BUILD").write_text('"@local_config_rocm//rocm:in_output"\n')
    (tree / "tensorflow.bazelrc").write_text(BAZELRC)
    uses = pn.collect([tree])
    assert pn.labels_of(uses) == ["@local_config_rocm//crosstool:toolchain", "@local_config_rocm//rocm:hip",
                                  "@local_config_rocm//rocm:rccl", "@local_config_rocm//rocm:rocm_path_type"]
    assert uses["@local_config_rocm//rocm:hip"].where == "xla/a/BUILD:1"


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_an_archive_reads_like_its_checkout(tmp_path, kind):
    files = {"jax-abc/jaxlib/rocm/BUILD": 'deps = ["@local_config_rocm//rocm:hipsparse"]\n',
             "jax-abc/build/rocm/rocm.bazelrc": BAZELRC, "jax-abc/README.md": "@local_config_rocm//rocm:prose"}
    archive = tmp_path / f"jax.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as z:
            for name, text in files.items():
                z.writestr(name, text)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            for name, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    uses = pn.collect([archive])
    assert pn.labels_of(uses) == ["@local_config_rocm//crosstool:toolchain", "@local_config_rocm//rocm:hipsparse",
                                  "@local_config_rocm//rocm:rocm_path_type"]
    assert uses["@local_config_rocm//rocm:hipsparse"].file == f"jax.{kind}/jaxlib/rocm/BUILD"


def test_a_damaged_archive_raises_rather_than_reading_nothing(tmp_path):
    archive = tmp_path / "jax.tar.gz"
    archive.write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    with pytest.raises(pn.extract_archive.UnsafeArchive, match="jax.tar.gz is not a complete, readable tar archive"):
        pn.collect([archive])


def test_one_probe_package_per_symbol():
    uses = {u.name: u for u in pn.scan_text(BUILD, "BUILD")}
    packages = pn.probe_packages(uses)
    assert sorted(packages) == ["s0", "s1"]
    loads = sorted(text.splitlines()[1] for text in packages.values())
    assert loads == ['load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm")',
                     'load("@local_config_rocm//rocm:build_defs.bzl", "rocm_library")']


# What Bazel 7.7.1 prints, copied from a real `bazel query --keep_going` over a probe.
QUERY_STDERR = """\
ERROR: /home/me/jax-rocm-build/build/preflight_probe/p1/s0/BUILD.bazel:2:50: file '@local_config_rocm//rocm:build_defs.bzl' does not contain symbol 'also_missing' (did you mean 'rocm_missing'?)
ERROR: no such target '@@_main~rocm~local_config_rocm//rocm:no_such_lib': target 'no_such_lib' not declared in package 'rocm'
"""  # noqa: E501 (verbatim)
QUERY_STDOUT = "@local_config_rocm//rocm:hipblas\n@@_main~rocm~local_config_rocm//rocm:miopen\n"


def test_bazels_answer_read_back():
    assert pn.missing_symbols(QUERY_STDERR) == {"@local_config_rocm//rocm:build_defs.bzl%also_missing"}
    assert pn.present_labels(QUERY_STDOUT) == {"@local_config_rocm//rocm:hipblas", "@local_config_rocm//rocm:miopen"}


def test_report_names_each_missing_one_and_where_it_is_first_used():
    uses = {u.name: u for u in reversed(pn.scan_text(BUILD, "xla/BUILD"))}
    lines = pn.report(uses, {"@local_config_rocm//rocm:miopen", "@local_config_rocm//rocm:build_defs.bzl%rocm_library"})
    assert lines == [
        "missing target @local_config_rocm//rocm:miopen (first used in xla/BUILD:7)",
        "missing symbol rocm_library of @local_config_rocm//rocm:build_defs.bzl (first used in xla/BUILD:1)",
    ]


def test_rules_ml_toolchains_name_for_the_repository_is_answered_by_ours_too():
    text = 'load("@config_rocm_hipcc//rocm:build_defs.bzl", "hipcc_config")\nx = "@config_rocm_hipcc//rocm:rocm_root"\n'
    assert {u.name for u in pn.scan_text(text, "BUILD")} == {
        "@local_config_rocm//rocm:build_defs.bzl%hipcc_config", "@local_config_rocm//rocm:build_defs.bzl",
        "@local_config_rocm//rocm:rocm_root"}
