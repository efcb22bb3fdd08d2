"""The first step of a pre-flight: which `@local_config_rocm` names an XLA or JAX tree uses.

A tree's BUILD, `.bzl` and `.bazelrc` files name targets of XLA's `@local_config_rocm`
(`@local_config_rocm//rocm:hipblas`, `--@local_config_rocm//rocm:rocm_path_type=...`) and
load symbols from its `build_defs.bzl`. This project generates its own `@local_config_rocm`
in their place; a name it does not answer fails a build at loading, after the whole
dependency graph was fetched. Reading the tree's text finds every such name in seconds.

`collect(trees)` returns each name with the first file that uses it; `probe_packages()`
makes BUILD files that make Bazel itself say which are missing (`ci_build preflight`
runs it through `bazel query`), and `missing_*()` read Bazel's answer.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from third_party.gpus import extract_archive

REPOSITORY = "local_config_rocm"
# rules_ml_toolchain's description of a ROCm toolkit: full mode (full/MODULE.bazel) points it
# at the same repository, so a name used through it must be answered too.
ALSO_ANSWERED_AS = ("config_rocm_hipcc",)
_NAMES = "(?:" + "|".join((REPOSITORY,) + ALSO_ANSWERED_AS) + ")"

# Bazel's files that name other repositories' targets (what loads and analyses them), with the
# BUILD overlays a tree ships for third-party archives (XLA's third_party/**/*.BUILD). Not
# templates (.tpl: XLA's own @local_config_rocm, which this project's replaces).
BUILD_FILE_NAMES = frozenset({"BUILD", "BUILD.bazel"})
BAZEL_SUFFIXES = (".bzl", ".bazelrc", ".BUILD")
# Folders that are never part of a tree's build: VCS data and Bazel's convenience links.
SKIPPED_DIRS = frozenset({".git", ".github", "node_modules"})

# A label of the repository, as text: `@local_config_rocm//pkg:name`, `@local_config_rocm//pkg`,
# `@@local_config_rocm//...`. A label built by string formatting ("...//rocm:%s") ends at
# the `%` and is left out (an empty target name).
_LABEL = re.compile(r"@@?" + _NAMES + r"//([A-Za-z0-9_./+-]*)(?::([A-Za-z0-9_./+,@~-]*))?")
# load("<label>", "a", b = "c", ...): Starlark allows nothing but string literals and
# keyword=string here, so its arguments are read without a parser.
_LOAD = re.compile(r"\bload\(\s*([\"'])(.*?)\1\s*,(.*?)\)", re.DOTALL)
_LOAD_ARG = re.compile(r"(?:(\w+)\s*=\s*)?([\"'])(\w+)\2")
_COMMENT = re.compile(r"#[^\n]*")


@dataclasses.dataclass(frozen=True, order=True)
class Use:
    """One name of @local_config_rocm and where a tree first uses it."""

    kind: str  # "label" or "symbol"
    name: str  # "@local_config_rocm//rocm:hipblas" or "@local_config_rocm//rocm:build_defs.bzl%if_rocm"
    file: str  # relative to the tree's root
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def normalise_label(package: str, target: str | None) -> str | None:
    """`@local_config_rocm//pkg:name`, with the package's last segment as the name when none is given."""
    package = package.rstrip("/")
    if target is None:
        if not package:
            return None  # "@local_config_rocm//" alone is not a target
        target = package.rsplit("/", 1)[-1]
    if not target or target.endswith("."):
        return None  # a label assembled by formatting or concatenation: not known from the text
    return f"@{REPOSITORY}//{package}:{target}"


def _strip_comments(text: str) -> str:
    """Comments out, line numbers kept (a `#` inside a string is rare in these files and
    at worst hides a name that a build would then report itself)."""
    return _COMMENT.sub("", text)


def scan_text(text: str, file: str) -> list[Use]:
    """Every @local_config_rocm label and build_defs symbol one file uses, in file order."""
    text = _strip_comments(text)
    uses = []
    for match in _LABEL.finditer(text):
        label = normalise_label(match.group(1), match.group(2))
        if label:
            uses.append(Use("label", label, file, text.count("\n", 0, match.start()) + 1))
    for match in _LOAD.finditer(text):
        module = match.group(2)
        repository = re.match(r"@@?" + _NAMES + "//", module)
        if not repository:
            continue
        module = f"@{REPOSITORY}//" + module[repository.end():]
        line = text.count("\n", 0, match.start()) + 1
        for arg in _LOAD_ARG.finditer(match.group(3)):
            uses.append(Use("symbol", f"{module}%{arg.group(3)}", file, line))
    return uses


def is_bazel_file(name: str) -> bool:
    return name in BUILD_FILE_NAMES or name.endswith(BAZEL_SUFFIXES)


def _skipped(relative: PurePosixPath) -> bool:
    return any(part in SKIPPED_DIRS or part.startswith("bazel-") for part in relative.parts[:-1])


