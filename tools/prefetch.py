"""Fetch pinned archives into Bazel's --distdir with the clients this network allows.

    python3 -m tools.prefetch [--distdir DIR] [--check] [--pypi-only]

Some pins (third_party/*/pin.json) name wheels on PyPI: nanobind's sources and XLA's
FFI headers from jaxlib. Bazel fetches them itself where it can; where only pip can
reach PyPI (a proxy Java does not trust, a pip mirror, an air gap with a wheelhouse),
this downloads each with `pip download`. Pins with a `debian_source` (abseil) are the
release archive Debian ships as a source package's orig tarball: `apt-get source
--download-only` fetches it, inside the sandbox (a Debian sid root, sandbox).
Each file is checked against the pin's sha256 before it is placed in the distdir
(default: the sandbox's, ~/.cache/jax-rocm-build/distdir) under the basename of the
pin's URL, where Bazel takes it by file name and hash. Pins reachable neither way
(XLA, JAX) are listed as skipped. `--check` only reports what is missing; `--pypi-only`
fetches the wheels alone (no sandbox needed: ci_build runs it while the sandbox is built).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sandbox import interrupted
from tools.digest import sha256_of
from tools.modules import SANDBOX, module_environment

CHECKOUT = Path(__file__).resolve().parent.parent
PYPI_HOST = "files.pythonhosted.org"


@dataclasses.dataclass(frozen=True)
class DebianSource:
    """A pinned archive that is also a Debian source package's orig tarball."""

    pin: Path
    filename: str  # the basename of the pin's URL: the name Bazel looks for in the distdir
    sha256: str
    package: str
    version: str
    orig: str  # the orig tarball's file name in the source package

    def apt_script(self) -> str:
        """A shell script for the sandbox, run in an empty directory: fetch only this source
        package from the deb-src twin of the sandbox's own apt source (same mirror, sid)."""
        opts = ("-o Dir::Etc::SourceList=\"$PWD/deb-src.sources\" -o Dir::Etc::SourceParts=/nonexistent "
                "-o Dir::State::Lists=\"$PWD/lists\" -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root")
        return ("sed -e 's/^Types: .*/Types: deb-src/' -e 's/^Suites: .*/Suites: sid/' "
                "/etc/apt/sources.list.d/debian.sources > deb-src.sources && "
                f"mkdir -p lists/partial && apt-get -q {opts} update >/dev/null && "
                f"apt-get -q {opts} source --download-only {self.package}={self.version}")


@dataclasses.dataclass(frozen=True)
class Wheel:
    pin: Path
    filename: str
    sha256: str

    @property
    def requirement(self) -> str:
        name, version = self.filename.split("-")[:2]
        return f"{name}=={version}"

    def pip_args(self) -> list[str]:
        """pip download arguments that select exactly this file (any host platform)."""
        _name, _version, python, abi, platform = self.filename[: -len(".whl")].split("-")
        args = ["--no-deps", "--only-binary=:all:", self.requirement]
        if platform != "any":
            # A compressed tag set (manylinux_2_12_x86_64.manylinux2010_x86_64...) names one
            # file for several platforms; pip matches it by any one of them.
            args += ["--platform", platform.split(".")[0], "--abi", abi.split(".")[0]]
            if python.startswith("cp"):  # py3: any Python 3, pip's own included
                args += ["--python-version", python.split(".")[0].removeprefix("cp")]
        return args


def pinned_wheels(checkout: Path = CHECKOUT) -> tuple[list[Wheel], list[Path]]:
    """(PyPI wheels named by pins, pins that are not PyPI wheels)."""
    wheels, others = [], []
    for pin_path in sorted(checkout.glob("third_party/*/pin.json")):
        pin = json.loads(pin_path.read_text())
        url = pin["urls"][0]
        if PYPI_HOST in url and url.endswith(".whl"):
            wheels.append(Wheel(pin_path, url.rsplit("/", 1)[1], pin["sha256"]))
        else:
            others.append(pin_path)
    return wheels, others


def debian_sources(pins: list[Path]) -> tuple[list[DebianSource], list[Path]]:
    """(pins fetched as Debian source packages, the rest)."""
    found, others = [], []
    for pin_path in pins:
        pin = json.loads(pin_path.read_text())
        deb = pin.get("debian_source")
        if deb:
            found.append(DebianSource(pin_path, pin["urls"][0].rsplit("/", 1)[1], pin["sha256"],
                                      deb["package"], deb["version"], deb["file"]))
        else:
            others.append(pin_path)
    return found, others


