"""XLA's toolkit names with XLA's meaning: ROCM_DISTRO_URL (+HASH, +LINKS), ROCM_DISTRO_VERSION
through the XLA tree's redistribution table, TF_ROCM_MULTIPLE_PATHS (+LLVM_PATH), XLA's order
with the losers named, TF_ROCM_CONFIG_REPO refused. The toolkit is the small TheRock-layout
fixture (tests/infra/therock_toolkit.py) served over loopback HTTP; `--nobuild` runs the
repository rules, which is where these names act."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.bazel.test_rocm_configure import therock_server  # noqa: F401 (a fixture: the served tarball)
from tests.conftest import CHECKOUT, sandbox, sandbox_binds
from tests.infra.local_config_rocm import rocm_config
from third_party.gpus import toolkit_sources

pytestmark = pytest.mark.bazel

HIP = "@local_config_rocm//:hip"


def configure(in_sandbox, *repo_env: str, check: bool = True, xla: Path | None = None):
    flags = ["--config=rocm", "--repo_env=TF_ROCM_AMDGPU_TARGETS=gfx942", *(f"--repo_env={e}" for e in repo_env)]
    if xla:
        flags.append(f"--override_repository=xla={xla}")
    return in_sandbox("bazel", "build", "--nobuild", *flags, HIP, check=check)


def toolkit_root(in_sandbox) -> str:
    return rocm_config(in_sandbox)["rocm_toolkit_path"]


def test_rocm_distro_url_needs_its_hash_and_makes_its_links(in_sandbox, therock_server):  # noqa: F811
    url, sha256 = therock_server["url"], therock_server["sha256"]
    configure(in_sandbox, f"ROCM_DISTRO_URL={url}", f"ROCM_DISTRO_HASH={sha256}", "ROCM_DISTRO_LINKS=lib/llvm:llvm")
    config = rocm_config(in_sandbox)
    assert config["source"] == f"ROCM_DISTRO_URL={url}"
    assert (config["layout"], config["rocm_version"], config["therock"]["family"]) == ("therock", "7.2.4a20261122", "gfx94X-dcgpu")
    assert in_sandbox("readlink", f"{config['rocm_toolkit_path']}/llvm").stdout.strip().endswith("lib/llvm")
    wrong = configure(in_sandbox, f"ROCM_DISTRO_URL={url}", "ROCM_DISTRO_HASH=" + "0" * 64, check=False)
    assert wrong.returncode != 0 and "Checksum was" in wrong.stderr and sha256 in wrong.stderr
    unhashed = configure(in_sandbox, f"ROCM_DISTRO_URL={url}", check=False)
    assert unhashed.returncode != 0 and "without ROCM_DISTRO_HASH" in unhashed.stderr
    escaping = configure(in_sandbox, f"ROCM_DISTRO_URL={url}", f"ROCM_DISTRO_HASH={sha256}", "ROCM_DISTRO_LINKS=../../etc:etc",
                         check=False)
    assert escaping.returncode != 0 and "ROCM_DISTRO_LINKS" in escaping.stderr and "../../etc" in escaping.stderr


def _xla_with_table(dest: Path, table: str) -> Path:
    """The stand-in XLA with a redistribution table of the test's writing."""
    tree = dest / "xla"
    shutil.copytree(CHECKOUT / "examples" / "xla", tree)
    (tree / "third_party" / "gpus" / "rocm").mkdir(parents=True)
    (tree / "third_party" / "gpus" / "rocm" / "rocm_redist.bzl").write_text(table)
    return tree


def test_rocm_distro_version_is_read_from_the_xla_trees_table(in_sandbox, therock_server, tmp_path):  # noqa: F811
    table = (
        '"""A test table."""\n'
        "rocm_redist = {\n"
        '    "rocm_test_gfx94X": struct(\n'
        f'        packages = [{{"url": "{therock_server["url"]}", "sha256": "{therock_server["sha256"]}"}}],\n'
        "        required_softlinks = [],\n"
        '        rocm_root = "",\n'
        "    ),\n"
        "}\n"
    )
    xla = _xla_with_table(tmp_path, table)
    configure(in_sandbox, "ROCM_DISTRO_VERSION=rocm_test_gfx94X", xla=xla)
    config = rocm_config(in_sandbox)
    assert config["source"].startswith(f"ROCM_DISTRO_VERSION=rocm_test_gfx94X ({therock_server['url']}")
    assert config["layout"] == "therock" and config["therock"]["family"] == "gfx94X-dcgpu"
    unknown = configure(in_sandbox, "ROCM_DISTRO_VERSION=rocm_9.9.9_gfx1", xla=xla, check=False)
    assert unknown.returncode != 0 and "rocm_9.9.9_gfx1" in unknown.stderr and "rocm_test_gfx94X" in unknown.stderr
    stand_in = configure(in_sandbox, "ROCM_DISTRO_VERSION=rocm_test_gfx94X", xla=CHECKOUT / "examples" / "xla", check=False)
    assert stand_in.returncode != 0 and "has no redistribution table" in stand_in.stderr, stand_in.stderr[-2000:]


