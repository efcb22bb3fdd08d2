#!/usr/bin/env python3
"""Where a ROCm toolkit comes from, by the names XLA's rocm_configure.bzl reads.

    python3 toolkit_sources.py choose                                   # which name decides (environment)
    python3 toolkit_sources.py distro --table rocm_redist.bzl --name rocm_7.13.0_gfx908
    python3 toolkit_sources.py merge --into DIR [--llvm-path LLVM] PATH [PATH ...]
    python3 toolkit_sources.py links --root DIR llvm/amdgcn:amdgcn,...

XLA's order, first set wins (XLA's third_party/gpus/rocm_configure.bzl):
  ROCM_PATH=DIR               an installed toolkit
  TF_ROCM_MULTIPLE_PATHS=A:B  installations merged into one tree of links: every file and link
                              under each (`find A/* -type f -o -type l`) at its own relative path;
                              a path in two of them is an error. LLVM_PATH=DIR adds llvm/, lib/llvm/
                              and amdgcn/ (its amdgcn/) to that tree
  ROCM_DISTRO_URL=URL         a tarball; ROCM_DISTRO_HASH (its sha256) is required,
                              ROCM_DISTRO_LINKS=target:link,... makes links inside it
  ROCM_DISTRO_VERSION=NAME    an entry of XLA's third_party/gpus/rocm/rocm_redist.bzl
This project's THEROCK_URL (+ THEROCK_SHA256, THEROCK_STRIP_PREFIX) ranks with ROCM_DISTRO_URL;
both set is a conflict. A name beside a higher one, or a qualifier without its name, is
reported in one note line, never ignored silently.

Answers are JSON on stdout; an error is one line on stderr, `toolkit_sources: ...`, exit 2.
Stdlib only: rocm_configure.bzl's repository rule runs it, and build/ci_build imports it.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import posixpath
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

# Where XLA keeps its table, relative to an XLA tree.
REDIST_TABLE = "third_party/gpus/rocm/rocm_redist.bzl"


class SourceError(Exception):
    """An input that cannot work; the message names it, what was found, and the fix."""


# ---- which name decides -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Source:
    """A name that can decide the toolkit; its qualifiers only mean something beside it.
    Sources of one rank are alternatives: two of them set is a conflict."""
    name: str
    rank: int
    qualifiers: tuple[str, ...] = ()


# XLA's own names, in XLA's order (its _setup_rocm_distro_dir).
XLA_PRECEDENCE = (
    Source("ROCM_PATH", 0),
    Source("TF_ROCM_MULTIPLE_PATHS", 1, ("LLVM_PATH",)),
    Source("ROCM_DISTRO_URL", 2, ("ROCM_DISTRO_HASH", "ROCM_DISTRO_LINKS")),
    Source("ROCM_DISTRO_VERSION", 3),
)
# This project's name for a tarball: what ROCM_DISTRO_URL is to XLA.
PROJECT_SOURCES = (Source("THEROCK_URL", 2, ("THEROCK_SHA256", "THEROCK_STRIP_PREFIX")),)
SOURCES = tuple(sorted(XLA_PRECEDENCE + PROJECT_SOURCES, key=lambda s: s.rank))  # stable: XLA's first in a rank
# Every name choose() reads, and the only ones the CLI takes from its environment.
NAMES = tuple(n for s in SOURCES for n in (s.name, *s.qualifiers))
QUALIFIED = {q: s.name for s in SOURCES for q in s.qualifiers}
XLA_ORDER = ", ".join(s.name for s in XLA_PRECEDENCE)


@dataclasses.dataclass(frozen=True)
class Choice:
    """Which name decides the toolkit (winner None: none is set, or a conflict), and what is
    set but not used: names below the winner and their qualifiers (losers), qualifiers whose
    own name is not set (orphans), as (name, value) pairs in the order of SOURCES."""
    winner: str | None
    value: str | None
    losers: tuple[tuple[str, str], ...] = ()
    orphans: tuple[tuple[str, str], ...] = ()
    conflict: str | None = None

    def not_used(self) -> str:
        """`NAME=VALUE, ...` of what is set and not used ("" if nothing)."""
        parts = [f"{n}={v}" for n, v in self.losers]
        parts += [f"{n}={v} (it qualifies {QUALIFIED[n]}, which is not set)" for n, v in self.orphans]
        return ", ".join(parts)

    def note(self, prefix: str = "rocm_configure") -> str | None:
        """The one line that says what is not used and why (None: everything set is used)."""
        if self.conflict:
            return f"{prefix}: {self.conflict}"
        unused = self.not_used()
        if not unused:
            return None
        names = [n for n, _ in self.losers + self.orphans] + ([self.winner] if self.winner else [])
        order = XLA_ORDER + ("; this project's THEROCK_URL ranks with ROCM_DISTRO_URL"
                             if any(n.startswith("THEROCK_") for n in names) else "")
        head = (f"{self.winner}={self.value} decides the toolkit" if self.winner
                else f"none of {', '.join(s.name for s in SOURCES)} is set")
        return f"{prefix}: {head} (XLA's order: {order}); not used: {unused}"

    def to_json(self) -> dict:
        return {"winner": self.winner, "value": self.value, "losers": [list(p) for p in self.losers],
                "orphans": [list(p) for p in self.orphans], "conflict": self.conflict, "note": self.note()}


def choose(environ: Mapping[str, str]) -> Choice:
    """Which of the toolkit names in `environ` decides (an empty or blank value is unset, as
    --repo_env=NAME= clears a name); pure."""
    values = {n: environ[n].strip() for n in NAMES if environ.get(n, "").strip()}
    mains = [s for s in SOURCES if s.name in values]
    if not mains:
        return Choice(None, None, orphans=tuple((q, values[q]) for q in QUALIFIED if q in values))
    top = [s for s in mains if s.rank == mains[0].rank]
    below = [s for s in mains if s.rank > mains[0].rank]
    losers = tuple((n, values[n]) for s in below for n in (s.name, *s.qualifiers) if n in values)
    orphans = tuple((q, values[q]) for s in SOURCES if s.name not in values for q in s.qualifiers if q in values)
    if len(top) > 1:
        named = " and ".join(f"{s.name}={values[s.name]}" for s in top)
        conflict = (f"{named} both name the toolkit's tarball (THEROCK_URL is this project's name for what XLA calls "
                    f"ROCM_DISTRO_URL): unset one of them (--repo_env={top[-1].name}=, or --repo_env={top[0].name}=)")
        return Choice(None, None, losers, orphans, conflict)
    return Choice(top[0].name, values[top[0].name], losers, orphans)


# ---- XLA's redistribution table -----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Distro:
    """One tarball of XLA's table: where to get it, its sha256, the links to make inside it
    ((target, link) pairs, relative to the extracted tree) and the toolkit's folder in it."""
    name: str
    url: str
    sha256: str
    links: tuple[tuple[str, str], ...]
    rocm_root: str

    def to_json(self) -> dict:
        return {"name": self.name, "url": self.url, "sha256": self.sha256,
                "links": [list(pair) for pair in self.links], "rocm_root": self.rocm_root}