def directory_texts(root: Path) -> Iterator[tuple[str, str]]:
    """(path relative to root, text) of a checkout's BUILD, .bzl and .bazelrc files, in a
    stable order; links to folders are not followed."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("bazel-"))
        for name in sorted(filenames):
            if is_bazel_file(name):
                path = Path(dirpath, name)
                try:
                    yield str(path.relative_to(root)), path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue  # a dangling link or unreadable file is not part of the tree's build


def archive_texts(archive: Path) -> Iterator[tuple[str, str]]:
    """The same for an archive of a checkout (a git archive, a release tarball), its one top
    folder stripped, read under the one archive policy (extract_archive.read_archive, whose
    UnsafeArchive also says a damaged archive is one)."""
    contents = extract_archive.read_archive(archive, lambda name: is_bazel_file(PurePosixPath(name).name))
    names = [e.name for e in contents.entries if e.kind != "dir"]
    tops = {PurePosixPath(name).parts[0] for name in names}
    strip = 1 if len(tops) == 1 and all(len(PurePosixPath(n).parts) > 1 for n in names) else 0
    for name in sorted(contents.files):
        relative = PurePosixPath(*PurePosixPath(name).parts[strip:])
        if not _skipped(relative):
            yield str(relative), contents.files[name].decode("utf-8", errors="replace")


def tree_texts(tree: Path) -> Iterator[tuple[str, str]]:
    return directory_texts(tree) if tree.is_dir() else archive_texts(tree)


def named_texts(trees: list[Path]) -> list[tuple[str, str]]:
    """(tree name/relative path, text) of every Bazel file of each tree (checkout or archive),
    read once for every check of a pre-flight."""
    return [(f"{tree.name}/{relative}", text) for tree in trees for relative, text in tree_texts(tree)]


def collect_texts(texts: list[tuple[str, str]]) -> dict[str, Use]:
    """Name -> its first use, over (file, text) pairs in the order given."""
    first: dict[str, Use] = {}
    for file, text in texts:
        for use in scan_text(text, file):
            first.setdefault(use.name, use)
    return first


def collect(trees: list[Path]) -> dict[str, Use]:
    """Name -> its first use, over every tree (a checkout or an archive, in the order given)."""
    return collect_texts(named_texts(trees))


def labels_of(uses: dict[str, Use]) -> list[str]:
    return sorted(n for n, u in uses.items() if u.kind == "label")


def symbols_by_module(uses: dict[str, Use]) -> dict[str, list[str]]:
    """The .bzl label -> the symbols loaded from it."""
    modules: dict[str, list[str]] = {}
    for name, use in sorted(uses.items()):
        if use.kind == "symbol":
            module, symbol = name.split("%", 1)
            modules.setdefault(module, []).append(symbol)
    return modules


def probe_packages(uses: dict[str, Use]) -> dict[str, str]:
    """Folder -> BUILD file: one package per used symbol, each loading just that symbol, since
    Bazel stops loading a file at its first missing symbol. They define no target: the labels
    are asked of `bazel query` directly."""
    packages = {}
    for module, symbols in symbols_by_module(uses).items():
        for symbol in symbols:
            packages[f"s{len(packages)}"] = (
                '"""Written by ci_build preflight: does @local_config_rocm define what the trees load?"""\n'
                f'load("{module}", "{symbol}")\n'
            )
    return packages


# Bazel 7's words for a symbol a loaded .bzl file lacks (missing labels are those `bazel query`
# does not print back: present_labels).
_MISSING_SYMBOL = re.compile(r"file '@@?([^/']*)//([^:']*):([^']*)' does not contain symbol '(\w+)'")


def present_labels(query_stdout: str) -> set[str]:
    """Labels `bazel query` printed, in this file's spelling of the repository."""
    present = set()
    for line in query_stdout.splitlines():
        match = re.match(r"@@?[^/]*//([^:]*):(\S+)$", line.strip())
        if match:
            present.add(f"@{REPOSITORY}//{match.group(1)}:{match.group(2)}")
    return present


def missing_symbols(bazel_stderr: str) -> set[str]:
    """`module%symbol` for every symbol Bazel said a loaded .bzl file does not contain."""
    return {f"@{REPOSITORY}//{m.group(2)}:{m.group(3)}%{m.group(4)}" for m in _MISSING_SYMBOL.finditer(bazel_stderr)}


def report(uses: dict[str, Use], missing: set[str]) -> list[str]:
    """One line per missing name, with the first file that uses it, labels first."""
    lines = []
    for name in sorted(missing, key=lambda n: (uses[n].kind, n) if n in uses else ("", n)):
        use = uses.get(name)
        if use is not None and use.kind == "symbol":
            module, symbol = name.split("%", 1)
            shown = f"symbol {symbol} of {module}"
        else:
            shown = f"target {name}"
        where = f" (first used in {use.where})" if use else ""
        lines.append(f"missing {shown}{where}")
    return lines
