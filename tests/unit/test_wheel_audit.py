"""build/ci_build_cli/wheel_audit.py: policy names, the ROCm exclusion, auditwheel's policy data, and the
symbol-version check on a real ELF library of this host packed into a wheel under tmp_path.

`auditwheel show` is replaced by a dict of the shape it prints (`--json`), except in one
test that runs the real one on a small wheel; the real wheels are audited in tests/e2e.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

import runpath as runpath_tool
from ci_build_cli import wheel_audit as wa

pytestmark = pytest.mark.unit

WHEEL = "demo-1.0-py3-none-linux_x86_64.whl"
# Host libraries with versioned imports from libc; the first that has them is used.
HOST_LIBRARIES = ("/usr/lib/x86_64-linux-gnu/libz.so.1*", "/lib/x86_64-linux-gnu/libz.so.1*",
                  "/usr/lib64/libz.so.1*", "/usr/lib/x86_64-linux-gnu/libbz2.so.1*",
                  "/usr/lib/x86_64-linux-gnu/libffi.so.*", "/usr/lib/x86_64-linux-gnu/lib*.so.*")


@pytest.fixture(scope="module")
def policies():
    return wa.load_policies()


def show(sym_tag: str = "manylinux_2_28_x86_64", external_libs=(), unsupported_isa: bool = False) -> dict:
    """What `auditwheel show --json` reports (the keys audit() reads)."""
    return {"version": 1, "wheel": WHEEL, "pure": False, "sym_tag": sym_tag, "overall_tag": sym_tag,
            "unsupported_isa": unsupported_isa, "versioned_symbols": {},
            "external_libs": {lib: None for lib in external_libs}, "policy_upgrades": {}}


def glibc_version(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in version.removeprefix("GLIBC_").split("."))


def manylinux_version(policy: str) -> tuple[int, int]:
    return tuple(int(n) for n in policy.split("_")[1:3])


# --- policy_name / is_rocm_library ----------------------------------------------------


@pytest.mark.parametrize("value", ["2_28", "manylinux_2_28", "manylinux_2_28_x86_64"])
def test_policy_name(value):
    assert wa.policy_name(value) == "manylinux_2_28"


def test_policy_name_keeps_the_numbers():
    assert wa.policy_name("manylinux_2_5") == "manylinux_2_5"
    assert wa.policy_name("2_17_x86_64") == "manylinux_2_17"


@pytest.mark.parametrize("value", ["", "garbage", "2.28", "manylinux2014", "manylinux_2_28_aarch64",
                                   "musllinux_1_2", "manylinux_2_28 "])
def test_policy_name_rejects_garbage(value):
    with pytest.raises(ValueError, match="not a manylinux policy"):
        wa.policy_name(value)


@pytest.mark.parametrize(("value", "meant"), [("manylinux_2_82", "manylinux_2_28"), ("2_71", "manylinux_2_17"),
                                              ("manylinux_3_28", "manylinux_2_28"), ("manylinux_2_4", "manylinux_2_")])
def test_a_policy_no_glibc_is_gets_the_one_meant(value, meant):
    with pytest.raises(ValueError, match="which no glibc release is") as refused:
        wa.policy_name(value)
    assert f"did you mean {meant}" in str(refused.value)


@pytest.mark.parametrize("soname", ["libamdhip64.so.7", "librocblas.so.5", "libMIOpen.so.1", "libhipblaslt.so.1",
                                    "librocprofiler-sdk-roctx.so.1", "libamdhip64.so"])
def test_rocm_libraries(soname):
    assert wa.is_rocm_library(soname)


@pytest.mark.parametrize("soname", ["libstdc++.so.6", "libfoo.so", "libmiopen.so.1", "libamdhip64_extra.so.7",
                                    "xlibrocblas.so.5"])
def test_other_libraries_are_not_rocm(soname):
    assert not wa.is_rocm_library(soname)


# --- load_policies / disallowed -------------------------------------------------------


def test_policies_from_auditwheel(policies):
    assert {"manylinux_2_17", "manylinux_2_28", "manylinux_2_38"} <= set(policies)
    allowed = policies["manylinux_2_28"]
    assert "2.28" in allowed["GLIBC"] and "2.29" not in allowed["GLIBC"]
    assert {"GLIBC", "GLIBCXX", "CXXABI", "GCC"} <= set(allowed)


def test_disallowed(policies):
    allowed = policies["manylinux_2_28"]
    assert wa.disallowed("GLIBC_2.38", allowed)
    assert wa.disallowed("GLIBC_2.29", allowed)
    assert not wa.disallowed("GLIBC_2.28", allowed)
    assert not wa.disallowed("GLIBC_2.17", allowed)
    assert not wa.disallowed("hip_4.2", allowed)  # a prefix no policy knows (ROCm's): not judged
    assert wa.disallowed("GLIBCXX_3.4.25", allowed) and not wa.disallowed("GLIBCXX_3.4.24", allowed)


# --- audit with a fake `auditwheel show` ----------------------------------------------


def test_rocm_libraries_are_excluded_and_pass(tmp_path):
    result = wa.audit(make_wheel(tmp_path / WHEEL, {}), show=show(external_libs=["libamdhip64.so.7", "librocblas.so.5"]))
    assert result.ok and result.problems() == []
    assert result.rocm_libraries == ("libamdhip64.so.7", "librocblas.so.5")
    assert result.foreign_libraries == ()
    assert result.platform_tag == "manylinux_2_28_x86_64" and result.wheel == WHEEL


def test_a_foreign_library_fails_naming_it(tmp_path):
    result = wa.audit(make_wheel(tmp_path / WHEEL, {}), show=show(external_libs=["libamdhip64.so.7", "libfoo.so.3"]))
    assert not result.ok
    assert result.foreign_libraries == ("libfoo.so.3",) and result.rocm_libraries == ("libamdhip64.so.7",)
    [problem] = result.problems()
    assert problem.startswith("needs libfoo.so.3,") and "ROCM_LIBRARIES" in problem


def test_unsupported_isa_fails(tmp_path):
    result = wa.audit(make_wheel(tmp_path / WHEEL, {}), show=show(unsupported_isa=True))
    assert not result.ok
    assert result.problems() == ["uses instructions beyond the x86_64 baseline (auditwheel's ISA check)"]


def test_no_manylinux_policy_fails(tmp_path):
    result = wa.audit(make_wheel(tmp_path / WHEEL, {}), show=show(sym_tag="linux_x86_64"))
    assert not result.ok
    assert result.problems() == ["uses symbol versions newer than every manylinux policy auditwheel knows"]


def test_unknown_policy_is_refused(tmp_path, policies):
    with pytest.raises(ValueError, match="knows no policy manylinux_2_43; known: .*manylinux_2_28"):
        wa.audit(tmp_path / WHEEL, "2_43", show=show(), policies=policies)


# --- a real ELF library in a wheel ----------------------------------------------------


def libc_needs(path: str) -> dict:
    """What the ELF file's .gnu.version_r says it needs from libc.so.6, read with pyelftools
    directly (not with the code under test): {"versions": {GLIBC_...}, "undefined": {symbol names}}."""
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return {}
            f.seek(0)
            elf = ELFFile(f)
            verneed, dynsym = elf.get_section_by_name(".gnu.version_r"), elf.get_section_by_name(".dynsym")
            if verneed is None or dynsym is None:
                return {}
            versions = {aux.name for need, auxes in verneed.iter_versions() if need.name == "libc.so.6"
                        for aux in auxes if aux.name.startswith("GLIBC_2")}
            undefined = {s.name for s in dynsym.iter_symbols() if s["st_shndx"] == "SHN_UNDEF" and s.name}
    except (OSError, ELFError):
        return {}
    return {"versions": versions, "undefined": undefined} if versions else {}


@pytest.fixture(scope="module")
def host_library() -> Path:
    """A shared library of this host that imports versioned symbols from libc."""
    for pattern in HOST_LIBRARIES:
        for path in sorted(glob.glob(pattern))[:50]:
            if libc_needs(path):
                return Path(path)
    pytest.skip("no shared library with versioned libc imports on this host")


def make_wheel(path: Path, files: dict[str, bytes]) -> Path:
    """A minimal but valid wheel (auditwheel checks RECORD)."""
    files = dict(files)
    files["demo-1.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"
    files["demo-1.0.dist-info/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                                         b"Tag: py3-none-linux_x86_64\n")
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append("demo-1.0.dist-info/RECORD,,")
        archive.writestr("demo-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


@pytest.fixture
def real_wheel(tmp_path, host_library) -> Path:
    return make_wheel(tmp_path / WHEEL, {
        "demo/__init__.py": b"",
        f"demo/{host_library.name}": host_library.read_bytes(),
        "demo/not_elf.so": b"just text named like a library\n",
        "demo/notes.txt": b"\x7fELF but not a library name",
    })


def test_symbol_uses_of_a_real_library(real_wheel, host_library):
    uses = wa.symbol_uses(real_wheel)
    needs = libc_needs(str(host_library))
    assert uses and uses == sorted(set(uses))
    assert {u.file for u in uses} == {f"demo/{host_library.name}"}  # not the non-ELF files
    libc = [u for u in uses if u.library == "libc.so.6"]
    assert libc and all(u.version.startswith("GLIBC_") for u in libc)
    # Every libc version the library needs is used by some symbol, and only undefined ones are.
    assert {u.version for u in libc if u.version.startswith("GLIBC_2")} == needs["versions"]
    assert {u.symbol for u in uses} <= needs["undefined"]
    assert len({u.symbol for u in libc}) == len(libc)  # one version per imported symbol
    assert str(libc[0]) == f"demo/{host_library.name} uses {libc[0].symbol}@{libc[0].version} (libc.so.6)"


def test_versioned_imports_needs_an_elf_file():
    with pytest.raises(ELFError):
        wa.versioned_imports(b"not an ELF file at all")


def test_too_new_symbols_fail_naming_symbol_version_and_file(real_wheel, host_library, policies):
    uses = wa.symbol_uses(real_wheel)
    # The oldest policy under which some GLIBC version of the library is too new.
    candidates = sorted((p for p in policies if p.startswith("manylinux_")), key=manylinux_version)
    policy = next((p for p in candidates if any(wa.disallowed(u.version, policies[p]) for u in uses)), None)
    if policy is None:
        pytest.skip(f"every GLIBC version {host_library} uses is allowed by {candidates[0]}")
    result = wa.audit(real_wheel, policy, show=show(sym_tag="manylinux_2_17_x86_64"), policies=policies)
    assert result.requested == policy
    assert result.too_new and not result.ok
    assert all(wa.disallowed(u.version, policies[policy]) for u in result.too_new)
    assert set(result.too_new) == {u for u in uses if wa.disallowed(u.version, policies[policy])}
    problems = "\n".join(result.problems())
    use = result.too_new[0]
    assert f"{use.symbol}@{use.version}" in problems and f"demo/{host_library.name}" in problems
    assert f"newer than {policy} allows" in problems and "--manylinux=manylinux_2_17_x86_64" in problems


def test_a_policy_that_allows_everything_passes(real_wheel, policies):
    uses = wa.symbol_uses(real_wheel)
    newest = max((p for p in policies if p.startswith("manylinux_")), key=manylinux_version)
    if any(wa.disallowed(u.version, policies[newest]) for u in uses):
        pytest.skip(f"the host library needs more than {newest}")
    result = wa.audit(real_wheel, newest.removeprefix("manylinux_"), show=show(), policies=policies)
    assert result.ok and result.too_new == () and result.requested == newest


def test_manylinux_5_is_too_old_for_memcpy_2_14(real_wheel, policies):
    """The common case on x86_64: memcpy@GLIBC_2.14 (any library copying memory) is past manylinux_2_5."""
    uses = wa.symbol_uses(real_wheel)
    if "manylinux_2_5" not in policies or not any(glibc_version(u.version) >= (2, 14) for u in uses
                                                  if u.version.startswith("GLIBC_2")):
        pytest.skip("needs manylinux_2_5 and a library using GLIBC_2.14 or newer")
    result = wa.audit(real_wheel, "manylinux_2_5", show=show(), policies=policies)
    assert not result.ok
    assert {u.version for u in result.too_new} == {u.version for u in uses
                                                   if u.version.startswith("GLIBC_2")
                                                   and glibc_version(u.version) > (2, 5)}


def test_real_auditwheel_show(real_wheel, host_library):
    """The shape audit() expects is the one auditwheel really prints (runs auditwheel, < 1 s)."""
    result = wa.audit(real_wheel)
    assert result.wheel == WHEEL and result.unsupported_isa is False
    assert result.platform_tag.startswith("manylinux_") and result.platform_tag.endswith("_x86_64")
    if host_library.name.startswith("libz.so"):
        assert result.ok and result.foreign_libraries == ()  # libz needs only libc


# --- main -----------------------------------------------------------------------------


def passing(wheel: Path, requested=None) -> wa.Audit:
    return wa.Audit(wheel=wheel.name, platform_tag="manylinux_2_38_x86_64", rocm_libraries=("libamdhip64.so.7",),
                    foreign_libraries=())


def failing(wheel: Path, requested=None) -> wa.Audit:
    use = wa.SymbolUse("demo/lib.so", "memcpy", "GLIBC_2.38", "libc.so.6")
    return wa.Audit(wheel=wheel.name, platform_tag="manylinux_2_38_x86_64", rocm_libraries=(),
                    foreign_libraries=("libfoo.so.1",), too_new=(use,), requested=wa.policy_name(requested or "2_28"))


def test_main_prints_the_tag_of_a_passing_wheel(tmp_path, monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(wa, "audit", lambda w, m: seen.append(m) or passing(w))
    assert wa.main([str(tmp_path / WHEEL), "--manylinux", "2_38"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{WHEEL}: manylinux_2_38_x86_64 (ROCm libraries excluded: libamdhip64.so.7)\n"
    assert err == "" and seen == ["2_38"]


def test_main_fails_on_a_failing_wheel(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(wa, "audit", lambda w, m: passing(w) if w.name == "good.whl" else failing(w, m))
    assert wa.main([str(tmp_path / "good.whl"), str(tmp_path / WHEEL)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("good.whl: manylinux_2_38_x86_64")
    assert err.startswith(f"wheel_audit: {WHEEL}:\n")
    assert "libfoo.so.1" in err and "demo/lib.so uses memcpy@GLIBC_2.38 (libc.so.6)" in err
    assert "good.whl" not in err


def test_main_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(wa, "audit", lambda w, m: passing(w) if w.name == "good.whl" else failing(w, m))
    assert wa.main(["--json", str(tmp_path / "good.whl"), str(tmp_path / WHEEL)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"good.whl", WHEEL}
    assert report["good.whl"]["ok"] is True and report["good.whl"]["problems"] == []
    assert report["good.whl"]["platform_tag"] == "manylinux_2_38_x86_64"
    bad = report[WHEEL]
    assert bad["ok"] is False and len(bad["problems"]) >= 2
    assert bad["too_new"] == [{"file": "demo/lib.so", "symbol": "memcpy", "version": "GLIBC_2.38",
                               "library": "libc.so.6"}]


def test_main_json_all_passing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(wa, "audit", lambda w, m: passing(w))
    assert wa.main(["--json", str(tmp_path / WHEEL)]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)[WHEEL]["ok"] is True  # nothing but the JSON on stdout


def test_main_auditwheel_error_is_exit_2(tmp_path, monkeypatch, capsys):
    def broken(wheel):
        raise wa.AuditError(f"auditwheel show {wheel.name} failed: boom")

    monkeypatch.setattr(wa, "auditwheel_show", broken)
    assert wa.main([str(tmp_path / WHEEL)]) == 2
    assert capsys.readouterr().err == f"wheel_audit: auditwheel show {WHEEL} failed: boom\n"


def test_main_bad_policy_is_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(wa, "auditwheel_show", lambda wheel: show())
    assert wa.main(["--manylinux", "latest", str(tmp_path / WHEEL)]) == 2
    assert "'latest' is not a manylinux policy" in capsys.readouterr().err


# --- RUNPATH entries into Bazel's build tree ---------------------------------------------

# As Bazel links a module: its _solib and runfiles entries first, then rocm_path_type's.
BAZEL_RUNPATH = ("$ORIGIN/../../_solib_k8/_U_A_A_Umain~rocm~local_Uconfig_Urocm_S_Srocm_Chip___Urocm_Slib:"
                 "$ORIGIN/_x.so.runfiles/_main/_solib_k8/_U_A_A_Umain~rocm~local_Uconfig_Urocm_S_Srocm_Chip___Urocm_Slib")
WHEEL_RUNPATH = "$ORIGIN/../_rocm_sdk_core/lib:$ORIGIN/../rocm/lib:/opt/rocm/lib"


def build_library(tmp_path: Path, name: str, *rpaths: str, new_dtags: bool = True, cflags: tuple[str, ...] = (),
                  source: str = "int jax_rocm_f(void) { return 1; }\n") -> Path:
    """A small shared library built here by the host's C compiler, with these -rpath entries."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on this host to build a test library")
    src = tmp_path / "f.c"
    src.write_text(source)
    out = tmp_path / name
    flags = ["-Wl,--enable-new-dtags" if new_dtags else "-Wl,--disable-new-dtags"] + [f"-Wl,-rpath,{r}" for r in rpaths]
    subprocess.run([cc, "-shared", "-fPIC", *cflags, "-o", str(out), str(src), *flags], check=True)
    return out


