"""Full mode (full/MODULE.bazel): upstream's module graph, with our ROCm in every module's view.

Gated on real trees, skipped otherwise naming the variables: JAX_ROCM_TEST_REGISTRY (a
checkout of the Bazel Central Registry, used as --registry=file://), JAX_ROCM_TEST_XLA_TREE
(an XLA checkout: at JAX's pin or XLA main), and rules_ml_toolchain at its pin, either as
the pinned archive in JAX_ROCM_TEST_DISTDIR (a GitHub commit archive reproduces byte for
byte from a clone: git archive --prefix=rules_ml_toolchain-<commit>/ <commit> | gzip -n)
or as a checkout in JAX_ROCM_TEST_TOOLCHAIN_TREE. Debian's Bazel runs offline without the
sandbox's kernels-mode stand-ins (full/debian.bazelrc). Each level asserts what Bazel says:
the graph resolves; xla, rules_ml_toolchain and this project's module map local_config_rocm
(and config_rocm_hipcc) to ours; ours evaluates inside the graph, from Debian's ROCm and from
a TheRock tarball, and rules_ml_toolchain's ROCm toolchain reads its facts from it. Loading
XLA's own packages needs the source archives of its dependencies (docs/full-mode.md).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ci_build_cli import full, full_closure, jax_patches
from runpath import is_build_tree_entry
from tests.conftest import CHECKOUT, require_jax_tree, sandbox, sandbox_environment
from tests.infra.therock_toolkit import HIP_AND_COMPILER, MAKE_SMALL_TARBALL, STUB_LIBRARY
from tools import fatbin
from tools.venvs import ensure_venv

pytestmark = pytest.mark.bazel

FULL = CHECKOUT / "full"


def gated() -> dict[str, Path]:
    env = {v: os.environ.get(v) for v in ("JAX_ROCM_TEST_REGISTRY", "JAX_ROCM_TEST_XLA_TREE")}
    missing = [v for v, value in env.items() if not value]
    toolchain = os.environ.get("JAX_ROCM_TEST_DISTDIR") or os.environ.get("JAX_ROCM_TEST_TOOLCHAIN_TREE")
    if not toolchain:
        missing.append("JAX_ROCM_TEST_DISTDIR or JAX_ROCM_TEST_TOOLCHAIN_TREE")
    if missing:
        pytest.skip(f"{', '.join(missing)} not set: full mode needs a local registry, an XLA tree and rules_ml_toolchain")
    return {v: Path(value) for v, value in env.items()}


def write_jax_patches(trees: dict[str, Path]) -> None:
    """full/MODULE.bazel includes JAX's overrides (full/jax_patches, which Git ignores: they are
    JAX's), written from the JAX tree as every full-mode ci_build command writes them: on a fresh
    clone no Bazel command in full/ works before."""
    jax_tree = require_jax_tree()
    jax_patches.write_jax_patches(jax_tree, registry=str(trees["JAX_ROCM_TEST_REGISTRY"]))


@pytest.fixture(scope="module")
def full_bazel(sandbox_root):
    trees = gated()
    write_jax_patches(trees)
    flags = [f"--registry=file://{trees['JAX_ROCM_TEST_REGISTRY']}", f"--override_module=xla={trees['JAX_ROCM_TEST_XLA_TREE']}"]
    binds = [str(trees["JAX_ROCM_TEST_REGISTRY"]), str(trees["JAX_ROCM_TEST_XLA_TREE"])]
    if os.environ.get("JAX_ROCM_TEST_DISTDIR"):
        flags.append(f"--distdir={os.environ['JAX_ROCM_TEST_DISTDIR']}")
        binds.append(os.environ["JAX_ROCM_TEST_DISTDIR"])
    else:
        flags.append(f"--override_module=rules_ml_toolchain={os.environ['JAX_ROCM_TEST_TOOLCHAIN_TREE']}")
        binds.append(os.environ["JAX_ROCM_TEST_TOOLCHAIN_TREE"])
    user_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jax-rocm-build" / "bazel"

    # Modules of the graph from local trees (tests/infra/real_trees.py --module), when laid out.
    full_rc = os.environ.get("JAX_ROCM_TEST_FULL_BAZELRC")
    if full_rc:
        # Its folder, and any tree it names elsewhere (--module-dir: e.g. a shared grpc stand-in).
        named = re.findall(r"^common --override_(?:module|repository)=[^=\s]+=(/\S+)$", Path(full_rc).read_text(), re.M)
        binds += [str(Path(full_rc).parent)] + sorted({p for p in named if Path(full_rc).parent not in Path(p).parents})

    def run(command: str, *args: str, check: bool = True, bind: tuple[str, ...] = ()):
        startup = [*full.FULL_BAZEL, *([f"--bazelrc={full_rc}"] if full_rc else []), f"--output_user_root={user_root}"]
        bound = [a for b in (*binds, *bind) for a in ("--bind", b)]
        return sandbox("run", *bound, "--", *startup, command, *flags, *args, cwd=FULL, check=check)

    return run


def repo_mappings(full_bazel, *repos: str) -> list[dict]:
    out = full_bazel("mod", "dump_repo_mapping", *repos).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_the_graph_resolves_and_every_module_sees_our_rocm(full_bazel):
    # Canonical names as this Bazel spells them (7: `xla~`, 8: `xla+`), from the root's mapping.
    [root] = repo_mappings(full_bazel, "")
    our_rocm = root["local_config_rocm"]
    assert our_rocm.startswith(root["jax_rocm_build"]) and our_rocm.endswith("local_config_rocm"), our_rocm  # our extension's
    xla, toolchain, ours = repo_mappings(full_bazel, root["xla"], root["rules_ml_toolchain"], root["jax_rocm_build"])
    assert xla["local_config_rocm"] == our_rocm, xla.get("local_config_rocm")
    assert toolchain["config_rocm_hipcc"] == our_rocm, toolchain.get("config_rocm_hipcc")
    # This project's @xla is the xla module of the graph, not the pinned archive of kernels mode.
    assert ours["xla"] == root["xla"] and ours["local_config_rocm"] == our_rocm
    # XLA's extensions are in use: its own repositories resolve through them.
    assert xla["tsl"].startswith(root["xla"]) and "tsl_extension" in xla["tsl"]
    assert xla["llvm-project"].startswith(root["xla"]) and "llvm_extension" in xla["llvm-project"]


def hipcc_feature(full_bazel, *flags: str) -> str:
    return full_bazel("query", "--config=rocm", *flags, "--output=build",
                      "@rules_ml_toolchain//cc/impls/linux_x86_64_linux_x86_64_rocm:rocm_hipcc_feature").stdout


def test_our_rocm_evaluates_in_the_graph_from_debian_rocm(full_bazel):
    targets = full_bazel("query", "--config=rocm", "@local_config_rocm//rocm:all").stdout.split()
    assert {"@local_config_rocm//rocm:hipsolver", "@local_config_rocm//rocm:rocm_root",
            "@local_config_rocm//rocm:linux_x64"} <= set(targets)
    # rules_ml_toolchain's ROCm toolchain reads the toolkit from our repository, not a download.
    feature = hipcc_feature(full_bazel)
    assert 'rocm_path = "/usr"' in feature and 'version = "70204"' in feature, feature
    assert 'hipcc_path = "/usr/bin/hipcc"' in feature and 'rocm_toolkit = "@local_config_rocm//rocm:rocm_root"' in feature


def test_our_rocm_evaluates_in_the_graph_from_a_therock_tarball(full_bazel, tmp_path):
    tarball = tmp_path / "therock-dist-linux-gfx94X-dcgpu-7.2.4a20261122.tar.gz"
    (tmp_path / "make.sh").write_text(MAKE_SMALL_TARBALL)
    sandbox("run", "--", "sh", str(tmp_path / "make.sh"), str(tarball))
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    feature = hipcc_feature(full_bazel, f"--repo_env=THEROCK_URL=file://{tarball}", f"--repo_env=THEROCK_SHA256={digest}")
    # The tarball's dist_info.json (gfx942;gfx950) narrows JAX's list; its root is the extracted toolkit.
    assert 'amdgpu_targets = ["gfx942", "gfx950"]' in feature, feature
    assert re.search(r'rocm_path = "/\S+/therock[^"]*"', feature) and 'version = "70204"' in feature, feature


# What full/jaxlib/rocm compiles of JAX's (JAX's jaxlib/rocm/BUILD at the pin).
JAX_FILES_OF_THE_XLA_MODULES = {
    "@jax//:jaxlib/gpu/triton.cc", "@jax//:jaxlib/gpu/triton_kernels.cc", "@jax//:jaxlib/gpu/triton_utils.cc",
    "@jax//:jaxlib/gpu/py_client_gpu.cc", "@jax//:jaxlib/gpu/gpu_plugin_extension.cc", "@jax//:jaxlib/ffi.cc",
    "@jax//:jaxlib/rocm/rocm_plugin_extension.cc",
}
DOWNLOAD_FAILURE = re.compile(r"Error downloading|cannot download|An error occurred during the fetch of repository")


def test_the_wheels_are_declared_from_jax_files_with_xla_real_dependencies(full_bazel):
    """The deepest level offline: the wheels' direct dependencies, with a real JAX tree.

    Every label of full/BUILD.bazel and full/jaxlib/rocm must resolve to a target that exists
    (JAX's files in @jax, triton.proto compiled by the graph's protobuf, our modules); the
    packages of XLA's and the registry's modules behind them then need source archives this
    machine cannot have, so a failure there must be a download and nothing else. A misspelt
    label, a file JAX does not have, or a repository not visible fails this test."""
    jax_tree = require_jax_tree()
    result = full_bazel("query", "--keep_going", "--config=rocm", f"--repo_env=JAX_SOURCE_DIR={jax_tree}",
                        *BUILD_PYTHON, "deps(//:all + //jaxlib/rocm:all, 1)",
                        check=False, bind=(str(jax_tree),))
    listed = set(result.stdout.split())
    assert JAX_FILES_OF_THE_XLA_MODULES <= listed, sorted(JAX_FILES_OF_THE_XLA_MODULES - listed)
    assert {"@jax_rocm_build//:xla_rocm_plugin.so", "//jaxlib/rocm:_triton.cpython-314-x86_64-linux-gnu.so",
            "//jaxlib/rocm:rocm_plugin_extension.cpython-314-x86_64-linux-gnu.so"} <= listed, sorted(listed)
    # triton.proto's package loads protobuf's rules: listed when protobuf's archive is at hand.
    assert "@jax_protos//jaxlib/gpu:triton_cc_proto" in listed or "fetch of repository 'protobuf~'" in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR:")
              and not line.startswith(("ERROR: Traceback", "ERROR: Evaluation of query"))]
    not_downloads = [line for line in errors if not DOWNLOAD_FAILURE.search(line)]
    assert not not_downloads, "\n".join(not_downloads)
    blockers = sorted(set(re.findall(r"fetch of repository '([^']+)'", result.stderr)))
    print("full mode, deepest offline level: the wheels' targets load; next blocked by the archives of", blockers)


def own_trees_command(trees: dict[str, Path], jax_tree: Path, out: Path, *more: str) -> list[str]:
    """The README's "your own JAX and XLA trees" command, offline: no mode flag, what upstream's
    graph would download from the trees tests/infra/real_trees.py laid out."""
    offline = [f"--registry={trees['JAX_ROCM_TEST_REGISTRY']}"]
    if os.environ.get("JAX_ROCM_TEST_DISTDIR"):
        offline.append(f"--distdir={os.environ['JAX_ROCM_TEST_DISTDIR']}")
    if os.environ.get("JAX_ROCM_TEST_FULL_BAZELRC"):
        offline.append(f"--bazelrc={os.environ['JAX_ROCM_TEST_FULL_BAZELRC']}")
    return [sys.executable, str(CHECKOUT / "build" / "ci_build"), f"--jax-source-dir={jax_tree}",
            f"--xla-source-dir={trees['JAX_ROCM_TEST_XLA_TREE']}", *offline, f"--output-dir={out}", *more, "dist_wheels"]


@pytest.mark.timeout(7200)  # cold, on 2 cores: the LLVM-free part of the release graph, about 30 minutes
def test_the_own_trees_command_builds_what_needs_no_llvm_and_names_llvm_last(sandbox_root, tmp_path):
    """README's own-trees command with the gated tier's laid-out trees runs full mode by itself,
    builds everything of the release graph that needs no LLVM (--keep_going: JAX's _triton and
    the six FFI modules among it), and ends in one ci_build line naming LLVM's archive by the
    XLA tree's URL and sha256, exit 1; no wheel is written."""
    trees = gated()
    jax_tree = require_jax_tree()
    if not os.environ.get("JAX_ROCM_TEST_FULL_BAZELRC"):
        pytest.skip("JAX_ROCM_TEST_FULL_BAZELRC is not set: lay out the graph's modules with tests/infra/real_trees.py")
    out = tmp_path / "dist"
    # One amdgpu target: with JAX's nine, XLA's 30 hipCUB sort kernels alone take hours on two
    # cores (each compiles its nine targets in one action).
    result = subprocess.run(own_trees_command(trees, jax_tree, out, "--amdgpu-targets=gfx942"), capture_output=True,
                            text=True, timeout=7000)
    last = result.stderr.strip().splitlines()[-1]
    print(result.stderr[-1500:])
    assert result.returncode == 1, result.stderr[-3000:]
    llvm = re.search(r'LLVM_COMMIT = "([0-9a-f]+)"[\s\S]*LLVM_SHA256 = "([0-9a-f]+)"',
                     (trees["JAX_ROCM_TEST_XLA_TREE"] / "third_party" / "llvm" / "workspace.bzl").read_text())
    assert last.startswith("ci_build dist_wheels: full mode built what it could"), last
    assert f"llvm-project/archive/{llvm[1]}.tar.gz" in last and llvm[2] in last, last
    assert "--distdir" in last
    # The wheels' build failed and nothing was written; the closure pass's own builds may well
    # complete (with a warm cache every rule that needs nothing missing does).
    assert "Target //:jax_rocm_wheels up-to-date" not in result.stderr and not list(out.glob("*.whl"))
    # A loading stop is not a damaged output base.
    assert "clean --expunge" not in result.stderr
    # What needs no LLVM was built: JAX's _triton (XLA's real dependencies) and the FFI modules.
    python = re.search(r"--repo_env=HERMETIC_PYTHON_VERSION=(3\.\d+)", result.stderr)[1].replace(".", "")
    built = {p.name for p in (FULL / "bazel-bin").glob(f"**/*.cpython-{python}-x86_64-linux-gnu.so")}
    assert f"_triton.cpython-{python}-x86_64-linux-gnu.so" in built, sorted(built)
    assert {f"_{m}.cpython-{python}-x86_64-linux-gnu.so" for m in ("linalg", "prng", "solver", "sparse", "rnn", "hybrid")} <= built


