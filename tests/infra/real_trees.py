"""Lay out the real upstream trees the gated test tier reads, from git repositories you have.

Every tree, from the manifest (tests/infra/real_trees.toml: each tree's GitHub repository and tag or
commit) and a folder of `git clone --mirror` copies of its repositories, in one command
(docs/testing.md):

    python3 -m tests.infra.real_trees --manifest tests/infra/real_trees.toml --mirror ~/mirror --dest ~/.cache/trees
    . ~/.cache/trees/env.sh && python3 -m tests.run -n 0 tests/bazel/test_full_mode.py -k load

The folder holds each GitHub repository OWNER/NAME as OWNER+NAME.git, OWNER+NAME or
OWNER+NAME/repo: a `--mirror` (or `--bare`) clone, or a clone with a work tree there. Every
repository of the manifest, cloned into ~/mirror (`--repositories` lists them; an update:
`git -C ~/mirror/OWNER+NAME.git remote update`):

    python3 -m tests.infra.real_trees --manifest tests/infra/real_trees.toml --repositories |
        while read r; do git clone --mirror "https://github.com/$r" ~/mirror/"$(echo "$r" | tr / +)".git; done

It first checks the folder against the manifest and, where repositories or revisions are
missing, prints the repositories to clone (one owner/name a line on stdout, what the loop above
reads) and exits 2, laying out nothing. Then it runs the options below for every entry, and
what the tier needs around them: this project's pinned PyPI wheels in DEST/distdir (Zig's
among them), JAX's patches of the modules full mode overrides (written into full/jax_patches
from the JAX pin, as ci_build writes them: the one thing it writes into this checkout, JAX's
files, which Git ignores), Debian's or npm's source tarballs of archives git cannot give, and a
load-only grpc (tests/infra/grpc_stub.py).
It writes env.sh and full.bazelrc for the pins, env-PROFILE.sh and full-PROFILE.bazelrc for
each other profile of the manifest (XLA main). --repositories prints the list; --only core the
four core trees alone; --profile one XLA tree's graph.

Or tree by tree:

    python3 -m tests.infra.real_trees --dest ~/.cache/trees \\
        --jax-git ~/src/jax [--jax-rev jax-v0.11.0 --jax-rev main] \\
        --xla-git ~/src/xla [--xla-rev main] \\
        --registry-git ~/src/bazel-central-registry --toolchain-git ~/src/rules_ml_toolchain
    . ~/.cache/trees/env.sh && python3 -m tests.run -m bazel

Each --*-git is a git directory of the upstream repository: a clone, or a bare or `--mirror`
clone (no work tree). Nothing is downloaded, and nothing is written into this checkout (the
trees are other projects' code: they never belong in it; --manifest's prerequisites above
aside). What it lays out under --dest:
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
Files whose content the repository does not hold (a partial clone's) are skipped and counted.
A tree already laid out at the same commit is kept. DEST/env.sh then sets one variable per tree
of the gated tier (the pins; the other revisions are listed there to swap in).
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

from tests.infra import grpc_stub
from third_party.gpus import extract_archive
from tools import digest, prefetch
from tools.modules import SANDBOX, module_command, module_environment

CHECKOUT = Path(__file__).resolve().parents[2]
# JAX's patches of the modules full/MODULE.bazel overrides, as full mode applies them (written
# there by build/ci_build from the JAX source: build/ci_build_cli/jax_patches.py).
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
    absent: int  # blobs the repository does not hold


def pin(name: str) -> dict:
    return json.loads((CHECKOUT / "third_party" / name / "pin.json").read_text())


def git(gitdir: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], **{"check": False, **kwargs})


def git_dir(path: Path) -> Path:
    """The git directory of a clone (DIR/.git) or of a bare or mirror clone (DIR)."""
    for candidate in (path / ".git", path):
        if git(candidate, "rev-parse", "--git-dir", capture_output=True).returncode == 0:
            return candidate
    raise TreeError(f"{path} is not a git repository (pass a clone or a bare or mirror clone)")


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
    print(f"real_trees: {name}: {files} files, {absent} absent from the repository", file=sys.stderr)
    return Tree(name, commit, path, files, absent)


def github_archive(gitdir: Path, commit: str, prefix: str, out: Path) -> str:
    """GitHub's /archive/<commit>.tar.gz of a commit, rebuilt (git archive, gzip without a
    name or time); its sha256."""
    tar = git(gitdir, "archive", "--format=tar", f"--prefix={prefix}/", commit, capture_output=True)
    if tar.returncode != 0:
        raise TreeError(f"git archive of {commit} failed (a repository without some of its files?): "
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
    lines = [f"# Written by tests/infra/real_trees.py: bazel_features' globals for Bazel {bazel_version}.", "globals = struct("]
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


# bazel_features' repositories of its version extension, by the folder laid out for each.
BAZEL_FEATURES_REPOSITORIES = {"globals": "bazel_features_globals", "version": "bazel_features_version"}


def full_bazelrc(modules: dict[str, Path], features: Path | None, bazel_version: str) -> list[str]:
    lines = ["# Written by tests/infra/real_trees.py: full mode's modules from local trees (--bazelrc=this file)."]
    lines += [f"common --override_module={name}={path}" for name, path in sorted(modules.items())]
    if features is not None:
        lines += [f"common --override_repository={canonical_name('bazel_features', 'version_extension', repo, bazel_version)}="
                  f"{features / folder}" for folder, repo in BAZEL_FEATURES_REPOSITORIES.items()]
    return lines


def rebuild_archives(name: str, dest: Path, full_xla: Path | None, bazel_version: str, gitdir: Path | None = None,
                     folder: Path | None = None, stand_in: str | None = None,
                     full_xla_only: bool = False) -> tuple[list[str], list[str]]:
    """The archive `name` of every XLA tree under dest (and of full_xla), rebuilt from git into
    dest/distdir (Bazel takes a file there whose name and sha256 match the declaration). One
    that git cannot rebuild byte for byte (GitHub's zips, release assets), or one given as a
    folder, is laid out instead as the repository full_xla's rule makes of it, under
    dest/archives. Returns what could not be had, and full.bazelrc's --override_repository
    lines for the trees laid out. With `stand_in`, a revision of gitdir, full_xla's archive is
    laid out from that revision instead of the one declared (which gitdir lacks): a stand-in,
    said so. `full_xla_only`: full_xla's archive alone (another XLA tree's revision of it is
    another entry's business: tests/infra/real_trees.toml lists one per tree where they differ)."""
    trees = [] if full_xla_only else [xla for xla in sorted(dest.glob("xla-*")) if (xla / STAMP).is_file()]
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
    lines = ["# Written by tests/infra/real_trees.py: the gated tier's real trees (docs/testing.md)."]
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


# --- The manifest (tests/infra/real_trees.toml): every tree of the gated tier in one command ---------

MANIFEST = Path(__file__).resolve().parent / "real_trees.toml"
CORE_KINDS = ("jax", "xla", "registry", "toolchain")
# kind -> (keys it needs, keys it may have), besides `kind` and `note`.
KINDS = {
    "jax": ({"repo"}, {"revs"}),
    "xla": ({"repo"}, {"revs"}),
    "registry": ({"repo"}, set()),
    "toolchain": ({"repo"}, set()),
    "module": ({"name", "version", "repo", "rev"}, {"xla"}),
    "load-only-module": ({"name", "generator"}, {"xla"}),
    "archive": ({"name", "repo", "rev"}, {"stand_in", "xla"}),
    "archive-dir": ({"name", "rev"}, {"debian", "npm", "xla", "stand_in"}),  # and one of debian, npm
    "graph-module": ({"name", "version", "repo", "rev"}, set()),
}
# The generators of load-only modules: this project's own code.
GENERATORS = ("tests/infra/grpc_stub.py",)
# The keys of an archive-dir entry's source of each kind, then those it may have.
SOURCE_KEYS = {"debian": ("source", "file", "sha256"), "npm": ("package", "version", "path", "sha256")}
SOURCE_OPTIONAL_KEYS = {"debian": ("suite",), "npm": ()}
DEBIAN_SUITES = ("sid", "experimental", "bookworm", "bullseye")  # what Debian's mirror here serves
# What --only takes: the kinds, and `core` for the four core trees.
ONLY = ("core", *(k for k in KINDS if k not in CORE_KINDS))


@dataclasses.dataclass(frozen=True)
class Entry:
    """One [[entry]] of the manifest (tests/infra/real_trees.toml describes the keys)."""

    kind: str
    name: str = ""
    repo: str = ""  # owner/name on GitHub: https://github.com/OWNER/NAME
    rev: str = ""
    revs: tuple[str, ...] = ()
    version: str = ""
    xla: tuple[str, ...] = ()  # the profiles it serves
    stand_in: str = ""
    generator: str = ""
    debian: tuple[tuple[str, str], ...] = ()
    npm: tuple[tuple[str, str], ...] = ()
    note: str = ""

    def describe(self) -> str:
        what = f"{self.kind} {self.name or self.repo}"
        return what + (f" {self.version}" if self.version else "") + (f" ({', '.join(self.xla)})" if self.xla else "")


@dataclasses.dataclass(frozen=True)
class Profile:
    """An XLA tree full mode is laid out for, with the JAX whose versions and patches go with it."""

    name: str
    jax: str  # "pin", or one of the jax entry's revs
    xla: str

    @property
    def is_checkouts(self) -> bool:
        """The pins: what full/MODULE.bazel and the tests take (env.sh, full.bazelrc, full/jax_patches)."""
        return self.jax == "pin" and self.xla == "pin"

    def folders(self) -> tuple[str, str]:
        """The JAX and XLA trees under --dest."""
        return (folder_name("jax", pin("jax")["commit"] if self.jax == "pin" else self.jax, pin("jax")["commit"]),
                folder_name("xla", pin("xla")["commit"] if self.xla == "pin" else self.xla, pin("xla")["commit"]))


@dataclasses.dataclass(frozen=True)
class Manifest:
    entries: tuple[Entry, ...]
    profiles: dict[str, Profile]

    def core(self, kind: str) -> Entry:
        return next(e for e in self.entries if e.kind == kind)

    def of(self, *kinds: str, profile: str | None = None) -> list[Entry]:
        return [e for e in self.entries if e.kind in kinds and (profile is None or profile in e.xla)]

    def repositories(self) -> list[str]:
        """Every GitHub repository the manifest lays out from, once each."""
        return sorted({e.repo for e in self.entries if e.repo}, key=str.lower)


def read_manifest(path: Path) -> Manifest:
    """The manifest at path, checked: every problem of it at once (TreeError)."""
    import tomllib

    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise TreeError(f"{path}: {e}") from None
    problems = [f"unknown table [{k}] (the manifest has [profile.NAME] and [[entry]])" for k in data if k not in ("profile", "entry")]
    profiles = {}
    for name, table in data.get("profile", {}).items():
        if set(table) - {"jax", "xla", "note"} or not all(isinstance(table.get(k), str) for k in ("jax", "xla")):
            problems.append(f"[profile.{name}]: needs jax and xla (strings: pin, or a rev of the jax/xla entry), may have note")
        else:
            profiles[name] = Profile(name, table["jax"], table["xla"])
    if not profiles:
        problems.append("no [profile.NAME]: name at least one XLA tree to lay full mode out for")
    entries = []
    for n, table in enumerate(data.get("entry", []), 1):
        kind = table.get("kind")
        where = f"entry {n} ({kind} {table.get('name') or table.get('repo') or '?'})"
        if kind not in KINDS:
            problems.append(f"{where}: kind must be one of {', '.join(KINDS)}")
            continue
        required, optional = KINDS[kind]
        keys = set(table) - {"kind", "note"}
        if required - keys:
            problems.append(f"{where}: lacks {', '.join(sorted(required - keys))}")
        if keys - required - optional:
            problems.append(f"{where}: {', '.join(sorted(keys - required - optional))} not taken by kind {kind}")
        lists, tables = {"revs", "xla"}, {"debian", "npm"}
        wrong = [k for k in keys if (not isinstance(table[k], list) if k in lists else
                                     not isinstance(table[k], dict) if k in tables else not isinstance(table[k], str))]
        wrong += [k for k in keys & lists if isinstance(table[k], list) and not all(isinstance(v, str) for v in table[k])]
        if wrong:
            problems.append(f"{where}: wrong type of {', '.join(sorted(wrong))} (revs, xla: lists of strings; debian, npm: tables)")
            continue
        if "repo" in table and not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", table["repo"]):
            problems.append(f"{where}: repo {table['repo']!r} is not OWNER/NAME")
        xla = tuple(table.get("xla", profiles)) if kind not in (*CORE_KINDS, "graph-module") else ()
        if set(xla) - set(profiles):
            problems.append(f"{where}: xla names no [profile.*]: {', '.join(sorted(set(xla) - set(profiles)))}")
        if table.get("generator", GENERATORS[0]) not in GENERATORS:
            problems.append(f"{where}: generator must be one of {', '.join(GENERATORS)}")
        if kind == "archive-dir" and len(set(SOURCE_KEYS) & keys) != 1:
            problems.append(f"{where}: needs one source of its files: {' or '.join(SOURCE_KEYS)}")
        for source, needed in SOURCE_KEYS.items():
            if source in table and not set(needed) <= set(table[source]) <= {*needed, *SOURCE_OPTIONAL_KEYS[source]}:
                problems.append(f"{where}: {source} needs {', '.join(needed)}"
                                + (f" and may have {', '.join(SOURCE_OPTIONAL_KEYS[source])}" if SOURCE_OPTIONAL_KEYS[source] else ""))
            elif source == "debian" and source in table and table[source].get("suite", "sid") not in DEBIAN_SUITES:
                problems.append(f"{where}: debian's suite must be one of {', '.join(DEBIAN_SUITES)}")
        entries.append(Entry(kind, table.get("name", ""), table.get("repo", ""), table.get("rev", ""), tuple(table.get("revs", ())),
                             table.get("version", ""), xla, table.get("stand_in", ""), table.get("generator", ""),
                             tuple(sorted(table.get("debian", {}).items())), tuple(sorted(table.get("npm", {}).items())),
                             table.get("note", "")))
    for kind in CORE_KINDS:
        count = sum(e.kind == kind for e in entries)
        if count != 1:
            problems.append(f"{count} entries of kind {kind}: the manifest needs exactly one")
    for profile in profiles.values():
        for kind, rev in (("jax", profile.jax), ("xla", profile.xla)):
            revs = next((e.revs for e in entries if e.kind == kind), ())
            if rev != "pin" and rev not in revs:
                problems.append(f"[profile.{profile.name}]: {kind} = {rev!r} is neither pin nor one of the {kind} entry's revs")
        seen: dict[tuple[str, str], int] = {}
        for e in entries:
            if profile.name in e.xla:
                key = ("archive" if e.kind == "archive-dir" else "module" if e.kind == "load-only-module" else e.kind, e.name)
                seen[key] = seen.get(key, 0) + 1
        problems += [f"{kind} {name} is listed {count} times for profile {profile.name}" for (kind, name), count in seen.items()
                     if count > 1]
    graph = [e.name for e in entries if e.kind == "graph-module"]
    problems += [f"graph-module {name} is listed {graph.count(name)} times" for name in sorted(set(graph)) if graph.count(name) > 1]
    if problems:
        raise TreeError(f"{path}:\n  " + "\n  ".join(problems))
    return Manifest(tuple(entries), profiles)


def mirror_git_dir(mirror: Path, repo: str) -> Path | None:
    """The git directory of GitHub's owner/name in a folder of clones: MIRROR/OWNER+NAME.git
    (`git clone --mirror https://github.com/OWNER/NAME MIRROR/OWNER+NAME.git`), MIRROR/OWNER+NAME
    or MIRROR/OWNER+NAME/repo, each bare or a clone's work tree (its .git); None when absent."""
    folder = mirror / repo.replace("/", "+")
    for candidate in (folder / "repo", folder, folder.with_name(folder.name + ".git")):
        if candidate.is_dir():
            try:
                return git_dir(candidate)
            except TreeError:
                continue
    return None


def wanted_revisions(entry: Entry) -> list[str]:
    """The revisions of its repository an entry lays out."""
    if entry.kind in ("jax", "xla"):
        return [pin(entry.kind)["commit"], *entry.revs]
    if entry.kind == "registry":
        return ["HEAD"]
    if entry.kind == "toolchain":
        return [pin("rules_ml_toolchain")["commit"]]
    return [entry.stand_in or entry.rev] if entry.repo else []


def check_mirror(entries: list[Entry], mirror: Path) -> tuple[dict[str, Path], list[str], list[str]]:
    """(owner/name -> git directory, the repositories the mirror lacks, the revisions the ones
    it has lack): all of them, so that one round of fetching mends every gap."""
    found: dict[str, Path] = {}
    missing: set[str] = set()
    lacking = []
    for entry in entries:
        if not entry.repo or entry.repo in missing:
            continue
        if entry.repo not in found:
            gitdir = mirror_git_dir(mirror, entry.repo)
            if gitdir is None:
                missing.add(entry.repo)
                continue
            found[entry.repo] = gitdir
        for rev in wanted_revisions(entry):
            try:
                resolve(found[entry.repo], rev)
            except TreeError:
                lacking.append(f"{entry.repo} lacks {rev} ({entry.describe()}): update it (`git -C {found[entry.repo]} "
                               "remote update`), or name a revision it has as the entry's stand_in")
    return found, sorted(missing, key=str.lower), lacking


def report_missing(missing: list[str], lacking: list[str], mirror: Path, manifest: Path) -> None:
    """One list of what to clone: the repositories on stdout, one a line, what to do on stderr."""
    if missing:
        print(f"real_trees: {len(missing)} repositor{'y' if len(missing) == 1 else 'ies'} of {manifest} "
              f"{'is' if len(missing) == 1 else 'are'} not in {mirror}: clone each (`git clone --mirror "
              f"https://github.com/OWNER/NAME {mirror}/OWNER+NAME.git`; this list, one a line on stdout, into "
              f"`while read r; do git clone --mirror \"https://github.com/$r\" \"{mirror}/$(echo \"$r\" | tr / +).git\"; "
              "done` clones them all), then run this again:", file=sys.stderr)
        print("\n".join(missing))
    for line in lacking:
        print(f"real_trees: {line}", file=sys.stderr)


def declaration_problems(manifest: Manifest, profiles: list[Profile], dest: Path) -> list[str]:
    """Archives of the manifest whose name or revision the profile's XLA tree does not declare."""
    problems = []
    for profile in profiles:
        xla = dest / profile.folders()[1]
        declared = xla_archives(xla)
        for entry in manifest.of("archive", "archive-dir", profile=profile.name):
            archive = declared.get(entry.name)
            if archive is None:
                problems.append(f"{entry.describe()}: {xla.name} declares no archive of that name (third_party/**/workspace.bzl)")
            elif archive.rev != entry.rev:
                problems.append(f"{entry.describe()}: the manifest says {entry.rev}, {xla.name}'s {archive.declared_in} "
                                f"{archive.rev}: update {MANIFEST.relative_to(CHECKOUT)}")
    return problems


def pinned_wheels(distdir: Path) -> list[str]:
    """This project's pinned PyPI wheels (Zig's, nanobind's, XLA's FFI headers) in distdir: Bazel
    reads every repository a `deps()` query reaches through a select(), @zig_sdk's too. Taken
    from the sandbox's distdir when it has them, else downloaded with pip (tools/prefetch.py)."""
    done = []
    distdir.mkdir(parents=True, exist_ok=True)
    for wheel in prefetch.pinned_wheels()[0]:
        target, shared = distdir / wheel.filename, prefetch.default_distdir() / wheel.filename
        if target.is_file() and digest.sha256_of(target) == wheel.sha256:
            done.append(f"{wheel.filename}: present")
        elif shared.is_file() and digest.sha256_of(shared) == wheel.sha256:
            shutil.copyfile(shared, target)
            done.append(f"{wheel.filename}: copied from {shared.parent}")
        else:
            done.append(f"{wheel.filename}: {prefetch.fetch(wheel, distdir)} (pip)")
    return done


def write_jax_patches(jax_tree: Path, folder: Path, registry: Path) -> str:
    """JAX's patches of the modules full mode overrides, as ci_build writes them: its module
    build/ci_build_cli/jax_patches.py, run as a program (the CLI's package is not this one's);
    what it wrote, module by module."""
    result = subprocess.run(module_command("ci_build_cli.jax_patches", "--source", str(jax_tree), "--folder", str(folder),
                                           "--registry", str(registry)),
                            env=module_environment(), capture_output=True, text=True)
    if result.returncode != 0:
        raise TreeError(f"JAX's patches from {jax_tree}: {result.stderr.strip() or f'exit {result.returncode}'}")
    return result.stdout.strip()


# Fetches a Debian source package's files into the current folder, from the deb-src twin of the
# sandbox's own apt source (the way tools/prefetch.py fetches abseil's), in the entry's suite.
APT_SOURCE = ("sed -e 's/^Types: .*/Types: deb-src/' -e 's/^Suites: .*/Suites: {suite}/' /etc/apt/sources.list.d/debian.sources "
              "> deb-src.sources && mkdir -p lists/partial && set -- -q -o Dir::Etc::SourceList=\"$PWD/deb-src.sources\" "
              "-o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists=\"$PWD/lists\" -o Acquire::Check-Valid-Until=false "
              "-o APT::Sandbox::User=root && apt-get \"$@\" update >/dev/null && apt-get \"$@\" source --download-only {package}")


def _fetch_debian(info: dict[str, str], tarball: Path) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="real_trees-") as tmp:  # under /tmp: the sandbox sees it
        script = APT_SOURCE.format(package=info["source"], suite=info.get("suite", "sid"))
        result = subprocess.run([*SANDBOX, "run", "--", "sh", "-c", script], cwd=tmp, env=module_environment(),
                                capture_output=True, text=True)
        got = Path(tmp) / info["file"]
        if result.returncode != 0 or not got.is_file():
            detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["no such file"]
            raise TreeError(f"apt-get source {info['source']} gave no {info['file']} ({detail[0]}); is Debian's mirror "
                            f"reachable and the sandbox built (python3 -m sandbox ensure)? Or put the file in {tarball.parent}")
        shutil.copyfile(got, tarball)


