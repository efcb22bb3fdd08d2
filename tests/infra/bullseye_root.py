#!/usr/bin/env python3
"""A Debian bullseye root (glibc 2.31, Python 3.9) to load our libraries where old glibcs are.

    python3 -m tests.infra.bullseye_root ensure     build it once (debootstrap, about 1 minute)
    python3 -m tests.infra.bullseye_root run FILE... -- CMD...
                                                copy FILEs into the root's /work, run CMD there
                                                (chroot, as root; exit status is CMD's)
    python3 -m tests.infra.bullseye_root info       glibc and Python of the root

(from the checkout).

Buster (glibc 2.28) is gone from Debian's mirror; bullseye is the oldest release it still
serves, older than every glibc the sandbox (Debian sid) or this host (Debian 12, 2.36) has,
and glibc 2.31 is what Ubuntu 20.04 ships. The root lives under
${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/bullseye/ and is built beside the old one and
renamed into place, so an interrupted build leaves nothing `run` would use. `run` copies
files instead of bind-mounting them: nothing is mounted, so nothing can be left mounted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE = "bullseye"
PACKAGES = ("python3", "binutils")  # python3: ctypes; binutils: readelf for diagnostics
MIRROR = os.environ.get("JAX_ROCM_SANDBOX_MIRROR", "http://deb.debian.org/debian")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jax-rocm-build" / SUITE


def root_dir() -> Path:
    return cache_dir() / "root"


def fail(message: str) -> int:
    print(f"bullseye_root: {message}", file=sys.stderr)
    return 1


def ensure() -> int:
    root = root_dir()
    if (root / "usr/bin/python3").exists():
        print(f"bullseye_root: {root} is ready (nothing to do)")
        return 0
    if os.geteuid() != 0:
        return fail("debootstrap and chroot need root: run this as root")
    debootstrap = shutil.which("debootstrap") or ("/usr/sbin/debootstrap" if Path("/usr/sbin/debootstrap").exists() else None)
    if not debootstrap:
        return fail("debootstrap is not installed: apt-get install debootstrap")
    cache_dir().mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix="root-building-", dir=cache_dir()))
    log = cache_dir() / "debootstrap.log"
    print(f"bullseye_root: debootstrap {SUITE} from {MIRROR} into {building} (log: {log})", flush=True)
    with open(log, "w") as out:
        result = subprocess.run([debootstrap, "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(building), MIRROR],
                                stdout=out, stderr=subprocess.STDOUT)
    if result.returncode != 0 or not (building / "usr/bin/python3").exists():
        shutil.rmtree(building, ignore_errors=True)
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        return fail(f"debootstrap {SUITE} failed (exit {result.returncode}): {' | '.join(tail)}; is {MIRROR} reachable "
                    f"and does it still serve {SUITE}? (JAX_ROCM_SANDBOX_MIRROR=URL picks another mirror)")
    if root.exists():
        shutil.rmtree(root)
    os.rename(building, root)
    print(f"bullseye_root: {root} ready")
    return 0


def run(files: list[str], command: list[str]) -> int:
    root = root_dir()
    if not (root / "usr/bin/python3").exists():
        return fail(f"no {SUITE} root at {root}: run `python3 -m tests.infra.bullseye_root ensure` (from the checkout) first")
    work = root / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    for name in files:
        source = Path(name)
        if not source.is_file():
            return fail(f"{name}: no such file to copy into the {SUITE} root")
        shutil.copy(source, work / source.name)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root"}
    return subprocess.run(["chroot", str(root), "sh", "-c", 'cd /work && exec "$@"', "sh", *command], env=env).returncode


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("ensure", "run", "info"))
    parser.add_argument("files", nargs="*", help="run: files to copy into /work, then -- and the command")
    if "--" in argv:
        cut = argv.index("--")
        args, command = parser.parse_args(argv[:cut]), argv[cut + 1:]
    else:
        args, command = parser.parse_args(argv), []
    if args.command == "ensure":
        return ensure()
    if args.command == "info":
        return run([], ["sh", "-c", "ldd --version | head -1; python3 --version"])
    if not command:
        return fail("run needs a command after --, e.g. run lib.so -- python3 -c 'import ctypes; ctypes.CDLL(\"./lib.so\")'")
    return run(args.files, command)


if __name__ == "__main__":
    sys.exit(main())
