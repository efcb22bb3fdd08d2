"""tests/infra/real_trees.py on a repository of the test's own making (the real ones are the gated tier's)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.infra import real_trees

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
    with pytest.raises(SystemExit):
        real_trees.main(["--manifest", str(real_trees.MANIFEST), "--mirror", str(tmp_path), "--dest", str(real_trees.CHECKOUT)])
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


def test_bazel_features_repositories_answer_for_the_bazel_given(tmp_path):
    """Debian's Bazel reports no version: bazel_features would take it for the newest Bazel."""
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "globals.bzl").write_text(
        '"""Internal constants."""\n'
        'GLOBALS = {\n    "PackageSpecificationInfo": "6.4.0",\n    "macro": "8.0.0",\n    "subrule": "7.0.0-pre.20230316.2",\n}\n'
        'LEGACY_GLOBALS = {\n    "ProtoInfo": "8.0.0",\n}\n')
    files = real_trees.bazel_features_repositories(tmp_path, "7.7.1")
    assert files["version/version.bzl"] == "version = '7.7.1'\n"
    body = files["globals/globals.bzl"]
    assert "    PackageSpecificationInfo = PackageSpecificationInfo,\n" in body
    assert "    macro = None,\n" in body and "    subrule = subrule,\n" in body
    assert "    ProtoInfo = getattr(getattr(native, 'legacy_globals', None), 'ProtoInfo', ProtoInfo),\n" in body
    assert "    macro = macro,\n" in real_trees.bazel_features_repositories(tmp_path, "8.0.0")["globals/globals.bzl"]
    assert real_trees.bazel_version_key("7.0.0-pre.20230316.2") < real_trees.bazel_version_key("7.0.0")
    rc = real_trees.full_bazelrc({"protobuf": Path("/t/protobuf-v32.1")}, Path("/t/features"), "7.7.1")
    # Only the trees: nothing from the system (hwloc is laid out from a source tarball too).
    assert not [line for line in rc if "TF_SYSTEM_LIBS" in line or "--define" in line], rc
    assert rc[1:] == ["common --override_module=protobuf=/t/protobuf-v32.1",
                      "common --override_repository=bazel_features~~version_extension~bazel_features_globals=/t/features/globals",
                      "common --override_repository=bazel_features~~version_extension~bazel_features_version=/t/features/version"]


def test_xlas_archive_declarations_are_read_with_their_variables(tmp_path):
    (tmp_path / "third_party" / "eigen3").mkdir(parents=True)
    (tmp_path / "third_party" / "eigen3" / "workspace.bzl").write_text('''
load("//third_party:repo.bzl", "tf_http_archive", "tf_mirror_urls")

def repo():
    EIGEN_COMMIT = "ea13a98d"
    EIGEN_SHA256 = "35c6"
    tf_http_archive(
        name = "eigen_archive",
        sha256 = EIGEN_SHA256,
        strip_prefix = "eigen-{commit}".format(commit = EIGEN_COMMIT),
        urls = tf_mirror_urls("https://gitlab.com/libeigen/eigen/-/archive/{commit}/eigen-{commit}.tar.gz".format(commit = EIGEN_COMMIT)),
    )
''')
    (tmp_path / "third_party" / "dlpack").mkdir()
    (tmp_path / "third_party" / "dlpack" / "workspace.bzl").write_text('''
def repo():
    tf_http_archive(
        name = "dlpack",
        strip_prefix = "dlpack-" + "1.1",
        sha256 = "2e3b",
        urls = tf_mirror_urls("https://github.com/dmlc/dlpack/archive/refs/tags/v1.1.tar.gz"),
    )
''')
    (tmp_path / "third_party" / "sqlite").mkdir()
    (tmp_path / "third_party" / "sqlite" / "workspace.bzl").write_text('''
def repo():
    tf_http_archive(
        name = "org_sqlite",
        sha256 = "8a31",
        strip_prefix = "sqlite-amalgamation-3530200",
        urls = tf_mirror_urls("https://sqlite.org/2026/sqlite-amalgamation-3530200.zip"),
    )
''')
    archives = real_trees.xla_archives(tmp_path)
    assert set(archives) == {"dlpack", "eigen_archive", "org_sqlite"}
    # A release asset: no git can make it (--archive-dir can), named by its file.
    sqlite = archives["org_sqlite"]
    assert (sqlite.from_git, sqlite.rev) == (False, "sqlite-amalgamation-3530200")
    failed, _ = real_trees.rebuild_archives("org_sqlite", tmp_path / "dest", tmp_path, "7.7.1", gitdir=tmp_path)
    assert "--archive-dir" in failed[0]
    eigen = archives["eigen_archive"]
    assert (eigen.rev, eigen.strip_prefix, eigen.sha256) == ("ea13a98d", "eigen-ea13a98d", "35c6")
    assert eigen.url.endswith("/-/archive/ea13a98d/eigen-ea13a98d.tar.gz")
    dlpack = archives["dlpack"]
    assert (dlpack.rev, dlpack.strip_prefix, dlpack.sha256) == ("v1.1", "dlpack-1.1", "2e3b")
    assert dlpack.declared_in == "third_party/dlpack/workspace.bzl"