def _fetch_npm(info: dict[str, str], tarball: Path) -> None:
    result = subprocess.run(["npm", "pack", "--silent", f"{info['package']}@{info['version']}", "--pack-destination",
                             str(tarball.parent)], capture_output=True, text=True)
    if result.returncode != 0 or not tarball.is_file():
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["no such file"]
        raise TreeError(f"npm pack {info['package']}@{info['version']} gave no {tarball.name} ({detail[0]}); is npm's "
                        f"registry reachable? Or put the file in {tarball.parent}")


# Where an archive-dir entry's files come from: (the tarball's name, how to fetch it, the folder
# in it that holds what the archive's top folder holds; "" for its one top folder).
SOURCES = {
    "debian": (lambda info: info["file"], _fetch_debian, lambda info: "", "apt-get source {source} in the sandbox"),
    "npm": (lambda info: f"{info['package']}-{info['version']}.tgz", _fetch_npm, lambda info: f"package/{info['path']}",
            "npm pack {package}@{version}"),
}


def source_tree(entry: Entry, dest: Path) -> Path:
    """The folder an archive-dir entry lays its archive out from: its source tarball (Debian's
    source package of that release, or an npm package shipping it), fetched into DEST/downloads,
    checked against the manifest's sha256 and extracted under DEST/sources."""
    kind, info = (("debian", dict(entry.debian)) if entry.debian else ("npm", dict(entry.npm)))
    name_of, fetch, folder_of, how = SOURCES[kind]
    tarball = dest / "downloads" / name_of(info)
    if not (tarball.is_file() and hashlib.sha256(tarball.read_bytes()).hexdigest() == info["sha256"]):
        print(f"real_trees: {entry.name}: {how.format(**info)} ...", file=sys.stderr, flush=True)
        tarball.parent.mkdir(parents=True, exist_ok=True)
        try:
            fetch(info, tarball)
        except TreeError as e:
            raise TreeError(f"{entry.describe()}: {e}") from None
        if hashlib.sha256(tarball.read_bytes()).hexdigest() != info["sha256"]:
            tarball.unlink()
            raise TreeError(f"{entry.describe()}: {tarball.name} does not have the manifest's sha256 {info['sha256']}")
    out = dest / "sources" / f"{entry.name}-{entry.rev}"
    if (out / STAMP).is_file() and json.loads((out / STAMP).read_text()).get("sha256") == info["sha256"]:
        return out
    whole = out.with_name(out.name + ".whole")
    shutil.rmtree(whole, ignore_errors=True)
    extract_archive.extract(tarball, whole)
    inner = folder_of(info)
    if not inner:
        tops = list(whole.iterdir())
        if len(tops) != 1 or not tops[0].is_dir():
            raise TreeError(f"{tarball} has {len(tops)} entries at its top, not one folder")
        inner = tops[0].name
    if not (whole / inner).is_dir():
        raise TreeError(f"{tarball} has no folder {inner}")
    shutil.rmtree(out, ignore_errors=True)
    os.rename(whole / inner, out)
    shutil.rmtree(whole)
    (out / STAMP).write_text(json.dumps({"tarball": str(tarball), "sha256": info["sha256"], "folder": inner}, indent=2) + "\n")
    return out