def fetch_debian_source(source: DebianSource, distdir: Path) -> str:
    """Places the orig tarball in distdir under the pin's file name; raises on a hash mismatch."""
    target = distdir / source.filename
    if target.exists() and sha256_of(target) == source.sha256:
        return "present"
    # /tmp is visible inside the sandbox at the same path.
    with tempfile.TemporaryDirectory(prefix="prefetch-") as tmp:
        result = subprocess.run(
            [*SANDBOX, "run", "--", "sh", "-c", source.apt_script()], cwd=tmp, env=module_environment(),
            capture_output=True, text=True)
        got = Path(tmp) / source.orig
        if result.returncode != 0 or not got.exists():
            detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["no such file"]
            raise RuntimeError(f"apt-get source could not fetch {source.package} {source.version} ({source.orig}): {detail[0]}; "
                               "is Debian's mirror reachable, and the sandbox built (python3 -m sandbox ensure)?")
        actual = sha256_of(got)
        if actual != source.sha256:
            raise RuntimeError(f"{source.orig} from Debian has sha256 {actual}, "
                               f"but {source.pin.relative_to(CHECKOUT)} pins {source.sha256}")
        partial = distdir / f"{source.filename}.partial.{os.getpid()}"  # concurrent prefetches each write their own
        shutil.copyfile(got, partial)
        os.replace(partial, target)
    return "downloaded"


def fetch(wheel: Wheel, distdir: Path) -> str:
    """Places the wheel in distdir; returns what happened, raises on a hash mismatch."""
    target = distdir / wheel.filename
    if target.exists() and sha256_of(target) == wheel.sha256:
        return "present"
    with tempfile.TemporaryDirectory(dir=distdir) as tmp:
        result = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", tmp, *wheel.pip_args()],
                                capture_output=True, text=True)
        got = Path(tmp) / wheel.filename
        if result.returncode != 0 or not got.exists():
            raise RuntimeError(f"pip could not download {wheel.filename}: {result.stderr.strip().splitlines()[-1:] or 'no such file'}")
        actual = sha256_of(got)
        if actual != wheel.sha256:
            raise RuntimeError(f"{wheel.filename} from pip has sha256 {actual}, but {wheel.pin.relative_to(CHECKOUT)} pins {wheel.sha256}")
        os.replace(got, target)
    return "downloaded"


def default_distdir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jax-rocm-build" / "distdir"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--distdir", type=Path, default=default_distdir(), help="default: %(default)s")
    parser.add_argument("--check", action="store_true", help="report what is missing; download nothing")
    parser.add_argument("--pypi-only", action="store_true",
                        help="only the PyPI wheels, which need no sandbox: ci_build fetches them while the sandbox is built")
    args = parser.parse_args(argv)
    args.distdir.mkdir(parents=True, exist_ok=True)
    wheels, others = pinned_wheels()
    sources, others = debian_sources(others)
    if args.pypi_only:
        sources, others = [], []
    fetchers = [(w, lambda w=w: fetch(w, args.distdir)) for w in wheels]
    fetchers += [(s, lambda s=s: fetch_debian_source(s, args.distdir)) for s in sources]
    status = 0
    for item, fetch_it in fetchers:
        target = args.distdir / item.filename
        try:
            if args.check:
                state = "present" if target.exists() and sha256_of(target) == item.sha256 else "missing"
                status |= state == "missing"
            else:
                state = fetch_it()
        except RuntimeError as exc:
            print(f"prefetch: {exc}", file=sys.stderr)
            return 1
        print(f"prefetch: {state:10} {item.filename} ({item.pin.relative_to(CHECKOUT)})")
    for pin in others:
        print(f"prefetch: {'skipped':10} {pin.relative_to(CHECKOUT)} (neither on PyPI nor a Debian source package: "
              "Bazel fetches it, or build from a local tree: --override_repository / ci_build --xla-source-dir, --jax-source-dir)")
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # a partial download is a temporary file, removed as it unwinds
        sys.exit(interrupted("prefetch"))
