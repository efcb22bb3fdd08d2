#!/usr/bin/env python3
"""Lay out a JAX source tree for Bazel without JAX's own build graph.

    source_tree.py --source PATH --output DIR [--dirs jaxlib,jaxlib/gpu,...] [--sha256 HEX]

PATH is a JAX checkout (a directory) or an archive of one (.tar.gz, .tgz, .tar.xz,
.zip; one top-level folder is stripped). The files of the listed directories (not
their subdirectories) and the top-level LICENSE appear in DIR at the same relative
paths: symlinks into a checkout, so edits there are seen by the next build; extracted
files for an archive. Bazel's files of the tree (BUILD, *.bzl, MODULE.bazel,
WORKSPACE, REPO.bazel) are left out, so that the repository rule's own BUILD file is
the only one, and nothing of JAX's build graph (or XLA's, which it loads) is loaded.

Prints one JSON object: what the tree is, for build_info.json:
  {"origin": "local checkout" | "local archive" | "pinned archive", "path", "sha256",
   "commit", "version", "files", "stand_in"}
Archives made by `git archive` name their commit in a pax header; checkouts by git.
"stand_in" is true for a tree with the marker file JAX_ROCM_STAND_IN at its root:
examples/jax, this project's stand-in laid out like JAX's tree (not JAX's code). The
repository rule turns it into the jax_rocm_stand_in tag of everything built from it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from third_party.gpus import extract_archive as archives

DEFAULT_DIRS = ("jax", "jaxlib", "jaxlib/cpu", "jaxlib/gpu", "jaxlib/rocm")
TOP_LEVEL_FILES = ("LICENSE",)
# At the root of a tree that is a stand-in written for this project (examples/jax).
STAND_IN_MARKER = "JAX_ROCM_STAND_IN"
STAND_IN_PATH = "examples/jax"  # what a stand-in tree's "path" says
BAZEL_FILE_NAMES = frozenset({"BUILD", "BUILD.bazel", "MODULE.bazel", "WORKSPACE", "WORKSPACE.bazel", "WORKSPACE.bzlmod", "REPO.bazel"})


class SourceTreeError(Exception):
    """A one-line, actionable failure."""


@dataclasses.dataclass(frozen=True)
class TreeInfo:
    origin: str
    path: str
    sha256: str | None
    commit: str | None
    version: str | None
    files: int
    stand_in: bool = False

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)


def is_bazel_file(name: str) -> bool:
    return name in BAZEL_FILE_NAMES or name.endswith(".bzl")


def wanted(relative: PurePosixPath, dirs: tuple[str, ...]) -> bool:
    """Whether a file at this tree-relative path belongs in the layout."""
    if is_bazel_file(relative.name):
        return False
    parent = str(relative.parent)
    return parent in dirs or (parent == "." and relative.name in TOP_LEVEL_FILES)


def version_of(version_py: str) -> str | None:
    """JAX's release from jax/version.py (`_version = "0.10.2"`)."""
    match = re.search(r'^_version(?:\s*:\s*str)?\s*=\s*["\']([^"\']+)["\']', version_py, re.MULTILINE)
    return match.group(1) if match else None


# JAX records each Python its build makes jaxlib for by the lock file of its requirements
# for that Python (build/requirements_lock_3_12.txt), which its MODULE.bazel and WORKSPACE
# name by version; `_ft` ones are the free-threaded builds, which this project does not make.
PYTHON_LOCK = re.compile(r"build/requirements_lock_3_(\d+)\.txt")


def pythons_of(names: Iterable[str]) -> tuple[str, ...]:
    """The Pythons a JAX tree builds for, from its tree-relative file names: one "3.NN" per
    build/requirements_lock_3_NN.txt, oldest first; () for a tree that has none."""
    minors = {int(match.group(1)) for name in names if (match := PYTHON_LOCK.fullmatch(name))}
    return tuple(f"3.{minor}" for minor in sorted(minors))


def tree_pythons(source: Path) -> tuple[str, ...]:
    """pythons_of a JAX checkout's or archive's files (an archive read to its end under the one
    archive policy, its one top folder stripped)."""
    if source.is_dir():
        build = source / "build"
        return pythons_of(f"build/{entry.name}" for entry in build.iterdir() if entry.is_file()) if build.is_dir() else ()
    contents, prefix = _read(source, lambda rel: False)
    return pythons_of(relative for entry in contents.entries
                      if entry.kind == "file" and (relative := _in_tree(entry.name, prefix)) is not None)


def strip_top(names: list[str]) -> str:
    """The single top-level folder every member is under ('' if there is none)."""
    tops = {n.split("/", 1)[0] for n in names if n.strip("/")}
    if len(tops) == 1 and all("/" in n.strip("/") or n.rstrip("/") in tops for n in names):
        return tops.pop() + "/"
    return ""


def pax_commit(comment: str | None) -> str | None:
    """The commit `git archive` records in the archive's pax header comment, if any."""
    return comment if comment and re.fullmatch(r"[0-9a-f]{40}", comment) else None


def _in_tree(name: str, prefix: str) -> str | None:
    """An entry's tree-relative name (its archive's one top folder, `prefix`, stripped), or None."""
    return name[len(prefix):] if name.startswith(prefix) and name != prefix else None