def test_a_module_tree_is_made_what_the_registry_makes_of_its_version(tmp_path):
    tree, version = tmp_path / "tree", tmp_path / "registry" / "zlib" / "1.3.2"
    tree.mkdir()
    (tree / "zlib.h").write_text("#define ZLIB_VERSION \"1.3.1\"\n")
    (tree / "MODULE.bazel").write_text('module(name = "zlib", version = "0.0.0")\n')
    (version / "overlay").mkdir(parents=True)
    (version / "patches").mkdir()
    (version / "overlay" / "BUILD.bazel").write_text("cc_library(name = 'zlib')\n")
    (version / "MODULE.bazel").write_text('module(name = "zlib", version = "1.3.2")\n')
    (version / "patches" / "v.patch").write_text(
        "--- a/zlib.h\n+++ b/zlib.h\n@@ -1 +1 @@\n-#define ZLIB_VERSION \"1.3.1\"\n+#define ZLIB_VERSION \"1.3.2\"\n")
    (version / "patches" / "m.patch").write_text("--- a/MODULE.bazel\n+++ b/MODULE.bazel\n@@ -1 +1 @@\n-x\n+y\n")
    (version / "source.json").write_text(json.dumps({"overlay": {"BUILD.bazel": "sha256-x"},
                                                     "patches": {"v.patch": "sha256-y", "m.patch": "sha256-z"}, "patch_strip": 1}))
    assert real_trees.apply_registry_version(tree, version) == [
        "overlay BUILD.bazel", "patch v.patch", "patch m.patch (MODULE.bazel only: the registry's file replaces it)", "MODULE.bazel"]
    assert (tree / "BUILD.bazel").read_text() == "cc_library(name = 'zlib')\n"
    assert '"1.3.2"' in (tree / "zlib.h").read_text() and '"1.3.2"' in (tree / "MODULE.bazel").read_text()
    with pytest.raises(real_trees.TreeError, match="does not apply"):
        real_trees.apply_registry_version(tree, version)  # already applied: the patch no longer fits


