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
Files absent from a snapshot (large test data) are skipped and counted. A tree already laid
out at the same commit is kept. DEST/env.sh then sets one variable per tree of the gated tier
(the pins; the other revisions are listed there to swap in).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
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


def env_lines(trees: dict[str, list[Tree]], registry: Tree | None, toolchain: Tree | None, distdir: Path | None) -> list[str]:
    """The gated tier's variables: the first tree of each repository (the pin); the others as comments."""
    lines = ["# Written by tools/real_trees.py: the gated tier's real trees (README, Test tiers)."]
    for variable, repo in (("JAX_ROCM_TEST_JAX_TREE", "jax"), ("JAX_ROCM_TEST_XLA_TREE", "xla")):
        for n, tree in enumerate(trees.get(repo, [])):
            lines.append(f"{'# ' if n else ''}export {variable}={tree.path}  # {tree.commit[:12]}")
    if registry:
        lines.append(f"export JAX_ROCM_TEST_REGISTRY={registry.path}")
    if toolchain:
        lines.append(f"export JAX_ROCM_TEST_TOOLCHAIN_TREE={toolchain.path}")
    if distdir:
        lines.append(f"export JAX_ROCM_TEST_DISTDIR={distdir}")
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
    args = parser.parse_args(argv)
    dest = args.dest.expanduser().resolve()
    if dest == CHECKOUT or CHECKOUT in dest.parents:
        parser.error(f"--dest {dest} is inside this checkout: upstream trees never go into it; choose e.g. ~/.cache/trees")
    if not any((args.jax_git, args.xla_git, args.registry_git, args.toolchain_git)):
        parser.error("nothing to lay out: pass at least one of --jax-git, --xla-git, --registry-git, --toolchain-git")
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
    except (TreeError, OSError, subprocess.CalledProcessError) as e:
        print(f"real_trees: error: {e}", file=sys.stderr)
        return 1
    env = dest / "env.sh"
    lines = merged(env.read_text() if env.is_file() else "", env_lines(trees, registry, toolchain, distdir))
    env.write_text("\n".join(lines) + "\n")
    print(env.read_text(), end="")
    print(f"real_trees: wrote {env}: `. {env}` before the test command", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
