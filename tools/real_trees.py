#!/usr/bin/env python3
"""Lay out the real upstream trees the gated test tier reads, from git repositories you have.

    python3 tools/real_trees.py --dest ~/.cache/trees \\
        --jax-git ~/src/jax [--jax-rev jax-v0.11.0 --jax-rev main] \\
        --xla-git ~/src/xla [--xla-rev main] \\
        --registry-git ~/src/bazel-central-registry --toolchain-git ~/src/rules_ml_toolchain
    . ~/.cache/trees/env.sh && python3 tools/run_tests.py -m bazel

Each --*-git is a git directory of the upstream repository: a clone, or a snapshot without a
work tree. Nothing is downloaded, and nothing is written into this checkout (the trees are
other projects' code: they never belong in it). What it lays out under --dest:
  * JAX at this project's pin (third_party/jax/pin.json) and at each --jax-rev;
  * XLA at this project's pin (third_party/xla/pin.json; ROCm/xla's main holds it) and at
    each --xla-rev;
  * the Bazel Central Registry at its HEAD, a registry for `--registry=file://DIR`;
  * rules_ml_toolchain at its pin, as a tree and as the GitHub archive the pin names,
    rebuilt byte for byte (`git archive | gzip -n`) in DEST/distdir and checked against the
    pin's sha256 (full mode takes it from a --distdir offline).
  * Bazel modules of full mode's graph (--module NAME=GIT@REV, made what the registry laid out
    under DEST/registry makes of that version: its overlay, patches and MODULE.bazel; or
    --module-dir NAME=DIR for a folder you assembled, e.g. a load-only stand-in of grpc's
    .bzl files), each named in
    DEST/full.bazelrc as `--override_module`, so that full mode loads them offline. With
    bazel_features among them, also its version and globals repositories for --bazel-version:
    Debian's Bazel reports no version, which bazel_features reads as the newest Bazel (its
    globals then name Bazel 8's `macro`, and protobuf's rules cannot load); with rules_python and
    bazel_features, the tree reads --bazel-version where it reads Bazel's (an empty one is the newest).
  * Bazel modules of this project's own graph (--graph-module NAME@VERSION=GIT@REV: the versions
    MODULE.bazel selects from the registry, docs/registry.md) as DEST/modules/NAME-VERSION, made
    what the registry makes of that version, for the gated registry test (JAX_ROCM_TEST_MODULES).
  * XLA's third-party archives (--archive NAME=GIT): rebuilt byte for byte into DEST/distdir
    where git can (commit and tag tarballs); otherwise (GitHub's zips, release assets) laid out
    under DEST/archives as the repository XLA's rule makes of them (its patches, BUILD file and
    linked files applied) and named in DEST/full.bazelrc with --override_repository.
Files absent from a snapshot (large test data) are skipped and counted. A tree already laid
out at the same commit is kept. DEST/env.sh then sets one variable per tree of the gated tier
(the pins; the other revisions are listed there to swap in).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
# JAX's patches of the modules full/MODULE.bazel overrides, as full mode applies them (written
# there by build/ci_build from the JAX source: build/ci_build_cli/full.py).
JAX_PATCHES = CHECKOUT / "full" / "jax_patches"
STAMP = ".real_trees.json"  # in each tree: the repository and commit it was laid out from


class TreeError(Exception):
    """A repository or revision that cannot be laid out, with what to do."""


@dataclasses.dataclass(frozen=True)
class Tree:
    name: str  # folder under --dest, e.g. "xla-pin", "jax-jax-v0.11.0"
    commit: str
    path: Path
    files: int
    absent: int  # blobs the snapshot does not hold


def pin(name: str) -> dict:
    return json.loads((CHECKOUT / "third_party" / name / "pin.json").read_text())


def git(gitdir: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], **{"check": False, **kwargs})


def git_dir(path: Path) -> Path:
    """The git directory of a clone (DIR/.git) or of a bare snapshot (DIR)."""
    for candidate in (path / ".git", path):
        if git(candidate, "rev-parse", "--git-dir", capture_output=True).returncode == 0:
            return candidate
    raise TreeError(f"{path} is not a git repository (pass a clone or a snapshot's git directory)")


def resolve(gitdir: Path, rev: str) -> str:
    result = git(gitdir, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", capture_output=True, text=True)
    if result.returncode != 0:
        raise TreeError(f"{gitdir} has no revision {rev!r} (fetch it, or pass another --*-rev)")
    return result.stdout.strip()


def extract(gitdir: Path, commit: str, dest: Path) -> tuple[int, int]:
    """Writes the commit's files under dest (replacing what is there); (files, absent blobs)."""
    listing = git(gitdir, "ls-tree", "-r", "-z", commit, capture_output=True, check=True).stdout
    entries = []
    for line in filter(None, listing.split(b"\0")):
        meta, path = line.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob":
            entries.append((mode, sha, path.decode()))
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    absent = 0
    with subprocess.Popen(["git", f"--git-dir={gitdir}", "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as batch:
        for mode, sha, path in entries:
            batch.stdin.write(sha + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if header[-1] == b"missing":
                absent += 1
                continue
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)
            target = partial / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == b"120000":
                os.symlink(data.decode(), target)
            else:
                target.write_bytes(data)
                target.chmod(0o755 if mode == b"100755" else 0o644)
        batch.stdin.close()
    shutil.rmtree(dest, ignore_errors=True)
    os.rename(partial, dest)
    return len(entries), absent


def lay_out(gitdir: Path, rev: str, dest: Path, name: str) -> Tree:
    commit = resolve(gitdir, rev)
    path = dest / name
    stamp = path / STAMP
    if stamp.is_file():
        known = json.loads(stamp.read_text())
        if known.get("commit") == commit:
            print(f"real_trees: {name}: kept ({commit[:12]})", file=sys.stderr)
            return Tree(name, commit, path, known["files"], known["absent"])
    print(f"real_trees: {name}: extracting {rev} ({commit[:12]}) ...", file=sys.stderr, flush=True)
    files, absent = extract(gitdir, commit, path)
    stamp.write_text(json.dumps({"repository": str(gitdir), "rev": rev, "commit": commit, "files": files,
                                 "absent": absent}, indent=2) + "\n")
    print(f"real_trees: {name}: {files} files, {absent} absent from the snapshot", file=sys.stderr)
    return Tree(name, commit, path, files, absent)


def github_archive(gitdir: Path, commit: str, prefix: str, out: Path) -> str:
    """GitHub's /archive/<commit>.tar.gz of a commit, rebuilt (git archive, gzip without a
    name or time); its sha256."""
    tar = git(gitdir, "archive", "--format=tar", f"--prefix={prefix}/", commit, capture_output=True)
    if tar.returncode != 0:
        raise TreeError(f"git archive of {commit} failed (a snapshot without some of its files?): "
                        f"{tar.stderr.decode(errors='replace').strip()}")
    # GNU gzip's deflate at its default level, no name or time: what GitHub's archives match
    # (Python's gzip module compresses differently).
    data = subprocess.run(["gzip", "-cn"], input=tar.stdout, capture_output=True, check=True).stdout
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def apply_registry_version(tree: Path, version_dir: Path) -> list[str]:
    """Makes a module's tree what Bazel makes of the registry's version (modules/NAME/VERSION):
    its overlay files, its patches (GNU patch), and its MODULE.bazel, which Bazel reads for a
    registry module and from the tree for an --override_module. Returns what was applied."""
    source = json.loads((version_dir / "source.json").read_text())
    applied = []
    for relative in source.get("overlay", {}):
        target = tree / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(version_dir / "overlay" / relative, target)
        applied.append(f"overlay {relative}")
    for patch in source.get("patches", {}):
        targets = set(re.findall(r"^\+\+\+ (?:[^/\s]+/)?(\S+)", (version_dir / "patches" / patch).read_text(errors="replace"), re.M))
        if targets == {"MODULE.bazel"}:
            applied.append(f"patch {patch} (MODULE.bazel only: the registry's file replaces it)")
            continue  # a release archive's MODULE.bazel may differ from the tag's; the result is the same
        with open(version_dir / "patches" / patch, "rb") as stdin:
            result = subprocess.run(["patch", f"-p{source.get('patch_strip', 0)}", "--batch", "--forward", "-d", str(tree)],
                                    stdin=stdin, capture_output=True, text=True)
        if result.returncode != 0:
            raise TreeError(f"the registry's {patch} does not apply to {tree}: {result.stdout.strip()[-500:]}")
        applied.append(f"patch {patch}")
    shutil.copyfile(version_dir / "MODULE.bazel", tree / "MODULE.bazel")
    applied.append("MODULE.bazel")
    return applied


def apply_release_layout(tree: Path) -> list[str]:
    """Makes a module's git tree hold the BUILD files of its release archive, where the tree keeps
    them beside the development ones as BUILD.release.bazel (rules_kotlin: its git BUILD files load
    the release packager, which needs rules_pkg; its release archive's do not). Returns the packages changed."""
    changed = []
    for release in sorted(tree.rglob("BUILD.release.bazel")):
        for development in ("BUILD", "BUILD.bazel"):
            (release.parent / development).unlink(missing_ok=True)
        release.rename(release.parent / "BUILD.bazel")
        changed.append(release.parent.relative_to(tree).as_posix() or ".")
    return changed


def module_tree(name: str, version: str, gitdir: Path, rev: str, dest: Path, folder: str, registry_modules: Path | None,
                bazel_version: str, jax_patch: bytes | None = None) -> Tree:
    """A Bazel module's tree at `rev` under dest/folder, made what the registry makes of `version`
    (when registry_modules holds it) and what Debian's Bazel needs (its version where the module
    reads Bazel's); JAX's patch of it applied when given. Each step is done once (the stamp says which)."""
    tree = lay_out(gitdir, rev, dest, folder)
    version_dir = registry_modules / name / version if registry_modules else None
    stamp = json.loads((tree.path / STAMP).read_text())

    def record(step: str, result: object) -> None:
        stamp[step] = result  # a tree is changed once: the stamp says which steps were done
        (tree.path / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")

    if "release_layout" not in stamp:
        record("release_layout", apply_release_layout(tree.path))
        if stamp["release_layout"]:
            print(f"real_trees: {tree.name}: the release archive's BUILD files in {len(stamp['release_layout'])} "
                  "package(s)", file=sys.stderr)
    if version_dir and version_dir.is_dir() and "registry" not in stamp:
        record("registry", apply_registry_version(tree.path, version_dir))
        print(f"real_trees: {tree.name}: as the registry's {name} {version_dir.name}: {', '.join(stamp['registry'])}",
              file=sys.stderr)
    if name in BAZEL_VERSION_READERS and "bazel_version" not in stamp:
        record("bazel_version", pin_bazel_version(tree.path, name, bazel_version))
        print(f"real_trees: {tree.name}: reads Bazel {bazel_version} in {', '.join(stamp['bazel_version'])}",
              file=sys.stderr)
    if jax_patch and "jax_patches" not in stamp:
        apply_patch(tree.path, jax_patch, f"JAX's patch of {name}")
        record("jax_patches", hashlib.sha256(jax_patch).hexdigest())
        print(f"real_trees: {tree.name}: JAX's patches of {name} applied", file=sys.stderr)
    return tree


def is_git_archive(url: str) -> bool:
    """A GitHub /archive/ or a GitLab /-/archive/: `git archive` of a commit or tag."""
    return ("github.com/" in url and "/archive/" in url) or "/-/archive/" in url


@dataclasses.dataclass(frozen=True)
class Archive:
    """An http_archive of XLA's third_party/**/workspace.bzl, as its text declares it."""

    name: str
    url: str  # the GitHub (or GitLab) /archive/ URL among its urls
    strip_prefix: str
    sha256: str
    declared_in: str
    # What the repository rule makes of the archive, as labels of XLA's tree: patches applied
    # in order (-p1), the BUILD file it puts at the root, and other files it links in.
    patches: tuple[str, ...] = ()
    build_file: str = ""
    link_files: tuple[tuple[str, str], ...] = ()  # (label, path in the repository)

    @property
    def from_git(self) -> bool:
        return is_git_archive(self.url)

    @property
    def rev(self) -> str:
        """The commit or tag GitHub made the archive of (another archive: its file's name)."""
        if not self.from_git:
            return self.url.rsplit("/", 1)[1].removesuffix(".tar.gz").removesuffix(".zip")
        tail = self.url.split("/archive/", 1)[1].removeprefix("refs/tags/")
        # /archive/<rev>.tar.gz, or /archive/<rev>/<name>.tar.gz
        return tail.split("/", 1)[0] if "/" in tail else tail.removesuffix(".tar.gz").removesuffix(".zip")


def _evaluate(node: ast.expr, names: dict[str, object]) -> object:
    """The value of a string expression of a workspace.bzl (constants, names, +, %, .format,
    tf_mirror_urls(url)); None when it is anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.List):
        return [_evaluate(e, names) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_evaluate(k, names): _evaluate(v, names) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, names), _evaluate(node.right, names)
        if isinstance(node.op, ast.Add) and isinstance(left, (str, list)) and type(left) is type(right):
            return left + right
        if isinstance(node.op, ast.Mod) and isinstance(left, str) and right is not None:
            return left % (tuple(right) if isinstance(right, list) else right)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            base = _evaluate(node.func.value, names)
            args = [_evaluate(a, names) for a in node.args]
            kwargs = {k.arg: _evaluate(k.value, names) for k in node.keywords}
            return base.format(*args, **kwargs) if isinstance(base, str) else None
        if isinstance(node.func, ast.Name) and node.func.id == "tf_mirror_urls" and node.args:
            url = _evaluate(node.args[0], names)
            return [url] if isinstance(url, str) else None
    return None


@functools.cache  # every --archive asks each XLA tree: its workspace.bzl files are read once
def xla_archives(xla: Path) -> dict[str, Archive]:
    """Every GitHub or GitLab archive XLA's third_party/**/workspace.bzl declares, by repository name."""
    found = {}
    for path in sorted(xla.glob("third_party/**/workspace.bzl")):
        try:
            module = ast.parse(path.read_text())
        except SyntaxError:
            continue
        names: dict[str, object] = {}
        for node in ast.walk(module):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                names[node.targets[0].id] = _evaluate(node.value, names)
        for node in ast.walk(module):
            if not isinstance(node, ast.Call):
                continue
            kw = {k.arg: _evaluate(k.value, names) for k in node.keywords if k.arg}
            urls = kw.get("urls") or ([kw["url"]] if isinstance(kw.get("url"), str) else [])
            # GitHub's /archive/ and any GitLab's /-/archive/ (`git archive | gzip -n` of a commit)
            # first; else the first URL that is not a mirror (a release asset).
            urls = [u for u in urls if isinstance(u, str)]
            github = [u for u in urls if is_git_archive(u)] or [u for u in urls if "mirror" not in u]
            if isinstance(kw.get("name"), str) and github and isinstance(kw.get("sha256"), str):
                patches = kw.get("patch_file") or kw.get("patches") or []  # tf_http_archive's, http_archive's
                links = kw.get("link_files") or {}
                found[kw["name"]] = Archive(kw["name"], github[0], kw.get("strip_prefix") or "", kw["sha256"],
                                            str(path.relative_to(xla)), tuple(p for p in patches if p),
                                            kw.get("build_file") or "", tuple(sorted(links.items())))
    return found


def label_path(xla: Path, label: str) -> Path:
    """The file of XLA's tree a label of its own names (//pkg:file, @xla//pkg:file)."""
    package, colon, name = label.removeprefix("@xla").partition(":")
    if not package.startswith("//") or not colon:
        raise TreeError(f"{label}: not a label of XLA's own tree (//package:file)")
    path = xla / package[2:] / name
    if not path.is_file():
        raise TreeError(f"{label}: {path} is not in the XLA tree")
    return path


def extension_of(xla: Path, declared_in: str) -> str:
    """The module extension of XLA's third_party/extensions whose file loads `declared_in`
    (a workspace.bzl): the middle of its repositories' canonical names."""
    package, _, file = declared_in.rpartition("/")
    label = f"//{package}:{file}"
    for bzl in sorted(xla.glob("third_party/extensions/*.bzl")):
        text = bzl.read_text()
        if f'"{label}"' in text:
            extensions = re.findall(r"^(\w+)\s*=\s*module_extension\(", text, re.M)
            if len(extensions) == 1:
                return extensions[0]
            raise TreeError(f"{bzl.relative_to(xla)} loads {label} and defines {len(extensions)} module extensions: "
                            "which one declares the archive is not read from the file")
    raise TreeError(f"no file of {xla}/third_party/extensions loads {label}")


def canonical_name(module: str, extension: str, repo: str, bazel_version: str) -> str:
    """A module extension's repository as Bazel names it: xla~~ext~repo (Bazel 7), xla++ext+repo (8 on)."""
    sep = "~" if bazel_version_key(bazel_version) < ((8,), False) else "+"
    return f"{module}{sep}{sep}{extension}{sep}{repo}"


def repository_tree(archive: Archive, xla: Path, out: Path, gitdir: Path | None = None,
                    folder: Path | None = None, rev: str | None = None) -> list[str]:
    """The repository XLA's rule makes of `archive`, laid out at `out`: the files at its revision
    (from git), or those of `folder` (the archive's top folder, e.g. an extracted release or
    Debian source tarball); XLA's patches applied and its BUILD and linked files copied in
    (what --override_repository takes where the archive itself cannot be rebuilt). Returns
    what was applied. `rev`: a revision of gitdir in place of the archive's."""
    # A strip_prefix deeper than the archive's top folder keeps one folder of it.
    inner = archive.strip_prefix.strip("/").partition("/")[2]
    partial = out.with_name(out.name + ".whole")
    shutil.rmtree(partial, ignore_errors=True)
    if gitdir is not None:
        extract(gitdir, resolve(gitdir, rev or archive.rev), partial)
    else:
        shutil.copytree(folder, partial, symlinks=True)
    shutil.rmtree(out, ignore_errors=True)
    os.rename(partial / inner if inner else partial, out)
    shutil.rmtree(partial, ignore_errors=True)
    done = []
    for patch in archive.patches:
        apply_patch(out, label_path(xla, patch).read_bytes(), f"{archive.declared_in}'s {patch}")
        done.append(patch)
    links = ([(archive.build_file, "BUILD.bazel")] if archive.build_file else []) + list(archive.link_files)
    for label, relative in links:
        target = out / relative
        target.unlink(missing_ok=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(label_path(xla, label), target)
        done.append(f"{label} -> {relative}")
    # A repository's boundary, which an archive's repository rule has Bazel write.
    if not any((out / f).exists() for f in ("REPO.bazel", "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel")):
        (out / "REPO.bazel").write_text("")
    return done


def apply_patch(tree: Path, text: bytes, what: str) -> None:
    result = subprocess.run(["patch", "-p1", "--batch", "--forward", "-d", str(tree)], input=text, capture_output=True)
    if result.returncode != 0:
        raise TreeError(f"{what} does not apply to {tree}: {result.stdout.decode(errors='replace').strip()[-500:]}")


def bazel_version_key(version: str) -> tuple[tuple[int, ...], bool]:
    """Orders Bazel versions as bazel_features does: a pre-release before its release."""
    release, _, pre = version.partition("-")
    return tuple(int(x) for x in release.split(".")), pre == ""


def bazel_features_repositories(tree: Path, bazel_version: str) -> dict[str, str]:
    """Files of bazel_features' version and globals repositories as its extension would make
    them under `bazel_version`, from the tables of its private/globals.bzl (a global exists
    from a version on; a legacy one until a version)."""
    module = ast.parse((tree / "private" / "globals.bzl").read_text())
    tables = {t.id: ast.literal_eval(n.value) for n in module.body if isinstance(n, ast.Assign) for t in n.targets
              if isinstance(t, ast.Name) and t.id in ("GLOBALS", "LEGACY_GLOBALS")}
    have = bazel_version_key(bazel_version)
    lines = [f"# Written by tools/real_trees.py: bazel_features' globals for Bazel {bazel_version}.", "globals = struct("]
    for name, since in tables["GLOBALS"].items():
        lines.append(f"    {name} = {name if have >= bazel_version_key(since) else 'None'},")
    for name, until in tables["LEGACY_GLOBALS"].items():
        value = name if have < bazel_version_key(until) else "None"
        lines.append(f"    {name} = getattr(getattr(native, 'legacy_globals', None), '{name}', {value}),")
    lines.append(")")
    return {
        "globals/globals.bzl": "\n".join(lines) + "\n",
        "globals/BUILD.bazel": 'exports_files(["globals.bzl"])\n',
        "globals/REPO.bazel": "",
        "version/version.bzl": f"version = '{bazel_version}'\n",
        "version/BUILD.bazel": 'exports_files(["version.bzl"])\n',
        "version/REPO.bazel": "",
    }


# Files of a module that decide from native.bazel_version, which Debian's Bazel leaves empty
# (a development build: "the newest Bazel"). rules_python then takes Bazel 7.7 for Bazel 9 and
# its py_binary asks for a launcher toolchain type Bazel 7 does not have; bazel_features' globals
# name Bazel 8's `macro`, and nothing that loads them (rules_java's extension) compiles.
BAZEL_VERSION_READERS = {"rules_python": ("python/private/internal_config_repo.bzl",),
                         "bazel_features": ("private/globals_repo.bzl", "private/version_repo.bzl")}


def pin_bazel_version(tree: Path, module: str, bazel_version: str) -> list[str]:
    """Makes a module's tree read `bazel_version` where it reads native.bazel_version (only in
    BAZEL_VERSION_READERS' files). Returns the files changed."""
    changed = []
    for relative in BAZEL_VERSION_READERS.get(module, ()):
        path = tree / relative
        text = path.read_text() if path.is_file() else ""
        if "native.bazel_version" in text:
            path.write_text(text.replace("native.bazel_version", repr(bazel_version)))
            changed.append(relative)
    return changed


# bazel_features' repositories of its version extension (Bazel 7's canonical names).
BAZEL_FEATURES_REPOSITORIES = {"globals": "bazel_features~~version_extension~bazel_features_globals",
                               "version": "bazel_features~~version_extension~bazel_features_version"}


def full_bazelrc(modules: dict[str, Path], features: Path | None) -> list[str]:
    lines = ["# Written by tools/real_trees.py: full mode's modules from local trees (--bazelrc=this file)."]
    lines += [f"common --override_module={name}={path}" for name, path in sorted(modules.items())]
    if features is not None:
        lines += [f"common --override_repository={repo}={features / folder}" for folder, repo in BAZEL_FEATURES_REPOSITORIES.items()]
    return lines


def rebuild_archives(name: str, dest: Path, full_xla: Path | None, bazel_version: str, gitdir: Path | None = None,
                     folder: Path | None = None, stand_in: str | None = None) -> tuple[list[str], list[str]]:
    """The archive `name` of every XLA tree under dest (and of full_xla), rebuilt from git into
    dest/distdir (Bazel takes a file there whose name and sha256 match the declaration). One
    that git cannot rebuild byte for byte (GitHub's zips, release assets), or one given as a
    folder, is laid out instead as the repository full_xla's rule makes of it, under
    dest/archives. Returns what could not be had, and full.bazelrc's --override_repository
    lines for the trees laid out. With `stand_in`, a revision of gitdir, full_xla's archive is
    laid out from that revision instead of the one declared (which gitdir lacks): a stand-in,
    said so."""
    trees = [xla for xla in sorted(dest.glob("xla-*")) if (xla / STAMP).is_file()]
    if full_xla and full_xla not in trees:
        trees.append(full_xla)
    archives = {a.sha256: a for xla in trees for a in [xla_archives(xla).get(name)] if a}
    if not archives:
        return [f"no XLA tree under {dest} (or --full-xla) declares an archive named {name!r} (the name in its "
                "workspace.bzl; lay out XLA first: --xla-git)"], []
    failed, overrides = [], []
    full_archive = xla_archives(full_xla).get(name) if full_xla else None
    for archive in archives.values():
        if gitdir is not None and not archive.from_git:
            failed.append(f"{name}: {archive.url} ({archive.declared_in}) is no archive of a git repository: "
                          "lay out its release with --archive-dir NAME=DIR")
            continue
        # GitHub's zips are not `git archive --format=zip`'s (measured): never tried.
        if gitdir is not None and not archive.url.endswith(".zip") and not (stand_in and archive == full_archive):
            out = dest / "distdir" / archive.url.rsplit("/", 1)[1]
            try:
                sha256 = github_archive(gitdir, resolve(gitdir, archive.rev), archive.strip_prefix.rstrip("/"), out)
            except TreeError as e:
                failed.append(f"{name} at {archive.rev} ({archive.declared_in}): {e}")
                continue
            if sha256 == archive.sha256:
                print(f"real_trees: {out}: {name} at {archive.rev}, sha256 matches {archive.declared_in}", file=sys.stderr)
                continue
            out.unlink()
        if archive != full_archive:
            # By design, not a failure: full.bazelrc describes one XLA tree.
            print(f"real_trees: {name} at {archive.rev} ({archive.declared_in} of another XLA tree): not rebuilt byte "
                  "for byte, and laid out as a repository only for the XLA tree of full.bazelrc (--full-xla)",
                  file=sys.stderr)
            continue
        source = str(gitdir or folder) + (f"@{stand_in}" if stand_in else "")
        note = f" (a stand-in: {archive.rev} is not in {gitdir})" if stand_in else ""
        rev = stand_in or archive.rev
        try:
            out = dest / "archives" / f"{name}-{rev.replace('/', '_')}"
            stamp = out / STAMP
            laid_out = json.loads(stamp.read_text()) if stamp.is_file() else {}
            if (laid_out.get("sha256"), laid_out.get("source")) != (archive.sha256, source):
                applied = repository_tree(archive, full_xla, out, gitdir=gitdir, folder=folder, rev=stand_in)
                stamp.write_text(json.dumps({"archive": archive.url, "sha256": archive.sha256, "source": source,
                                             "stand_in": bool(stand_in), "applied": applied}, indent=2) + "\n")
                print(f"real_trees: {out}: {name} {'at ' + rev if gitdir else 'from ' + source}{note} as "
                      f"{archive.declared_in} makes it{': ' + ', '.join(applied) if applied else ''}", file=sys.stderr)
            repo = canonical_name("xla", extension_of(full_xla, archive.declared_in), name, bazel_version)
        except (TreeError, OSError, subprocess.CalledProcessError) as e:
            failed.append(f"{name} at {archive.rev} ({archive.declared_in}): {e}")
            continue
        overrides.append(f"common --override_repository={repo}={out}")
    return failed, overrides


def folder_name(repo: str, rev: str, pinned: str) -> str:
    """xla-pin, xla-main, jax-v0.11.0 (a tag already naming its repository is kept as it is)."""
    if rev == pinned:
        return f"{repo}-pin"
    rev = rev.replace("/", "_")
    return rev if rev.startswith(f"{repo}-") else f"{repo}-{rev}"


def merged(old: str, new: list[str]) -> list[str]:
    """The new env.sh lines, after the old file's lines for variables this run did not set."""
    def variable(line: str) -> str | None:
        words = line.lstrip("# ").split()
        return words[1].split("=")[0] if len(words) > 1 and words[0] == "export" else None
    now = {variable(line) for line in new} - {None}
    kept = [line for line in old.splitlines() if variable(line) and variable(line) not in now]
    return new[:1] + kept + new[1:]


def env_lines(trees: dict[str, list[Tree]], registry: Tree | None, toolchain: Tree | None, distdir: Path | None,
              full_rc: Path | None = None, graph_modules: Path | None = None) -> list[str]:
    """The gated tier's variables: the first tree of each repository (the pin); the others as comments."""
    lines = ["# Written by tools/real_trees.py: the gated tier's real trees (docs/testing.md)."]
    for variable, repo in (("JAX_ROCM_TEST_JAX_TREE", "jax"), ("JAX_ROCM_TEST_XLA_TREE", "xla")):
        for n, tree in enumerate(trees.get(repo, [])):
            lines.append(f"{'# ' if n else ''}export {variable}={tree.path}  # {tree.commit[:12]}")
    if registry:
        lines.append(f"export JAX_ROCM_TEST_REGISTRY={registry.path}")
    if toolchain:
        lines.append(f"export JAX_ROCM_TEST_TOOLCHAIN_TREE={toolchain.path}")
    if distdir:
        lines.append(f"export JAX_ROCM_TEST_DISTDIR={distdir}")
    if full_rc:
        lines.append(f"export JAX_ROCM_TEST_FULL_BAZELRC={full_rc}")
    if graph_modules:
        lines.append(f"export JAX_ROCM_TEST_MODULES={graph_modules}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", type=Path, required=True, help="where the trees go (outside this checkout)")
    parser.add_argument("--jax-git", type=Path, help="a git directory of jax-ml/jax")
    parser.add_argument("--jax-rev", action="append", default=[], help="a JAX revision besides the pin (repeatable)")
    parser.add_argument("--xla-git", type=Path, help="a git directory of openxla/xla or ROCm/xla")
    parser.add_argument("--xla-rev", action="append", default=[], help="an XLA revision besides the pin (repeatable)")
    parser.add_argument("--registry-git", type=Path, help="a git directory of bazelbuild/bazel-central-registry")
    parser.add_argument("--toolchain-git", type=Path, help="a git directory of google-ml-infra/rules_ml_toolchain")
    parser.add_argument("--module", action="append", default=[], metavar="NAME[@VERSION]=GIT@REV",
                        help="a Bazel module of full mode's graph from a git directory at a revision, e.g. "
                             "protobuf=~/src/protobuf@v32.1; VERSION: the registry's version to make of it "
                             "(default: REV without a leading v) (repeatable)")
    parser.add_argument("--graph-module", action="append", default=[], metavar="NAME@VERSION=GIT@REV",
                        help="a module of this project's own graph (MODULE.bazel resolved against the registry) at the "
                             "version the registry selects, laid out as DEST/modules/NAME-VERSION for the gated registry "
                             "test (JAX_ROCM_TEST_MODULES=DEST/modules), not named in full.bazelrc (repeatable)")
    parser.add_argument("--module-dir", action="append", default=[], metavar="NAME=DIR",
                        help="a Bazel module from a folder you assembled, used as it is (repeatable)")
    parser.add_argument("--archive", action="append", default=[], metavar="NAME=GIT[@REV]",
                        help="an archive XLA's third_party declares (e.g. nanobind, dlpack), rebuilt from a git "
                             "directory of its repository into DEST/distdir for every XLA tree laid out under DEST, "
                             "checked against the sha256 XLA pins; one git cannot rebuild (a zip, a release asset) "
                             "becomes a repository tree for --full-xla; @REV: lay out that revision for --full-xla "
                             "instead of the declared one, which GIT lacks (a stand-in, said so) (repeatable)")
    parser.add_argument("--archive-dir", action="append", default=[], metavar="NAME=DIR",
                        help="an archive XLA's third_party declares, from a folder holding what its top folder holds "
                             "(an extracted release or Debian source tarball of that version), laid out as the "
                             "repository --full-xla's rule makes of it (repeatable)")
    parser.add_argument("--full-xla", type=Path, metavar="XLA_TREE",
                        help="the XLA tree full.bazelrc describes (default: DEST/xla-pin): an --archive that git "
                             "cannot rebuild byte for byte is laid out as the repository this tree's rule makes of it "
                             "and named there with --override_repository")
    parser.add_argument("--jax-patches", action="store_true",
                        help="apply full/jax_patches/<module>.patch (JAX's patches, as full mode applies them; any "
                             "full-mode ci_build command writes them) to the --module trees of those modules: Bazel "
                             "applies no patch to a module it takes from a local path")
    parser.add_argument("--bazel-version", default="7.7.1",
                        help="the Bazel that reads bazel_features' repositories and rules_python's configuration "
                             "(default: %(default)s, Debian's)")
    args = parser.parse_args(argv)
    dest = args.dest.expanduser().resolve()
    if dest == CHECKOUT or CHECKOUT in dest.parents:
        parser.error(f"--dest {dest} is inside this checkout: upstream trees never go into it; choose e.g. ~/.cache/trees")
    if not any((args.jax_git, args.xla_git, args.registry_git, args.toolchain_git, args.module, args.graph_module,
                args.module_dir, args.archive, args.archive_dir)):
        parser.error("nothing to lay out: pass at least one of --jax-git, --xla-git, --registry-git, --toolchain-git, --archive, "
                     "--archive-dir, --module, --graph-module, --module-dir")
    for spec in args.module:
        if "=" not in spec or "@" not in spec.split("=", 1)[1]:
            parser.error(f"--module {spec}: expected NAME=GIT@REV, e.g. protobuf=~/src/protobuf@v32.1")
    for spec in args.graph_module:
        if not re.fullmatch(r"[^@=]+@[^@=]+=.+@[^@]+", spec):
            parser.error(f"--graph-module {spec}: expected NAME@VERSION=GIT@REV, e.g. rules_cc@0.0.11=~/src/rules_cc@0.0.11")
    for option, specs in (("--module-dir", args.module_dir), ("--archive-dir", args.archive_dir)):
        for spec in specs:
            if "=" not in spec or not Path(spec.split("=", 1)[1]).expanduser().is_dir():
                parser.error(f"{option} {spec}: expected NAME=DIR with an existing DIR")
    try:
        trees: dict[str, list[Tree]] = {}
        for repo, gitdir, revs in (("jax", args.jax_git, args.jax_rev), ("xla", args.xla_git, args.xla_rev)):
            if gitdir:
                gd, pinned = git_dir(gitdir.expanduser()), pin(repo)["commit"]
                trees[repo] = [lay_out(gd, rev, dest, folder_name(repo, rev, pinned)) for rev in dict.fromkeys([pinned, *revs])]
        registry = lay_out(git_dir(args.registry_git.expanduser()), "HEAD", dest, "registry") if args.registry_git else None
        toolchain = distdir = None
        if args.toolchain_git:
            gd, toolchain_pin = git_dir(args.toolchain_git.expanduser()), pin("rules_ml_toolchain")
            commit = toolchain_pin["commit"]
            toolchain = lay_out(gd, commit, dest, f"rules_ml_toolchain-{commit[:12]}")
            distdir = dest / "distdir"
            archive = distdir / toolchain_pin["urls"][0].format(commit=commit).rsplit("/", 1)[1]
            sha256 = github_archive(gd, commit, toolchain_pin["strip_prefix"].format(commit=commit), archive)
            if sha256 != toolchain_pin["sha256"]:
                archive.unlink()
                raise TreeError(f"the rebuilt {archive.name} has sha256 {sha256}, the pin {toolchain_pin['sha256']}: "
                                "this git's `git archive` differs from GitHub's; let full mode download it instead")
            print(f"real_trees: {archive}: rebuilt, sha256 matches the pin", file=sys.stderr)
        modules: dict[str, Path] = {}
        features = None
        registry_modules = (dest / "registry" / "modules") if (dest / "registry" / "modules").is_dir() else None
        if (args.module or args.graph_module) and registry_modules is None:
            print(f"real_trees: warning: no registry in {dest} (--registry-git): the --module trees stay as their tags "
                  "are, without the registry's MODULE.bazel, overlay and patches", file=sys.stderr)
        jax_patches = {p.stem: p.read_bytes() for p in JAX_PATCHES.glob("*.patch")} if args.jax_patches else {}
        if args.jax_patches and not jax_patches:
            raise TreeError(f"--jax-patches: {JAX_PATCHES} holds no patch yet; a full-mode command writes them, e.g. "
                            "python3 build/ci_build --mode=full --jax-source-dir=PATH --dry-run ... does not, "
                            "python3 build/ci_build --mode=full --jax-source-dir=PATH preflight --names-only does")
        for spec in args.module:
            name, _, where = spec.partition("=")
            name, _, version = name.partition("@")
            gitdir, _, rev = where.rpartition("@")
            modules[name] = module_tree(name, version or rev.removeprefix("v"), git_dir(Path(gitdir).expanduser()), rev,
                                        dest / "modules", f"{name}-{rev}", registry_modules, args.bazel_version,
                                        jax_patches.get(name)).path
        for spec in args.graph_module:
            name, _, where = spec.partition("=")
            name, _, version = name.partition("@")
            gitdir, _, rev = where.rpartition("@")
            module_tree(name, version, git_dir(Path(gitdir).expanduser()), rev, dest / "modules", f"{name}-{version}",
                        registry_modules, args.bazel_version)
        for spec in args.module_dir:
            name, _, folder = spec.partition("=")
            modules[name] = Path(folder).expanduser().resolve()
        if "bazel_features" in modules:
            features = dest / "modules" / f"bazel_features-repositories-{args.bazel_version}"
            for relative, text in bazel_features_repositories(modules["bazel_features"], args.bazel_version).items():
                (features / relative).parent.mkdir(parents=True, exist_ok=True)
                (features / relative).write_text(text)
        not_rebuilt, overrides = [], []
        full_xla = args.full_xla.expanduser().resolve() if args.full_xla else (dest / "xla-pin")
        if not (full_xla / STAMP).is_file():
            full_xla = None
        for spec in args.archive:
            name, _, gitdir = spec.partition("=")
            gitdir, _, stand_in = gitdir.partition("@")
            if stand_in and full_xla is None:
                raise TreeError(f"--archive {spec}: a stand-in revision is for the XLA tree of full.bazelrc (--full-xla)")
            failed, lines = rebuild_archives(name, dest, full_xla, args.bazel_version, gitdir=git_dir(Path(gitdir).expanduser()),
                                             stand_in=stand_in or None)
            not_rebuilt += failed
            overrides += lines
            distdir = dest / "distdir"
        for spec in args.archive_dir:
            name, _, folder = spec.partition("=")
            if full_xla is None:
                raise TreeError(f"--archive-dir {spec}: no XLA tree for full.bazelrc (lay out XLA's pin, or name one with --full-xla)")
            failed, lines = rebuild_archives(name, dest, full_xla, args.bazel_version, folder=Path(folder).expanduser().resolve())
            not_rebuilt += failed
            overrides += lines
        full_rc = None
        if modules or overrides:
            full_rc = dest / "full.bazelrc"
            full_rc.write_text("\n".join(full_bazelrc(modules, features) + overrides) + "\n")
            print(f"real_trees: {full_rc}: {len(modules)} module(s) and {len(overrides)} repositories for full mode",
                  file=sys.stderr)
    except (TreeError, OSError, subprocess.CalledProcessError, SyntaxError, KeyError) as e:
        print(f"real_trees: error: {e}", file=sys.stderr)
        return 1
    env = dest / "env.sh"
    lines = merged(env.read_text() if env.is_file() else "", env_lines(trees, registry, toolchain, distdir, full_rc,
                                                                     (dest / "modules") if args.graph_module else None))
    env.write_text("\n".join(lines) + "\n")
    print(env.read_text(), end="")
    print(f"real_trees: wrote {env}: `. {env}` before the test command", file=sys.stderr)
    for failure in not_rebuilt:
        print(f"real_trees: error: {failure}", file=sys.stderr)
    return 1 if not_rebuilt else 0


if __name__ == "__main__":
    sys.exit(main())