def test_a_tree_keeping_its_release_build_files_beside_gets_the_release_ones(tmp_path):
    (tmp_path / "kotlin" / "internal").mkdir(parents=True)
    (tmp_path / "kotlin" / "internal" / "BUILD").write_text('load("//release:packager.bzl", "release_archive")\n')
    (tmp_path / "kotlin" / "internal" / "BUILD.release.bazel").write_text("toolchain(name = 't')\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "BUILD").write_text("# no release file: kept\n")
    (tmp_path / "BUILD.release.bazel").write_text("exports_files([])\n")
    assert real_trees.apply_release_layout(tmp_path) == [".", "kotlin/internal"]
    assert (tmp_path / "kotlin" / "internal" / "BUILD.bazel").read_text() == "toolchain(name = 't')\n"
    assert not (tmp_path / "kotlin" / "internal" / "BUILD").exists()
    assert (tmp_path / "docs" / "BUILD").read_text() == "# no release file: kept\n"
    assert real_trees.apply_release_layout(tmp_path) == []


def test_rules_python_reads_the_bazel_given_where_it_reads_bazels_own(tmp_path):
    config = tmp_path / "python" / "private" / "internal_config_repo.bzl"
    config.parent.mkdir(parents=True)
    config.write_text("    if native.bazel_version:\n        parts = native.bazel_version.split('.')\n")
    assert real_trees.pin_bazel_version(tmp_path, "rules_python", "7.7.1") == ["python/private/internal_config_repo.bzl"]
    assert config.read_text() == "    if '7.7.1':\n        parts = '7.7.1'.split('.')\n"
    assert real_trees.pin_bazel_version(tmp_path, "rules_python", "7.7.1") == []
    assert real_trees.pin_bazel_version(tmp_path, "abseil-cpp", "7.7.1") == []


def test_an_archive_git_cannot_rebuild_becomes_the_repository_xlas_rule_makes(upstream, tmp_path, capsys):
    repo, _, second = upstream
    dest = tmp_path / "dest"
    xla = dest / "xla-pin"  # a tree real_trees laid out (its stamp), declaring a zip
    (xla / "third_party" / "foo").mkdir(parents=True)
    (xla / real_trees.STAMP).write_text("{}")
    (xla / "third_party" / "extensions").mkdir()
    (xla / "third_party" / "extensions" / "third_party.bzl").write_text(
        'load("//third_party/foo:workspace.bzl", foo = "repo")\n\ndef _impl(mctx):\n    foo()\n\n'
        "third_party_ext = module_extension(implementation = _impl)\n")
    (xla / "third_party" / "foo" / "workspace.bzl").write_text(f'''
def repo():
    tf_http_archive(
        name = "foo",
        sha256 = "1234",
        strip_prefix = "upstream-{second}",
        patch_file = ["//third_party/foo:fix.patch"],
        build_file = "//third_party/foo:foo.BUILD",
        link_files = {{"//third_party/foo:extra.h": "include/extra.h"}},
        urls = tf_mirror_urls("https://github.com/o/upstream/archive/{second}.zip"),
    )
''')
    (xla / "third_party" / "foo" / "fix.patch").write_text(
        "--- a/run.sh\n+++ b/run.sh\n@@ -1 +1,2 @@\n #!/bin/sh\n+echo patched\n")
    (xla / "third_party" / "foo" / "foo.BUILD").write_text("cc_library(name = 'foo')\n")
    (xla / "third_party" / "foo" / "extra.h").write_text("#define EXTRA 1\n")

    failed, overrides = real_trees.rebuild_archives("foo", dest, xla, "7.7.1", gitdir=repo / ".git")

    tree = dest / "archives" / f"foo-{second}"
    assert failed == [] and overrides == [f"common --override_repository=xla~~third_party_ext~foo={tree}"]
    assert (tree / "run.sh").read_text() == "#!/bin/sh\necho patched\n"
    assert (tree / "BUILD.bazel").read_text() == "cc_library(name = 'foo')\n"
    assert (tree / "include" / "extra.h").read_text() == "#define EXTRA 1\n"
    assert not (tree / "old.txt").exists() and not (dest / "distdir").exists()  # a zip is not tried as a tarball
    # Bazel 8 names extension repositories with '+'; without the XLA tree of full mode, it is an error.
    assert real_trees.canonical_name("xla", "third_party_ext", "foo", "8.4.2") == "xla++third_party_ext+foo"
    (tree / "BUILD.bazel").unlink()  # laid out again only when the declaration or the source changes
    assert real_trees.rebuild_archives("foo", dest, xla, "7.7.1", gitdir=repo / ".git") == ([], overrides)
    assert not (tree / "BUILD.bazel").exists()
    # Another XLA tree's archive (not full.bazelrc's) is left, said so, and not an error.
    assert real_trees.rebuild_archives("foo", dest, None, "7.7.1", gitdir=repo / ".git") == ([], [])
    assert "only for the XLA tree of full.bazelrc (--full-xla)" in capsys.readouterr().err
    # From a folder (an extracted release): the same repository.
    release = tmp_path / "release"
    real_trees.extract(repo / ".git", second, release)
    failed, overrides = real_trees.rebuild_archives("foo", dest, xla, "7.7.1", folder=release)
    assert failed == [] and (tree / "run.sh").read_text() == "#!/bin/sh\necho patched\n"
    assert (tree / "BUILD.bazel").is_file() and (tree / "REPO.bazel").read_text() == ""


def test_a_patch_that_does_not_apply_is_named_with_the_declaration(upstream, tmp_path):
    repo, first, _ = upstream
    xla = tmp_path / "xla"
    (xla / "third_party" / "foo").mkdir(parents=True)
    (xla / "third_party" / "foo" / "workspace.bzl").write_text(f'''
def repo():
    http_archive(
        name = "foo",
        sha256 = "1234",
        patches = ["//third_party/foo:bad.patch"],
        urls = ["https://github.com/o/upstream/archive/{first}.zip"],
    )
''')
    (xla / "third_party" / "foo" / "bad.patch").write_text("--- a/none.txt\n+++ b/none.txt\n@@ -1 +1 @@\n-a\n+b\n")
    failed, overrides = real_trees.rebuild_archives("foo", tmp_path / "dest", xla, "7.7.1", gitdir=repo / ".git")
    assert overrides == [] and "third_party/foo/workspace.bzl's //third_party/foo:bad.patch does not apply" in failed[0]


def test_a_strip_prefix_into_a_folder_keeps_that_folder_as_the_repository(upstream, tmp_path):
    repo, _, second = upstream
    archive = real_trees.Archive("foo", f"https://github.com/o/upstream/archive/{second}.zip", f"upstream-{second}/xla",
                                 "1234", "third_party/foo/workspace.bzl")
    tree = tmp_path / "foo"
    assert real_trees.repository_tree(archive, tmp_path, tree, gitdir=repo / ".git") == []
    assert sorted(p.name for p in tree.iterdir()) == ["BUILD", "REPO.bazel"]


def test_a_revision_git_lacks_can_be_stood_in_for_by_another_named_as_such(upstream, tmp_path, capsys):
    repo, first, second = upstream
    xla = tmp_path / "xla"
    (xla / "third_party" / "foo").mkdir(parents=True)
    (xla / "third_party" / "extensions").mkdir()
    (xla / "third_party" / "extensions" / "x.bzl").write_text(
        'load("//third_party/foo:workspace.bzl", "repo")\nfoo_ext = module_extension(implementation = _impl)\n')
    (xla / "third_party" / "foo" / "workspace.bzl").write_text('''
def repo():
    tf_http_archive(name = "foo", sha256 = "1234", strip_prefix = "upstream-0123",
                    urls = ["https://github.com/o/upstream/archive/0123.tar.gz"])
''')
    failed, overrides = real_trees.rebuild_archives("foo", tmp_path / "dest", xla, "7.7.1", gitdir=repo / ".git",
                                                    stand_in=first)
    tree = tmp_path / "dest" / "archives" / f"foo-{first}"
    assert failed == [] and overrides == [f"common --override_repository=xla~~foo_ext~foo={tree}"]
    assert (tree / "old.txt").is_file()  # the stand-in's files, not the declared revision's
    assert "(a stand-in: 0123 is not in" in capsys.readouterr().err
    assert json.loads((tree / real_trees.STAMP).read_text())["stand_in"] is True


def test_bazel_features_reads_the_bazel_given_where_it_reads_bazels_own(tmp_path):
    """Debian's Bazel reports no version: bazel_features' globals would name Bazel 8's `macro`."""
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "globals_repo.bzl").write_text("    bazel_version = parse_version(native.bazel_version)\n")
    (tmp_path / "private" / "version_repo.bzl").write_text('    rctx.file("version.bzl", "version = \'" + native.bazel_version + "\'")\n')
    assert real_trees.pin_bazel_version(tmp_path, "bazel_features", "7.7.1") == ["private/globals_repo.bzl",
                                                                                  "private/version_repo.bzl"]
    assert "parse_version('7.7.1')" in (tmp_path / "private" / "globals_repo.bzl").read_text()


