"""--config=manylinux_2_28 builds hermetically: every action runs from its declared inputs.

A copy of this checkout (a private output base; compiles may come from the shared action
cache, links run) builds the HIP test library (rocm_library + cc_binary linkshared) and a C++
test binary linking it, with an execution log; then tests.infra.isolated_replay reruns every HipDeviceCompile, HipBundle, HipCompile,
CppCompile, CppArchive, CppLink and ZigRuntime spawn the way an isolating remote worker would: chroot'ed into
a root holding only the spawn's inputs, the OS's /usr and /etc and a private /tmp (Bazel's
own hermetic sandbox needs linux-sandbox, which the project's sandbox does not offer).
* every replay succeeds, and gives Bazel's outputs byte for byte;
* no argument, environment entry or param file names the output base, the checkout or /var/tmp;
* the replay catches what it must: the old wrapper, which ran Zig by its absolute path in
  the output base, fails there;
* the built library and binary hold no output-base or checkout path (strings, .comment);
* Zig's runtime serves a link wherever it runs: with Zig's lib/ at other inodes (another
  output base, a cache hit, a remote worker) the wrapper's restamped copy links without
  building any of it, where an untouched copy makes Zig 0.17 rebuild it all;
* with a TheRock tarball as the toolkit, the HIP compile's inputs hold the toolkit's clang
  and device bitcode, by exec-root-relative paths, and it replays in isolation too.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest

from tests.conftest import sandbox, scratch_copy
from tests.infra.isolated_replay import read_log
from tests.infra.therock_toolkit import MAKE_TARBALL

pytestmark = pytest.mark.bazel

# Links and archives really run: a hit in the shared action cache (the sandbox's rc sets one)
# writes no param file, and they are the only actions with one, which the replay reads. Every
# other action may come from the cache: the replay still reruns it in isolation and compares
# its outputs with Bazel's, then those of an earlier build of the same action in another
# workspace. So a path baked in where the action key does not show it (the compiler resolving
# its own location, say) makes the replay's outputs differ instead of hiding behind a hit.
# On a hit Bazel 7 keeps a compile's .d file in memory unless told otherwise; the replay compares it.
# The release configs (rocm_release_wheel: what the wheels ship with), so that Zig's runtime and
# what else the main job built come from the shared action cache instead of a fastbuild graph
# of this test's own; gfx942 alone keeps the HIP compiles few.
COMMON = ("--config=rocm_release_wheel", "--config=gfx942", "--materialize_param_files", "--noexperimental_inmemory_dotd_files")
FLAGS = (*COMMON, "--modify_execution_info=^(CppLink|CppArchive)$=+no-cache")
BUILD_FLAGS = " ".join(map(shlex.quote, FLAGS))  # for `sh -c`
# The TheRock builds compare objects compiled from two toolkits: a hit would hand the second
# build the first one's objects whenever the keys agree. Everything but Zig's runtime runs.
REAL_BUILD_FLAGS = " ".join(map(shlex.quote, (*COMMON, "--modify_execution_info=^(?!ZigRuntime$).*=+no-cache")))
TARGETS = ("//tests/rocm/hip:libhip_kernels.so", "//tests/rocm/hip:host_calls_kernel_test")
HIP_MNEMONICS = ("HipDeviceCompile", "HipBundle", "HipCompile")  # rocm/private/actions/hip_compile.bzl
MNEMONICS = (*HIP_MNEMONICS, "CppCompile", "CppArchive", "CppLink", "ZigRuntime")
BUILT = ("bazel-bin/tests/rocm/hip/libhip_kernels.so", "bazel-bin/tests/rocm/hip/host_calls_kernel_test")

# What @zig_sdk's bin/cc was before it became hermetic: Zig by its absolute path in the
# output base (and a shared cache outside Bazel).
OLD_WRAPPER = """#!/bin/sh
export ZIG_GLOBAL_CACHE_DIR=/var/tmp/jax-rocm-build/zig-cache ZIG_LOCAL_CACHE_DIR=/var/tmp/jax-rocm-build/zig-cache
exec "{zig}" c++ -target x86_64-linux-gnu.2.28 "$@"
"""


def in_copy(copy: Path, script: str) -> str:
    return sandbox("run", "--", "sh", "-c", script, cwd=copy).stdout


def replay(copy: Path, log: Path, *extra: str, mnemonics: tuple[str, ...] = MNEMONICS) -> dict:
    """isolated_replay.py's report for the copy's execution log."""
    command = ("python3 -m tests.infra.isolated_replay --execroot \"$(bazel info execution_root)\" "
               f"--log {log} --forbid \"$(bazel info output_base)\" --forbid \"$PWD\" --forbid /var/tmp "
               + " ".join(f"--mnemonic {m}" for m in mnemonics) + " " + " ".join(map(shlex.quote, extra)))
    return json.loads(in_copy(copy, command).splitlines()[-1])


@pytest.fixture(scope="module")
def workspace(sandbox_root, tmp_path_factory) -> dict:
    """A checkout copy, built cold with an execution log; its paths."""
    top = tmp_path_factory.mktemp("hermetic")  # under /tmp, which the sandbox shares
    with scratch_copy(top / "checkout") as copy:
        log = top / "exec.json"
        in_copy(copy, f"bazel build {BUILD_FLAGS} --execution_log_json_file={log} {' '.join(TARGETS)}")
        paths = in_copy(copy, "bazel info output_base && bazel info execution_root").split()
        yield {"copy": copy, "top": top, "log": log, "output_base": paths[0], "execroot": paths[1]}


@pytest.fixture(scope="module")
def report(workspace) -> dict:
    """Every spawn replayed alone (the slow tier's proof)."""
    return replay(workspace["copy"], workspace["log"])


@pytest.fixture(scope="module")
def scan(workspace) -> dict:
    """Every spawn's command line, environment and inputs, read from the log without replaying it."""
    return replay(workspace["copy"], workspace["log"], "--no-replay")


@pytest.mark.slow  # every action replayed alone: the slow tier (docs/testing.md)
def test_every_action_replays_in_isolation_with_bazels_outputs(report):
    spawns = report["spawns"]
    assert {s["mnemonic"] for s in spawns} == set(MNEMONICS), [s["mnemonic"] for s in spawns]
    for s in spawns:
        assert s["exit"] == 0, (s["progress"], s["stderr"])
        # .d files name headers; the link's outputs include Bazel's own param file.
        differs = {o: v for o, v in s["outputs"].items() if v not in ("identical", "directory")}
        assert not differs, (s["progress"], differs)


def test_no_command_line_names_the_output_base_the_checkout_or_var_tmp(scan):
    assert scan["spawns"]
    assert not {s["progress"]: s["leaks"] for s in scan["spawns"] if s["leaks"]}


def test_links_start_from_the_runtime_built_once(scan):
    links = [s for s in scan["spawns"] if s["mnemonic"] == "CppLink"]
    assert len(links) == 2
    for link in links:
        runtime = link["environment"].get("ZIG_RUNTIME_CACHE", "")
        assert runtime.startswith("bazel-out/") and "/runtime_" in runtime, link["environment"]
        assert any(i.startswith(runtime + "/") for i in link["inputs"]), "the runtime is not an input of the link"


def test_the_replay_catches_zig_run_from_the_output_base(workspace):
    """The negative control: with @zig_sdk's old wrapper, every Zig action fails in isolation."""
    execroot = Path(workspace["execroot"])
    wrapper = next(p for p in (execroot / "external").glob("*zig_sdk/bin/cc"))
    old = workspace["top"] / "old_cc"
    old.write_text(OLD_WRAPPER.format(zig=wrapper.resolve().parent.parent / "sdk" / "zig"))
    rel = str(wrapper.relative_to(execroot))
    spawns = replay(workspace["copy"], workspace["log"], f"--replace-input={rel}={old}", mnemonics=("CppCompile", "CppLink"))["spawns"]
    zig_spawns = [s for s in spawns if rel in s["inputs"] and s["mnemonic"] in ("CppCompile", "CppLink")]
    assert zig_spawns
    for s in zig_spawns:
        assert s["exit"] != 0, s["progress"]
        assert "sdk/zig" in s["stderr"] and "not found" in s["stderr"].lower(), s["stderr"]


# A link as bin/cc runs it, from a copy of @zig_sdk (Zig's lib/ at new inodes, as in another
# output base or on a remote worker) and the runtime this build made or took from the cache:
# through the wrapper (which restamps its copy of the runtime), then with Zig itself on an
# untouched copy, stopped after 20 s. ZIG_VERBOSE_CC prints each compile Zig runs.
RELOCATED_LINK = r"""
set -e
execroot=$(bazel info execution_root)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/execroot/external"
zig_sdk=$(basename "$(python3 -m tests.infra.repositories zig_sdk)")  # its canonical name, Bazel's to spell
cp -RL "$execroot/external/$zig_sdk" "$work/execroot/external/"
cd "$work/execroot"  # Bazel runs the wrappers by exec-root-relative paths
sdk=external/$zig_sdk
printf '#include <string>\nstd::string f() { return "f"; }\n' > probe.cc
"$sdk/bin/cc" -fPIC -O2 -c probe.cc -o probe.o
runtime=$execroot/$1; shift
echo "== wrapper"
ZIG_VERBOSE_CC=1 ZIG_RUNTIME_CACHE=$runtime timeout 300 "$sdk/bin/cc" -shared "$@" -o wrapped.so probe.o 2>&1
mkdir untouched && cp -RL "$runtime/." untouched/ && chmod -R u+w untouched
echo "== untouched"
ZIG_VERBOSE_CC=1 ZIG_LIB_DIR="$sdk/sdk/lib" ZIG_GLOBAL_CACHE_DIR=untouched ZIG_LOCAL_CACHE_DIR=untouched \
  timeout 20 "$sdk/sdk/zig" c++ -target x86_64-linux-gnu.2.28 -shared "$@" -o untouched.so probe.o 2>&1 || true
"""


def test_zigs_runtime_serves_a_link_where_zigs_files_have_other_inodes(workspace):
    runtime = next(s for s in read_log(workspace["log"]) if s.get("mnemonic") == "ZigRuntime")
    out, *link_flags = runtime["commandArgs"][1:]  # bin/build_runtime OUT FLAGS...
    (workspace["top"] / "relocated.sh").write_text(RELOCATED_LINK)
    text = in_copy(workspace["copy"], " ".join(map(shlex.quote, ["sh", str(workspace["top"] / "relocated.sh"), out, *link_flags])))
    wrapped, _, untouched = text.partition("== wrapper")[2].partition("== untouched")
    # The control: the same copy, not restamped, has Zig compile its runtime again.
    assert " clang " in untouched, untouched[-2000:]
    # Restamped: Zig compiled nothing; the link itself ran (its output exists: set -e).
    assert " clang " not in wrapped and "compiler_rt" not in wrapped, wrapped[-2000:]


def test_the_binaries_hold_no_output_base_or_checkout_path(workspace):
    copy = workspace["copy"]
    for built in BUILT:
        text = in_copy(copy, f"strings -a {built}; readelf -p .comment {built}")
        for path in (workspace["output_base"], str(copy), "/var/tmp"):
            assert path not in text, (built, path)


@pytest.fixture(scope="module")
def therock(workspace) -> dict:
    """The same copy, configured from a TheRock-layout tarball (test_therock_release's)."""
    top = workspace["top"]
    tarball = top / "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
    script = top / "make.sh"
    script.write_text(MAKE_TARBALL)
    sandbox("run", "--", "sh", str(script), str(tarball))
    sha256 = hashlib.sha256(tarball.read_bytes()).hexdigest()
    log = top / "exec_therock.json"
    rocm = f"--repo_env=THEROCK_URL=file://{tarball} --repo_env=THEROCK_SHA256={sha256}"
    copy = workspace["copy"]
    in_copy(copy, f"bazel build {REAL_BUILD_FLAGS} {rocm} --execution_log_json_file={log} //tests/rocm/hip:kernels")
    repo = '"$(python3 -m tests.infra.repositories local_config_rocm)"'  # Bazel spells its folder's name
    config = json.loads(in_copy(copy, f"cat {repo}/rocm_config.json"))
    rocm_config_h = in_copy(copy, f"cat {repo}/rocm/rocm_config.h")
    return {"log": log, "config": config, "rocm_config_h": rocm_config_h, "tarball": tarball,
            "report": replay(copy, log, mnemonics=HIP_MNEMONICS)}


OBJECTS = "find bazel-bin/tests/rocm/hip/_objs -name '*.o' | sort | xargs sha256sum"


@pytest.fixture(scope="module")
def without_hip_version(therock, workspace) -> dict:
    """The same tarball without share/hip/version, built after `therock`: the objects of both."""
    copy, top = workspace["copy"], workspace["top"]
    with_file = in_copy(copy, OBJECTS)
    folder = top / "no-hip-version"
    folder.mkdir()
    tarball = folder / therock["tarball"].name
    script = folder / "make.sh"
    script.write_text(MAKE_TARBALL.replace("mkdir -p $r/share/hip && cp /usr/share/hip/version $r/share/hip/\n", ""))
    assert script.read_text() != MAKE_TARBALL
    sandbox("run", "--", "sh", str(script), str(tarball))
    sha256 = hashlib.sha256(tarball.read_bytes()).hexdigest()
    built = sandbox("run", "--", "sh", "-c", f"bazel build {REAL_BUILD_FLAGS} --repo_env=THEROCK_URL=file://{tarball} "
                    f"--repo_env=THEROCK_SHA256={sha256} //tests/rocm/hip:kernels", cwd=copy, check=False)
    listing = in_copy(copy, "tar tzf " + str(tarball)) if built.returncode == 0 else ""
    return {"built": built, "with_file": with_file, "without_file": in_copy(copy, OBJECTS) if built.returncode == 0 else "",
            "listing": listing}


def test_every_hip_compile_gets_the_finders_hip_version(therock):
    version = therock["config"]["hip_version"]
    compiles = [s for s in therock["report"]["spawns"] if s["mnemonic"] in ("HipDeviceCompile", "HipCompile")]
    assert version and compiles
    for s in compiles:
        assert f"--hip-version={version}" in s["argv"], s["argv"]


def test_a_toolkit_without_share_hip_version_builds_the_same_objects(without_hip_version):
    """clang guesses HIP's version from share/hip/version when not told it; without the file it
    assumed an old HIP (JAX's linalg_kernels then failed for gfx950 on such a toolkit)."""
    result = without_hip_version
    assert result["built"].returncode == 0, result["built"].stderr[-3000:]
    assert "install/share/hip/version" not in result["listing"]
    assert result["with_file"].strip() and result["without_file"] == result["with_file"]


def test_therock_toolkit_leaves_no_output_base_in_the_headers_compiles_include(therock, workspace):
    """rocm/rocm_config.h is an input of every compile that uses ROCm's headers: naming the
    extracted toolkit's path there (under the output base) made JAX's module compiles miss the
    remote cache from a second checkout (tests/bazel/test_rbe_wheels.py)."""
    assert workspace["output_base"] not in therock["rocm_config_h"], therock["rocm_config_h"]
    assert '#define TF_ROCM_TOOLKIT_PATH "/opt/rocm"' in therock["rocm_config_h"]


def test_no_input_of_a_therock_hip_compile_names_the_output_base(therock, workspace):
    """Any input file naming the output base makes the compile's cache key differ between
    checkouts. rocm_config.json (the toolkit's absolute path) was one: 4 of 264 spawns of
    the RBE wheel proof missed the cache from a second checkout until the HIP compiles took
    hip_action_key.json instead."""
    execroot, marker = Path(workspace["execroot"]), workspace["output_base"].encode()
    compiles = therock["report"]["spawns"]
    naming = {i for s in compiles for i in s["inputs"]
              if (execroot / i).is_file() and (execroot / i).stat().st_size < 1 << 20 and marker in (execroot / i).read_bytes()}
    assert compiles and not naming, naming


def test_therock_toolkit_is_in_the_hip_compiles_inputs(therock):
    assert therock["config"]["toolkit_in_inputs"] is True and therock["config"]["layout"] == "therock"
    spawns = therock["report"]["spawns"]
    # gfx942 alone: per source its device compile, the bundle, the host compile.
    assert sorted(s["mnemonic"] for s in spawns) == sorted(HIP_MNEMONICS * 2), [s["mnemonic"] for s in spawns]
    tool = {"HipDeviceCompile": "clang", "HipCompile": "clang", "HipBundle": "clang-offload-bundler"}
    for s in spawns:
        inputs = s["inputs"]
        assert any(i.startswith("external/") and i.endswith("local_config_rocm/rocm/llvm/bin/" + tool[s["mnemonic"]])
                   for i in inputs), (s["mnemonic"], inputs)
        if s["mnemonic"] != "HipBundle":
            assert any(i.endswith("local_config_rocm/rocm/amdgcn/bitcode/ocml.bc") for i in inputs)
        assert not s["leaks"], s["leaks"]
        assert s["exit"] == 0, s["stderr"]
        assert set(s["outputs"].values()) == {"identical"}, s["outputs"]
