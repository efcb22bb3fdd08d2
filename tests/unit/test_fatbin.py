"""tools/fatbin.py on synthetic offload bundles (the real ones are read in tests/bazel/test_hip_toolchain.py)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from tools import fatbin as fb

pytestmark = pytest.mark.unit


def bundle(*triples: str) -> bytes:
    """An uncompressed clang offload bundle whose entries hold dummy code objects."""
    header_size = len(fb.BUNDLE_MAGIC) + 8 + sum(24 + len(t) for t in triples)
    header, payload, offset = fb.BUNDLE_MAGIC + struct.pack("<Q", len(triples)), b"", header_size
    for i, triple in enumerate(triples):
        body = bytes([i]) * (16 * (i + 1))
        header += struct.pack("<QQQ", offset, len(body), len(triple)) + triple.encode()
        payload += body
        offset += len(body)
    return header + payload


def compressed_v2(inner: bytes) -> bytes:
    data = zlib.compress(inner)
    total = 4 + 2 + 2 + 4 + 4 + 8 + len(data)
    return fb.COMPRESSED_MAGIC + struct.pack("<HHIIQ", 2, 0, total, len(inner), 0) + data


HOST = "host-x86_64-unknown-linux-gnu-"


def test_two_linked_bundles_with_padding_are_both_read():
    first = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx942")
    second = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx942")
    section = first + b"\0" * (4096 - len(first)) + second
    found = fb.bundles(section)
    assert [b.offset for b in found] == [0, 4096]
    assert fb.targets(found) == ["gfx90a", "gfx942"]
    assert [e.size for e in found[0].entries] == [16, 32, 48]


def test_zlib_compressed_bundles_and_target_features():
    inner = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx12-generic")
    found = fb.bundles(compressed_v2(inner) + compressed_v2(inner))
    assert len(found) == 2 and {b.compressed for b in found} == {"zlib"}
    assert fb.targets(found) == ["gfx12-generic", "gfx90a:xnack-"]
    assert fb.Entry(HOST, 0).target is None


def test_not_elf_and_no_device_code_are_reported(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert fb.main([str(text)]) == 2 and "not an ELF file" in capsys.readouterr().err
    host_only = tmp_path / "true"
    host_only.write_bytes(open("/bin/true", "rb").read())
    assert fb.main([str(host_only)]) == 1 and "no HIP device code" in capsys.readouterr().out


def assemble(tmp_path: Path, name: str, section: str, *cflags: str) -> Path:
    """An ELF object made by the host's C compiler from assembly: `section` is its .hip_fatbin part."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on this host to assemble a test object")
    src = tmp_path / f"{name}.s"
    src.write_text(f"{section}\n.text\n.globl f\nf:\n ret\n")
    out = tmp_path / f"{name}.o"
    try:
        subprocess.run([cc, "-c", *cflags, "-o", str(out), str(src)], check=True, capture_output=True)
    except subprocess.CalledProcessError as e:
        pytest.skip(f"{cc} {' '.join(cflags)} does not assemble here: {e.stderr.decode()[-200:]}")
    return out


@pytest.mark.parametrize("cflags", [(), ("-m32",)], ids=["elf64", "elf32"])
def test_the_section_of_a_real_object_and_of_a_library_linked_from_it_is_read(tmp_path, cflags):
    payload = tmp_path / "fatbin.bin"
    first = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx942")
    payload.write_bytes(first + bytes(4096 - len(first)) + compressed_v2(bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx90a")))
    obj = assemble(tmp_path, "kernels", f'.section .hip_fatbin,"a",@progbits\n.incbin "{payload}"', *cflags)
    lib = tmp_path / "libkernels.so"
    subprocess.run([shutil.which("cc") or "gcc", "-shared", "-nostdlib", *cflags, "-o", str(lib), str(obj)], check=True)
    for path in (obj, lib):
        found = fb.read(path)
        assert [(b.offset, b.compressed) for b in found] == [(0, None), (4096, "zlib")]
        assert fb.targets(found) == ["gfx90a", "gfx942"]


def test_a_nobits_section_holds_no_device_code(tmp_path, capsys):
    obj = assemble(tmp_path, "empty", '.section .hip_fatbin,"aw",@nobits\n.zero 64')
    assert fb.elf_section(obj.read_bytes(), fb.SECTION) == b""
    assert fb.main([str(obj)]) == 1 and "no HIP device code" in capsys.readouterr().out


def test_a_truncated_elf_file_is_reported(tmp_path, capsys):
    obj = assemble(tmp_path, "kernels", '.section .hip_fatbin,"a",@progbits\n.byte 0')
    cut = tmp_path / "cut.o"
    cut.write_bytes(obj.read_bytes()[:100])
    assert fb.main([str(cut)]) == 2 and "malformed ELF file" in capsys.readouterr().err
