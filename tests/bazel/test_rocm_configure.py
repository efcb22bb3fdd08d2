"""@local_config_rocm from the real Debian ROCm 7.2.4 and from a TheRock-layout tarball over HTTP."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import json
import re
import tarfile
import threading
from pathlib import Path

import pytest

from tests.conftest import sandbox, scratch_copy
from tests.infra.local_config_rocm import XLA_NAMES_TEST, XLA_ROCM_TARGETS, check_xla_names_output, rocm_config, rocm_targets
from tests.infra.therock_toolkit import MAKE_SMALL_TARBALL

pytestmark = pytest.mark.bazel

def test_finder_reports_the_real_debian_rocm(in_sandbox):
    data = json.loads(in_sandbox("python3", "third_party/gpus/find_rocm_config.py", "--rocm-path", "/usr").stdout)
    assert (data["layout"], data["rocm_version"], data["rocm_version_number"]) == ("multiarch", "7.2.4", 70204)
    assert data["hip_version"] == "7.2.53211"
    assert re.fullmatch(r"22\.\d+\.\d+", data["clang_version"])
    assert {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"} <= set(data["amdgpu_targets_supported"])
    # Every library whose package installed a CMake version file is found, with that version.
    cmake_versions = in_sandbox("sh", "-c", "grep -H 'set(PACKAGE_VERSION' /usr/lib/x86_64-linux-gnu/cmake/*/*-config-version.cmake").stdout
    expected = {}
    for line in cmake_versions.splitlines():
        m = re.search(r"cmake/([^/]+)/.*PACKAGE_VERSION \"(\d[^\"]*)\"", line)
        if m:  # skips computed versions such as "${...}"
            expected[m.group(1)] = m.group(2)
    names = {"hip": "hip", "hsa-runtime64": "hsa-runtime", "rocblas": "rocblas", "hipblas": "hipblas", "hipblaslt": "hipblaslt",
             "miopen": "miopen", "rccl": "rccl", "hipfft": "hipfft", "hipsolver": "hipsolver", "hipsparse": "hipsparse",
             "hiprand": "hiprand", "rocrand": "rocrand"}
    checked = 0
    for cmake_name, lib in names.items():
        if cmake_name in expected:
            assert data["libraries"][lib]["version"] == expected[cmake_name], lib
            assert Path(data["libraries"][lib]["library"]).name.startswith("lib")
            checked += 1
    assert checked >= 12, f"only {checked} libraries cross-checked: is the sandbox's ROCm 'full'?"
    assert data["libraries"]["rocprim"]["version"] == "4.2.0"


def test_hip_links_and_runs_with_config_rocm(in_sandbox):
    result = in_sandbox("bazel", "test", "--config=rocm", "--test_output=all", "//tests/rocm:hip_runtime_link_test")
    out = result.stdout + result.stderr
    assert "1 test passes" in out
    assert re.search(r"HIP runtime \d+ \(header 7\.2\): hipGetDeviceCount -> hipErrorNoDevice", out), out
    config = rocm_config(in_sandbox)
    assert config["configured"] and config["rocm_version"] == "7.2.4" and config["source"].startswith("search")
    assert config["amdgpu_targets"][:3] == ["gfx908", "gfx90a", "gfx942"]


def test_without_config_rocm_nothing_rocm_builds_and_asking_says_which_flag(in_sandbox):
    assert "Build completed successfully" in in_sandbox("bazel", "build", "//...").stderr
    config = rocm_config(in_sandbox)
    assert config == {"configured": False, "reason": "TF_NEED_ROCM is not 1", "advice": config["advice"]}
    asked = in_sandbox("bazel", "build", "//tests/rocm:hip_runtime_link_test", check=False)
    assert asked.returncode != 0 and "ROCm_is_not_configured__build_with_--config=rocm" in asked.stderr
    lib = in_sandbox("bazel", "build", "@local_config_rocm//:rocblas", check=False)
    assert lib.returncode != 0 and "add --config=rocm" in lib.stderr


def test_changing_amdgpu_targets_reconfigures(in_sandbox):
    in_sandbox("bazel", "build", "--config=rocm", "--repo_env=TF_ROCM_AMDGPU_TARGETS=gfx942,gfx1100", "@local_config_rocm//:hip")
    assert rocm_config(in_sandbox)["amdgpu_targets"] == ["gfx942", "gfx1100"]
    # Checked where every value of --//rocm:amdgpu_targets is (its default is this variable): at analysis.
    bad = in_sandbox("bazel", "build", "--nobuild", "--config=rocm", "--repo_env=TF_ROCM_AMDGPU_TARGETS=gfx942,gfx9999",
                     "//tests/rocm/hip:kernels", check=False)
    assert bad.returncode != 0 and "'gfx9999' is not an amdgpu target clang" in bad.stderr, bad.stderr[-3000:]


# ---- a TheRock-layout tarball, served over loopback HTTP --------------------

class _Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):  # /truncated/<file>: promise the whole file, send half of it
        if self.path.startswith("/truncated/"):
            data = (Path(self.directory) / self.path.split("/")[-1]).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def therock_server(sandbox_root, tmp_path_factory):
    www = tmp_path_factory.mktemp("www")
    name = "therock-dist-linux-gfx94X-dcgpu-7.2.4a20261122.tar.gz"
    script = www / "make.sh"
    script.write_text(MAKE_SMALL_TARBALL)
    sandbox("run", "--", "sh", str(script), str(www / name))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: _Handler(*a, directory=str(www)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    for kind, entry in (("dotdot", "therock/../../escaped"), ("absolute", "/tmp/escaped"), ("symlink", "therock/lib/escape")):
        with tarfile.open(www / f"evil-{kind}.tar.gz", "w:gz") as tar:
            ok = tarfile.TarInfo("therock/include/ok.h")
            ok.size = 1
            tar.addfile(ok, io.BytesIO(b"x"))
            bad = tarfile.TarInfo(entry)
            if kind == "symlink":
                bad.type, bad.linkname = tarfile.SYMTYPE, "../../../../../etc"
                tar.addfile(bad)
            else:
                bad.size = 1
                tar.addfile(bad, io.BytesIO(b"!"))
    # The truncation test needs bytes no other test downloads: Bazel's repository cache
    # answers by sha256, so once any test has fetched the tarball, a truncated transfer of
    # the same bytes would never be tried. The same tar, gzipped with another header mtime.
    variant = www / f"variant-{name}"
    variant.write_bytes(gzip.compress(gzip.decompress((www / name).read_bytes()), mtime=1))
    yield {
        "www": www,
        "base": f"http://127.0.0.1:{server.server_port}",
        "url": f"http://127.0.0.1:{server.server_port}/{name}",
        "sha256": hashlib.sha256((www / name).read_bytes()).hexdigest(),
        "truncated": f"http://127.0.0.1:{server.server_port}/truncated/{variant.name}",
        "truncated_sha256": hashlib.sha256(variant.read_bytes()).hexdigest(),
    }
    server.shutdown()


def therock_build(in_sandbox, url, sha256, targets="gfx942", check=True):
    return in_sandbox("bazel", "build", "--config=rocm", f"--repo_env=THEROCK_URL={url}", f"--repo_env=THEROCK_SHA256={sha256}",
                      f"--repo_env=TF_ROCM_AMDGPU_TARGETS={targets}", "//tests/rocm:hip_runtime_link_test", check=check)


def test_therock_tarball_wrong_sha256_and_truncation_fail_cleanly(in_sandbox, therock_server):
    wrong = therock_build(in_sandbox, therock_server["url"], "0" * 64, check=False)
    assert wrong.returncode != 0 and "Checksum was" in wrong.stderr and therock_server["sha256"] in wrong.stderr
    cut = therock_build(in_sandbox, therock_server["truncated"], therock_server["truncated_sha256"], check=False)
    assert cut.returncode != 0 and "rocm_toolkit_archive" in cut.stderr
    no_sha = in_sandbox("bazel", "build", "--config=rocm", f"--repo_env=THEROCK_URL={therock_server['url']}",
                        "@local_config_rocm//:hip", check=False)
    assert no_sha.returncode != 0 and "without THEROCK_SHA256" in no_sha.stderr


def test_an_unreachable_therock_host_says_how_to_build_offline(in_sandbox, sandbox_root):
    # .invalid never resolves (RFC 6761): the same answer as no network at all.
    url = "https://therock.invalid/tarball/therock-dist-linux-gfx94X-dcgpu-7.2.4.tar.gz"
    result = therock_build(in_sandbox, url, "ab" * 32, check=False)
    assert result.returncode != 0
    assert "the host therock.invalid cannot be reached from here (no network?)" in result.stderr, result.stderr[-2000:]
    assert "--repo_env=THEROCK_URL=file:///path/" in result.stderr and "--distdir=DIR" in result.stderr  # Bazel's flags


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink"])
def test_therock_tarball_with_escaping_entries_is_refused(in_sandbox, therock_server, kind):
    archive = therock_server["www"] / f"evil-{kind}.tar.gz"
    url = f"{therock_server['base']}/{archive.name}"
    result = therock_build(in_sandbox, url, hashlib.sha256(archive.read_bytes()).hexdigest(), check=False)
    assert result.returncode != 0, result.stderr[-2000:]
    assert re.search(r"rocm_toolkit_archive: extract_archive: refused archive\.tar\.gz: "
                     r".*(outside the archive's folder|absolute path)", result.stderr)
    assert f"(from {url}; fix the tarball)" in result.stderr  # no strip_prefix was given: none is blamed
    assert not Path("/tmp/escaped").exists()


def test_therock_tarball_answers_xla_names(in_sandbox, therock_server):
    """The TheRock-layout fixture (HIP only) under XLA's names: the XLA build_defs test passes,
    and a library it lacks fails naming the package."""

    flags = ["--config=rocm", f"--repo_env=THEROCK_URL={therock_server['url']}", f"--repo_env=THEROCK_SHA256={therock_server['sha256']}",
             "--repo_env=TF_ROCM_AMDGPU_TARGETS=gfx942"]
    assert XLA_ROCM_TARGETS <= rocm_targets(in_sandbox, *flags)
    result = in_sandbox("bazel", "test", *flags, "--test_output=all", XLA_NAMES_TEST)
    out = result.stdout + result.stderr
    check_xla_names_output(out, 70204)
    # A toolkit extracted into the output base has no path at run time: XLA's default root,
    # not the output base's path (which would differ between checkouts and miss the remote cache).
    assert "TF_ROCM_TOOLKIT_PATH /opt/rocm\n" in out and "rocm_hipblaslt 0" in out, out[-3000:]
    lacking = in_sandbox("bazel", "build", *flags, "@local_config_rocm//rocm:hipsolver", check=False)
    assert lacking.returncode != 0 and "has no hipsolver" in lacking.stderr and "Install libhipsolver-dev" in lacking.stderr


def test_therock_tarball_builds_checks_family_and_is_cached(in_sandbox, therock_server, tmp_path):
    therock_build(in_sandbox, therock_server["url"], therock_server["sha256"])
    config = rocm_config(in_sandbox)
    assert (config["layout"], config["rocm_version"], config["rocm_version_number"]) == ("therock", "7.2.4a20261122", 70204)
    assert config["therock"]["dist_amdgpu_targets"] == ["gfx942", "gfx950"]
    # In the extension's own repository (the main one does not see it), whose folder's name ends with its name.
    toolkit = Path(config["rocm_toolkit_path"])
    assert toolkit.parent.name == "toolkit" and toolkit.parents[1].name.endswith("rocm_toolkit_archive"), toolkit
    outside = in_sandbox("bazel", "build", "--nobuild", "--config=rocm", f"--repo_env=THEROCK_URL={therock_server['url']}",
                         f"--repo_env=THEROCK_SHA256={therock_server['sha256']}", "--repo_env=TF_ROCM_AMDGPU_TARGETS=gfx942,gfx1100",
                         "//tests/rocm/hip:kernels", check=False)
    assert outside.returncode != 0 and "'gfx1100' is not covered by" in outside.stderr, outside.stderr[-3000:]
    assert "which has device code for gfx942 gfx950 only" in outside.stderr
    # A fresh output base downloads nothing: its URL answers 404, the repository cache (shared
    # by every output base) answers. A copy's own output base, not `clean --expunge` here, which
    # would make every later test of this checkout start cold. --nobuild: the fetch is the point.
    # (The shared server stays up for the other tests, whatever order they run in.)
    gone = f"{therock_server['base']}/gone/{Path(therock_server['url']).name}"
    with scratch_copy(tmp_path / "checkout") as copy:
        in_sandbox("bazel", "build", "--nobuild", "--config=rocm", f"--repo_env=THEROCK_URL={gone}",
                   f"--repo_env=THEROCK_SHA256={therock_server['sha256']}", "//tests/rocm:hip_runtime_link_test", cwd=copy)
        base = in_sandbox("bazel", "info", "output_base", cwd=copy).stdout.strip()
        assert base != in_sandbox("bazel", "info", "output_base").stdout.strip(), "a fresh output base of its own"
        assert rocm_config(in_sandbox, cwd=copy)["layout"] == "therock"