def profile_env(dest: Path, profile: Profile, env_file: str, full_rc: str, patches: Path) -> None:
    """env-PROFILE.sh: env.sh's variables, with the profile's JAX and XLA trees and full.bazelrc."""
    jax, xla = profile.folders()
    base = (dest / "env.sh").read_text() if (dest / "env.sh").is_file() else ""
    lines = merged(base, [f"# Written by tests/infra/real_trees.py --manifest: profile {profile.name} (XLA {xla}, JAX {jax}). Full mode "
                          f"reads this JAX's patches from full/jax_patches ({patches} holds them): the gated tests write them "
                          "there from JAX_ROCM_TEST_JAX_TREE, ci_build from --jax-source-dir, e.g. python3 build/ci_build "
                          f"--mode=full --jax-source-dir={dest / jax} --registry={dest / 'registry'} preflight --names-only",
                          f"export JAX_ROCM_TEST_JAX_TREE={dest / jax}", f"export JAX_ROCM_TEST_XLA_TREE={dest / xla}",
                          f"export JAX_ROCM_TEST_FULL_BAZELRC={dest / full_rc}"])
    (dest / env_file).write_text("\n".join(lines) + "\n")


def manifest_main(argv: list[str]) -> int:
    """--manifest: every tree the manifest lists, from a folder of `git clone --mirror` copies of its
    repositories (--repositories lists them; `python3 -m tests.infra.real_trees --help` shows the command
    that clones them all)."""
    parser = argparse.ArgumentParser(prog="python3 -m tests.infra.real_trees --manifest", description=manifest_main.__doc__)
    parser.add_argument("--manifest", type=Path, required=True, help=f"the manifest (this project's: {MANIFEST.relative_to(CHECKOUT)})")
    parser.add_argument("--mirror", type=Path,
                        help="the folder of clones: OWNER+NAME.git each (`git clone --mirror https://github.com/OWNER/NAME "
                             "MIRROR/OWNER+NAME.git`), or OWNER+NAME, or OWNER+NAME/repo")
    parser.add_argument("--dest", type=Path, help="where the trees go (outside this checkout), e.g. ~/.cache/trees")
    parser.add_argument("--profile", action="append", default=[],
                        help="lay full mode out for this profile of the manifest only (repeatable; default: every one)")
    parser.add_argument("--only", action="append", default=[], choices=ONLY,
                        help="only these kinds (repeatable; `core`: JAX, XLA, the registry and rules_ml_toolchain)")
    parser.add_argument("--repositories", action="store_true",
                        help="print the repositories the manifest lays out from, one a line, and stop")
    parser.add_argument("--bazel-version", default="7.7.1", help="as without --manifest (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        manifest = read_manifest(args.manifest.expanduser())
    except TreeError as e:
        print(f"real_trees: error: {e}", file=sys.stderr)
        return 1
    if args.repositories:
        print("\n".join(manifest.repositories()))
        return 0
    if not args.mirror or not args.dest:
        parser.error("--mirror and --dest are needed to lay trees out (or --repositories to list them)")
    unknown = set(args.profile) - set(manifest.profiles)
    if unknown:
        parser.error(f"--profile {', '.join(sorted(unknown))}: the manifest's are {', '.join(manifest.profiles)}")
    profiles = [manifest.profiles[p] for p in (args.profile or manifest.profiles)]
    kinds = {k for o in (args.only or ONLY) for k in (CORE_KINDS if o == "core" else (o,))}
    selected = [e for e in manifest.entries if e.kind in kinds
                and (e.kind in (*CORE_KINDS, "graph-module") or set(e.xla) & {p.name for p in profiles})]
    layout = [e for e in selected if e.kind not in CORE_KINDS]
    core = [e for e in manifest.entries if e.kind in CORE_KINDS]  # every other kind is made or checked against them
    mirror, dest = args.mirror.expanduser().resolve(), args.dest.expanduser().resolve()
    if dest == CHECKOUT or CHECKOUT in dest.parents:
        parser.error(f"--dest {dest} is inside this checkout: upstream trees never go into it; choose e.g. ~/.cache/trees")
    found, missing, lacking = check_mirror(core + layout, mirror)
    if missing or lacking:
        report_missing(missing, lacking, mirror, args.manifest)
        return 2

    def run(step: str, *options: str) -> int:
        print(f"real_trees: --manifest: {step}", file=sys.stderr, flush=True)
        return main(["--dest", str(dest), "--bazel-version", args.bazel_version, *options])

    jax, xla = (manifest.core(k) for k in ("jax", "xla"))
    status = run("the core trees", "--jax-git", str(found[jax.repo]), *(a for r in jax.revs for a in ("--jax-rev", r)),
                 "--xla-git", str(found[xla.repo]), *(a for r in xla.revs for a in ("--xla-rev", r)),
                 "--registry-git", str(found[manifest.core("registry").repo]),
                 "--toolchain-git", str(found[manifest.core("toolchain").repo]))
    if status or not layout:
        return status
    try:
        problems = declaration_problems(manifest, profiles, dest)
        if problems:
            raise TreeError("the manifest and the XLA trees disagree:\n  " + "\n  ".join(problems))
        full_mode = [e for e in layout if e.kind != "graph-module"]
        if full_mode:
            for line in pinned_wheels(dest / "distdir"):
                print(f"real_trees: distdir: {line}", file=sys.stderr)
        sources = {e.name: source_tree(e, dest) for e in full_mode if e.kind == "archive-dir"}
        stub = dest / "modules" / "grpc-load-only"
        if any(e.kind == "load-only-module" for e in full_mode):
            trees = sorted({dest / f for p in manifest.profiles.values() for f in p.folders()})
            for file, names in grpc_stub.write_stub(stub, trees).items():
                print(f"real_trees: {stub}/{file}: {', '.join(names)} (tests/infra/grpc_stub.py)", file=sys.stderr)
        patch_folders = {}
        for profile in profiles if full_mode else ():
            jax_tree = dest / profile.folders()[0]
            folder = JAX_PATCHES if profile.is_checkouts else dest / "jax_patches" / jax_tree.name
            written = write_jax_patches(jax_tree, folder, dest / "registry")
            patch_folders[profile.name] = folder
            print(f"real_trees: {folder}: JAX's patches from {jax_tree.name}: {written}", file=sys.stderr)
    except (TreeError, OSError, subprocess.CalledProcessError, RuntimeError, ValueError, ImportError) as e:
        print(f"real_trees: error: {e}", file=sys.stderr)
        return 1
    for profile in profiles if full_mode else ():
        entries = [e for e in full_mode if profile.name in e.xla]
        env_file, full_rc = (("env.sh", "full.bazelrc") if profile.is_checkouts
                             else (f"env-{profile.name}.sh", f"full-{profile.name}.bazelrc"))
        options = ["--full-xla", str(dest / profile.folders()[1]), "--archives-for", "full", "--modules-folder",
                   f"modules-{profile.name}", "--full-rc", full_rc, "--env-file", env_file,
                   "--jax-patches", str(patch_folders[profile.name])]
        for e in entries:
            if e.kind == "module":
                options += ["--module", f"{e.name}@{e.version}={found[e.repo]}@{e.rev}"]
            elif e.kind == "load-only-module":
                options += ["--module-dir", f"{e.name}={stub}"]
            elif e.kind == "archive":
                options += ["--archive", f"{e.name}={found[e.repo]}" + (f"@{e.stand_in}" if e.stand_in else "")]
            elif e.kind == "archive-dir":
                options += ["--archive-dir", f"{e.name}={sources[e.name]}"]
        status |= run(f"profile {profile.name}", *options)
    graph = [e for e in layout if e.kind == "graph-module"]
    if graph:
        status |= run("this project's own module graph",
                      *(a for e in graph for a in ("--graph-module", f"{e.name}@{e.version}={found[e.repo]}@{e.rev}")))
    for profile in profiles if full_mode else ():
        if not profile.is_checkouts:  # after env.sh's last change: env.sh's variables, the profile's trees
            profile_env(dest, profile, f"env-{profile.name}.sh", f"full-{profile.name}.bazelrc", patch_folders[profile.name])
    for e in layout:
        if e.stand_in or e.note:
            print(f"real_trees: note: {e.describe()}: " + "; ".join(filter(None, [
                f"{e.stand_in} stands in for {e.rev}" if e.stand_in else "", e.note])), file=sys.stderr)
    envs = ", ".join(str(dest / ("env.sh" if p.is_checkouts else f"env-{p.name}.sh")) for p in profiles)
    print(f"real_trees: --manifest: {'done' if status == 0 else 'done, with the errors above'}; `. FILE` before the tests, "
          f"FILE one of: {envs}", file=sys.stderr)
    return status


def tree_parser() -> argparse.ArgumentParser:
    """The options of a layout tree by tree (without --manifest)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, metavar="FILE",
                        help="every tree FILE lists (tests/infra/real_trees.toml), from --mirror: the other options are then "
                             "--mirror, --dest, --profile, --only, --repositories (`--manifest FILE --help` says each)")
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
    parser.add_argument("--jax-patches", nargs="?", const=JAX_PATCHES, type=Path, metavar="DIR",
                        help="apply DIR/<module>.patch (default DIR: full/jax_patches, JAX's patches as full mode "
                             "applies them; any full-mode ci_build command writes them) to the --module trees of those "
                             "modules: Bazel applies no patch to a module it takes from a local path")
    parser.add_argument("--modules-folder", default="modules", metavar="NAME",
                        help="the folder under --dest of the --module trees (default: %(default)s)")
    parser.add_argument("--full-rc", default="full.bazelrc", metavar="NAME",
                        help="the file under --dest naming the modules and repositories (default: %(default)s)")
    parser.add_argument("--env-file", default="env.sh", metavar="NAME",
                        help="the file under --dest setting the gated tier's variables (default: %(default)s)")
    parser.add_argument("--archives-for", choices=("all", "full"), default="all",
                        help="all: rebuild each --archive for every XLA tree under --dest (default); full: for the "
                             "tree of --full-xla only")
    parser.add_argument("--bazel-version", default="7.7.1",
                        help="the Bazel that reads bazel_features' repositories and rules_python's configuration "
                             "(default: %(default)s, Debian's)")
    return parser


def checked_dest(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Path:
    """--dest, resolved, once the options hang together (parser.error where they do not)."""
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
    return dest


@dataclasses.dataclass(frozen=True)
class CoreTrees:
    """JAX's and XLA's trees, the registry and rules_ml_toolchain as laid out, for env.sh."""

    trees: dict[str, list[Tree]]
    registry: Tree | None
    toolchain: Tree | None
    distdir: Path | None  # where rules_ml_toolchain's archive was rebuilt


def lay_out_core(args: argparse.Namespace, dest: Path) -> CoreTrees:
    """--jax-git, --xla-git (their pins and the revisions asked), --registry-git, --toolchain-git."""
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
    return CoreTrees(trees, registry, toolchain, distdir)


def lay_out_modules(args: argparse.Namespace, dest: Path) -> tuple[dict[str, Path], Path | None]:
    """The --module, --graph-module and --module-dir trees: (full.bazelrc's modules by name,
    bazel_features' repositories for --bazel-version when bazel_features is among them)."""
    modules: dict[str, Path] = {}
    features = None
    registry_modules = (dest / "registry" / "modules") if (dest / "registry" / "modules").is_dir() else None
    if (args.module or args.graph_module) and registry_modules is None:
        print(f"real_trees: warning: no registry in {dest} (--registry-git): the --module trees stay as their tags "
              "are, without the registry's MODULE.bazel, overlay and patches", file=sys.stderr)
    jax_patches = {p.stem: p.read_bytes() for p in args.jax_patches.glob("*.patch")} if args.jax_patches else {}
    if args.jax_patches and not jax_patches:
        raise TreeError(f"--jax-patches: {args.jax_patches} holds no patch yet; a full-mode command writes them, e.g. "
                        "python3 build/ci_build --mode=full --jax-source-dir=PATH --dry-run ... does not, "
                        "python3 build/ci_build --mode=full --jax-source-dir=PATH preflight --names-only does")
    for spec in args.module:
        name, _, where = spec.partition("=")
        name, _, version = name.partition("@")
        gitdir, _, rev = where.rpartition("@")
        modules[name] = module_tree(name, version or rev.removeprefix("v"), git_dir(Path(gitdir).expanduser()), rev,
                                    dest / args.modules_folder, f"{name}-{rev}", registry_modules, args.bazel_version,
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
    return modules, features


def lay_out_archives(args: argparse.Namespace, dest: Path) -> tuple[list[str], list[str]]:
    """The --archive and --archive-dir archives: (what could not be had, full.bazelrc's
    --override_repository lines)."""
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
                                         stand_in=stand_in or None, full_xla_only=args.archives_for == "full")
        not_rebuilt += failed
        overrides += lines
    for spec in args.archive_dir:
        name, _, folder = spec.partition("=")
        if full_xla is None:
            raise TreeError(f"--archive-dir {spec}: no XLA tree for full.bazelrc (lay out XLA's pin, or name one with --full-xla)")
        failed, lines = rebuild_archives(name, dest, full_xla, args.bazel_version, folder=Path(folder).expanduser().resolve(),
                                         full_xla_only=args.archives_for == "full")
        not_rebuilt += failed
        overrides += lines
    return not_rebuilt, overrides


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if any(a == "--manifest" or a.startswith("--manifest=") for a in argv):
        return manifest_main(argv)
    parser = tree_parser()
    args = parser.parse_args(argv)
    dest = checked_dest(parser, args)
    try:
        core = lay_out_core(args, dest)
        modules, features = lay_out_modules(args, dest)
        not_rebuilt, overrides = lay_out_archives(args, dest)
        full_rc = None
        if modules or overrides:
            full_rc = dest / args.full_rc
            full_rc.write_text("\n".join(full_bazelrc(modules, features, args.bazel_version) + overrides) + "\n")
            print(f"real_trees: {full_rc}: {len(modules)} module(s) and {len(overrides)} repositories for full mode",
                  file=sys.stderr)
    except (TreeError, OSError, subprocess.CalledProcessError, SyntaxError, KeyError) as e:
        print(f"real_trees: error: {e}", file=sys.stderr)
        return 1
    env = dest / args.env_file
    distdir = dest / "distdir" if args.archive else core.distdir
    lines = merged(env.read_text() if env.is_file() else "", env_lines(core.trees, core.registry, core.toolchain, distdir, full_rc,
                                                                     (dest / "modules") if args.graph_module else None))
    env.write_text("\n".join(lines) + "\n")
    print(env.read_text(), end="")
    print(f"real_trees: wrote {env}: `. {env}` before the test command", file=sys.stderr)
    for failure in not_rebuilt:
        print(f"real_trees: error: {failure}", file=sys.stderr)
    return 1 if not_rebuilt else 0

if __name__ == "__main__":
    sys.exit(main())