def test_a_graph_module_is_laid_out_as_name_version_made_the_registrys_and_left_out_of_full_bazelrc(upstream, tmp_path):
    repo, _, second = upstream
    dest = tmp_path / "trees"
    version = dest / "registry" / "modules" / "up" / "2.0.0"
    version.mkdir(parents=True)
    (version / "MODULE.bazel").write_text('module(name = "up", version = "2.0.0")\n')
    (version / "source.json").write_text("{}")
    assert real_trees.main(["--dest", str(dest), "--graph-module", f"up@2.0.0={repo}@v2"]) == 0
    tree = dest / "modules" / "up-2.0.0"
    assert (tree / "MODULE.bazel").read_text() == 'module(name = "up", version = "2.0.0")\n'
    stamp = json.loads((tree / real_trees.STAMP).read_text())
    assert (stamp["commit"], stamp["registry"]) == (second, ["MODULE.bazel"])
    assert f"export JAX_ROCM_TEST_MODULES={dest / 'modules'}" in (dest / "env.sh").read_text().splitlines()
    assert not (dest / "full.bazelrc").exists()
    with pytest.raises(SystemExit):
        real_trees.main(["--dest", str(dest), "--graph-module", f"up={repo}@v2"])  # the version is not optional


# --- The manifest (tests/infra/real_trees.toml, --manifest) ----------------------------------------

