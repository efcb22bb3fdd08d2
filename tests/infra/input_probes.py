"""The wrong inputs a new user types, each with what ci_build must answer (issue 56): the table
tests/unit/test_input_probes.py runs and bench/bench_input_probes.py times, and how to run one
as the user does (a fresh clone, an empty cache, HOME and TMPDIR, a plain PATH)."""

from __future__ import annotations

import dataclasses
import gzip
import os
import resource
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests.infra.archives import entries_of, tar_of

TARBALL = "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
SHA = "ab" * 32
ROCM_ENTRIES = {"therock/share/therock/therock_manifest.json": b"{}", "therock/lib/libamdhip64.so.7": b"elf"}
AS_ROOT = os.geteuid() == 0


@dataclasses.dataclass(frozen=True)
class Probe:
    """One wrong input: the words after build/ci_build, the environment it adds, and what the one
    line must say ({tmp}: the probe's folder of prepared files). `path` replaces the default PATH
    of a plain machine (the names of programs ci_build may find there)."""
    argv: tuple[str, ...]
    says: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    path: tuple[str, ...] | None = None
    exit: int = 2
    skip_as_root: str = ""  # why root cannot be refused this way (it may write and read anything)


def probe(*argv: str, says: tuple[str, ...] | str, env: dict[str, str] | None = None, **kwargs) -> Probe:
    return Probe(tuple(argv), (says,) if isinstance(says, str) else says, tuple((env or {}).items()), **kwargs)


EX = "--sources=examples"
XLA = "--xla-source-dir={tmp}/xla"  # an XLA checkout as far as ci_build looks: full mode
OFFLINE_FULL = (XLA, "--registry={tmp}/bcr")  # full mode that asks no network
DEBOOTSTRAP = "root builds the sandbox with debootstrap, which it installs itself"
# A machine with Python and git and nothing else of the build's (no mmdebstrap, no Bazel), and
# one that has uidmap but not mmdebstrap.
BARE = ("python3", "git")
NO_MMDEBSTRAP = (*BARE, "newuidmap", "newgidmap")