def _literal(node: ast.AST, where: str):
    """A Starlark literal as Python data: struct(k = v) -> dict; dicts, lists, strings as they are."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e, where) for e in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_key(k, where): _literal(v, where) for k, v in zip(node.keys, node.values)}
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "struct" and not node.args
            and all(k.arg for k in node.keywords)):
        return {k.arg: _literal(k.value, where) for k in node.keywords}
    text = ast.unparse(node)
    raise SourceError(f"{where} line {getattr(node, 'lineno', '?')}: `{text[:80]}` in rocm_redist is not a struct(), "
                      "a list, a dict or a string, the only values this reader takes; is the file XLA's "
                      f"{REDIST_TABLE}?")


def _key(node: ast.AST | None, where: str) -> str:
    key = _literal(node, where)
    if not isinstance(key, str):
        raise SourceError(f"{where} line {node.lineno}: a key of rocm_redist is not a string")
    return key


def redistributions(text: str, where: str = REDIST_TABLE) -> dict[str, dict]:
    """The `rocm_redist = {...}` table of a rocm_redist.bzl's text: name -> its struct as a
    dict. `where` names the file in errors."""
    try:
        tree = ast.parse(text, filename=where)
    except SyntaxError as e:
        raise SourceError(f"{where} line {e.lineno}: cannot be read ({e.msg}); give XLA's {REDIST_TABLE}") from None
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == "rocm_redist"):
            table = _literal(stmt.value, where)
            if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
                raise SourceError(f"{where} line {stmt.lineno}: rocm_redist is not a dict of struct()s; give XLA's "
                                  f"{REDIST_TABLE}")
            return table
    raise SourceError(f"{where} has no `rocm_redist = {{...}}` table; give XLA's {REDIST_TABLE} (XLA trees from "
                      "before hermetic ROCm have none)")


def _relative(value: str, what: str) -> str:
    """A path inside a tree: relative, without `..`; normalised (a/./b -> a/b)."""
    if not value or value.startswith("/") or ".." in value.split("/"):
        raise SourceError(f"{what}: {value!r} is not a path inside the toolkit's tree; give a relative path without "
                          "`..` components (e.g. llvm/amdgcn)")
    return posixpath.normpath(value)


def _check_links(pairs: Iterable[tuple[str, str]], what: str) -> tuple[tuple[str, str], ...]:
    result = []
    for target, link in pairs:
        pair = f"{what}: {target}:{link}"
        target, link = _relative(target, pair), _relative(link, pair)
        if link == ".":
            raise SourceError(f"{pair}: the link would be the tree's root itself; name a path inside it")
        result.append((target, link))
    links = [link for _, link in result]
    twice = sorted({link for link in links if links.count(link) > 1})
    if twice:
        raise SourceError(f"{what}: {', '.join(twice)} is made a link more than once; give each link once")
    return tuple(result)


def distro(table: dict, name: str, where: str = REDIST_TABLE) -> Distro:
    """The one tarball ROCM_DISTRO_VERSION=`name` stands for in `table` (redistributions())."""
    if name not in table:
        raise SourceError(f"ROCM_DISTRO_VERSION={name} is not in XLA's redistribution table ({where}); known: "
                          f"{', '.join(table) or 'none'}")
    entry = table[name]
    what = f"ROCM_DISTRO_VERSION={name} ({where})"
    packages = entry.get("packages")
    if not isinstance(packages, list) or not packages or not all(isinstance(p, dict) for p in packages):
        raise SourceError(f"{what}: its entry has no list of packages; is the file XLA's {REDIST_TABLE}?")
    wheels = [p for p in packages if str(p.get("url", "")).endswith(".whl") or "sub_package" in p]
    if wheels:
        files = ", ".join(str(p.get("url", "?")).rsplit("/", 1)[-1] for p in wheels)
        raise SourceError(f"{what} is a set of pip wheels ({files}), which this project does not take as a "
                          "distribution: `pip install` them (TheRock's rocm-sdk packages) and build with "
                          "--repo_env=ROCM_PATH=$(rocm-sdk path --root), or choose a tarball entry")
    if len(packages) > 1:
        files = ", ".join(str(p.get("url", "?")).rsplit("/", 1)[-1] for p in packages)
        raise SourceError(f"{what} has {len(packages)} tarballs ({files}); this project takes one tarball per "
                          "distribution: extract them and give the folders as TF_ROCM_MULTIPLE_PATHS=A:B, or choose "
                          "an entry of one tarball")
    package = packages[0]
    url, sha256 = package.get("url"), package.get("sha256")
    if not isinstance(url, str) or not url or not isinstance(sha256, str) or not sha256:
        raise SourceError(f"{what}: its package lacks a url or a sha256 ({sorted(package)}); is the file XLA's "
                          f"{REDIST_TABLE}?")
    softlinks = entry.get("required_softlinks", [])
    if not isinstance(softlinks, list) or not all(isinstance(s, dict) and isinstance(s.get("target"), str)
                                                  and isinstance(s.get("link"), str) for s in softlinks):
        raise SourceError(f"{what}: required_softlinks is not a list of struct(target = ..., link = ...)")
    links = _check_links([(s["target"], s["link"]) for s in softlinks], f"{what} required_softlinks")
    root = entry.get("rocm_root", "")
    if not isinstance(root, str):
        raise SourceError(f"{what}: rocm_root is not a string")
    root = "" if root in ("", ".") else _relative(root, f"{what} rocm_root")
    return Distro(name, url, sha256, links, root)


# ---- links and merges ---------------------------------------------------------------------


def parse_links(spec: str) -> tuple[tuple[str, str], ...]:
    """ROCM_DISTRO_LINKS: `target:link,target:link` -> ((target, link), ...); "" -> ()."""
    if not spec.strip():
        return ()
    pairs = []
    for part in spec.split(","):
        fields = [f.strip() for f in part.split(":")]
        if len(fields) != 2 or not all(fields):
            raise SourceError(f"ROCM_DISTRO_LINKS={spec}: {part.strip()!r} is not target:link (two non-empty paths "
                              "inside the tarball's tree, e.g. llvm/amdgcn:amdgcn); separate pairs with single commas")
        pairs.append((fields[0], fields[1]))
    return _check_links(pairs, "ROCM_DISTRO_LINKS")


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def make_links(root: Path, links: Iterable[tuple[str, str]]) -> int:
    """Makes each link (relative to `root`) lead to its target (relative to `root`), as a
    relative symlink; returns how many were made. A link already leading there is kept; a
    target missing, a path taken by something else, or anything resolving outside `root` is
    refused (SourceError), before anything is made."""
    real_root = root.resolve()
    if not real_root.is_dir():
        raise SourceError(f"links: {root} is not a directory; give the extracted toolkit's folder")
    made = []
    for target, link in _check_links(links, "ROCM_DISTRO_LINKS"):
        pair = f"ROCM_DISTRO_LINKS: {target}:{link}"
        target_path, link_path = real_root / target, real_root / link
        if not _inside(target_path.resolve(), real_root) or not _inside(link_path.parent.resolve(), real_root):
            raise SourceError(f"{pair} leads outside {root} through a link in the tree; name paths that stay inside it")
        if not os.path.lexists(target_path):
            raise SourceError(f"{pair}: {target} is not in {root}; name a file or folder the tarball has")
        if os.path.lexists(link_path):
            if link_path.resolve() == target_path.resolve():
                continue  # the tarball has it already
            raise SourceError(f"{pair}: {link} is already in {root} (and does not lead to {target}); drop the pair")
        made.append((target_path, link_path))
    for target_path, link_path in made:
        link_path.parent.mkdir(parents=True, exist_ok=True)
        link_path.symlink_to(os.path.relpath(target_path, link_path.parent))
    return len(made)


def _raise(error: OSError) -> None:
    raise error


def _walk(top: Path) -> Iterable[Path]:
    """What `find TOP/* \\( -type f -o -type l \\)` prints, sorted: files and links (a link to a
    folder is not descended), under TOP's entries whose names do not start with `.` (the shell's
    `*`); special files are left out. An unreadable folder is an error, not a gap in the tree."""
    for entry in sorted(top.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink() or entry.is_file():
            yield entry
        elif entry.is_dir():
            for folder, dirs, files in os.walk(entry, onerror=_raise):
                dirs.sort()
                here = Path(folder)
                # os.walk lists a link to a folder among the folders, and does not follow it.
                for name in sorted(files + [d for d in dirs if (here / d).is_symlink()]):
                    path = here / name
                    if path.is_symlink() or path.is_file():
                        yield path


def merge(paths: Sequence[Path], llvm_path: Path | None, into: Path) -> int:
    """TF_ROCM_MULTIPLE_PATHS: every file and link under each of `paths` linked (absolutely) at
    its relative path in `into`; with LLVM_PATH also llvm/, lib/llvm/ and amdgcn/ (its amdgcn/,
    if it has one). A path found in two installations, or one under a link another made, is
    refused (SourceError) before `into` is written. Returns how many links were made."""
    if os.path.lexists(into) and (not into.is_dir() or any(into.iterdir())):
        raise SourceError(f"merge: {into} is not an empty folder; merge into a new one")
    if not paths:
        raise SourceError("TF_ROCM_MULTIPLE_PATHS is empty; give installations separated by `:`, e.g. /opt/rocm-a:/opt/rocm-b")
    tops = [Path(os.path.abspath(p)) for p in paths]
    for given, top in zip(paths, tops):
        if not top.is_dir():
            raise SourceError(f"TF_ROCM_MULTIPLE_PATHS: {given} is not a directory (relative paths are taken from "
                              f"{os.getcwd()}); give the absolute paths of existing installations")
        if tops.count(top) > 1:
            raise SourceError(f"TF_ROCM_MULTIPLE_PATHS names {given} more than once; give each installation once")
    plan: dict[str, Path] = {}  # relative path -> what it links to
    origin: dict[str, Path] = {}  # relative path -> the installation (or LLVM_PATH) it came from
    folders: dict[str, Path] = {}  # folders the links need -> the first installation to need each

    def claim(rel: str, target: Path, source: Path, name: str) -> None:
        other = origin.get(rel) or folders.get(rel)
        parents = [str(p) for p in Path(rel).parents if str(p) != "."]
        under = next((p for p in parents if p in origin), None)
        if other is None and under is not None:
            rel, other = under, origin[under]
        if other is not None:
            raise SourceError(f"{name}: {rel} is in both {other} and {source}; a merge takes each path from one "
                              "installation only: remove one of them from TF_ROCM_MULTIPLE_PATHS (or LLVM_PATH), or "
                              "build against one installation with ROCM_PATH")
        plan[rel], origin[rel] = target, source
        for p in parents:
            folders.setdefault(p, source)

    for top in tops:
        for path in _walk(top):
            claim(path.relative_to(top).as_posix(), path, top, "TF_ROCM_MULTIPLE_PATHS")
    if llvm_path is not None:
        llvm = Path(os.path.abspath(llvm_path))
        if not llvm.is_dir():
            raise SourceError(f"LLVM_PATH={llvm_path} is not a directory; give the LLVM of the installations (the folder "
                              "holding bin/clang), or unset it")
        for rel in ("llvm", "lib/llvm"):
            claim(rel, llvm, llvm, "LLVM_PATH")
        if (llvm / "amdgcn").exists():  # a link to nothing helps nobody: the finder looks elsewhere then
            claim("amdgcn", llvm / "amdgcn", llvm, "LLVM_PATH")
    for rel, target in plan.items():
        link = into / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
    return len(plan)


# ---- the command line ---------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """Usage errors as every other error here: one line, exit 2."""

    def error(self, message: str):
        print(f"toolkit_sources: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="toolkit_sources.py", description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="{choose,distro,merge,links}")
    sub.add_parser("choose", help="which name decides, from this program's environment: JSON "
                   '{"winner", "value", "losers", "orphans", "conflict", "note"}; two tarball names set is an error',
                   description=f"Reads only {', '.join(NAMES)} from the environment.")
    d = sub.add_parser("distro", help='ROCM_DISTRO_VERSION: an entry of XLA\'s table, JSON {"name", "url", "sha256", '
                       '"links": [[target, link], ...], "rocm_root"}',
                       description="The one tarball an entry of XLA's rocm_redist table stands for. Entries of pip "
                                   "wheels are refused (pip install them and use ROCM_PATH=$(rocm-sdk path --root)), "
                                   "and so are entries of several tarballs.")
    d.add_argument("--table", type=Path, required=True, metavar="FILE", help=f"XLA's {REDIST_TABLE}")
    d.add_argument("--name", required=True, help="the entry, e.g. rocm_7.13.0_gfx908")
    m = sub.add_parser("merge", help='TF_ROCM_MULTIPLE_PATHS: link the installations into one tree, JSON {"files": N}',
                       description="Links every file and link under each PATH (as `find PATH/* -type f -o -type l` "
                                   "lists them; a link to a folder is linked, not entered) at its relative path in "
                                   "DIR, each link leading to the installation's file. A path two installations both "
                                   "have is refused, naming both, before anything is written.")
    m.add_argument("--into", type=Path, required=True, metavar="DIR", help="the new tree (absent or empty)")
    m.add_argument("--llvm-path", type=Path, metavar="DIR", help="LLVM_PATH: linked as llvm/, lib/llvm/ and amdgcn/")
    m.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="the installations, in TF_ROCM_MULTIPLE_PATHS' order")
    k = sub.add_parser("links", help='ROCM_DISTRO_LINKS: make the links inside an extracted tree, JSON {"links": N}',
                       description="Makes each link (a path inside DIR) a relative symlink to its target (a path "
                                   "inside DIR). Absolute paths, `..`, a missing target, a link over an existing "
                                   "file, or a path leading out of DIR through a link are refused.")
    k.add_argument("--root", type=Path, required=True, metavar="DIR", help="the extracted tarball's folder")
    k.add_argument("spec", metavar="SPEC", help="target:link,target:link (paths inside DIR)")
    return p


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> dict:
    if args.command == "choose":
        choice = choose(environ)
        if choice.conflict:
            raise SourceError(choice.conflict)
        return choice.to_json()
    if args.command == "distro":
        try:
            text = args.table.read_text()
        except OSError as e:
            raise SourceError(f"--table={args.table}: cannot be read ({e.strerror or e}); give XLA's {REDIST_TABLE}") from None
        return distro(redistributions(text, str(args.table)), args.name, str(args.table)).to_json()
    if args.command == "merge":
        return {"files": merge(args.paths, args.llvm_path, args.into)}
    return {"links": make_links(args.root, parse_links(args.spec))}


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        answer = run(args, os.environ if environ is None else environ)
    except SourceError as e:
        print(f"toolkit_sources: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"toolkit_sources: {args.command}: {e}", file=sys.stderr)
        return 2
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