MANIFEST_HEAD = """
[profile.pin]
jax = "pin"
xla = "pin"

[profile.main]
jax = "jax-v0.11.0"
xla = "main"

[[entry]]
kind = "jax"
repo = "jax-ml/jax"
revs = ["jax-v0.11.0"]

[[entry]]
kind = "xla"
repo = "ROCm/xla"
revs = ["main"]

[[entry]]
kind = "registry"
repo = "bazelbuild/bazel-central-registry"

[[entry]]
kind = "toolchain"
repo = "google-ml-infra/rules_ml_toolchain"
"""


def write_manifest(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "trees.toml"
    path.write_text(MANIFEST_HEAD + body)
    return path


def test_a_manifest_is_read_entry_by_entry_with_the_profiles_each_serves(tmp_path):
    manifest = real_trees.read_manifest(write_manifest(tmp_path, """
[[entry]]
kind = "module"
name = "zlib"
version = "1.3.2"
repo = "madler/zlib"
rev = "v1.3.1"
note = "1.3.1's tree as 1.3.2"

[[entry]]
kind = "archive"
name = "dlpack"
repo = "dmlc/dlpack"
rev = "77aafa4d"
stand_in = "7f393bbb"
xla = ["main"]

[[entry]]
kind = "archive-dir"
name = "net_zstd"
rev = "v1.5.7"
debian = { source = "libzstd", file = "libzstd_1.5.7+dfsg.orig.tar.xz", sha256 = "0c09" }

[[entry]]
kind = "load-only-module"
name = "grpc"
generator = "tests/infra/grpc_stub.py"

[[entry]]
kind = "graph-module"
name = "rules_cc"
version = "0.0.11"
repo = "bazelbuild/rules_cc"
rev = "0.0.11"
"""))
    assert list(manifest.profiles) == ["pin", "main"]
    assert manifest.profiles["pin"].is_checkouts and not manifest.profiles["main"].is_checkouts
    assert manifest.profiles["main"].folders() == ("jax-v0.11.0", "xla-main")
    assert manifest.profiles["pin"].folders() == ("jax-pin", "xla-pin")
    zlib = manifest.of("module")[0]
    assert (zlib.name, zlib.version, zlib.repo, zlib.rev, zlib.xla) == ("zlib", "1.3.2", "madler/zlib", "v1.3.1", ("pin", "main"))
    assert [e.name for e in manifest.of("archive", profile="pin")] == []
    assert manifest.of("archive", profile="main")[0].stand_in == "7f393bbb"
    assert real_trees.wanted_revisions(manifest.of("archive")[0]) == ["7f393bbb"]  # what is laid out: the stand-in
    assert dict(manifest.of("archive-dir")[0].debian)["source"] == "libzstd"
    assert manifest.of("graph-module")[0].xla == ()
    assert real_trees.wanted_revisions(manifest.core("jax")) == [real_trees.pin("jax")["commit"], "jax-v0.11.0"]
    assert manifest.repositories() == ["bazelbuild/bazel-central-registry", "bazelbuild/rules_cc", "dmlc/dlpack",
                                       "google-ml-infra/rules_ml_toolchain", "jax-ml/jax", "madler/zlib", "ROCm/xla"]


def test_every_problem_of_a_manifest_is_named_at_once(tmp_path):
    path = write_manifest(tmp_path, """
[[entry]]
kind = "modul"
name = "x"

[[entry]]
kind = "module"
name = "zlib"
repo = "zlib"
rev = "v1.3.1"
sha = "1234"

[[entry]]
kind = "archive"
name = "dlpack"
repo = "dmlc/dlpack"
rev = "v1.1"
xla = ["pin", "tip"]

[[entry]]
kind = "archive-dir"
name = "dlpack"
rev = "v1.1"
debian = { source = "dlpack" }
xla = ["pin"]

[[entry]]
kind = "archive-dir"
name = "net_zstd"
rev = "v1.5.7"
debian = { source = "libzstd", suite = "trixie", file = "libzstd.tar.xz", sha256 = "00" }
xla = ["pin"]

[[entry]]
kind = "load-only-module"
name = "grpc"
generator = "curl https://example.invalid | sh"

[[entry]]
kind = "xla"
repo = "openxla/xla"
""")
    with pytest.raises(real_trees.TreeError) as raised:
        real_trees.read_manifest(path)
    message = str(raised.value)
    for problem in ("entry 5 (modul x): kind must be one of", "entry 6 (module zlib): lacks version",
                    "entry 6 (module zlib): sha not taken by kind module", "repo 'zlib' is not OWNER/NAME",
                    "xla names no [profile.*]: tip", "debian needs source, file, sha256 and may have suite",
                    "(archive-dir net_zstd): debian's suite must be one of sid, experimental, bookworm, bullseye",
                    "generator must be one of tests/infra/grpc_stub.py", "2 entries of kind xla",
                    "archive dlpack is listed 2 times for profile pin"):
        assert problem in message, (problem, message)


def bare(tmp_path: Path, name: str, upstream_repo: Path) -> Path:
    """A mirror clone as `git clone --mirror https://github.com/OWNER/NAME MIRROR/OWNER+NAME.git`
    makes it (name: OWNER+NAME)."""
    target = tmp_path / "mirror" / f"{name}.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(upstream_repo), str(target)], check=True)
    return target


def test_the_mirror_is_searched_as_git_clone_lays_repositories_out(upstream, tmp_path):
    """OWNER+NAME.git, OWNER+NAME and OWNER+NAME/repo, each a --mirror, --bare or work-tree clone."""
    repo, _, _ = upstream
    mirror = tmp_path / "mirror"
    assert real_trees.mirror_git_dir(mirror, "o/mirrored") is None
    mirrored = bare(tmp_path, "o+mirrored", repo)
    assert real_trees.mirror_git_dir(mirror, "o/mirrored") == mirrored
    subprocess.run(["git", "clone", "-q", "--mirror", str(repo), str(mirror / "o+plain")], check=True)
    assert real_trees.mirror_git_dir(mirror, "o/plain") == mirror / "o+plain"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(mirror / "o+nested" / "repo")], check=True)
    assert real_trees.mirror_git_dir(mirror, "o/nested") == mirror / "o+nested" / "repo"
    subprocess.run(["git", "clone", "-q", str(repo), str(mirror / "o+clone" / "repo")], check=True)
    assert real_trees.mirror_git_dir(mirror, "o/clone") == mirror / "o+clone" / "repo" / ".git"
    subprocess.run(["git", "clone", "-q", str(repo), str(mirror / "o+worktree.git")], check=True)
    assert real_trees.mirror_git_dir(mirror, "o/worktree") == mirror / "o+worktree.git" / ".git"
    (mirror / "o+empty" / "repo").mkdir(parents=True)
    (mirror / "o+empty.git").mkdir()
    assert real_trees.mirror_git_dir(mirror, "o/empty") is None