def test_without_a_registry_offline_the_own_trees_command_stops_before_the_sandbox(tmp_path):
    """Plain offline, nothing laid out: one line, exit 2, before anything is built."""
    trees = gated()
    jax_tree = require_jax_tree()
    result = subprocess.run([sys.executable, str(CHECKOUT / "build" / "ci_build"), f"--jax-source-dir={jax_tree}",
                             f"--xla-source-dir={trees['JAX_ROCM_TEST_XLA_TREE']}", f"--output-dir={tmp_path}",
                             "dist_wheels"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Bazel Central Registry" in result.stderr and "--registry" in result.stderr
    assert "sandbox:" not in result.stderr and "+ " not in result.stderr


# What cannot be had here at all: LLVM and the projects built on it.
NEVER_HERE = ("llvm-project", "llvm-raw", "stablehlo", "shardy", "triton")


def test_the_rocm_platforms_whole_graph_loads_but_llvm(full_bazel):
    """With the graph's modules and XLA's archives laid out locally (tests/infra/real_trees.py:
    JAX_ROCM_TEST_FULL_BAZELRC), every package of rocm_platform's closure loads (the package
    of the PJRT plugin's StreamExecutor) but LLVM's: no call, label or name of ours fails."""
    if not os.environ.get("JAX_ROCM_TEST_FULL_BAZELRC"):
        pytest.skip("JAX_ROCM_TEST_FULL_BAZELRC is not set: lay out the graph's modules with tests/infra/real_trees.py --module")
    result = full_bazel("query", "--keep_going", "--config=rocm",
                        "deps(@xla//xla/stream_executor/rocm:rocm_platform)", check=False)
    listed = result.stdout.split()
    packages = {line.split(":", 1)[0] for line in listed}
    failed, not_llvm = set(), []
    for line in result.stderr.splitlines():
        # A package that cannot load, or a rule of one that Bazel refuses (the package is in error).
        where = (re.search(r"(?:no such package|error loading package) '@@([^/']*)//([^']*)'", line)
                 or re.search(r"^ERROR: \S*/external/([^/]+)/(\S*)/BUILD(?:\.bazel)?:\d+:\d+: ", line))
        if not where:
            continue
        failed.add((where.group(1), where.group(2)))
        if not where.group(1).endswith(NEVER_HERE) and not any(f"{name}//" in line for name in NEVER_HERE):
            not_llvm.append(line)
    assert not not_llvm, "\n".join(not_llvm[:20])
    assert "@xla//xla/stream_executor/rocm:rocm_platform" in listed and len(packages) > 100, (len(packages), result.stderr[-2000:])
    print(f"rocm_platform's closure: {len(listed)} targets in {len(packages)} packages load; not loaded: {sorted(failed)}")


# What of the plugin's whole graph cannot be had here besides LLVM and what is built on it,
# each with its reason (the gated test fails on anything else): matched against Bazel's error.
NOT_HERE = {
    r"@@grpc[~+]//:grpc\+\+": "grpc's C++ targets: grpc's repository was too large to clone where the tier was measured, and the "
                            "stand-in (tests/infra/real_trees.py --module-dir) answers its .bzl files only",
    r"sycl_configure_ext[~+]oneapi": "Intel's oneAPI toolkit, a download (the SYCL branch of XLA's select()s)",
    r"third_party_ext[~+]compute_library": "Arm Compute Library (the aarch64 branch of oneDNN), too large to clone there too",
    r"third_party_ext[~+]onednn_async": "XLA's setting_init.patch does not apply to its own oneDNN 3.11.3 with "
                                     "Bazel's patcher (GNU patch applies it 82 lines off): XLA's, not ours",
}
# LLVM's own archives besides llvm-project: its OpenMP runtime and ROCm's device libraries
# (a folder of ROCm's LLVM fork).
LLVM_ARCHIVES = ("llvm_openmp", "rocm_device_libs")


def test_the_plugins_whole_graph_loads_but_llvm_and_what_is_named(full_bazel):
    """Every package of the wheels' XLA graph (the PJRT plugin, _triton, rocm_plugin_extension)
    loads, but LLVM's and those built on it (MLIR, stablehlo, shardy, triton) and the few
    NOT_HERE names with their reason: with the graph's modules and XLA's archives laid out
    locally (tests/infra/real_trees.py --module, --archive, --archive-dir)."""
    if not os.environ.get("JAX_ROCM_TEST_FULL_BAZELRC"):
        pytest.skip("JAX_ROCM_TEST_FULL_BAZELRC is not set: lay out the graph's modules with tests/infra/real_trees.py --module")
    jax_tree = require_jax_tree()
    result = full_bazel("query", "--keep_going", "--config=rocm", *BUILD_PYTHON,
                        f"--repo_env=JAX_SOURCE_DIR={jax_tree}",
                        "deps(//:xla_rocm_plugin + //jaxlib/rocm:_triton + //jaxlib/rocm:rocm_plugin_extension)",
                        check=False, bind=(str(jax_tree),))
    packages = {label.split(":", 1)[0] for label in result.stdout.split()}
    never = NEVER_HERE + LLVM_ARCHIVES
    unexplained, named = [], dict.fromkeys(NOT_HERE, 0)
    for line in result.stderr.splitlines():
        if not line.startswith("ERROR: ") or line.startswith(("ERROR: Evaluation of query", "ERROR: Traceback")):
            continue
        if any(f"{name}//" in line or f"~{name}'" in line for name in never):
            continue
        reason = next((pattern for pattern in NOT_HERE if re.search(pattern, line)), None)
        if reason:
            named[reason] += 1
        else:
            unexplained.append(line)
    assert not unexplained, "\n".join(unexplained[:20])
    assert {"@xla//xla/stream_executor/rocm", "//jaxlib/rocm", "@xla//xla/pjrt/c"} <= packages, sorted(packages)[:20]
    print(f"the wheels' XLA graph: {len(result.stdout.split())} targets in {len(packages)} packages load; "
          "not loaded besides LLVM's: " + "; ".join(f"{NOT_HERE[p]} ({n} errors)" for p, n in named.items() if n))


# The plugin's graph and _triton's: what full mode builds of XLA.
PLUGIN_GRAPH = "deps(//:xla_rocm_plugin + //jaxlib/rocm:_triton)"
# Why a rule of the closure may fail here, each named: the toolkit lacks rocprofiler-sdk (no
# Debian package; the TheRock fixture is made from Debian's), and CUDA code a select() reaches
# only on CUDA builds (a query lists every branch).
EXPLAINED_FAILURE = re.compile(r"local_config_rocm//rocm:rocprofiler_sdk$|//xla/stream_executor/cuda:|//xla/tsl/cuda:")
# The one Python of a full-mode build: extension modules, XLA's Python headers and numpy's
# (full/third_party/build_python.bzl), and XLA's hermetic Python version.
BUILD_PYTHON = ("--repo_env=HERMETIC_PYTHON_VERSION=3.14", "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.14")
# Every type of XLA's hipCUB sort (xla/stream_executor/rocm/BUILD, get_cub_sort_kernel_types()).
CUB_SORT_TYPES = ("bf16 f16 f32 f32_b16 f32_b32 f32_b64 f64 s16 s32 s32_b16 s32_b32 s32_b64 s64 s8 u16 u16_b16 u16_b32 "
                  "u16_b64 u32 u32_b16 u32_b32 u32_b64 u64 u64_b16 u64_b32 u64_b64 u8 u8_b16 u8_b32 u8_b64").split()
# A TheRock-layout toolkit of what XLA's ROCm code includes and links, made from the root's ROCm
# (headers copied, libraries as interface stubs: same soname, same exported names).
XLA_TOOLKIT_TARBALL = r"""
set -e
d=$(mktemp -d); r=$d/install
mkdir -p $r/include $r/lib/llvm/bin $r/lib/llvm/amdgcn $r/share/therock
for h in hip hsa rocm-core rocprim hipcub rocm_smi rccl rocblas hipblas hipblas-common hipblaslt miopen hipfft \
         hipsolver hipsparse hiprand rocrand rocsolver rocsparse roctracer hipblaslt-version.h; do
  [ -e /usr/include/$h ] && cp -a /usr/include/$h $r/include/
done
rm -f $r/include/hsa/hsa
""" + HIP_AND_COMPILER + STUB_LIBRARY + r"""
for lib in hsa-runtime64 rocblas hipblas hipblaslt MIOpen rccl hipfft hipsolver hipsparse hiprand rocrand rocsolver \
           rocsparse roctracer64 rocm_smi64; do
  [ -e /usr/lib/x86_64-linux-gnu/lib$lib.so ] && stub $lib
done
echo '{"the_rock_commit": "test-fixture", "rocm_version": "7.2.4", "rocm_package_version": "7.2.4a20261126"}' \
  > $r/share/therock/therock_manifest.json
echo '{"dist_amdgpu_targets": "gfx942"}' > $r/share/therock/dist_info.json
tar -C $d -czf "$1" install
rm -rf $d
"""


@pytest.mark.timeout(5400)  # cold, on 2 cores: over 30 minutes (800 of XLA's and TSL's rules, and protoc)
@pytest.mark.parametrize("toolkit", ["debian", "therock"])
def test_the_llvm_free_closure_of_the_plugin_compiles(full_bazel, toolkit, tmp_path):
    """Every rule of the plugin's and _triton's graph that depends on nothing Bazel cannot load
    here (LLVM, MLIR, ...) is built, with Debian's ROCm and with a TheRock tarball: XLA's and
    TSL's C++, XLA's HIP kernels through our rocm_library (fat binaries of the requested
    targets), and what they need. What fails must be for a reason named below, each counted."""
    if not os.environ.get("JAX_ROCM_TEST_FULL_BAZELRC"):
        pytest.skip("JAX_ROCM_TEST_FULL_BAZELRC is not set: lay out the graph's modules with tests/infra/real_trees.py --module")
    jax_tree = require_jax_tree()  # _triton's own files
    flags = ["--config=rocm", *BUILD_PYTHON, f"--repo_env=JAX_SOURCE_DIR={jax_tree}"]
    if toolkit == "therock":
        tarball = tmp_path / "therock-dist-linux-gfx94X-dcgpu-7.2.4a20261126.tar.gz"
        (tmp_path / "make.sh").write_text(XLA_TOOLKIT_TARBALL)
        sandbox("run", "--", "sh", str(tmp_path / "make.sh"), str(tarball))
        flags += [f"--repo_env=THEROCK_URL=file://{tarball}",
                  f"--repo_env=THEROCK_SHA256={hashlib.sha256(tarball.read_bytes()).hexdigest()}"]
    targets = ("gfx942",) if toolkit == "therock" else ("gfx942", "gfx90a")
    bind = (str(jax_tree),)
    graph = full_closure.Graph.from_xml(full_bazel("query", "--keep_going", *flags, "--output=xml", PLUGIN_GRAPH,
                                                   check=False, bind=bind).stdout)
    closure = full_closure.closure(graph)
    wanted = graph.select(closure.free, full_closure.BUILT_REPOSITORIES, full_closure.NOT_FOR_THIS_BUILD)
    (tmp_path / "closure.txt").write_text("\n".join(wanted) + "\n")
    events = tmp_path / "events.json"
    full_bazel("build", "--keep_going", *flags, f"--@jax_rocm_build//rocm:amdgpu_targets={','.join(targets)}",
               f"--target_pattern_file={tmp_path / 'closure.txt'}", f"--build_event_json_file={events}", check=False,
               bind=bind)
    outcome = full_closure.build_outcome(full_closure.read_events(events))
    print(f"{toolkit}: " + "\n".join(full_closure.report(graph, outcome)))
    built = {label.split("//", 1)[1] for label in outcome.built}
    kernels = {f"xla/stream_executor/rocm:cub_sort_kernel_rocm_type_{t}" for t in CUB_SORT_TYPES}
    assert kernels <= built, sorted(kernels - built)
    assert {"xla/stream_executor/rocm:cub_scan_kernel_rocm_impl", "xla/stream_executor/rocm:collective_signal_rocm",
            "xla/stream_executor/rocm:rocm_status", "xla/stream_executor/rocm:rocm_version_parser"} <= built
    # JAX's _triton from JAX's files, and XLA's Python pieces from the build's own Python.
    assert {"jaxlib/rocm:_triton", "third_party/python_runtime:headers",
            "xla/service/gpu/llvm_gpu_backend:generate_amdgpu_device_lib_data_tool"} <= built, sorted(built)[:20]
    unexplained = {label: cause for label, cause in outcome.failed.items() if not EXPLAINED_FAILURE.search(cause)}
    assert not unexplained, unexplained
    # Each kernel's archive holds its own object, with device code for every requested target.
    unpacked = tmp_path / "objects"
    for kernel in ("f32", "u8_b64"):
        outputs = full_bazel("cquery", *flags, f"--@jax_rocm_build//rocm:amdgpu_targets={','.join(targets)}",
                             "--output=files",
                             f"@xla//xla/stream_executor/rocm:cub_sort_kernel_rocm_type_{kernel}", bind=bind).stdout.split()
        (unpacked / kernel).mkdir(parents=True)
        subprocess.run(["ar", "x", str(FULL / outputs[0])], cwd=unpacked / kernel, check=True)
        objects = list((unpacked / kernel).glob("*.o"))
        assert len(objects) == 1 and fatbin.targets(fatbin.read(objects[0])) == sorted(targets), (kernel, outputs)
    first, second = (next((unpacked / k).glob("*.o")).read_bytes() for k in ("f32", "u8_b64"))
    assert first != second, "two types of one source compiled to the same object: the -D was lost"


def test_xlas_cub_sort_kernels_per_target_are_the_single_clang_runs_byte_for_byte(full_bazel, tmp_path):
    """Two of XLA's 30 hipCUB sort kernels (one source, a -D each), compiled per target (a device
    action per target, the bundle, the host compile) and by one clang run per source
    (--@jax_rocm_build//rocm:hip_compile_per_target=false): the same objects, byte for byte, as
    the release config compiles them (compressed). Prints each mode's HIP action times."""
    jax_tree = require_jax_tree()
    flags = ["--config=rocm", "-c", "opt", "--@jax_rocm_build//rocm:offload_compress", *BUILD_PYTHON,
             f"--repo_env=JAX_SOURCE_DIR={jax_tree}", "--@jax_rocm_build//rocm:amdgpu_targets=gfx942,gfx90a",
             "--output_groups=+hip_objects", "--experimental_profile_include_target_label",
             "--disk_cache="]  # the actions run: their times are printed
    kernels = [f"@xla//xla/stream_executor/rocm:cub_sort_kernel_rocm_type_{t}" for t in ("f32", "u8_b64")]
    digests, times = {}, {}
    for mode, extra in (("per target", ()), ("one clang run", ("--@jax_rocm_build//rocm:hip_compile_per_target=false",))):
        profile = tmp_path / f"{len(digests)}.profile.gz"
        full_bazel("build", *flags, *extra, f"--profile={profile}", *kernels, bind=(str(jax_tree),))
        objects = FULL / "bazel-bin/external/xla~/xla/stream_executor/rocm/_objs"
        digests[mode] = {k: hashlib.sha256((objects / k.split(":")[1] / "cub_sort_kernel_rocm_impl.cu.pic.o").read_bytes()).hexdigest()
                         for k in kernels}
        with gzip.open(profile) as f:
            events = json.load(f)["traceEvents"]
        times[mode] = sorted(((e["dur"] / 1e6, e["name"]) for e in events if e.get("cat") == "action processing"
                              and e.get("args", {}).get("mnemonic", "").startswith("Hip")), reverse=True)
    for mode, actions in times.items():
        print(f"{mode}: longest HIP action {actions[0][0]:.1f} s ({actions[0][1]}); summed {sum(t for t, _ in actions):.1f} s "
              f"over {len(actions)} actions" if actions else f"{mode}: no HIP action ran (cached)")
    assert len(digests["per target"]) == 2, digests
    assert digests["per target"] == digests["one clang run"], digests


def runpath_of(path: Path) -> list[str]:
    """A shared library's RUNPATH, without Bazel's build-tree entries (the wheel rule strips them)."""
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        dynamic = ELFFile(f).get_section_by_name(".dynamic")
        entries = [t.runpath for t in dynamic.iter_tags() if t.entry.d_tag == "DT_RUNPATH"]
    return [e for e in (entries[0].split(":") if entries else []) if not is_build_tree_entry(e)]


def one_wheel(folder: Path, libraries: list[Path], tag: str) -> Path:
    """A wheel holding `libraries` as the plugin wheel holds its modules, to audit them."""
    wheel = folder / f"audited-0.0.0-{tag}-{tag}-linux_x86_64.whl"
    info = "audited-0.0.0.dist-info"
    files = {f"jax_rocm7_plugin/{lib.name}": lib.read_bytes() for lib in libraries}
    files[f"{info}/METADATA"] = b"Metadata-Version: 2.1\nName: audited\nVersion: 0.0.0\n"
    files[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}-{tag}-linux_x86_64\n".encode()
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")
    return wheel


def release_modules(full_bazel, *configs: str) -> tuple[Path, Path]:
    """JAX's _triton (full/jaxlib/rocm, XLA's real dependencies) and a kernel module (_linalg,
    this project's rule) built with the release config and `configs`: their paths."""
    jax_tree = require_jax_tree()
    flags = ["--config=rocm_release", *configs, *BUILD_PYTHON, f"--repo_env=JAX_SOURCE_DIR={jax_tree}",
             "--@jax_rocm_build//rocm:amdgpu_targets=gfx942"]
    targets = ["//jaxlib/rocm:_triton", "@jax_rocm_build//jaxlib/rocm:_linalg"]
    bind = (str(jax_tree),)
    full_bazel("build", *flags, *targets, bind=bind)
    files = full_bazel("cquery", *flags, "--output=files", " + ".join(targets), bind=bind).stdout.split()
    return tuple(FULL / next(f for f in files if f"/{name}.cpython-" in f) for name in ("_triton", "_linalg"))


def laid_out_graph() -> str:
    full_rc = os.environ.get("JAX_ROCM_TEST_FULL_BAZELRC")
    if not full_rc:
        pytest.skip("JAX_ROCM_TEST_FULL_BAZELRC is not set: lay out the graph's modules with tests/infra/real_trees.py")
    return Path(full_rc).read_text()


@pytest.mark.timeout(5400)  # cold: _triton's closure (XLA's and TSL's rules, protoc)
def test_full_modes_release_modules_get_kernels_modes_link_only_runpath(full_bazel):
    """With --config=rocm_release, JAX's _triton, linked by full/jaxlib/rocm against XLA's real
    dependencies, carries the same link_only RUNPATH as the kernel modules' rule writes
    (TheRock's pip packages beside the wheel first), never the build's toolkit folders."""
    laid_out_graph()
    triton, linalg = release_modules(full_bazel)
    runpath = runpath_of(triton)
    assert runpath == runpath_of(linalg), (runpath, runpath_of(linalg))
    assert runpath[0].startswith("$ORIGIN/") and "$ORIGIN/../_rocm_sdk_core/lib" in runpath, runpath
    assert not any(e.startswith("/usr/lib") for e in runpath), runpath
    print(f"full mode's _triton: RUNPATH {':'.join(runpath)}")


@pytest.mark.timeout(5400)  # cold: _triton's closure with the manylinux_2_28 toolchain
def test_full_modes_release_modules_meet_manylinux_2_28(full_bazel, tmp_path):
    """What full mode can build here of the plugin wheel, with the host toolchain ci_build's
    release builds use (--config=manylinux_2_28), meets manylinux_2_28 (build/ci_build_cli/wheel_audit.py)."""
    if "~hwloc=" not in laid_out_graph():
        pytest.skip("the laid-out graph has no hwloc from source, which TSL's platform code needs under the manylinux_2_28 "
                    "toolchain: lay the trees out again with tests/infra/real_trees.py --manifest tests/infra/real_trees.toml")
    triton, linalg = release_modules(full_bazel, "--config=manylinux_2_28")
    python = ensure_venv("tools", CHECKOUT / "requirements-tools.txt", "test_full_mode")
    # As the wheel rule packs them: Bazel's build-tree RUNPATH entries stripped (runpath.py).
    packed = []
    for module in (triton, linalg):
        packed.append(tmp_path / module.name)
        subprocess.run([str(python), "-m", "runpath", "--in", str(module), "--out", str(packed[-1])],
                       env=sandbox_environment(), check=True)
    wheel = one_wheel(tmp_path, packed, "cp314")
    audit = subprocess.run([str(python), "-m", "ci_build_cli.wheel_audit", "--manylinux=manylinux_2_28", "--json", str(wheel)],
                           env=sandbox_environment(), capture_output=True, text=True)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    print(f"full mode's _triton and _linalg: {json.loads(audit.stdout)}")