SPLIT_TOOLKIT = r"""
set -e
d=$1; mkdir -p $d/x $d/core $d/libs $d/llvm
tar -C $d/x -xzf "$2"
t=$d/x/therock
mv $t/include $t/share $d/core/
mv $t/lib/llvm/* $d/llvm/ && rmdir $t/lib/llvm
mv $t/lib $t/bin $d/libs/
mkdir -p $d/clash/include && touch $d/clash/include/extra.h && cp -a $d/core/include/hip $d/clash/include/
"""


def test_tf_rocm_multiple_paths_merges_installations(in_sandbox, therock_server, tmp_path):  # noqa: F811
    tarball = therock_server["www"] / Path(therock_server["url"]).name
    script = tmp_path / "split.sh"
    script.write_text(SPLIT_TOOLKIT)
    in_sandbox("sh", str(script), str(tmp_path), str(tarball))
    paths = f"{tmp_path}/core:{tmp_path}/libs"
    configure(in_sandbox, f"TF_ROCM_MULTIPLE_PATHS={paths}", f"LLVM_PATH={tmp_path}/llvm")
    config = rocm_config(in_sandbox)
    assert config["source"] == f"TF_ROCM_MULTIPLE_PATHS={paths} with LLVM_PATH={tmp_path}/llvm"
    assert (config["layout"], config["rocm_version"]) == ("therock", "7.2.4a20261122")
    assert in_sandbox("readlink", f"{config['rocm_toolkit_path']}/lib/llvm").stdout.strip() == f"{tmp_path}/llvm"
    clash = configure(in_sandbox, f"TF_ROCM_MULTIPLE_PATHS={paths}:{tmp_path}/clash", f"LLVM_PATH={tmp_path}/llvm", check=False)
    assert clash.returncode != 0 and "include/hip/" in clash.stderr and "TF_ROCM_MULTIPLE_PATHS" in clash.stderr


def test_a_name_that_loses_is_said_and_a_config_repo_refused(in_sandbox):
    result = configure(in_sandbox, "ROCM_PATH=/usr", "ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908")
    assert "not used: ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908" in result.stderr, result.stderr[-2000:]
    assert rocm_config(in_sandbox)["source"] == "ROCM_PATH=/usr"
    refused = configure(in_sandbox, "TF_ROCM_CONFIG_REPO=@remote_rocm", check=False)
    assert refused.returncode != 0 and "TF_ROCM_CONFIG_REPO=@remote_rocm" in refused.stderr
    assert "generates itself" in refused.stderr


def test_real_xlas_distro_version_resolves_to_its_url_and_sha256(in_sandbox):
    """Gated: with a real XLA tree, ROCM_DISTRO_VERSION resolves through its own table; the
    download cannot happen here, and the offline stop names the URL and the sha256."""
    tree = os.environ.get("JAX_ROCM_TEST_XLA_TREE")
    if not tree:
        pytest.skip("JAX_ROCM_TEST_XLA_TREE is not set (an XLA tree with third_party/gpus/rocm/rocm_redist.bzl)")
    table = toolkit_sources.redistributions((Path(tree) / "third_party/gpus/rocm/rocm_redist.bzl").read_text())
    tarballs = [n for n, e in table.items() if not any(p["url"].endswith(".whl") for p in e["packages"])]
    name = "rocm_7.13.0_gfx908" if "rocm_7.13.0_gfx908" in tarballs else tarballs[0]
    expected = toolkit_sources.distro(table, name)
    flags = ["--config=rocm", f"--repo_env=ROCM_DISTRO_VERSION={name}", f"--override_repository=xla={tree}"]
    result = sandbox("run", *sandbox_binds(Path(tree)), "--", "bazel", "build", "--nobuild", *flags, HIP, cwd=CHECKOUT, check=False)
    assert result.returncode != 0
    assert expected.url in result.stderr and expected.sha256 in result.stderr, result.stderr[-2000:]
    assert "cannot be reached from here" in result.stderr
    if name == "rocm_7.13.0_gfx908":  # XLA main's, as read by hand on 2026-08-22
        assert expected.url == "https://repo.amd.com/rocm/tarball/therock-dist-linux-gfx908-7.13.0.tar.gz"