def documented_clone_loop() -> str:
    """The `while read r; ... done` of docs/testing.md that clones what `--repositories` lists."""
    loops = re.findall(r"^ *(while read r; do git clone --mirror .*; done)$", TESTING_MD.read_text(), re.M)
    assert len(loops) == 1, loops
    return loops[0]


def test_the_documented_clone_and_update_commands_make_a_folder_the_manifest_reads(upstream, tmp_path):
    """docs/testing.md's loop (the module's --help shows the same), run as a user's shell runs it,
    with https://github.com/o/upstream answered by the local repository (git's url.insteadOf)."""
    repo, _, second = upstream
    loop = documented_clone_loop()
    assert loop in real_trees.__doc__
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0=f"url.{repo}.insteadOf",
               GIT_CONFIG_VALUE_0="https://github.com/o/upstream")
    subprocess.run(["sh", "-c", loop], input="o/upstream\n", text=True, env=env, check=True, capture_output=True)
    gitdir = real_trees.mirror_git_dir(home / "mirror", "o/upstream")
    assert gitdir == home / "mirror" / "o+upstream.git" and real_trees.resolve(gitdir, "v2") == second
    # The update the docs name brings a newer upstream commit in.
    (repo / "new.txt").write_text("newer\n")
    run(repo, "add", "-A")
    run(repo, "commit", "-qm", "three")
    subprocess.run(["sh", "-c", "git -C ~/mirror/o+upstream.git remote update"], env=env, check=True, capture_output=True)
    assert real_trees.resolve(gitdir, "HEAD") == run(repo, "rev-parse", "HEAD")
    assert "`git -C ~/mirror/OWNER+NAME.git remote update`" in TESTING_MD.read_text()


