"""Host mode (`ci_build --host`, docs/host-mode.md) as a user meets it: on a machine that has
Bazel and ROCm, as an unprivileged user, the wheels it makes are the sandboxed build's, byte
for byte.

The machine is the sandbox root itself (Debian's Bazel 7.7.1, ROCm, Pythons 3.13 and 3.14),
entered by `python3 -m sandbox run` and left at once for an unprivileged user (setpriv) who owns a
copy of the checkout, a HOME, an XDG_CACHE_HOME and a Bazel output root of their own. Their
~/.bazelrc names that output root: the root's /etc/bazel.bazelrc names root's, which they
cannot write (it also names the offline overlay, which is what an air-gapped user adds
themselves). They run `python3 build/ci_build --host` with the command of
test_therock_release.py (a TheRock-layout tarball toolkit, the manylinux_2_28 toolchain, one
Python): the finder, the build, the audit and the tag all on "their" machine. The shared action
cache is off for that run (JAX_ROCM_ACTION_CACHE=off): every action of the host-mode build
executes, so its bytes are its own. The sandboxed build, the reference, takes what the shared
cache holds (results of earlier sandboxed builds of the same actions, in other checkouts).
This is also the default tier's proof that two checkouts build byte-identical wheels: the
host-mode build executes every action in a copy of the checkout, under another user and output
root (tests/e2e/test_wheels.py repeats it for JAX's own kernels where a real JAX tree is given).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from sandbox.cache import Paths
from tests.conftest import CHECKOUT, sandbox
from tests.infra.copy_workspace import copy_workspace
from tests.infra.therock_toolkit import MAKE_TARBALL, VERSION

# A cold host-mode build on two cores shared with other builds: well above pytest's 30 minutes.
# slow tier (docs/testing.md): a cold build as another user with an empty cache, on purpose.
pytestmark = [pytest.mark.bazel, pytest.mark.slow, pytest.mark.timeout(3600)]

USER = 65534  # nobody: no home, no groups, owns nothing but what the test gives it
PYTHON = "3.14"
TARBALL = f"therock-dist-linux-gfx94X-dcgpu-{VERSION}.tar.gz"


def build_command(tarball: Path, output: Path, *mode: str) -> list[str]:
    return ["build/ci_build", *mode, "--compiler=clang", f"--python-versions={PYTHON}", f"--rocm-version={VERSION}",
            f"--therock-path={tarball}", "dist_wheels", "--sources=examples", "--allow-stand-ins", f"--output-dir={output}"]


def digests(folder: Path) -> dict[str, str]:
    return {w.name: hashlib.sha256(w.read_bytes()).hexdigest() for w in sorted(folder.glob("*.whl"))}


@pytest.fixture(scope="module")
def work(sandbox_root):
    """A folder the unprivileged user can reach (pytest's tmp_path is under a root-only folder)."""
    folder = Path(tempfile.mkdtemp(prefix="host-mode-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    # Inside the sandbox: run without root, the user's files belong to a subordinate id, ours there.
    sandbox("run", "--", "rm", "-rf", str(folder), check=False)


@pytest.fixture(scope="module")
def tarball(work) -> Path:
    (work / "make.sh").write_text(MAKE_TARBALL)
    sandbox("run", "--", "sh", str(work / "make.sh"), str(work / TARBALL))
    return work / TARBALL


@pytest.fixture(scope="module")
def sandboxed(work, tarball) -> tuple[dict[str, str], float]:
    t0 = time.monotonic()
    result = subprocess.run([sys.executable, *build_command(tarball, work / "sandboxed")], cwd=CHECKOUT,
                            capture_output=True, text=True)
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    return digests(work / "sandboxed"), time.monotonic() - t0


@pytest.fixture(scope="module")
def host(work, tarball) -> tuple[dict[str, str], str, float]:
    """The same command with --host, run by the unprivileged user inside the sandbox root."""
    user = work / "user"
    checkout = copy_workspace(user / "checkout", CHECKOUT)
    home, cache, output_root = user / "home", user / "cache", user / "bazel"
    home.mkdir()
    (home / ".bazelrc").write_text(f"startup --output_user_root={output_root}\n")
    # The pinned PyPI archives the sandboxed build fetched (pip inside would fetch the same
    # files again: 190 MB); ci_build's prefetch checks their sha256 and finds them present.
    distdir = cache / "jax-rocm-build" / "distdir"
    distdir.mkdir(parents=True)
    for archive in Paths.default().distdir.iterdir():
        shutil.copyfile(archive, distdir / archive.name)
    sandbox("run", "--", "chown", "-R", f"{USER}:{USER}", str(user))  # as root there, with root or without
    command = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups",
               "env", f"HOME={home}", f"XDG_CACHE_HOME={cache}",
               "python3", *build_command(tarball, user / "dist", "--host")]
    t0 = time.monotonic()
    result = sandbox("run", "--", *command, cwd=checkout, check=False,
                     env=dict(os.environ, JAX_ROCM_ACTION_CACHE="off"))
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    return digests(user / "dist"), log, time.monotonic() - t0


def test_host_mode_runs_the_users_bazel_and_pythons_not_the_sandbox(host):
    _, log, _ = host
    commands = [line for line in log.splitlines() if line.startswith("+ ")]
    assert not [c for c in commands if "-m sandbox" in c], commands
    builds = [c for c in commands if " build " in c]
    assert builds and all(c.startswith("+ env BAZEL_REAL=/usr/local/bin/bazel ") for c in builds), builds
    assert f"--repo_env=JAX_ROCM_PYTHON=/usr/bin/python{PYTHON}" in builds[-1]
    # Every action of the wheel build executed on "their" machine: none from a cache.
    summaries = re.findall(r"^INFO: (\d+) processes(?:: (.*))?\.$", log, re.MULTILINE)
    nobuild, build, tag = summaries  # --rocm-version's --nobuild check, the build, the tagging build
    executed = {kind: int(n) for n, kind in (part.split(" ", 1) for part in build[1].split(", "))}
    assert not [kind for kind in executed if "cache" in kind or "remote" in kind], build
    assert sum(n for kind, n in executed.items() if kind != "internal") > 200, build  # 259 measured
    # The same checks as the sandboxed mode: the tarball's manifest before the compile, the audit, the tag.
    assert f"to check --rocm-version={VERSION} against its manifest" in log
    assert "auditing the manylinux policy" in log and "tagging the wheels manylinux_2_28_x86_64" in log


def test_host_mode_wheels_are_byte_identical_to_the_sandboxed_ones(sandboxed, host):
    reference, sandboxed_seconds = sandboxed
    wheels, _, host_seconds = host
    print(f"sandboxed build {sandboxed_seconds:.0f} s (shared action cache), host mode {host_seconds:.0f} s "
          f"(every action executed): {wheels}")
    assert [name.split("-")[0] for name in reference] == ["jax_rocm7_pjrt", "jax_rocm7_plugin"], reference
    assert all(f"+rocm{VERSION}-" in name and name.endswith("-manylinux_2_28_x86_64.whl") for name in reference), reference
    assert wheels == reference