@pytest.mark.parametrize("entry, expected", [
    ("$ORIGIN/../../_solib_k8/_U_A_A_Umain~rocm~local_Uconfig_Urocm_S_Srocm_Chip___Urocm_Slib", True),
    ("$ORIGIN/_prng.so.runfiles/_main/_solib_k8/x", True),
    ("/root/.cache/bazel/_bazel_root/0123/execroot/_main/bazel-out/k8-opt/bin", True),
    ("/root/.cache/jax-rocm-build/bazel/abc/external/_main~rocm~rocm_toolkit_archive/toolkit/lib", True),
    ("external/local_config_rocm/rocm/rocm/lib", True),  # relative: XLA's hermetic entry
    ("$ORIGIN/../_rocm_sdk_core/lib", False), ("$ORIGIN/../../rocm/lib", False), ("/opt/rocm/lib", False),
    ("/usr/local/lib/python3.12/dist-packages/_rocm_sdk_core/lib", False), ("${ORIGIN}/../lib", False),
])
def test_is_build_tree_entry(entry, expected):
    assert wa.is_build_tree_entry(entry) is expected


@pytest.mark.parametrize("new_dtags, kind", [(True, "RUNPATH"), (False, "RPATH")])
def test_a_build_tree_runpath_fails_naming_file_and_entry(tmp_path, new_dtags, kind):
    library = build_library(tmp_path, "libx.so", BAZEL_RUNPATH, WHEEL_RUNPATH, new_dtags=new_dtags)
    wheel = make_wheel(tmp_path / WHEEL, {"demo/_x.so": library.read_bytes()})
    result = wa.audit(wheel, show=show())
    assert not result.ok
    solib, runfiles = BAZEL_RUNPATH.split(":")
    assert result.build_tree_runpaths == (f"demo/_x.so: {kind} entry {solib}", f"demo/_x.so: {kind} entry {runfiles}")
    assert f"  demo/_x.so: {kind} entry {solib}" in result.problems()


