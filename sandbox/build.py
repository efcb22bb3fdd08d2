"""Building a sandbox root, atomically.

A new root is built (debootstrap as root, mmdebstrap without: then one apt transaction
per layer) or an existing one copied and extended, beside the current one, and swapped
in with one symlink rename: an interrupted `ensure` never leaves a root `run` would use.
Roots no running command uses are deleted afterwards. Without root, whatever touches a
root's files (bootstrapping, copying, deleting) runs in the sandbox's user namespace, where
the files of the root's other users are ours to handle.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Iterable, Sequence

from . import SandboxError, fmt_secs, log
from .cache import Paths, flock, nearest_existing, try_flock_exclusive
from .environment import host_ca_bundle, sandbox_env, standard_binds
from .layers import REQUIRED_FREE_GB, STAMP, SUITE, Layer, Plan, Stamp, layers_of, plan, root_id, stamp_for, wanted_layers
from .namespaces import NO_SANDBOX, Bind, Enter, enter, rootless, rootless_maps


def read_stamp(root: Path) -> Stamp | None:
    try:
        return Stamp.parse((root / STAMP).read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None


def current_root(paths: Paths) -> Path | None:
    try:
        target = os.readlink(paths.current)
    except OSError:
        return None
    return paths.sandbox / target


def missing_probes(root: Path, layers: Iterable[Layer]) -> list[str]:
    return [p for layer in layers for p in layer.probes if not (root / p).exists()]



class StepRunner:
    """Runs the numbered steps of one `ensure`, logging output to one file."""

    def __init__(self, paths: Paths, total: int):
        paths.logs.mkdir(parents=True, exist_ok=True)
        logs = sorted(paths.logs.glob("ensure-*.log"))
        for old in logs[:-9]:
            old.unlink(missing_ok=True)
        self.log_path = paths.logs / time.strftime("ensure-%Y%m%d-%H%M%S.log")
        self.log_file = open(self.log_path, "ab", buffering=0)
        self.total = total
        self.n = 0
        self.started = time.monotonic()

    def step(self, title: str, fn: Callable[[], None]) -> None:
        self.n += 1
        label = f"[{self.n}/{self.total}] {title}"
        log(f"{label} ...")
        self.log_file.write(f"\n===== {label}\n".encode())
        t0 = time.monotonic()
        done = threading.Event()

        def heartbeat() -> None:
            while not done.wait(30):
                log(f"{label}: still running ({fmt_secs(time.monotonic() - t0)}; log: {self.log_path})")

        thread = threading.Thread(target=heartbeat, daemon=True)
        thread.start()
        try:
            fn()
        finally:
            done.set()
        log(f"{label}: done in {fmt_secs(time.monotonic() - t0)}")

    def command(self, spec: Enter, what: str) -> None:
        rc = enter(dataclasses.replace(spec, stdout=self.log_file.fileno(), stderr=self.log_file.fileno()),
                   raise_on_interrupt=True)
        if rc != 0:
            raise SandboxError(self.explain_failure(what, rc))

    def explain_failure(self, what: str, rc: int) -> str:
        try:
            tail = self.log_path.read_text(errors="replace").splitlines()[-200:]
        except OSError:
            tail = []
        text = "\n".join(tail)
        if "No space left on device" in text:
            return (f"disk full while {what}: free space under {self.log_path.parents[2]} "
                    "(or point XDG_CACHE_HOME at a larger disk), then re-run `python3 -m sandbox ensure`")
        if re.search(r"(Could not resolve|Failed to fetch|Temporary failure resolving|Connection (refused|timed out))", text):
            return (f"network failure while {what}: the Debian mirror could not be reached; "
                    f"check connectivity/proxy and re-run (log: {self.log_path})")
        shown = "\n".join("    " + line for line in tail[-15:])
        return f"{what} failed (exit {rc}); last lines of {self.log_path}:\n{shown}"


def check_mirror(mirror: str) -> None:
    url = f"{mirror.rstrip('/')}/dists/{SUITE}/InRelease"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=20):
            pass
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise SandboxError(
            f"cannot reach the Debian mirror {mirror} ({reason}); the sandbox installs its packages from it: "
            "check the network or proxy, or pass --mirror=URL (or set JAX_ROCM_SANDBOX_MIRROR)"
        ) from None


def check_free_space(paths: Paths, profile: str) -> None:
    """The disk under the cache (its nearest existing folder: a check writes nothing) has room for a root of `profile`."""
    need = REQUIRED_FREE_GB[profile]
    free = shutil.disk_usage(nearest_existing(paths.cache)).free / 1e9
    if free < need:
        raise SandboxError(
            f"disk full: the '{profile}' sandbox needs about {need} GB free under {paths.cache}, {free:.1f} GB is; "
            "free space or point XDG_CACHE_HOME at a larger disk"
        )


def ensure_debootstrap() -> str:
    found = shutil.which("debootstrap") or (Path("/usr/sbin/debootstrap").exists() and "/usr/sbin/debootstrap")
    if found:
        return str(found)
    log("installing debootstrap on the host (apt-get install debootstrap)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "debootstrap"]
    for cmd in (install, ["apt-get", "update", "-q"], install):
        result = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if result.returncode == 0 and cmd[1] == "install":
            return shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    raise SandboxError(f"could not install debootstrap on the host: {result.stderr.strip().splitlines()[-1:]}; "
                       "install it with `apt-get install debootstrap`")


APT_CONF = """\
// Written by sandbox. The mirror may be a dated snapshot.
Acquire::Check-Valid-Until "false";
Acquire::Retries "3";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
"""
DPKG_CONF = """\
# Written by sandbox: a throwaway root needs no fsync and no docs.
force-unsafe-io
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
"""


def apt_sources(mirror: str) -> str:
    return (
        "# Written by sandbox\n"
        f"Types: deb\nURIs: {mirror}\nSuites: {SUITE} experimental\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )


def configure_root(root: Path, paths: Paths, mirror: str) -> None:
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    (root / "etc/apt/sources.list.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/sources.list.d/debian.sources").write_text(apt_sources(mirror))
    (root / "etc/apt/apt.conf.d/90jax-rocm-sandbox").write_text(APT_CONF)
    (root / "etc/dpkg/dpkg.cfg.d").mkdir(parents=True, exist_ok=True)
    (root / "etc/dpkg/dpkg.cfg.d/90jax-rocm-sandbox").write_text(DPKG_CONF)
    # Packages with services (postgresql) must not start them while installing.
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\n# Written by sandbox: never start services in the sandbox root.\nexit 101\n")
    policy.chmod(0o755)


def install_spec(root: Path, paths: Paths, layer: Layer) -> Enter:
    release = ["-t", layer.target_release] if layer.target_release else []
    script = "; ".join([
        "set -e", "apt-get update -q",
        f"apt-get install -y -q {' '.join(release)} {' '.join(layer.packages)}",
        *layer.commands,
    ])
    env = sandbox_env()
    env["DEBIAN_FRONTEND"] = "noninteractive"
    # The root's own /tmp, not the host's: what apt leaves there when the build is killed
    # (apt-dpkg-install-*) goes with the unfinished root.
    binds = [b for b in standard_binds(paths) if b.target != "/tmp"] + [Bind(paths.apt_archives, "/var/cache/apt/archives")]
    ca = host_ca_bundle()
    if layer.commands and ca is not None:
        # A layer's downloads (pip) trust what the host trusts (a TLS-inspecting proxy's CA),
        # beside the root's own bundle, which apt's ca-certificates keeps.
        binds.append(Bind(ca, HOST_CA, readonly=True))
        env.update(PIP_CERT=HOST_CA, SSL_CERT_FILE=HOST_CA)
    return Enter(("/bin/sh", "-c", script), root, tuple(binds), env)


HOST_CA = "/run/jax-rocm-build/host-ca.crt"


def on_root_files(argv: Sequence[str], what: str) -> None:
    """Run a command that handles a root's files: as root on the host; without root, in the
    sandbox's user namespace, where files owned by the root's other users are ours too."""
    if not rootless():
        subprocess.run(list(argv), check=True)
        return
    rc = enter(Enter(tuple(argv), None), raise_on_interrupt=True)
    if rc != 0:
        raise SandboxError(f"{what} failed (exit {rc}): {shlex.join(argv)}")


def remove_tree(path: Path) -> None:
    if not path.exists() and not path.is_symlink():
        return
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    below = [m for m in mounts if m == str(path) or m.startswith(str(path) + "/")]
    if below:
        raise SandboxError(f"refusing to delete {path}: {below[0]} is mounted inside it; unmount it first (umount -R {below[0]})")
    on_root_files(["rm", "-rf", "--one-file-system", str(path)], f"deleting {path}")


def collect_garbage(paths: Paths, keep: Path | None) -> None:
    """Delete partial roots and superseded roots no running command uses."""
    for partial in [*paths.sandbox.glob("root-*.partial"), *paths.sandbox.glob("tmp-root-*")]:
        log(f"removing unfinished {'root' if partial.name.startswith('root-') else 'bootstrap files'} {partial.name} "
            "left by an interrupted ensure")
        remove_tree(partial)
    old = [p for p in paths.sandbox.glob("root-*") if p != keep and not p.name.endswith(".partial")]
    if not old:
        return
    fd = try_flock_exclusive(paths.use_lock)
    if fd is None:
        log(f"keeping {len(old)} old root(s) while sandbox commands still use them; the next ensure removes them")
        return
    try:
        for p in old:
            log(f"removing superseded root {p.name}")
            remove_tree(p)
    finally:
        os.close(fd)


def build_root(paths: Paths, wanted: Sequence[Layer], plan_: Plan, base_root: Path | None, mirror: str) -> Path:
    final = paths.sandbox / root_id(wanted)
    partial = final.with_name(final.name + ".partial")
    remove_tree(partial)
    paths.apt_archives.mkdir(parents=True, exist_ok=True)
    paths.bazel_user_root.mkdir(parents=True, exist_ok=True)
    paths.distdir.mkdir(parents=True, exist_ok=True)
    fresh = plan_.action == "build"
    steps = (2 if fresh else 1) + len(plan_.todo) + 1
    runner = StepRunner(paths, steps)
    log(f"log: {runner.log_path}")
    if fresh:
        scratch = bootstrap_scratch(paths, final)
        remove_tree(scratch)
        scratch.mkdir(parents=True)
        spec = bootstrap_command(partial, paths, mirror, scratch)

        def bootstrap() -> None:
            runner.command(spec, f"bootstrapping {SUITE}")
            remove_tree(scratch)

        tool = "mmdebstrap (in a user namespace)" if rootless() else "debootstrap"
        runner.step(f"{tool} {SUITE} (minbase) into {partial.name}", bootstrap)
        runner.step("configure apt (sid + experimental), dpkg and bazel", lambda: configure_root(partial, paths, mirror))
    else:
        assert base_root is not None

        def copy() -> None:
            on_root_files(["cp", "-a", "--reflink=auto", str(base_root), str(partial)], f"copying {base_root.name}")
            configure_root(partial, paths, mirror)

        runner.step(f"copy {base_root.name} to extend it atomically", copy)
    for layer in plan_.todo:
        release = layer.target_release or SUITE
        runner.step(
            f"install {layer.name} from {release}: {' '.join(layer.packages)}",
            lambda layer=layer: runner.command(install_spec(partial, paths, layer), f"installing {layer.name}"),
        )

    def finish() -> None:
        missing = missing_probes(partial, wanted)
        if missing:
            raise SandboxError(f"packages installed but {missing[0]} is missing from the root; "
                               "the package set in sandbox/layers.py is wrong")
        (partial / STAMP).write_text(stamp_for(wanted, time.time()).to_json())
        remove_tree(final)
        os.rename(partial, final)
        link = paths.current.with_name("current.new")
        link.unlink(missing_ok=True)
        link.symlink_to(final.name)
        os.rename(link, paths.current)  # atomic swap

    runner.step(f"activate {final.name}", finish)
    log(f"ready in {fmt_secs(time.monotonic() - runner.started)}: {final}")
    return final


def bootstrap_scratch(paths: Paths, final: Path) -> Path:
    """The temporary folder of a root's bootstrap (TMPDIR of debootstrap or mmdebstrap and of the
    apt they run on the host side), under the cache instead of /tmp: a killed bootstrap leaves
    its temporary files here, where the next `ensure` removes them (collect_garbage)."""
    return paths.sandbox / f"tmp-{final.name}"


def bootstrap_command(partial: Path, paths: Paths, mirror: str, scratch: Path) -> Enter:
    """The base system: debootstrap as root; without root, mmdebstrap in its root mode inside
    the sandbox's user namespace (where we are root and the root's users are our subordinate
    ids), so that the files are owned as they will be entered, and it ends with the namespace."""
    env = {**os.environ, "TMPDIR": str(scratch)}
    if not rootless():
        return Enter((ensure_debootstrap(), "--variant=minbase", "--include=ca-certificates",
                      f"--cache-dir={paths.apt_archives}", SUITE, str(partial), mirror), None, env=env)
    mmdebstrap = shutil.which("mmdebstrap")
    if mmdebstrap is None:
        raise SandboxError(NO_MMDEBSTRAP)
    # No device nodes (a user namespace cannot make them; every command binds the host's /dev).
    return Enter((mmdebstrap, "--mode=root", "--variant=minbase", "--include=ca-certificates",
                  '--aptopt=Acquire::Check-Valid-Until "false"', "--skip=output/dev", SUITE, str(partial), mirror), None,
                 env=env)


NO_MMDEBSTRAP = ("building the sandbox without root needs mmdebstrap (Debian 12/Ubuntu 22.04: apt-get install "
                 "mmdebstrap uidmap, once, by an administrator); or run sandbox as root, " + NO_SANDBOX)


def require_privileges() -> None:
    """Root, or what a rootless sandbox needs (namespaces.rootless_maps says what is missing)."""
    if rootless():
        rootless_maps()


def up_to_date(paths: Paths, profile: str, pythons: Sequence[str] = ()) -> bool:
    """Whether the current root serves `profile` (and the optional `pythons`) as it is: `ensure`
    would do nothing."""
    root = current_root(paths)
    stamp = read_stamp(root) if root else None
    return (plan(stamp, wanted_layers(profile, pythons, stamp)).action == "none" and root is not None
            and not missing_probes(root, layers_of(stamp)))


def check_prerequisites(paths: Paths, profile: str, pythons: Sequence[str] = ()) -> None:
    """What `ensure` needs of this machine, checked before anything is downloaded or built:
    nothing when the root is up to date; else root, or user namespaces, uidmap, subordinate
    ids and mmdebstrap, and the free disk a root of `profile` takes. A SandboxError names the
    first thing missing and who can add it."""
    if up_to_date(paths, profile, pythons):
        return
    require_privileges()
    if rootless() and shutil.which("mmdebstrap") is None:
        raise SandboxError(NO_MMDEBSTRAP)
    check_free_space(paths, profile)


def ensure(paths: Paths, profile: str, mirror: str, pythons: Sequence[str] = ()) -> Path:
    """The root of `profile`, with the optional `pythons` (layers.OPTIONAL_PYTHONS) added."""
    require_privileges()
    if up_to_date(paths, profile, pythons):
        root = current_root(paths)
        log(f"up to date, nothing to do ({root.name}: {', '.join(n for n, _ in read_stamp(root).layers)})")
        return root
    with flock(paths.build_lock, exclusive=True, waiting_msg="another `ensure` is building the sandbox; waiting for it"):
        root = current_root(paths)
        stamp = read_stamp(root) if root else None
        if root is not None and stamp is not None:
            broken = missing_probes(root, layers_of(stamp))
            if broken:
                log(f"root {root.name} is corrupted ({broken[0]} is missing); rebuilding it")
                stamp = None
        elif root is not None:
            log(f"root {root.name} has no valid stamp; rebuilding it")
        wanted = wanted_layers(profile, pythons, stamp)
        p = plan(stamp, wanted)
        if p.action == "none":
            assert root is not None
            log(f"up to date, nothing to do ({root.name})")
            collect_garbage(paths, keep=root)
            return root
        log(f"{p.reason}: building the '{profile}' root")
        check_free_space(paths, profile)
        check_mirror(mirror)
        collect_garbage(paths, keep=root)
        try:
            new_root = build_root(paths, wanted, p, root, mirror)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                raise SandboxError(f"disk full while building the sandbox under {paths.sandbox}: "
                                   "free space or point XDG_CACHE_HOME at a larger disk") from None
            raise
        collect_garbage(paths, keep=new_root)
        return new_root


def ready_root(paths: Paths) -> Path | None:
    root = current_root(paths)
    if root is None:
        return None
    stamp = read_stamp(root)
    if stamp is None or missing_probes(root, layers_of(stamp)):
        return None
    return root
