"""Rewrite a source pin (third_party/<name>/pin.json) from an archive, never by hand.

    python3 -m tools.update_pins xla --commit 5a9e73cb... --archive /tmp/xla.tar.gz   # offline
    python3 -m tools.update_pins xla --commit 5a9e73cb...                             # downloads the pin's URL
    python3 -m tools.update_pins nanobind --version 3.1.0 --url https://.../nanobind-3.1.0-py3-none-any.whl --archive nb.whl

The sha256 is computed from the archive (streamed, any size), and the archive is
checked to hold the pin's strip_prefix (e.g. xla-<commit>/) before the pin is written,
so a pin can only name an archive that Bazel will accept. JAX's pin also records what
ci_build checks its inputs against before anything is downloaded, read from the archive:
its release (jax/version.py) and the Pythons it builds for (one per
build/requirements_lock_3_NN.txt, source_tree.pythons_of); XLA's, the names of its ROCm
redistributions (third_party/gpus/rocm/rocm_redist.bzl: what ROCM_DISTRO_VERSION may name).
Prints the old and new pin.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from third_party.gpus import toolkit_sources
from third_party.gpus.extract_archive import UnsafeArchive
from third_party.private import source_tree
from tools.digest import sha256_of

CHECKOUT = Path(__file__).resolve().parent.parent


class PinError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Update:
    version: str  # a commit for source trees, a release for wheels
    sha256: str
    url: str | None = None  # None: keep the pin's URL template


def pin_path(name: str) -> Path:
    path = CHECKOUT / "third_party" / name / "pin.json"
    if not path.is_file():
        known = sorted(p.parent.name for p in (CHECKOUT / "third_party").glob("*/pin.json"))
        raise PinError(f"no pin named {name!r}; pins: {', '.join(known)}")
    return path


def top_level_names(archive: Path) -> set[str]:
    """First path components of every member (tar of any compression, or zip/wheel)."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            return {n.split("/", 1)[0] for n in z.namelist()}
    try:
        with tarfile.open(archive) as t:
            return {m.name.lstrip("./").split("/", 1)[0] for m in t}
    except tarfile.TarError as exc:
        raise PinError(f"{archive} is neither a tar nor a zip archive: {exc}") from exc


def updated_pin(pin: dict, update: Update, tops: set[str]) -> dict:
    """The pin with the new version, hash and URL, after checking the archive's layout."""
    new = dict(pin)
    key = "commit" if "commit" in pin else "version"
    new[key] = update.version
    new["sha256"] = update.sha256
    if update.url:
        new["urls"] = [update.url]
    prefix = new.get("strip_prefix", "").replace("{commit}", update.version)
    if prefix and prefix.split("/", 1)[0] not in tops:
        raise PinError(f"the archive has no {prefix}/ (its top level: {', '.join(sorted(tops)) or 'nothing'}); "
                       "is it the archive of that commit?")
    return new


def jax_tree_facts(archive: Path) -> dict:
    """What JAX's pin records of its tree: the release and the Pythons it builds for."""
    release, _ = source_tree.identify(archive)
    pythons = source_tree.tree_pythons(archive)
    if not release or not pythons:
        raise PinError(f"{archive} has no {'jax/version.py' if not release else 'build/requirements_lock_3_NN.txt'}: "
                       "is it an archive of JAX's tree?")
    return {"release": release, "pythons": list(pythons)}


def xla_tree_facts(archive: Path) -> dict:
    """What XLA's pin records of its tree: the names of its ROCm redistributions
    (ROCM_DISTRO_VERSION's entries), so that ci_build checks one before the archive is fetched."""
    table = source_tree.read_files(archive, [toolkit_sources.REDIST_TABLE]).get(toolkit_sources.REDIST_TABLE)
    if table is None:
        return {"rocm_distros": []}  # an XLA before hermetic ROCm: ROCM_DISTRO_VERSION names nothing
    return {"rocm_distros": list(toolkit_sources.redistributions(table.decode(), toolkit_sources.REDIST_TABLE))}


def download(url: str, dest: Path) -> None:
    print(f"update_pins: downloading {url}", file=sys.stderr)
    with urllib.request.urlopen(url, timeout=60) as response, open(dest, "wb") as out:
        while block := response.read(1 << 20):
            out.write(block)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="the pin: xla, jax, nanobind, xla_ffi_headers")
    version = parser.add_mutually_exclusive_group(required=True)
    version.add_argument("--commit", help="the commit a source archive was made from")
    version.add_argument("--version", help="the release a wheel pin names")
    parser.add_argument("--archive", type=Path, help="the archive on disk (offline); default: download the pin's URL")
    parser.add_argument("--url", help="a new download URL ({commit} is replaced); default: keep the pin's")
    args = parser.parse_args(argv)
    try:
        path = pin_path(args.name)
        pin = json.loads(path.read_text())
        wanted = args.commit or args.version
        url = (args.url or pin["urls"][0]).replace("{commit}", wanted)
        with tempfile.TemporaryDirectory() as tmp:
            archive = args.archive
            if archive is None:
                archive = Path(tmp) / "archive"
                download(url, archive)
            if not archive.is_file():
                raise PinError(f"{archive} is not a file")
            new = updated_pin(pin, Update(wanted, sha256_of(archive), args.url), top_level_names(archive))
            if args.name == "jax":
                new.update(jax_tree_facts(archive))
            if args.name == "xla":
                new.update(xla_tree_facts(archive))
    except (PinError, UnsafeArchive, OSError, toolkit_sources.SourceError) as exc:
        print(f"update_pins: {exc}", file=sys.stderr)
        return 1
    path.write_text(json.dumps(new, indent=2) + "\n")
    for key in ("commit", "version", "sha256", "urls", "release", "pythons", "rocm_distros"):
        if pin.get(key) != new.get(key):
            print(f"{path.relative_to(CHECKOUT)}: {key}: {pin.get(key)} -> {new.get(key)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
