"""Check (or fix) the formatting and lint of this checkout's Starlark files with buildifier, offline.

    python3 -m tools.lint.buildifier               # check every Starlark file git tracks
    python3 -m tools.lint.buildifier --fix         # rewrite them: formatting and the lint fixes buildifier can make
    python3 -m tools.lint.buildifier FILE...       # just these files (with or without --fix)

Which buildifier: 8.2.1, the release binary shipped in the npm package @bazel/buildifier,
pinned by tools/lint/package-lock.json (integrity hash included) and installed once by
tools/lint/npm_packages.py (`npm ci --ignore-scripts` into ${XDG_CACHE_HOME:-~/.cache}/
jax-rocm-build/npm/lint-<hash>/; npm is needed for that, Node.js never to run it). One
pinned version, whatever is on PATH: buildifier's formatting changes between releases.

Which files: every file `git ls-files` lists named BUILD, BUILD.bazel, BUILD.<name>.bazel
(the BUILD files this project gives external repositories), *.bzl, MODULE.bazel,
REPO.bazel or WORKSPACE[.bazel], the second module full/ included. Not the templates
(*.tpl): their %{...} placeholders are not Starlark until rocm_configure fills them in.
The stand-in trees under examples/ are linted like the rest: they are this project's own
files, only laid out like XLA's and JAX's (examples/*/README.md), not copies of upstream
files whose formatting should be kept.

Exit status: 0 clean, 1 files to format or lint warnings (the message says what to run),
2 bad usage or a missing prerequisite (npm, git, a file), 3 buildifier itself failed
(a syntax error included: buildifier cannot format what it cannot parse).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
from pathlib import Path

from .npm_packages import CHECKOUT, Unavailable, ensure_installed

PACKAGE = "@bazel/buildifier"
STARLARK = re.compile(r"(^|/)(BUILD|BUILD\.bazel|BUILD\.[^/]+\.bazel|[^/]+\.bzl|MODULE\.bazel|REPO\.bazel|WORKSPACE(\.bazel)?)$")
# buildifier's default warnings, less those wrong for this project. A single statement that
# must differ says so where it is: `# buildifier: disable=<warning>` on the line before.
WARNINGS = [
    # This project writes docstrings as prose that names the arguments in passing, as its
    # Python does; no API reference is generated from them (no stardoc) that would need a
    # one-line summary and Google-style `Args:` / `Returns:` sections.
    "-function-docstring-header",
    "-function-docstring-args",
    "-function-docstring-return",
]
FIX_COMMAND = "python3 -m tools.lint.buildifier --fix"
EXIT_FINDINGS, EXIT_USAGE, EXIT_FAILURE = 1, 2, 3


def log(message: str) -> None:
    print(f"buildifier.py: {message}", file=sys.stderr, flush=True)


def tracked_files() -> list[Path]:
    result = subprocess.run(["git", "ls-files", "-z"], cwd=CHECKOUT, capture_output=True, text=True)
    if result.returncode != 0:
        raise Unavailable(f"`git ls-files` failed in {CHECKOUT} ({result.stderr.strip()}): not a git checkout? "
                          "Name the files to check instead")
    names = [n for n in result.stdout.split("\0") if n and STARLARK.search(n)]
    # Tracked but deleted in the work tree, or a symlink (Bazel's convenience links): not ours to format.
    return [CHECKOUT / n for n in sorted(names) if (CHECKOUT / n).is_file() and not (CHECKOUT / n).is_symlink()]


def binary_name() -> str:
    system, machine = platform.system().lower(), platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "riscv64": "riscv64"}.get(machine)
    if system not in ("linux", "darwin", "windows") or arch is None:
        raise Unavailable(f"{PACKAGE} ships no buildifier for {system}/{machine}")
    return f"buildifier-{system}_{arch}" + (".exe" if system == "windows" else "")


def find_buildifier() -> Path:
    binary = ensure_installed(log) / "node_modules" / PACKAGE / binary_name()
    if not binary.is_file():
        raise Unavailable(f"{binary} is missing from the npm install; delete {binary.parents[3]} to reinstall it")
    return binary


def display(path: Path) -> str:
    """The path relative to the checkout when it is inside it, else as given."""
    return str(path.relative_to(CHECKOUT)) if path.is_relative_to(CHECKOUT) else str(path)


def run(binary: Path, files: list[Path], *flags: str) -> subprocess.CompletedProcess:
    # From the checkout: buildifier formats a file by its path relative to the workspace root
    # it finds above it (full/ for full/'s files: a module of its own).
    return subprocess.run([str(binary), *flags, "-warnings=" + ",".join(WARNINGS), *map(str, files)],
                          cwd=CHECKOUT, capture_output=True, text=True)


def check(binary: Path, files: list[Path], after_fix: bool = False) -> int:
    result = run(binary, files, "-mode=check", "-lint=warn", "-format=json")
    try:
        report = json.loads(result.stdout)
    except ValueError:
        log(f"buildifier failed (exit {result.returncode}): {(result.stdout + result.stderr).strip()}")
        return EXIT_FAILURE
    unformatted, warnings, fixable = [], 0, 0
    invalid = [display(CHECKOUT / entry["filename"]) for entry in report["files"] if not entry["valid"]]
    for entry in report["files"]:
        name = display(CHECKOUT / entry["filename"])  # as given: absolute
        if entry["valid"] and not entry["formatted"]:
            unformatted.append(name)
            print(f"{name}: not formatted as buildifier formats it [format]")
        for w in entry.get("warnings", []):
            warnings += 1
            fixable += bool(w.get("autoFixable"))
            where = f"{name}:{w['start']['line']}:{w['start']['column']}"
            message = " ".join(w["message"].split())  # some span lines
            print(f"{where}: {message} [{w['category']}] ({w['url']})")
    if invalid:
        print(result.stderr.rstrip(), file=sys.stderr)
        log(f"buildifier cannot parse {', '.join(invalid)}: fix the syntax error(s) above")
        return EXIT_FAILURE
    if not unformatted and not warnings:
        log(f"{len(files)} Starlark file(s): formatted, no lint warnings")
        return 0
    found = []
    if unformatted:
        found.append(f"{len(unformatted)} file(s) to format")
    if warnings:
        found.append(f"{warnings} lint warning(s)" + (f", {fixable} of them fixable by --fix" if fixable and not after_fix else ""))
    if after_fix:
        advice = "what --fix could not do is left to fix by hand"
    else:
        advice = f"run `{FIX_COMMAND}` (formats and applies buildifier's lint fixes), then fix what remains by hand"
    log(f"{len(files)} Starlark file(s): {' and '.join(found)}: {advice}; where a warning is wrong, put "
        "`# buildifier: disable=<warning>` on the line before the statement, with the reason")
    return EXIT_FINDINGS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tools.lint.buildifier", description=__doc__.split("\n\n")[0],
                                     epilog="Exit status: 0 clean, 1 findings, 2 usage or prerequisites, 3 failure.")
    parser.add_argument("files", nargs="*", type=Path, help="Starlark files (default: every one git tracks)")
    parser.add_argument("--fix", action="store_true", help="rewrite the files: format and apply buildifier's lint fixes")
    args = parser.parse_args(argv)
    try:
        files = [f.resolve() for f in args.files] or tracked_files()
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise Unavailable(f"no such file: {', '.join(missing)}")
        if not files:
            raise Unavailable(f"no Starlark files tracked in {CHECKOUT}")
        binary = find_buildifier()
    except Unavailable as e:
        log(str(e))
        return EXIT_USAGE
    version = subprocess.run([str(binary), "-version"], capture_output=True, text=True).stdout.split("\n", 1)[0]
    log(f"running {binary} ({version.strip() or 'version unknown'})")
    if args.fix:
        result = run(binary, files, "-mode=fix", "-lint=fix")
        if result.returncode not in (0, 4):  # 4: warnings left that it cannot fix (reported below)
            print(result.stderr.rstrip(), file=sys.stderr)
            log(f"buildifier --mode=fix failed (exit {result.returncode})")
            return EXIT_FAILURE
    return check(binary, files, after_fix=args.fix)


if __name__ == "__main__":
    sys.exit(main())