def test_missing_repositories_are_one_list_to_fetch_and_nothing_is_laid_out(upstream, tmp_path, capsys):
    repo, first, _ = upstream
    run(repo, "tag", "v1.3.1", first)
    for name in ("madler+zlib", "dmlc+dlpack"):
        bare(tmp_path, name, repo)
    path = write_manifest(tmp_path, """
[[entry]]
kind = "module"
name = "zlib"
version = "1.3.2"
repo = "madler/zlib"
rev = "v1.3.1"

[[entry]]
kind = "archive"
name = "dlpack"
repo = "dmlc/dlpack"
rev = "77aafa4d"
xla = ["main"]

[[entry]]
kind = "archive"
name = "XNNPACK"
repo = "google/XNNPACK"
rev = "76de1380"

[[entry]]
kind = "archive"
name = "onednn"
repo = "uxlfoundation/oneDNN"
rev = "v3.7.3"

[[entry]]
kind = "archive"
name = "onednn_async"
repo = "uxlfoundation/oneDNN"
rev = "v3.11.3"
""")
    dest = tmp_path / "trees"
    status = real_trees.main(["--manifest", str(path), "--mirror", str(tmp_path / "mirror"), "--dest", str(dest)])
    out, err = capsys.readouterr()
    assert status == 2 and not dest.exists()
    # Every repository absent, once each, one a line (the core four too: the mirror has none of them).
    assert out.splitlines() == ["bazelbuild/bazel-central-registry", "google-ml-infra/rules_ml_toolchain", "google/XNNPACK",
                                "jax-ml/jax", "ROCm/xla", "uxlfoundation/oneDNN"]
    assert "6 repositories of" in err and "git clone --mirror https://github.com/OWNER/NAME" in err
    # A repository at hand without the revision an entry names is said too, with what to do.
    dlpack = (tmp_path / "mirror").resolve() / "dmlc+dlpack.git"
    assert f"dmlc/dlpack lacks 77aafa4d (archive dlpack (main)): update it (`git -C {dlpack} remote update`), or name a " \
           "revision" in err
    assert "madler/zlib lacks" not in err
    # --profile pin leaves out what serves main alone.
    real_trees.main(["--manifest", str(path), "--mirror", str(tmp_path / "mirror"), "--dest", str(dest), "--profile", "pin"])
    assert "dlpack" not in capsys.readouterr().err
    # --only core asks for the core four alone.
    real_trees.main(["--manifest", str(path), "--mirror", str(tmp_path / "mirror"), "--dest", str(dest), "--only", "core"])
    assert capsys.readouterr().out.splitlines() == ["bazelbuild/bazel-central-registry", "google-ml-infra/rules_ml_toolchain",
                                                    "jax-ml/jax", "ROCm/xla"]


def test_the_manifest_agrees_with_the_xla_trees_or_says_what_to_update(tmp_path):
    manifest = real_trees.read_manifest(write_manifest(tmp_path, """
[[entry]]
kind = "archive"
name = "dlpack"
repo = "dmlc/dlpack"
rev = "v1.1"

[[entry]]
kind = "archive"
name = "gone"
repo = "o/gone"
rev = "v1"
xla = ["pin"]
"""))
    for folder, rev in (("xla-pin", "v1.1"), ("xla-main", "v1.2")):
        (tmp_path / folder / "third_party" / "dlpack").mkdir(parents=True)
        (tmp_path / folder / "third_party" / "dlpack" / "workspace.bzl").write_text(f'''
def repo():
    tf_http_archive(name = "dlpack", sha256 = "2e3b", strip_prefix = "dlpack-{rev}",
                    urls = tf_mirror_urls("https://github.com/dmlc/dlpack/archive/refs/tags/{rev}.tar.gz"))
''')
    problems = real_trees.declaration_problems(manifest, list(manifest.profiles.values()), tmp_path)
    assert problems == ["archive gone (pin): xla-pin declares no archive of that name (third_party/**/workspace.bzl)",
                        "archive dlpack (pin, main): the manifest says v1.1, xla-main's third_party/dlpack/workspace.bzl "
                        "v1.2: update tests/infra/real_trees.toml"]


