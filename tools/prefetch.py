#!/usr/bin/env python3
"""Fetch the pinned PyPI archives into Bazel's --distdir with pip, the client this network allows.

    python3 tools/prefetch.py [--distdir DIR] [--check]

Some pins (third_party/*/pin.json) name wheels on PyPI: nanobind's sources and XLA's
FFI headers from jaxlib. Bazel fetches them itself where it can; where only pip can
reach PyPI (a proxy Java does not trust, a pip mirror, an air gap with a wheelhouse),
this downloads each with `pip download` and checks it against the pin's sha256 before
placing it in the distdir (default: the sandbox's, ~/.cache/jax-rocm-build/distdir),
where Bazel takes it by file name and hash. Pins that are not on PyPI (XLA, JAX) are
listed as skipped. `--check` only reports what is missing.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
PYPI_HOST = "files.pythonhosted.org"


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
            args += ["--platform", platform, "--abi", abi, "--python-version", python.removeprefix("cp")]
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


def sha256_of(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


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
    args = parser.parse_args(argv)
    args.distdir.mkdir(parents=True, exist_ok=True)
    wheels, others = pinned_wheels()
    status = 0
    for wheel in wheels:
        target = args.distdir / wheel.filename
        try:
            if args.check:
                state = "present" if target.exists() and sha256_of(target) == wheel.sha256 else "missing"
                status |= state == "missing"
            else:
                state = fetch(wheel, args.distdir)
        except RuntimeError as exc:
            print(f"prefetch: {exc}", file=sys.stderr)
            return 1
        print(f"prefetch: {state:10} {wheel.filename}")
    for pin in others:
        print(f"prefetch: {'skipped':10} {pin.relative_to(CHECKOUT)} (not on PyPI: Bazel fetches it, or use --override_repository)")
    return status


if __name__ == "__main__":
    sys.exit(main())
