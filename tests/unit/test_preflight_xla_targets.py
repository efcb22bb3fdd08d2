"""build/ci_build_cli/preflight_xla_targets.py: the XLA targets this project names, looked up in an XLA tree's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_build_cli import preflight_names, preflight_xla_targets as targets
from tests.conftest import CHECKOUT

pytestmark = pytest.mark.unit

OURS = """
cc_binary(
    name = "plugin.so",
    deps = [
        "@xla//xla/pjrt/c:pjrt_c_api_gpu",
        "@xla//xla:xla_data_proto_cc",  # a proto macro's library
        "@xla//xla/python",  # the package's own name
        # "@xla//xla/gone:commented_out",
        "@other//xla/pjrt/c:not_xla",
    ],
)
"""


def test_labels_are_read_with_their_first_use_and_comments_skipped():
    used = targets.xla_labels([("BUILD.bazel", OURS), ("more/BUILD.bazel", '"@xla//xla/pjrt/c:pjrt_c_api_gpu"')])
    assert used == {
        "@xla//xla/pjrt/c:pjrt_c_api_gpu": "BUILD.bazel:5",
        "@xla//xla:xla_data_proto_cc": "BUILD.bazel:6",
        "@xla//xla/python:python": "BUILD.bazel:7",
    }


def test_a_rename_or_a_moved_package_is_reported_with_where_it_is_used():
    xla = {
        "xla/pjrt/c/BUILD": 'cc_library(name = "pjrt_c_api_gpu_v2")',  # renamed
        "xla/BUILD": 'xla_proto_library(\n    name = "xla_data_proto",\n)',  # declares xla_data_proto_cc too
        "xla/python/BUILD.bazel": 'py_library(name = "python")',
    }
    used = targets.xla_labels([("BUILD.bazel", OURS)])
    missing = targets.missing(used, targets.build_files(sorted(xla.items())))
    assert missing == [targets.Missing("@xla//xla/pjrt/c:pjrt_c_api_gpu", "BUILD.bazel:5",
                                       "xla/pjrt/c/BUILD declares no pjrt_c_api_gpu")]
    del xla["xla/python/BUILD.bazel"]
    missing = targets.missing(used, targets.build_files(sorted(xla.items())))
    assert targets.Missing("@xla//xla/python:python", "BUILD.bazel:7", "no BUILD file in xla/python") in missing


@pytest.mark.parametrize("mode", sorted(targets.OUR_BUILD_FILES))
def test_every_file_each_mode_reads_exists_and_names_xla(mode):
    assert targets.xla_labels(targets.our_texts(CHECKOUT, mode))


def test_the_stand_in_xla_declares_every_target_kernels_mode_names():
    """examples/xla stands in for XLA in kernels mode: what the BUILD files name, it must declare."""
    used = targets.xla_labels(targets.our_texts(CHECKOUT, "kernels"))
    packages = targets.build_files(preflight_names.tree_texts(CHECKOUT / "examples" / "xla"))
    assert targets.missing(used, packages) == []


@pytest.mark.parametrize("mode", sorted(targets.OUR_BUILD_FILES))
def test_the_real_xla_declares_every_target_we_name(mode):
    """Gated on JAX_ROCM_TEST_XLA_TREE (an XLA checkout or archive: at JAX's pin, or XLA main)."""
    import os

    tree = os.environ.get("JAX_ROCM_TEST_XLA_TREE")
    if not tree:
        pytest.skip("JAX_ROCM_TEST_XLA_TREE is unset: set it to an XLA checkout to check the targets we name in it")
    used = targets.xla_labels(targets.our_texts(CHECKOUT, mode))
    assert targets.missing(used, targets.build_files(preflight_names.tree_texts(Path(tree)))) == []