def test_stripping_keeps_the_wheels_runpath_in_order_and_the_audit_passes(tmp_path):
    library = build_library(tmp_path, "libx.so", BAZEL_RUNPATH, WHEEL_RUNPATH)
    stripped = tmp_path / "libx-stripped.so"
    assert runpath_tool.main(["--in", str(library), "--out", str(stripped)]) == 0
    with open(stripped, "rb") as f:
        assert runpath_tool.runpaths(f) == {"RUNPATH": WHEEL_RUNPATH.split(":")}
    assert wa.runpath_entries(stripped.read_bytes()) == [("RUNPATH", e) for e in WHEEL_RUNPATH.split(":")]
    result = wa.audit(make_wheel(tmp_path / WHEEL, {"demo/_x.so": stripped.read_bytes()}), show=show())
    assert result.ok and result.build_tree_runpaths == ()
    # Nothing else of the file moved: only the RUNPATH string's bytes differ.
    before, after = library.read_bytes(), stripped.read_bytes()
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    start = before.index(BAZEL_RUNPATH.encode())
    assert changed and start <= changed[0] and changed[-1] < start + len(BAZEL_RUNPATH) + 1 + len(WHEEL_RUNPATH)


def test_a_runpath_of_build_tree_entries_only_is_removed_not_left_empty(tmp_path):
    """An empty RUNPATH would mean the current directory to the loader: the entry goes."""
    library = build_library(tmp_path, "libx.so", BAZEL_RUNPATH)
    stripped = tmp_path / "liby.so"
    assert runpath_tool.main(["--in", str(library), "--out", str(stripped)]) == 0
    with open(stripped, "rb") as f:
        assert runpath_tool.runpaths(f) == {}
    # Still a library the loader takes: link a program against it and run it.
    main = tmp_path / "main.c"
    main.write_text("int jax_rocm_f(void);\nint main(void) { return jax_rocm_f() == 1 ? 0 : 1; }\n")
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-o", str(tmp_path / "main"), str(main), str(stripped), f"-Wl,-rpath,{tmp_path}"], check=True)
    assert subprocess.run([str(tmp_path / "main")]).returncode == 0


