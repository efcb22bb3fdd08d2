"""What a command inside the root sees: its mounts and its environment.

The checkout (and /tmp, the current directory, the folder an ambient ROCM_PATH names) at
their own paths,
Bazel's output root, distdir and action cache from the cache, the host's CA bundle and pip
settings, a generated /etc/bazel.bazelrc that resolves modules offline, and a
bazel launcher that runs a workspace's tools/bazel as bazelisk does.
"""

from __future__ import annotations

import configparser
import contextlib
import hashlib
import os
from pathlib import Path
from typing import Iterable, Sequence

from .cache import Paths
from .namespaces import Bind

CHECKOUT = Path(__file__).resolve().parent.parent
PASS_ENV = (
    "TERM", "COLORTERM", "NO_COLOR", "CI", "TZ", "SOURCE_DATE_EPOCH",
    "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
)
PASS_ENV_PREFIXES = ("PIP_", "JAX_", "JAXCI_", "ROCM_", "THEROCK_", "TF_", "XLA_", "HIP_", "ROCR_", "HSA_", "PYTEST_")
_PIP_PATH_KEYS = ("find-links", "extra-index-url", "index-url", "constraint", "requirement", "cert", "client-cert")


def host_ca_bundle() -> Path | None:
    for candidate in (os.environ.get("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def pip_config_files(env: dict[str, str]) -> list[Path]:
    candidates = [env.get("PIP_CONFIG_FILE", "")]
    for d in env.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":"):
        candidates.append(f"{d}/pip/pip.conf")
    candidates += ["/etc/pip.conf", str(Path.home() / ".config/pip/pip.conf"), str(Path.home() / ".pip/pip.conf")]
    return [Path(c) for c in dict.fromkeys(candidates) if c and Path(c).is_file()]


def local_paths_in(value: str) -> list[Path]:
    """Absolute local paths named by a pip setting (paths and file:// URLs)."""
    out = []
    for word in value.split():
        if word.startswith("file://"):
            word = word[len("file://"):]
        if word.startswith("/") and Path(word).exists():
            path = Path(word.rstrip("/"))
            # A local index's pages (.../simple/<name>/) may link to files beside
            # simple/ (../../files/x.whl): bind the index's whole folder.
            out.append(path.parent if path.name == "simple" else path)
    return out


def pip_binds(env: dict[str, str]) -> list[Bind]:
    """The host's pip settings, and the local folders they name, at the same paths."""
    paths: list[Path] = []
    for conf in pip_config_files(env):
        paths.append(conf)
        parser = configparser.RawConfigParser()
        with contextlib.suppress(configparser.Error, OSError):
            parser.read(conf)
            for section in parser.sections():
                for key, value in parser.items(section):
                    if key in _PIP_PATH_KEYS:
                        paths += local_paths_in(value)
    for key, value in env.items():
        if key.startswith("PIP_"):
            paths += local_paths_in(value)
    return [Bind(p, str(p), readonly=True) for p in dict.fromkeys(paths)]


def sandbox_env(extra: Iterable[str] = ()) -> dict[str, str]:
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/root",
        "USER": "root",
        "LANG": "C.UTF-8",
        "JAX_ROCM_SANDBOX": "1",
    }
    for key, value in os.environ.items():
        if (key in PASS_ENV or key.startswith(PASS_ENV_PREFIXES)) and key != "JAX_ROCM_SANDBOX_SESSION":
            env[key] = value
    events = events_dir(env)
    if events is not None:
        env[EVENTS_ENV] = str(events)  # absolute: Bazel runs the launcher from many folders
    for item in extra:
        name, sep, value = item.partition("=")
        if sep:
            env[name] = value
        elif name in os.environ:
            env[name] = os.environ[name]
    return env


def standard_binds(paths: Paths, disk_cache: Path | None = None) -> list[Bind]:
    """What every command inside sees; `disk_cache`: the action cache its Bazel shares (None: none)."""
    paths.distdir.mkdir(parents=True, exist_ok=True)
    binds = [
        bazel_rc_bind(paths, CHECKOUT, disk_cache),
        bazel_shared_rc_bind(paths, disk_cache),
        bazel_launcher_bind(paths),
        Bind(Path("/dev"), "/dev", recursive=True),
        Bind(Path("/sys"), "/sys", readonly=True, recursive=True),
        Bind(Path("/tmp"), "/tmp"),
        Bind(paths.bazel_user_root, str(paths.bazel_user_root)),
        Bind(paths.distdir, str(paths.distdir), readonly=True),
    ]
    if disk_cache is not None:
        disk_cache.mkdir(parents=True, exist_ok=True)
        binds.append(Bind(disk_cache, str(disk_cache)))
    if Path("/etc/resolv.conf").exists():
        binds.append(Bind(Path("/etc/resolv.conf").resolve(), "/etc/resolv.conf", readonly=True))
    return binds


