"""The one archive policy (third_party/gpus/extract_archive.py entry_problem) and the one reader
(read_archive) every caller uses: tar and zip alike, on any Python."""

from __future__ import annotations

import pytest

from tests.infra.archives import tar_of, zip_of
from third_party.gpus import extract_archive as archives

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("name", "kind", "linkname", "refused"), [
    ("jax/version.py", "file", "", None),
    ("a/../b", "file", "", None),  # stays inside
    ("jaxlib/rocm/x.cc", "symlink", "../gpu/x.cc", None),
    ("lib/libx.so", "hardlink", "lib/libx.so.1", None),
    ("/etc/passwd", "file", "", "absolute path in archive"),
    ("a/../../b", "file", "", "leads outside the archive's folder"),
    ("dev/sda", "special", "", "a device, fifo or other special file"),
    ("lib/escape", "symlink", "../../etc", "a symlink to ../../etc, outside the archive's folder"),
    ("lib/abs", "symlink", "/etc/passwd", "a symlink to /etc/passwd, outside the archive's folder"),
    ("lib/hard", "hardlink", "../outside", "a hard link to ../outside, outside the archive's folder"),
])
def test_the_policy(name, kind, linkname, refused):
    assert archives.entry_problem(name, kind, linkname) == refused


ARCHIVE_MAKERS = {"tar": (tar_of, "t.tar.gz"), "zip": (zip_of, "t.zip")}
TREE = [("jax-1/jax/version.py", "file", b'_version = "0.10.2"\n'), ("jax-1/jaxlib/BUILD", "file", b"# build"),
        ("jax-1/jaxlib/link.cc", "symlink", "BUILD")]


@pytest.mark.parametrize("kind", ARCHIVE_MAKERS)
def test_read_archive_lists_every_entry_and_keeps_the_wanted_files(tmp_path, kind):
    make, name = ARCHIVE_MAKERS[kind]
    contents = archives.read_archive(make(tmp_path / name, TREE), lambda n: n.endswith("version.py"))
    assert [(e.name, e.kind) for e in contents.entries] == [(n, k) for n, k, _ in TREE]
    assert contents.files == {"jax-1/jax/version.py": b'_version = "0.10.2"\n'}
    assert sorted(p.name for p in tmp_path.iterdir()) == [name], "nothing written"


@pytest.mark.parametrize("kind", ARCHIVE_MAKERS)
@pytest.mark.parametrize(("entry", "says"), [
    (("jax-1/../../evil", "file", b"!"), "jax-1/../../evil: leads outside the archive's folder"),
    (("/abs", "file", b"!"), "/abs: absolute path in archive"),
    (("jax-1/escape", "symlink", "../../etc"), "jax-1/escape: a symlink to ../../etc, outside the archive's folder"),
    (("jax-1/pipe", "fifo", b""), "jax-1/pipe: a device, fifo or other special file"),
])
def test_read_archive_refuses_what_the_policy_refuses_in_tar_and_zip_alike(tmp_path, kind, entry, says):
    make, name = ARCHIVE_MAKERS[kind]
    with pytest.raises(archives.UnsafeArchive) as refused:
        archives.read_archive(make(tmp_path / name, [*TREE, entry]))
    assert str(refused.value) == says


@pytest.mark.parametrize("kind", ARCHIVE_MAKERS)
def test_a_cut_archive_is_incomplete_whatever_its_kind(tmp_path, kind):
    make, name = ARCHIVE_MAKERS[kind]
    whole = make(tmp_path / name, [*TREE, ("jax-1/big", "file", bytes(range(256)) * 2000)]).read_bytes()
    cut = tmp_path / ("cut-" + name)
    cut.write_bytes(whole[:len(whole) // 2])
    with pytest.raises(archives.UnsafeArchive, match=rf"cut-{name} is not a complete, readable {kind} archive \("):
        archives.read_archive(cut)


def test_a_zip_with_a_damaged_file_is_incomplete(tmp_path):
    archive = zip_of(tmp_path / "t.zip", [("jax-1/a.txt", "file", b"A" * 1000)])
    data = bytearray(archive.read_bytes())
    data[data.index(b"A" * 100) + 10] ^= 0xFF  # the stored bytes, not the headers
    archive.write_bytes(bytes(data))
    with pytest.raises(archives.UnsafeArchive, match="t.zip is not a complete, readable zip archive"):
        archives.read_archive(archive)