def test_the_strip_tool_refuses_what_is_not_elf(tmp_path, capsys):
    text = tmp_path / "not.so"
    text.write_text("not an ELF file\n")
    assert runpath_tool.main(["--in", str(text), "--out", str(tmp_path / "out.so")]) == 1
    assert "not an ELF file" in capsys.readouterr().err


@pytest.mark.parametrize("rpaths, expected", [((BAZEL_RUNPATH, WHEEL_RUNPATH), {"RPATH": WHEEL_RUNPATH.split(":")}),
                                              ((BAZEL_RUNPATH,), {})])
def test_an_rpath_is_stripped_like_a_runpath(tmp_path, rpaths, expected):
    """--disable-new-dtags links write DT_RPATH: its build-tree entries go the same way, and an emptied one too."""
    library = build_library(tmp_path, "libx.so", *rpaths, new_dtags=False)
    stripped = tmp_path / "libx-stripped.so"
    assert runpath_tool.main(["--in", str(library), "--out", str(stripped)]) == 0
    with open(stripped, "rb") as f:
        assert runpath_tool.runpaths(f) == expected
    assert wa.runpath_entries(stripped.read_bytes()) == [(kind, e) for kind, entries in expected.items() for e in entries]


def test_a_32_bit_library_is_stripped(tmp_path):
    """ELFCLASS32: 8-byte dynamic entries; -nostdlib, as a 64-bit host seldom has the 32-bit C library."""
    try:
        mixed = build_library(tmp_path, "lib32.so", BAZEL_RUNPATH, WHEEL_RUNPATH, cflags=("-m32", "-nostdlib"))
        only = build_library(tmp_path, "lib32-only.so", BAZEL_RUNPATH, cflags=("-m32", "-nostdlib"))
    except subprocess.CalledProcessError:
        pytest.skip("the host's C compiler does not build 32-bit code")
    for library, expected in ((mixed, [("RUNPATH", e) for e in WHEEL_RUNPATH.split(":")]), (only, [])):
        stripped = tmp_path / f"stripped-{library.name}"
        assert runpath_tool.main(["--in", str(library), "--out", str(stripped)]) == 0
        assert stripped.read_bytes()[4] == 1  # still ELFCLASS32
        assert wa.runpath_entries(stripped.read_bytes()) == expected
    # The emptied RUNPATH's entry went and the rest moved up: one entry fewer before DT_NULL.
    with open(only, "rb") as before, open(tmp_path / "stripped-lib32-only.so", "rb") as after:
        assert len(runpath_tool.read_dynamic(after).entries) == len(runpath_tool.read_dynamic(before).entries) - 1