# The root's own system folders: a host path under one of them is never mounted over the
# root's (ROCM_PATH=/usr means the sandbox's Debian ROCm, not the host's /usr).
SANDBOX_OWN_DIRS = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/var/lib", "/proc", "/sys", "/dev", "/run")


def is_sandbox_own(path: Path) -> bool:
    return path == Path("/") or any(path == Path(d) or Path(d) in path.parents for d in SANDBOX_OWN_DIRS)


def rocm_path_binds(env: dict[str, str]) -> list[Path]:
    """The ROCm toolkit an ambient ROCM_PATH names (passed through, see PASS_ENV_PREFIXES),
    when it exists on the host and is not one of the root's own folders: the variable is
    only useful inside with the folder it names."""
    value = env.get("ROCM_PATH", "").strip()
    if not value.startswith("/"):
        return []
    path = Path(value)
    return [path] if path.is_dir() and not is_sandbox_own(path) else []


EVENTS_ENV = "JAX_ROCM_BAZEL_EVENTS"


def events_dir(env: dict[str, str]) -> Path | None:
    """The folder JAX_ROCM_BAZEL_EVENTS names (absolute; made on the host), where the launcher
    has each build-like Bazel command write its build events; None when unset."""
    value = env.get(EVENTS_ENV, "").strip()
    if not value:
        return None
    path = Path(os.path.abspath(value))
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_binds(paths: Paths, extra: Sequence[Path], cwd: Path, disk_cache: Path | None = None) -> list[Bind]:
    binds = standard_binds(paths, disk_cache)
    ca = host_ca_bundle()
    if ca is not None:
        binds.append(Bind(ca, "/etc/ssl/certs/ca-certificates.crt", readonly=True))
    binds += pip_binds(dict(os.environ))
    mounted = [CHECKOUT]
    if not any(cwd == m or m in cwd.parents for m in mounted + [Path("/tmp")]) and cwd != Path("/"):
        mounted.append(cwd)
    binds += [Bind(p, str(p)) for p in dict.fromkeys(mounted)]
    mounted.append(Path("/tmp"))  # a standard bind: a folder below it is there already
    # Extra folders at the path given (a symlink such as /opt/rocm -> /opt/rocm-7.2.4 stays
    # /opt/rocm inside) and, when that is a link, also at the path it resolves to.
    targets = {str(b.target) for b in binds}
    events = events_dir(dict(os.environ))
    for p in [*extra, *rocm_path_binds(dict(os.environ)), *([events] if events else [])]:
        given, real = Path(os.path.abspath(p)), p.resolve()
        for target in dict.fromkeys([given, real]):
            if str(target) not in targets and not any(m in target.parents for m in mounted):
                binds.append(Bind(real, str(target)))
                targets.add(str(target))
    return binds


# Where Bazel makes its per-action sandboxes: a tmpfs private to each `run` (Enter.tmpfs), gone
# with it. Every compile of the manylinux toolchain has about 4,500 inputs (Zig's headers),
# each a symlink in the action's sandbox: on tmpfs instead of the output base's disk, the
# cold main job's Bazel phase took 122 s instead of 164 s (docs/measurements.md).
BAZEL_SANDBOX_TMPFS = "/run/jax-rocm-build/bazel-sandbox"
# The Bazel server's java.io.tmpdir, also private to each `run`: the server unpacks its JNI
# library into a new folder there at every start and, killed with its run, never removes it
# (1,858 such folders, 1.8 GB, gathered in the host's /tmp over a day of test runs).
BAZEL_JVM_TMPFS = "/run/jax-rocm-build/bazel-jvm-tmp"
RUN_TMPFS = (BAZEL_SANDBOX_TMPFS, BAZEL_JVM_TMPFS)


# Inside the root: the part of /etc/bazel.bazelrc that every workspace shares, alone, for the
# Bazel commands that must not read the rest (full mode: `--nosystem_rc
# --bazelrc=SHARED_BAZELRC --bazelrc=debian.bazelrc`, build/ci_build_cli/full.py).
SHARED_BAZELRC = "/etc/bazel.shared.bazelrc"


