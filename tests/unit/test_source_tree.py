"""third_party/private/source_tree.py: JAX's files laid out without JAX's Bazel files."""

from __future__ import annotations

import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, EXAMPLES_JAX, require_jax_tree
from third_party.private import source_tree as st

pytestmark = pytest.mark.unit

COMMIT = "990e6a0b84138346e6a38785412f36356e0e5dc3"
TREE = {
    "LICENSE": "Apache",
    "BUILD.bazel": "load('//jaxlib:jax.bzl', 'x')",
    "MODULE.bazel": "module(name = 'jax')",
    "jax/version.py": '_version: str = "0.10.2"\n',
    "jaxlib/jax.bzl": "def x(): pass",
    "jaxlib/kernel_helpers.h": "// helpers",
    "jaxlib/gpu/BUILD": "load('//jaxlib:jax.bzl', 'x')",
    "jaxlib/gpu/prng.cc": "// prng",
    "jaxlib/gpu/nested/deep.cc": "// not a listed directory",
    "jaxlib/rocm/rocm_plugin_extension.cc": "// ext",
    "docs/index.md": "# not laid out",
}
WANTED = {"LICENSE", "jax/version.py", "jaxlib/kernel_helpers.h", "jaxlib/gpu/prng.cc", "jaxlib/rocm/rocm_plugin_extension.cc"}