def test_a_library_without_section_headers_is_stripped_through_its_segments(tmp_path):
    """The loader needs no section headers, nor does the tool: PT_DYNAMIC, DT_STRTAB and PT_LOAD suffice."""
    library = build_library(tmp_path, "libx.so", BAZEL_RUNPATH, WHEEL_RUNPATH)
    data = bytearray(library.read_bytes())
    data[0x28:0x30] = bytes(8)  # e_shoff
    data[0x3C:0x40] = bytes(4)  # e_shnum, e_shstrndx
    library.write_bytes(data)
    stripped = tmp_path / "libx-stripped.so"
    assert runpath_tool.main(["--in", str(library), "--out", str(stripped)]) == 0
    with open(stripped, "rb") as f:
        assert runpath_tool.runpaths(f) == {"RUNPATH": WHEEL_RUNPATH.split(":")}


def test_a_runpath_sharing_its_tail_with_a_symbol_name_is_refused(tmp_path, capsys):
    """GNU ld stores a symbol `lib` as the tail of ".../lib": shortening the string would rename the symbol."""
    library = build_library(tmp_path, "libx.so", "$ORIGIN/../_solib_k8/lib", source="int lib(void) { return 1; }\n")
    with open(library, "rb") as f:
        elf = ELFFile(f)
        runpath = next(elf.get_section_by_name(".dynamic").iter_tags("DT_RUNPATH"))["d_val"]
        symbol = elf.get_section_by_name(".dynsym").get_symbol_by_name("lib")[0]
        if symbol["st_name"] != runpath + len("$ORIGIN/../_solib_k8/"):
            pytest.skip("this host's linker did not share the string's tail")
    assert runpath_tool.main(["--in", str(library), "--out", str(tmp_path / "out.so")]) == 1
    assert "the RUNPATH string shares bytes with other strings of the file" in capsys.readouterr().err


