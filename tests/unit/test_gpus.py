"""pytest_rocm/pytest_rocm/gpus.py: the KFD topology and ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES
as the ROCm runtime applies them, pytest-rocm's and the pjrt wheel loader's (packed beside it)."""

from __future__ import annotations

import re
import subprocess

import pytest

from pytest_rocm import gpus
from tests.conftest import CHECKOUT, CPU_NODE as CPU, gpu_node as gpu, kfd_tree

pytestmark = pytest.mark.unit



def topology(tmp_path, nodes):
    return gpus.kfd_gpus(kfd_tree(tmp_path, nodes) / gpus.KFD_NODES)


def test_gpus_are_the_nodes_with_simd_units_indexed_in_node_order(tmp_path):
    # Nodes 10 and 2: numeric order, not the directory listing's string order.
    for node, (simd, unique_id) in {"10": gpu(0xB), "2": gpu(0xA), "0": CPU, "1": CPU}.items():
        (tmp_path / node).mkdir()
        (tmp_path / node / "properties").write_text(f"simd_count {simd}\nunique_id {unique_id}\n")
    (tmp_path / "notes").mkdir()  # not a node
    (tmp_path / "3").mkdir()  # a node without properties is skipped
    assert gpus.kfd_gpus(tmp_path) == [gpus.KfdGpu(0, 2, 0xA), gpus.KfdGpu(1, 10, 0xB)]
    assert gpus.kfd_gpus(tmp_path / "absent") is None
    assert gpus.KfdGpu(0, 2, 0xA).uuid == "GPU-000000000000000A"


@pytest.mark.parametrize("value, indices", [
    ("1", [1]), ("", []), ("0,1,5", [0, 1]), ("5,0", []), ("1,1,0", [1]), (" 0 , 2 ", [0, 2]), ("0x1", [1]),
    ("2,0", [2, 0]), ("010", []), ("01", [1]),  # in the order listed; strtol's octal
    ("GPU-00000000000000AB", [0]), ("gpu-00000000000000cd,0", [1, 0]), ("GPU-00000000000000AB,0", [0]),  # 0 again: ends
    ("GPU-00000000000000C", []), ("GPU-0000", []), ("GPU-nope", []), ("1,GPU-0", [1]),  # ambiguous ends it too
])
def test_rocr_visible_devices_filters_like_the_rocm_runtime(tmp_path, value, indices):
    found = topology(tmp_path, [CPU, gpu(0xAB), gpu(0xCD), gpu(0xCE)])
    assert [g.index for g in gpus.rocr_visible(value, found)] == indices


def test_a_uuid_selects_its_gpu_however_it_is_spelled(tmp_path):
    found = topology(tmp_path, [CPU, gpu(0x0FEE_0000_0000_0001), gpu(0x0FED_CBA9_8765_4321)])
    assert gpus.rocr_visible("GPU-0FEDCBA987654321", found) == [found[1]]
    assert gpus.rocr_visible("gpu-0fed", found) == [found[1]]  # a unique prefix of 5 characters or more
    assert gpus.rocr_visible("GPU-0FE", found) == [] and gpus.rocr_visible("GPU-", found) == []  # both; too short


def test_gpus_without_a_unique_id_are_reachable_by_index_only(tmp_path):
    found = topology(tmp_path, [CPU, gpu(), gpu()])
    assert gpus.rocr_visible("GPU-0000000000000000", found) == [] and gpus.rocr_visible("1", found) == [found[1]]


@pytest.mark.parametrize("value, count", [("-1", 0), ("1", 1), ("0,7,1", 1), ("2,0", 2), ("1,1", 1), ("GPU-00AB", 3)])
def test_hip_visible_devices_keeps_the_leading_valid_indices(value, count):
    assert gpus.hip_visible_count(value, 3) == count


def test_one_implementation_packed_beside_the_loader():
    """The checkout holds one gpus.py, pytest-rocm's, and the pjrt wheel's loader files include it
    (tests/e2e/test_wheels.py imports the installed loader, which imports it)."""
    tracked = subprocess.run(["git", "ls-files", "*/gpus.py", "gpus.py"], cwd=CHECKOUT, capture_output=True, text=True, check=True)
    assert tracked.stdout.split() == ["pytest_rocm/pytest_rocm/gpus.py"]
    loader = re.search(r'name = "plugin_loader",\n    (?:#[^\n]*\n    )*srcs = ([^\n]+),', (CHECKOUT / "BUILD.bazel").read_text())
    assert loader and '"//pytest_rocm:pytest_rocm/gpus.py"' in loader.group(1), loader