def write_tree(root: Path) -> Path:
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def git_archive(path: Path, commit: str | None = COMMIT, extra: dict[str, str] | None = None) -> Path:
    """A tarball as `git archive --prefix=jax-jax-v0.10.2/` makes it: one top folder, the commit in a pax header."""
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT, pax_headers={"comment": commit} if commit else {}) as tar:
        for name, text in {**TREE, **(extra or {})}.items():
            info = tarfile.TarInfo("jax-jax-v0.10.2/" + name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return path


def laid_out(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_an_archive_is_laid_out_without_bazel_files_and_names_its_commit(tmp_path):
    archive = git_archive(tmp_path / "jax.tar.gz")
    info = st.lay_out(archive, tmp_path / "out", st.DEFAULT_DIRS, None, None)
    assert laid_out(tmp_path / "out") == WANTED
    assert (info.origin, info.commit, info.version, info.files) == ("local archive", COMMIT, "0.10.2", len(WANTED))
    assert info.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert st.identify(archive) == ("0.10.2", COMMIT)


def test_a_checkout_is_symlinked_so_that_edits_are_seen(tmp_path):
    checkout = write_tree(tmp_path / "jax")
    info = st.lay_out(checkout, tmp_path / "out", st.DEFAULT_DIRS, None, None)
    assert laid_out(tmp_path / "out") == WANTED and info.origin == "local checkout" and info.sha256 is None
    (checkout / "jaxlib/gpu/prng.cc").write_text("// edited")
    assert (tmp_path / "out/jaxlib/gpu/prng.cc").read_text() == "// edited"
    assert os.path.islink(tmp_path / "out/jaxlib/gpu/prng.cc")


def test_a_zip_archive_and_an_archive_without_commit(tmp_path):
    with zipfile.ZipFile(tmp_path / "jax.zip", "w") as zf:
        for name, text in TREE.items():
            zf.writestr("jax-main/" + name, text)
    info = st.lay_out(tmp_path / "jax.zip", tmp_path / "out", st.DEFAULT_DIRS, "pinned archive", "ab" * 32)
    assert laid_out(tmp_path / "out") == WANTED and (info.origin, info.sha256, info.commit) == ("pinned archive", "ab" * 32, None)
    assert st.identify(git_archive(tmp_path / "plain.tar.gz", commit=None)) == ("0.10.2", None)


@pytest.mark.parametrize("member", ["jaxlib/gpu/../../../escape.cc", "/jaxlib/gpu/abs.cc"])
def test_an_archive_member_that_escapes_is_refused(tmp_path, member):
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(st.archives.UnsafeArchive, match="absolute path in archive|leads outside the archive's folder"):
        st.extract_archive(archive, tmp_path / "out", st.DEFAULT_DIRS)
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "escape.cc").exists()


def test_what_is_not_a_jax_tree_is_refused_with_what_to_give(tmp_path, capsys):
    assert st.main(["--source", str(tmp_path / "missing"), "--output", str(tmp_path / "o1")]) == 1
    assert "does not exist; give a JAX checkout" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert st.main(["--source", str(tmp_path / "empty"), "--output", str(tmp_path / "o2")]) == 1
    assert "is not a JAX checkout: it has no jaxlib/" in capsys.readouterr().err
    (tmp_path / "notes.txt").write_text("")
    assert st.main(["--source", str(tmp_path / "notes.txt"), "--output", str(tmp_path / "o3")]) == 1
    assert "neither a directory nor an archive" in capsys.readouterr().err


def test_a_real_jax_tree_has_its_rocm_sources_and_is_no_stand_in(tmp_path):
    """Gated: the tree JAX_ROCM_TEST_JAX_TREE names (a checkout or archive)."""
    tree = require_jax_tree()
    info = st.lay_out(tree, tmp_path / "out", st.DEFAULT_DIRS, None, None)
    assert info.version and not info.stand_in
    files = laid_out(tmp_path / "out")
    assert {"jaxlib/gpu/solver_kernels_ffi.cc", "jaxlib/gpu/vendor.h", "jaxlib/cpu/lapack_kernels.cc",
            "jaxlib/rocm/rocm_plugin_extension.cc"} <= files
    assert not [f for f in files if Path(f).name in st.BAZEL_FILE_NAMES or f.endswith(".bzl")]


def test_a_tree_with_the_marker_is_a_stand_in_and_one_without_is_not(tmp_path):
    marked = write_tree(tmp_path / "marked")
    (marked / st.STAND_IN_MARKER).write_text("a stand-in")
    assert st.lay_out(marked, tmp_path / "o1", st.DEFAULT_DIRS, None, None).stand_in
    assert not st.lay_out(write_tree(tmp_path / "plain"), tmp_path / "o2", st.DEFAULT_DIRS, None, None).stand_in
    archive = git_archive(tmp_path / "marked.tar.gz", extra={st.STAND_IN_MARKER: "a stand-in"})
    info = st.lay_out(archive, tmp_path / "o3", st.DEFAULT_DIRS, None, None)
    assert info.stand_in and st.STAND_IN_MARKER not in laid_out(tmp_path / "o3")
    assert '"stand_in": true' in info.to_json()
    assert not st.lay_out(git_archive(tmp_path / "plain.tar.gz"), tmp_path / "o4", st.DEFAULT_DIRS, None, None).stand_in


def files_jaxlib_rocm_compiles_from_jax() -> set[str]:
    """Every file //jaxlib/rocm (kernels mode) takes from @jax: `_GPU + "name"` and "@jax//:path" in
    the transcription's kernels-mode macro and the libraries both modes declare; full mode's own
    targets, in the same file, are not compiled from examples/jax."""
    text = (CHECKOUT / "jaxlib" / "rocm" / "private" / "jax_targets.bzl").read_text()
    build = "".join(re.findall(r"^def (?:_jaxlib_helpers|jax_kernel_modules)\(.*?(?=^\S|\Z)", text, re.M | re.S))
    gpu = {"jaxlib/gpu/" + name for name in re.findall(r'_GPU \+ "([^"]+)"', build)}
    return gpu | {f for f in re.findall(r'"@jax//:(jaxlib/[^"]+)"', build) if not f.endswith("/")}


def test_examples_jax_is_a_stand_in_tree_with_every_file_jaxlib_rocm_compiles(tmp_path):
    """examples/jax is laid out like JAX's tree: the same BUILD path compiles it, and it says
    it is a stand-in (its marker) of the pinned release (its jax/version.py)."""
    wanted = files_jaxlib_rocm_compiles_from_jax()
    assert {"jaxlib/cpu/lapack_kernels.cc", "jaxlib/gpu/prng.cc", "jaxlib/gpu/solver_kernels_ffi.cc"} <= wanted
    info = st.lay_out(EXAMPLES_JAX, tmp_path / "out", st.DEFAULT_DIRS, None, None)
    assert (info.stand_in, info.version, info.origin) == (True, "0.10.2", "local checkout")
    files = laid_out(tmp_path / "out")
    assert wanted <= files, sorted(wanted - files)
    assert not [f for f in files if Path(f).name in st.BAZEL_FILE_NAMES or f.endswith(".bzl")]
    # Our own code: every source says it is a stand-in, not JAX's file.
    for name in sorted(f for f in files if f.endswith((".cc", ".h"))):
        assert "examples/jax stand-in (not JAX's" in (tmp_path / "out" / name).read_text(), name


def test_read_files_takes_files_by_path_from_a_checkout_and_its_archives(tmp_path):
    tree = tmp_path / "jax-jax-v0.10.2"
    (tree / "third_party" / "grpc").mkdir(parents=True)
    (tree / "MODULE.bazel").write_text("module(name = 'jax')\n")
    (tree / "third_party" / "grpc" / "grpc.patch").write_text("--- a/x\n")
    wanted = ["MODULE.bazel", "third_party/grpc/grpc.patch", "absent.txt"]
    expected = {"MODULE.bazel": b"module(name = 'jax')\n", "third_party/grpc/grpc.patch": b"--- a/x\n"}
    assert st.read_files(tree, wanted) == expected
    tar, zip_ = tmp_path / "jax.tar.gz", tmp_path / "jax.zip"
    with tarfile.open(tar, "w:gz") as tf:
        tf.add(tree, arcname=tree.name)
    with zipfile.ZipFile(zip_, "w") as zf:
        for path in sorted(tree.rglob("*")):
            if path.is_file():
                zf.write(path, f"{tree.name}/{path.relative_to(tree)}")
    assert st.read_files(tar, wanted) == expected
    assert st.read_files(zip_, wanted) == expected