def test_a_truncated_elf_file_is_refused_not_a_traceback(tmp_path, capsys):
    library = build_library(tmp_path, "libx.so", BAZEL_RUNPATH)
    cut = tmp_path / "cut.so"
    cut.write_bytes(library.read_bytes()[:100])
    assert runpath_tool.main(["--in", str(cut), "--out", str(tmp_path / "out.so")]) == 1
    assert "malformed ELF file" in capsys.readouterr().err


def test_rocms_own_dependencies_are_not_the_wheels(tmp_path, monkeypatch):
    """On a machine whose loader finds ROCm (ci_build --host beside an installed ROCm), auditwheel
    would follow libamdhip64 into its own dependencies; the audit excludes ROCm as repair
    --exclude does, and reads the ROCm libraries the wheel needs from its files. Runs auditwheel."""
    rocm = tmp_path / "rocm"
    rocm.mkdir()
    build_library(rocm, "libjaxrocmtestdep.so.1", cflags=("-Wl,-soname,libjaxrocmtestdep.so.1",))
    build_library(rocm, "libamdhip64.so.7", cflags=("-Wl,-soname,libamdhip64.so.7", f"-L{rocm}",
                                                    "-Wl,--no-as-needed", "-l:libjaxrocmtestdep.so.1"))
    library = build_library(tmp_path, "libx.so", cflags=(f"-L{rocm}", "-Wl,--no-as-needed", "-l:libamdhip64.so.7"))
    wheel = make_wheel(tmp_path / WHEEL, {"demo/_x.so": library.read_bytes()})
    monkeypatch.setenv("LD_LIBRARY_PATH", str(rocm))
    plain = json.loads(subprocess.run([wa.sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)],
                                      capture_output=True, text=True, check=True).stdout)
    assert "libjaxrocmtestdep.so.1" in plain["external_libs"]  # what auditwheel alone says
    result = wa.audit(wheel)
    assert result.rocm_libraries == ("libamdhip64.so.7",) and result.foreign_libraries == (), result
    assert result.ok, result.problems()