PROBES = {
    # -- the command line itself: one line and --help, not argparse's usage
    "unknown command": probe("dist_wheel", says=("invalid choice: 'dist_wheel'", "did you mean dist_wheels?", "--help")),
    "no command": probe(EX, says=("COMMAND", "--help")),
    "a JAX config misspelt": probe("--config=rocm_release_wheell", "dist_wheels",
                                   says=("--config=rocm_release_wheell", "nearest: rocm_release_wheel", "user.bazelrc")),
    "a JAX config": probe("dist_wheels", "--config", "rocm", says=("--config=rocm is one of rocm/rocm.bazelrc's",
                                                                   "takes no --config", "user.bazelrc")),
    "a rocm set misspelt": probe("doctor", "--rocm=tiny", says=("--rocm", "'tiny'", "minimal", "--help")),
    "an rbe mode misspelt": probe(EX, "--rbe=remot", "dist_wheels", says=("--rbe", "'remot'", "did you mean remote?")),
    "a post release not a number": probe(EX, "dist_wheels", "--wheel-post-release=x", says=("--wheel-post-release", "'x'")),
    "a wheel kind misspelt": probe(EX, "dist_wheels", "--wheel-kind=weekly", says=("--wheel-kind", "'weekly'", "nightly")),
    "an option of another command": probe(EX, "native", "--wheel-kind=dev", says=("--wheel-kind=dev", "dist_wheels")),
    # -- JAX's build variables: refused, naming the flag (wheel/README.md)
    "ML_WHEEL_TYPE": probe(EX, "dist_wheels", env={"ML_WHEEL_TYPE": "nightly-ish"},
                           says=("ML_WHEEL_TYPE=nightly-ish", "--wheel-kind")),
    "ML_WHEEL_BUILD_DATE": probe(EX, "dist_wheels", env={"ML_WHEEL_TYPE": "nightly", "ML_WHEEL_BUILD_DATE": "20261399"},
                                 says=("ML_WHEEL_TYPE=nightly", "ML_WHEEL_BUILD_DATE", "--wheel-kind")),
    "ML_WHEEL_VERSION_SUFFIX": probe(EX, "dist_wheels", env={"ML_WHEEL_VERSION_SUFFIX": "rc 1"},
                                     says=("ML_WHEEL_VERSION_SUFFIX=rc 1", "--repo_env=ML_WHEEL_VERSION_SUFFIX")),
    "ML_WHEEL_GIT_HASH": probe(EX, "dist_wheels", env={"ML_WHEEL_GIT_HASH": "abc1234"},
                               says=("ML_WHEEL_GIT_HASH=abc1234", "--wheel-commit")),
    # -- full mode's paths, and the flags a mode does not read
    "a bazelrc unreadable": probe(*OFFLINE_FULL, "--bazelrc={tmp}/unreadable", "native",
                                  says=("--bazelrc={tmp}/unreadable", "not readable"),
                                  skip_as_root="root reads a file of mode 000"),
    "a bazelrc not there": probe(*OFFLINE_FULL, "--bazelrc={tmp}/nope", "native",
                                 says=("--bazelrc={tmp}/nope", "does not exist", "tests/infra/real_trees.py")),
    "a bazelrc a folder": probe(*OFFLINE_FULL, "--bazelrc={tmp}/empty", "native", says=("--bazelrc={tmp}/empty", "folder")),
    "a bazelrc in kernels mode": probe(EX, "--bazelrc={tmp}/file", "dist_wheels",
                                       says=("--bazelrc={tmp}/file", "full mode", "user.bazelrc")),
    "a registry and distdir in kernels mode": probe(EX, "--registry=/nonexistent", "--distdir=/nonexistent", "dist_wheels",
                                                    says=("--registry=/nonexistent", "full mode", "drop")),
    "a distdir in kernels mode": probe(EX, "--distdir={tmp}/empty", "native", says=("--distdir={tmp}/empty", "full mode")),
    "a registry that is a folder of nothing": probe(XLA, "--registry={tmp}/empty", "native",
                                                    says=("--registry={tmp}/empty", "modules/")),
    "a registry not there": probe(XLA, "--registry=/nonexistent", "native", says=("--registry=/nonexistent", "does not exist")),
    "a distdir not there": probe(*OFFLINE_FULL, "--distdir=/nonexistent", "native",
                                 says=("--distdir=/nonexistent", "does not exist")),
    "a distdir a file": probe(*OFFLINE_FULL, "--distdir={tmp}/file", "native", says=("--distdir={tmp}/file", "not a folder")),
    "a registry URL misspelt": probe(XLA, "--registry=htp://example.com/bcr", "native",
                                     says=("--registry=htp://example.com/bcr", "https://")),
    # -- host mode without the host's Bazel: said before any download
    "host mode without Bazel": probe(EX, "--host", "dist_wheels", path=BARE, says=("--host", "Bazel", "BAZEL")),
    "host mode without Bazel, dry run": probe(EX, "--host", "--dry-run", "dist_wheels", path=BARE,
                                              says=("--host", "Bazel", "BAZEL")),
    "JAX_ROCM_HOST without Bazel": probe(EX, "native", env={"JAX_ROCM_HOST": "1"}, path=BARE,
                                         says=("JAX_ROCM_HOST=1", "Bazel")),
    "host mode Bazel not there": probe(EX, "--host", "native", env={"BAZEL": "/nonexistent/bazel"},
                                       says=("BAZEL=/nonexistent/bazel",)),
    # -- the sandbox's prerequisites: said before anything is made
    "doctor without mmdebstrap": probe("doctor", path=NO_MMDEBSTRAP, says=("mmdebstrap", "--host"), skip_as_root=DEBOOTSTRAP),
    "doctor without mmdebstrap, dry run": probe("doctor", "--dry-run", path=NO_MMDEBSTRAP, says=("mmdebstrap", "--host"),
                                                skip_as_root=DEBOOTSTRAP),
    "dist_wheels without mmdebstrap": probe(EX, "dist_wheels", path=NO_MMDEBSTRAP, says=("mmdebstrap", "--host"),
                                            skip_as_root=DEBOOTSTRAP),
    "native without uidmap": probe(EX, "native", path=BARE, says=("newuidmap", "uidmap", "--host"), skip_as_root=DEBOOTSTRAP),
    # -- manylinux policies
    "a policy no glibc is": probe(EX, "dist_wheels", "--manylinux=manylinux_2_82",
                                  says=("--manylinux=manylinux_2_82", "manylinux_2_28")),
    "a legacy policy name": probe(EX, "dist_wheels", "--manylinux=manylinux2014", says=("--manylinux=manylinux2014",)),
    "a musl policy": probe(EX, "dist_wheels", "--manylinux=musllinux_1_2", says=("--manylinux=musllinux_1_2",)),
    # -- preflight's XLA, by flag or by upstream CI's variable
    "preflight without an XLA": probe("preflight", says=("which XLA", "--xla-source-dir", "JAXCI_XLA_GIT_DIR")),
    "JAXCI_XLA_GIT_DIR not there": probe("preflight", "--names-only", env={"JAXCI_XLA_GIT_DIR": "/nonexistent/xla"},
                                         says=("JAXCI_XLA_GIT_DIR=/nonexistent/xla", "does not exist")),
    "JAXCI_XLA_GIT_DIR a file": probe("preflight", "--names-only", env={"JAXCI_XLA_GIT_DIR": "{tmp}/file"},
                                      says=("JAXCI_XLA_GIT_DIR={tmp}/file",)),
    "JAXCI_XLA_GIT_DIR no XLA": probe("preflight", "--names-only", env={"JAXCI_XLA_GIT_DIR": "{tmp}/empty"},
                                      says=("JAXCI_XLA_GIT_DIR={tmp}/empty", "xla/")),
    "an XLA source that is no checkout": probe("--xla-source-dir={tmp}/empty", "preflight", "--names-only",
                                               says=("--xla-source-dir={tmp}/empty", "xla/")),
    "an XLA source a file": probe("--xla-source-dir={tmp}/file", "native", says=("--xla-source-dir={tmp}/file",)),
    # -- JAX trees: what they claim
    "a JAX tree that is empty": probe(EX, "--jax-source-dir={tmp}/empty", "native",
                                      says=("--jax-source-dir={tmp}/empty", "jax/version.py")),
    "a JAX tree too old": probe(EX, "--jax-source-dir={tmp}/jax-0.4.1", "dist_wheels",
                                says=("--jax-source-dir={tmp}/jax-0.4.1", "0.4.1", "0.10.2")),
    "a JAX tree too new": probe(EX, "--jax-source-dir={tmp}/jax-9.0.0", "dist_wheels",
                                says=("--jax-source-dir={tmp}/jax-9.0.0", "9.0.0")),
    "a JAX tree not there": probe(EX, "--jax-source-dir={tmp}/nope", "dist_wheels", says=("--jax-source-dir={tmp}/nope",)),
    "a JAX tree a plain file": probe(EX, "--jax-source-dir={tmp}/file", "native", says=("--jax-source-dir={tmp}/file",)),
    "a JAX archive truncated": probe(EX, "--jax-source-dir={tmp}/jax.tar.gz", "dist_wheels",
                                     says=("--jax-source-dir={tmp}/jax.tar.gz", "not a complete")),
    "a JAX archive of something else": probe(EX, "--jax-source-dir={tmp}/photos.tar.gz", "native",
                                             says=("--jax-source-dir={tmp}/photos.tar.gz", "jax/version.py")),
    # -- XLA's table of ROCm redistributions
    "ROCM_DISTRO_VERSION unknown to the pinned XLA": probe("dist_wheels", env={"ROCM_DISTRO_VERSION": "banana"},
                                                           says=("ROCM_DISTRO_VERSION=banana", "rocm_redist.bzl",
                                                                 "rocm_7.10.0_gfx94X")),
    "ROCM_DISTRO_VERSION with the stand-in": probe(EX, "dist_wheels", env={"ROCM_DISTRO_VERSION": "banana"},
                                                   says=("ROCM_DISTRO_VERSION=banana", "--rocm-path")),
    "ROCM_DISTRO_URL without its hash": probe(EX, "dist_wheels", env={"ROCM_DISTRO_URL": "https://example.com/r.tar.gz"},
                                              says=("ROCM_DISTRO_URL", "ROCM_DISTRO_HASH")),
    # -- where the wheels go
    "output to the root folder": probe(EX, "dist_wheels", "--output-dir=/", says=("--output-dir=/", "not writable"),
                                       skip_as_root="root may write into /"),
    "output to a file": probe(EX, "dist_wheels", "--output-dir={tmp}/file", says=("--output-dir={tmp}/file", "folder")),
    "output under a file": probe(EX, "dist_wheels", "--output-dir={tmp}/file/dist", says=("--output-dir={tmp}/file/dist",)),
    "a cache that cannot be written": probe(EX, "dist_wheels", env={"XDG_CACHE_HOME": "{tmp}/file"},
                                            says=("XDG_CACHE_HOME",)),
    # -- Pythons
    "a Python the sandbox lacks": probe(EX, "dist_wheels", "--python-versions=3.12",
                                        says=("--python-versions=3.12", "3.13", "pyenv")),
    "a Python no JAX builds for": probe("dist_wheels", "--python-versions=3.99", says=("--python-versions=3.99", "0.10.2")),
    "a Python the pinned JAX does not build for": probe("dist_wheels", "--python-versions=3.15",
                                                        says=("--python-versions=3.15", "0.10.2")),
    "a Python misspelt": probe(EX, "dist_wheels", "--python-versions=3.x", says=("--python-versions", "3.x")),
    "a Python repeated": probe(EX, "dist_wheels", "--python-versions=3.13,3.13", says=("--python-versions=3.13,3.13", "once")),
    "no Python": probe(EX, "dist_wheels", "--python-versions=", says=("--python-versions=", "empty")),
    # -- the wheels' version
    "a wheel date that is none": probe(EX, "dist_wheels", "--wheel-kind=nightly", "--wheel-date=20261345",
                                       says=("--wheel-date=20261345", "YYYYMMDD")),
    "a date for a release": probe(EX, "dist_wheels", "--wheel-kind=release", "--allow-stand-ins", "--wheel-date=20261201",
                                  says=("--wheel-date=20261201", "--wheel-kind=nightly")),
    "a wheel version that is none": probe(EX, "dist_wheels", "--wheel-version=notaversion",
                                          says=("--wheel-version=notaversion", "X.Y.Z")),
    "a negative post release": probe(EX, "dist_wheels", "--wheel-post-release=-1", says=("--wheel-post-release=-1", "N >= 1")),
    "a commit for a nightly": probe(EX, "dist_wheels", "--wheel-kind=nightly", "--wheel-commit=abcdef0",
                                    says=("--wheel-commit=abcdef0", "--wheel-kind=dev")),
    "a commit that is none": probe(EX, "dist_wheels", "--wheel-commit=xyz", says=("--wheel-commit=xyz", "git rev-parse")),
    "a release of stand-ins": probe(EX, "dist_wheels", "--wheel-kind=release", says=("--wheel-kind=release", "--allow-stand-ins")),
    # -- GPU targets
    "a target no clang knows": probe(EX, "dist_wheels", "--amdgpu-targets=gfx9999", says=("--amdgpu-targets", "gfx9999")),
    "a target misspelt": probe(EX, "dist_wheels", "--amdgpu-targets=gfx94", says=("--amdgpu-targets", "gfx94", "did you mean")),
    "a target feature misspelt": probe(EX, "dist_wheels", "--amdgpu-targets=gfx942:xnack",
                                       says=("--amdgpu-targets", "xnack", "xnack+")),
    "no target": probe(EX, "dist_wheels", "--amdgpu-targets=", says=("--amdgpu-targets=", "gfx942")),
    # -- ROCm toolkits
    "a ROCm path not there": probe(EX, "--rocm-path={tmp}/rocm", "native", says=("--rocm-path={tmp}/rocm", "not a directory")),
    "a ROCm path a file": probe(EX, "--rocm-path={tmp}/file", "native", says=("--rocm-path={tmp}/file",)),
    "ROCM_PATH not there": probe(EX, "dist_wheels", env={"ROCM_PATH": "{tmp}/opt/rocm"},
                                 says=("ROCM_PATH={tmp}/opt/rocm", "environment")),
    "two toolkits": probe(EX, "--rocm-path=/usr", "--therock-path={tmp}/empty", "dist_wheels",
                          says=("--rocm-path=/usr", "--therock-path={tmp}/empty", "give one")),
    "a ROCm version that is none": probe(EX, "dist_wheels", "--rocm-version=banana", says=("--rocm-version=banana", "7.2.4")),
    # -- TheRock tarballs
    "a download without its sha256": probe(EX, "dist_wheels", f"--therock-path=https://example.com/{TARBALL}",
                                           says=(f"--therock-path=https://example.com/{TARBALL}", "--therock-sha256")),
    "a TheRock path not there": probe(EX, "dist_wheels", "--therock-path={tmp}/nope", says=("--therock-path={tmp}/nope",)),
    "a file URL not there": probe(EX, "dist_wheels", f"--therock-path=file://{{tmp}}/{TARBALL}",
                                  says=(f"--therock-path=file://{{tmp}}/{TARBALL}", "not a file")),
    "a sha256 with nothing to check": probe(EX, "dist_wheels", f"--therock-sha256={SHA}", says=(f"--therock-sha256={SHA}",)),
    "a sha256 that is none": probe(EX, "dist_wheels", "--therock-sha256=xyz", says=("--therock-sha256=xyz", "sha256sum")),
    "targets outside the family": probe(EX, "dist_wheels", f"--therock-path=https://example.com/{TARBALL}",
                                        f"--therock-sha256={SHA}", "--amdgpu-targets=gfx950",
                                        says=("--amdgpu-targets=gfx950", "gfx942")),
    "a release the name contradicts": probe(EX, "dist_wheels", f"--therock-path=https://example.com/{TARBALL}",
                                            f"--therock-sha256={SHA}", "--rocm-version=7.2.4",
                                            says=("--rocm-version=7.2.4", TARBALL)),
    "a tarball of random bytes": probe(EX, "dist_wheels", "--therock-path={tmp}/random/" + TARBALL,
                                       says=("--therock-path={tmp}/random/" + TARBALL, "not a complete")),
    "a tarball slipping out": probe(EX, "dist_wheels", "--therock-path={tmp}/dotdot/" + TARBALL,
                                    says=("--therock-path={tmp}/dotdot/" + TARBALL, "../../escaped")),
    "a tarball with an absolute path": probe(EX, "dist_wheels", "--therock-path={tmp}/absolute/" + TARBALL,
                                             says=("--therock-path={tmp}/absolute/" + TARBALL, "absolute")),
    "a tarball linking out": probe(EX, "dist_wheels", "--therock-path={tmp}/symlink/" + TARBALL,
                                   says=("--therock-path={tmp}/symlink/" + TARBALL, "escape")),
    "a tarball of something else": probe(EX, "dist_wheels", "--therock-path={tmp}/photos/" + TARBALL,
                                         says=("--therock-path={tmp}/photos/" + TARBALL, "no ROCm toolkit")),
    "a tarball with a wrong sha256": probe(EX, "dist_wheels", "--therock-path={tmp}/good/" + TARBALL,
                                           f"--therock-sha256={SHA}", says=(f"--therock-sha256={SHA}", "is not the sha256")),
    # -- modes
    "full mode of the stand-in": probe(EX, "--mode=full", "dist_wheels", says=("--mode=full", "--xla-source-dir")),
    "kernels mode of a real XLA": probe("--mode=kernels", XLA, "native", says=("--mode=kernels", "--sources=examples")),
    "full mode in host mode": probe(XLA, "--host", "dist_wheels", says=("--host", "full mode")),
}


