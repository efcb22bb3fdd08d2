"""tools/real_trees.py on a repository of the test's own making (the real ones are the gated tier's)."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from tools import real_trees

pytestmark = pytest.mark.unit


def run(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00", GIT_COMMITTER_DATE="2026-01-01T00:00:00")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def upstream(tmp_path) -> tuple[Path, str, str]:
    """A repository with two commits (a script, a link, a file deleted later); (dir, first, second)."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    run(repo, "init", "-q")
    (repo / "xla").mkdir()
    (repo / "xla" / "BUILD").write_text("cc_library(name = 'a')\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    os.symlink("xla/BUILD", repo / "link")
    (repo / "old.txt").write_text("gone later\n")
    run(repo, "add", "-A")
    run(repo, "commit", "-qm", "one")
    first = run(repo, "rev-parse", "HEAD")
    (repo / "old.txt").unlink()
    run(repo, "add", "-A")
    run(repo, "commit", "-qm", "two")
    run(repo, "tag", "v2")
    return repo, first, run(repo, "rev-parse", "HEAD")


def test_a_revision_is_laid_out_with_modes_and_links_and_kept_when_unchanged(upstream, tmp_path, capsys):
    repo, first, second = upstream
    gitdir = real_trees.git_dir(repo)
    tree = real_trees.lay_out(gitdir, first, tmp_path / "trees", "up-pin")
    assert (tree.files, tree.absent, tree.commit) == (4, 0, first)
    assert (tree.path / "xla" / "BUILD").read_text() == "cc_library(name = 'a')\n"
    assert os.access(tree.path / "run.sh", os.X_OK) and os.readlink(tree.path / "link") == "xla/BUILD"
    assert json.loads((tree.path / real_trees.STAMP).read_text())["commit"] == first
    real_trees.lay_out(gitdir, first, tmp_path / "trees", "up-pin")
    assert "kept" in capsys.readouterr().err
    newer = real_trees.lay_out(gitdir, "v2", tmp_path / "trees", "up-pin")  # same folder, another commit: replaced
    assert newer.commit == second and not (newer.path / "old.txt").exists()
    assert not list((tmp_path / "trees").glob("*.partial"))


def test_unknown_revisions_and_folders_that_are_no_repository_say_what_to_do(upstream, tmp_path):
    repo, _, _ = upstream
    with pytest.raises(real_trees.TreeError, match="has no revision 'nope'"):
        real_trees.resolve(real_trees.git_dir(repo), "nope")
    with pytest.raises(real_trees.TreeError, match="is not a git repository"):
        real_trees.git_dir(tmp_path)


def test_the_rebuilt_archive_is_the_commit_under_its_prefix_and_the_same_every_time(upstream, tmp_path):
    repo, first, _ = upstream
    gitdir = real_trees.git_dir(repo)
    one = real_trees.github_archive(gitdir, first, "up-" + first, tmp_path / "a" / "x.tar.gz")
    two = real_trees.github_archive(gitdir, first, "up-" + first, tmp_path / "b" / "x.tar.gz")
    assert one == two
    with tarfile.open(tmp_path / "a" / "x.tar.gz") as tar:
        assert f"up-{first}/xla/BUILD" in tar.getnames()


def test_the_checkout_never_receives_trees(tmp_path, capsys):
    with pytest.raises(SystemExit):
        real_trees.main(["--dest", str(real_trees.CHECKOUT / "trees"), "--jax-git", str(tmp_path)])
    assert "inside this checkout" in capsys.readouterr().err


def test_env_sh_sets_the_pins_lists_the_rest_and_keeps_what_this_run_did_not_set(tmp_path):
    jax = [real_trees.Tree("jax-pin", "a" * 40, tmp_path / "jax-pin", 1, 0),
           real_trees.Tree("jax-v0.11.0", "b" * 40, tmp_path / "jax-v0.11.0", 1, 0)]
    lines = real_trees.env_lines({"jax": jax}, None, None, None)
    assert lines[1:] == [f"export JAX_ROCM_TEST_JAX_TREE={tmp_path}/jax-pin  # aaaaaaaaaaaa",
                         f"# export JAX_ROCM_TEST_JAX_TREE={tmp_path}/jax-v0.11.0  # bbbbbbbbbbbb"]
    old = "# header\nexport JAX_ROCM_TEST_REGISTRY=/r\nexport JAX_ROCM_TEST_JAX_TREE=/old\n"
    assert real_trees.merged(old, lines) == [lines[0], "export JAX_ROCM_TEST_REGISTRY=/r", *lines[1:]]
    assert real_trees.folder_name("jax", "jax-v0.11.0", "c" * 40) == "jax-v0.11.0"
    assert real_trees.folder_name("xla", "main", "c" * 40) == "xla-main"
    assert real_trees.folder_name("xla", "c" * 40, "c" * 40) == "xla-pin"