def test_a_profile_besides_the_pins_gets_an_env_file_of_its_own_trees(tmp_path):
    (tmp_path / "env.sh").write_text("# header\nexport JAX_ROCM_TEST_REGISTRY=/r\nexport JAX_ROCM_TEST_XLA_TREE=/x/xla-pin\n"
                                     "# export JAX_ROCM_TEST_XLA_TREE=/x/xla-main\nexport JAX_ROCM_TEST_FULL_BAZELRC=/x/full.bazelrc\n")
    profile = real_trees.Profile("main", "jax-v0.11.0", "main")
    real_trees.profile_env(tmp_path, profile, "env-main.sh", "full-main.bazelrc", tmp_path / "jax_patches" / "jax-v0.11.0")
    lines = (tmp_path / "env-main.sh").read_text().splitlines()
    assert lines[0].startswith("# Written by tests/infra/real_trees.py --manifest: profile main") and "--jax-source-dir=" in lines[0]
    assert lines[1:] == ["export JAX_ROCM_TEST_REGISTRY=/r", f"export JAX_ROCM_TEST_JAX_TREE={tmp_path}/jax-v0.11.0",
                         f"export JAX_ROCM_TEST_XLA_TREE={tmp_path}/xla-main",
                         f"export JAX_ROCM_TEST_FULL_BAZELRC={tmp_path}/full-main.bazelrc"]


def test_module_trees_rc_and_env_files_go_where_they_are_named(upstream, tmp_path):
    repo, _, second = upstream
    dest = tmp_path / "trees"
    assert real_trees.main(["--dest", str(dest), "--module", f"up@2.0.0={repo}@v2", "--modules-folder", "modules-main",
                            "--full-rc", "full-main.bazelrc", "--env-file", "env-main.sh"]) == 0
    assert (dest / "modules-main" / "up-v2" / real_trees.STAMP).is_file()
    assert f"common --override_module=up={dest}/modules-main/up-v2" in (dest / "full-main.bazelrc").read_text()
    assert (dest / "env-main.sh").read_text().splitlines()[-1] == f"export JAX_ROCM_TEST_FULL_BAZELRC={dest}/full-main.bazelrc"
    assert not (dest / "full.bazelrc").exists() and not (dest / "env.sh").exists()


# The checked-in manifest, and docs/testing.md's account of it.
TESTING_MD = real_trees.CHECKOUT / "docs" / "testing.md"
COMMAND = "python3 -m tests.infra.real_trees --manifest tests/infra/real_trees.toml --mirror ~/mirror --dest ~/.cache/trees"


def test_the_checked_in_manifest_reads_and_every_xla_archive_names_its_repository():
    manifest = real_trees.read_manifest(real_trees.MANIFEST)
    assert {p.name for p in manifest.profiles.values() if p.is_checkouts} == {"pin"}
    assert {e.kind for e in manifest.entries} == set(real_trees.KINDS)
    for entry in manifest.of("module", "graph-module", "archive"):
        assert entry.repo and entry.rev, entry
    # Each profile has one grpc, and each module once: what full.bazelrc names.
    for profile in manifest.profiles:
        names = [e.name for e in manifest.of("module", "load-only-module", profile=profile)]
        assert "grpc" in names and len(names) == len(set(names))


def documented_repositories() -> list[str]:
    text = TESTING_MD.read_text()
    begin, end = "<!-- real_trees.toml repositories: begin -->", "<!-- real_trees.toml repositories: end -->"
    assert begin in text and end in text, f"docs/testing.md lacks the markers {begin} ... {end}"
    block = text.split(begin, 1)[1].split(end, 1)[0]
    return re.findall(r"`([\w.-]+/[\w.-]+)`", block)


def test_docs_testing_md_gives_the_one_command_and_the_manifests_repositories():
    text = " ".join(TESTING_MD.read_text().split())
    assert COMMAND in text
    assert documented_repositories() == real_trees.read_manifest(real_trees.MANIFEST).repositories(), (
        "docs/testing.md's list differs from tests/infra/real_trees.toml's: paste the output of "
        "`python3 -m tests.infra.real_trees --manifest tests/infra/real_trees.toml --repositories` between its "
        "markers, each as `owner/name`")