def bazel_shared_rc(paths: Paths, disk_cache: Path | None = None) -> str:
    """What every workspace inside the sandbox shares, whatever its module graph: outputs
    outside the root, so that they survive a rebuild of it; the pinned archives' distdir; one
    action cache (`disk_cache`, action_cache.py) with every other workspace. A workspace's own
    .bazelrc, user.bazelrc or command line overrides any of it (`--disk_cache=`: none)."""
    shared = ""
    if disk_cache is not None:
        # Every workspace with this root: a second checkout or a test's copy takes the
        # results of the first instead of rebuilding them.
        shared = (f"build --disk_cache={disk_cache}\n"
                  # A hit writes every output, as running the action would: Bazel 7's default
                  # (top-level outputs only) left intermediate files such as the objects of
                  # --output_groups=+hip_objects missing from bazel-bin. --config=rocm_rbe
                  # sets its own (--remote_download_toplevel), which wins over this file.
                  "build --remote_download_all\n")
    return (
        "# Generated by sandbox for this `run`.\n"
        f"startup --output_user_root={paths.bazel_user_root}\n"
        # A server lives no longer than its `run`: the JIT's optimising tier never pays back
        # there. Without it a warm build of one target took 3.1-3.5 s instead of 4.6-5.1 s;
        # a cold main job took the same (126.9 s against 126.7 s).
        "startup --host_jvm_args=-XX:TieredStopAtLevel=1\n"
        # In a session (session.py) a server outlives its command, to serve the next one of its
        # workspace; one no command has used for two minutes leaves the memory to the others.
        "startup --max_idle_secs=120\n"
        f"startup --host_jvm_args=-Djava.io.tmpdir={BAZEL_JVM_TMPFS}\n"
        # Pinned archives that tools/prefetch.py fetched with pip: Bazel takes a file
        # from here when its name and sha256 match, without touching the network.
        f"common --distdir={paths.distdir}\n"
        f"build --sandbox_base={BAZEL_SANDBOX_TMPFS}\n"
        + shared
    )


def bazel_system_rc(paths: Paths, checkout: Path, disk_cache: Path | None = None) -> str:
    """The root's /etc/bazel.bazelrc (Debian's /etc/bazel/bazelrc try-imports it): the shared
    part (bazel_shared_rc), then this checkout's offline module stand-ins, so that every
    workspace inside the sandbox (this checkout, a test's scratch workspace, an XLA checkout)
    resolves modules offline."""
    offline = (checkout / "tools/offline/offline.bazelrc").read_text()
    return bazel_shared_rc(paths, disk_cache) + offline.replace("%workspace%", str(checkout))


def _generated_bind(paths: Paths, stem: str, text: str, target: str) -> Bind:
    path = paths.sandbox / "generated" / f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.bazelrc"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.rename(tmp, path)
    return Bind(path, target, readonly=True)


def bazel_shared_rc_bind(paths: Paths, disk_cache: Path | None = None) -> Bind:
    return _generated_bind(paths, "bazel-shared", bazel_shared_rc(paths, disk_cache), SHARED_BAZELRC)


def bazel_rc_bind(paths: Paths, checkout: Path, disk_cache: Path | None = None) -> Bind:
    return _generated_bind(paths, "bazel", bazel_system_rc(paths, checkout, disk_cache), "/etc/bazel.bazelrc")


# /usr/local/bin/bazel in the root: like bazelisk, run the workspace's tools/bazel if
# it has one (with BAZEL_REAL set), else Debian's Bazel. With JAX_ROCM_BAZEL_EVENTS=DIR, each
# build-like command also writes its build events to a file of its own in DIR
# (bench/action_counts.py sums what they say was executed and what came from a cache).
BAZEL_LAUNCHER = """\
#!/bin/sh
# Written by sandbox: runs <workspace>/tools/bazel when present, as bazelisk does.
if [ -n "$JAX_ROCM_BAZEL_EVENTS" ]; then
  mkdir -p "$JAX_ROCM_BAZEL_EVENTS"
  seen=
  for arg in "$@"; do
    shift
    set -- "$@" "$arg"
    if [ -z "$seen" ]; then
      case "$arg" in
        -*) ;;
        build|test|run|coverage) seen=1; set -- "$@" "--build_event_json_file=$JAX_ROCM_BAZEL_EVENTS/$(date +%s%N)-$$.json" ;;
        *) seen=1 ;;
      esac
    fi
  done
fi
dir=$PWD
while [ "$dir" != / ]; do
  for marker in MODULE.bazel REPO.bazel WORKSPACE WORKSPACE.bazel; do
    if [ -f "$dir/$marker" ]; then
      if [ -x "$dir/tools/bazel" ]; then BAZEL_REAL=/usr/bin/bazel exec "$dir/tools/bazel" "$@"; fi
      exec /usr/bin/bazel "$@"
    fi
  done
  dir=$(dirname "$dir")
done
exec /usr/bin/bazel "$@"
"""


def bazel_launcher_bind(paths: Paths) -> Bind:
    path = paths.sandbox / "generated" / f"bazel-launcher-{hashlib.sha256(BAZEL_LAUNCHER.encode()).hexdigest()[:12]}.sh"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(BAZEL_LAUNCHER)
        tmp.chmod(0o755)
        os.rename(tmp, path)
    return Bind(path, "/usr/local/bin/bazel", readonly=True)