def _read(archive: Path, relative_wanted) -> tuple[archives.Contents, str]:
    """The archive read under the one archive policy (extract_archive.read_archive), keeping the
    files whose tree-relative name relative_wanted picks, and its top folder prefix. The prefix is
    known only once every entry is seen, so a file is kept if either reading of its name is wanted."""
    def wanted(name: str) -> bool:
        return relative_wanted(name) or ("/" in name and relative_wanted(name.split("/", 1)[1]))
    contents = archives.read_archive(archive, wanted)
    return contents, strip_top([e.name for e in contents.entries])


def extract_archive(archive: Path, output: Path, dirs: tuple[str, ...]) -> tuple[int, str | None, bool]:
    """Extracts the wanted files; returns (files written, commit from a git-archive pax
    header, whether the tree has the stand-in marker at its root)."""
    contents, prefix = _read(archive, lambda rel: rel == STAND_IN_MARKER or wanted(PurePosixPath(rel), dirs))
    stand_in = any(e.kind == "file" and _in_tree(e.name, prefix) == STAND_IN_MARKER for e in contents.entries)
    count = 0
    for name, data in contents.files.items():
        relative = _in_tree(name, prefix)
        if relative is not None and wanted(PurePosixPath(relative), dirs):
            target = output / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            count += 1
    return count, pax_commit(contents.comment), stand_in


def link_checkout(checkout: Path, output: Path, dirs: tuple[str, ...]) -> int:
    """Symlinks the wanted files of a checkout; returns how many."""
    count = 0
    for directory in ("." ,) + dirs:
        source_dir = checkout / directory
        if not source_dir.is_dir():
            continue
        for entry in sorted(source_dir.iterdir()):
            relative = PurePosixPath(directory) / entry.name if directory != "." else PurePosixPath(entry.name)
            if entry.is_file() and wanted(relative, dirs):
                target = output / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(entry.resolve(), target)
                count += 1
    return count


def git_commit(checkout: Path) -> str | None:
    if not (checkout / ".git").exists() or shutil.which("git") is None:
        return None
    result = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def read_files(source: Path, wanted: list[str]) -> dict[str, bytes]:
    """Files of a JAX checkout or archive (its one top folder stripped) by relative path; the
    ones it lacks are left out."""
    if source.is_dir():
        return {w: (source / w).read_bytes() for w in wanted if (source / w).is_file()}
    contents, prefix = _read(source, lambda rel: rel in wanted)
    return {w: contents.files[prefix + w] for w in wanted if prefix + w in contents.files}


def identify(source: Path) -> tuple[str | None, str | None]:
    """(JAX release, commit) of a checkout or archive, without laying it out."""
    if source.is_dir():
        version_py = source / "jax" / "version.py"
        return (version_of(version_py.read_text()) if version_py.is_file() else None), git_commit(source)
    contents, prefix = _read(source, lambda rel: rel == "jax/version.py")
    version_py = contents.files.get(prefix + "jax/version.py")
    return (version_of(version_py.decode()) if version_py else None), pax_commit(contents.comment)


def lay_out(source: Path, output: Path, dirs: tuple[str, ...], origin: str | None, sha256: str | None) -> TreeInfo:
    if not source.exists():
        raise SourceTreeError(f"{source} does not exist; give a JAX checkout (a directory with jaxlib/) or an archive of one")
    output.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        if not (source / "jaxlib").is_dir():
            raise SourceTreeError(f"{source} is not a JAX checkout: it has no jaxlib/ directory")
        files = link_checkout(source, output, dirs)
        info_origin, commit, digest = "local checkout", git_commit(source), None
        stand_in = (source / STAND_IN_MARKER).is_file()
    elif archives.is_archive(source):
        files, commit, stand_in = extract_archive(source, output, dirs)
        if not sha256:  # hashlib itself: the repository rule runs this file alone (tools/digest.py is the helper)
            with open(source, "rb") as f:
                sha256 = hashlib.file_digest(f, "sha256").hexdigest()
        info_origin, digest = "local archive", sha256
    else:
        raise SourceTreeError(f"{source} is neither a directory nor an archive ({', '.join(archives.ARCHIVE_SUFFIXES)})")
    if not (output / "jaxlib" / "gpu").is_dir():
        raise SourceTreeError(f"{source} has no jaxlib/gpu/ sources; is it JAX's source tree (jax-ml/jax)?")
    version_py = output / "jax" / "version.py"
    version = version_of(version_py.read_text()) if version_py.exists() else None
    # A stand-in tree is this project's own: named as in the project (examples/jax), not by where
    # the checkout lies, so that wheels built from two checkouts are byte-identical.
    path = STAND_IN_PATH if stand_in else str(source)
    return TreeInfo(origin or info_origin, path, digest, commit, version, files, stand_in)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True, help="a JAX checkout or an archive of one")
    parser.add_argument("--output", type=Path, required=True, help="the directory to lay the files out in")
    parser.add_argument("--dirs", default=",".join(DEFAULT_DIRS), help="tree-relative directories to take (default: %(default)s)")
    parser.add_argument("--origin", help="what to call the source in the report (default: local checkout / local archive)")
    parser.add_argument("--sha256", help="the archive's sha256 when the caller already checked it")
    args = parser.parse_args(argv)
    try:
        info = lay_out(args.source, args.output, tuple(d for d in args.dirs.split(",") if d), args.origin, args.sha256)
    except (SourceTreeError, archives.UnsafeArchive, OSError) as exc:
        print(f"source_tree: {exc}", file=sys.stderr)
        return 1
    print(info.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