def fill(text: str, tmp: Path) -> str:
    return text.replace("{tmp}", str(tmp))


def prepared_files(tmp: Path) -> None:
    """The files the probes name under {tmp}."""
    (tmp / "file").write_text("not a folder\n")
    (tmp / "empty").mkdir()
    (tmp / "unreadable").write_text("build --config=x\n")
    (tmp / "unreadable").chmod(0)
    (tmp / "xla" / "xla").mkdir(parents=True)
    (tmp / "bcr" / "modules").mkdir(parents=True)
    for version in ("0.4.1", "9.0.0"):
        (tmp / f"jax-{version}" / "jax").mkdir(parents=True)
        (tmp / f"jax-{version}" / "jax" / "version.py").write_text(f'_version: str = "{version}"\n')
    (tmp / "jax.tar.gz").write_bytes(gzip.compress(os.urandom(100_000))[:500])
    tar_of(tmp / "photos.tar.gz", entries_of({"photos/cat.jpg": b"\xff\xd8"}))
    tarballs = {"dotdot": {**ROCM_ENTRIES, "therock/../../escaped": b"!"},
                "absolute": {**ROCM_ENTRIES, "/tmp/escaped": b"!"},
                "symlink": {**ROCM_ENTRIES, "therock/lib/escape": "../../../../etc/passwd"},
                "photos": {"photos/cat.jpg": b"\xff\xd8"},
                "good": ROCM_ENTRIES}
    for kind, entries in tarballs.items():
        (tmp / kind).mkdir()
        tar_of(tmp / kind / TARBALL, entries_of(entries))
    (tmp / "random").mkdir()
    (tmp / "random" / TARBALL).write_bytes(os.urandom(4096))


def snapshot(*folders: Path) -> dict[str, tuple[int, int]]:
    """Every entry under the folders, a file with its size and modification time (links not
    followed); Python's own bytecode caches left out."""
    seen = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in dirnames + filenames:
                path = Path(dirpath, name)
                st = path.lstat()
                seen[str(path)] = (st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else (0, 0)
    return seen


def bare_path(folder: Path, programs: tuple[str, ...]) -> str:
    """A PATH of one folder holding links to `programs` only."""
    folder.mkdir(exist_ok=True)
    for program in programs:
        if not (folder / program).exists():
            (folder / program).symlink_to(shutil.which(program, path="/usr/bin:/bin"))
    return str(folder)


@dataclasses.dataclass(frozen=True)
class Run:
    result: subprocess.CompletedProcess
    wall: float  # seconds
    cpu: float  # seconds of CPU of ci_build and what it started
    written: dict[str, list[str]]  # what it wrote in its HOME, cache and TMPDIR (each empty before)


def run_probe(case: Probe, clone: Path, tmp: Path, files: Path) -> Run:
    """ci_build as the user runs it in `clone`, {tmp} being `files`, with a HOME, cache and TMPDIR
    of its own under `tmp`."""
    home, cache, scratch = tmp / "home", tmp / "cache", tmp / "scratch"
    for folder in (home, cache, scratch):
        folder.mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(cache), "TMPDIR": str(scratch), "LANG": "C.UTF-8",
           "PATH": bare_path(tmp / "bin", case.path) if case.path is not None else "/usr/local/bin:/usr/bin:/bin"}
    env.update({name: fill(value, files) for name, value in case.env})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "build/ci_build", *(fill(a, files) for a in case.argv)], cwd=clone, env=env,
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    written = {f.name: sorted(p.name for p in f.iterdir()) for f in (home, cache, scratch) if any(f.iterdir())}
    return Run(result, wall, cpu, written)


def machine_is_idle() -> bool:
    return os.getloadavg()[0] < 0.5 * (os.cpu_count() or 1)
