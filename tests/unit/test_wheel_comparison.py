"""tests/infra/wheel_comparison.py on small wheels made here: names normalised, entry points,
layout, and the RUNPATH/RPATH and NEEDED of shared libraries this host's C compiler links
(a NEEDED library with a ROCm soname, -rpath entries of every kind) packed into them."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.infra import wheel_comparison as wc

pytestmark = pytest.mark.unit

PIP_CORE = "$ORIGIN/../_rocm_sdk_core/lib"
PIP_FAMILY = "$ORIGIN/../_rocm_sdk_libraries_gfx94X_dcgpu/lib"
PIP_SITE = "$ORIGIN/../../../python3.12/dist-packages/_rocm_sdk_core/lib"
PIP_USR = "/usr/local/lib/python3.13/site-packages/_rocm_sdk_libraries/lib"
BESIDE = "$ORIGIN/../rocm/lib"
OPT = "/opt/rocm/lib"
BUILD_TREE = "$ORIGIN/../../_solib_k8/_U_A_A_Umain~rocm~local_Uconfig_Urocm_S_Srocm_Chip___Urocm_Slib"
# As upstream orders them ($ORIGIN/../rocm/lib first) and as this project does (pip first).
THEIRS_RUNPATH = (BESIDE, PIP_CORE, PIP_FAMILY, PIP_SITE, OPT)
OURS_RUNPATH = (PIP_CORE, PIP_FAMILY, PIP_SITE, PIP_USR, BESIDE, OPT)


def compiler() -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on this host to build a test library")
    return cc


def build_library(folder: Path, name: str, rpaths: tuple[str, ...] = (), new_dtags: bool = True,
                  needs: tuple[str, ...] = ()) -> Path:
    """A shared library linked here, with these -rpath entries and DT_NEEDED on each library of
    `needs` (a stub made here whose soname is that name)."""
    cc = compiler()
    folder.mkdir(parents=True, exist_ok=True)
    link = []
    for soname in needs:
        stub_src = folder / f"{soname}.c"
        stub_src.write_text("int jax_rocm_stub(void) { return 0; }\n")
        stub = folder / f"{soname}.stub"
        subprocess.run([cc, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(stub), str(stub_src)], check=True)
        link.append(str(stub))  # by path: its soname is what DT_NEEDED records
    src = folder / f"{name}.c"
    src.write_text("int jax_rocm_stub(void);\nint jax_rocm_f(void) { return jax_rocm_stub(); }\n" if needs
                   else "int jax_rocm_f(void) { return 1; }\n")
    out = folder / name
    flags = ["-Wl,--enable-new-dtags" if new_dtags else "-Wl,--disable-new-dtags", "-Wl,--no-as-needed"]
    flags += [f"-Wl,-rpath,{r}" for r in rpaths]
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(out), str(src), *flags, *link], check=True)
    return out


def make_wheel(folder: Path, distribution: str, version: str, tag: str, files: dict[str, bytes], *,
               entry_points: str | None = None, purelib: bool = False, requires: tuple[str, ...] = (),
               requires_python: str | None = None, top_level: bool = False) -> Path:
    """A wheel with METADATA, WHEEL, RECORD and what is given (entry_points.txt, top_level.txt)."""
    info = f"{distribution}-{version}.dist-info"
    meta = ["Metadata-Version: 2.4", f"Name: {distribution.replace('_', '-')}", f"Version: {version}"]
    meta += [f"Requires-Python: {requires_python}"] if requires_python else []
    meta += [f"Requires-Dist: {r}" for r in requires]
    members = dict(files)
    members[f"{info}/METADATA"] = ("\n".join(meta) + "\n\nA test wheel.\n").encode()
    members[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: {str(purelib).lower()}\n"
                                f"Tag: {tag}\n").encode()
    if entry_points is not None:
        members[f"{info}/entry_points.txt"] = entry_points.encode()
    if top_level:
        members[f"{info}/top_level.txt"] = (sorted(files)[0].split("/")[0] + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{distribution}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in [*members, f"{info}/RECORD"]))
    return path


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    """Built once: upstream's RUNPATH order, ours, one with a build-tree entry, one with an RPATH."""
    folder = tmp_path_factory.mktemp("elf")
    return {
        "theirs": build_library(folder / "theirs", "theirs.so", THEIRS_RUNPATH, needs=("libamdhip64.so.7",)),
        "ours": build_library(folder / "ours", "ours.so", OURS_RUNPATH, needs=("libamdhip64.so.7", "libhipblas.so.3")),
        "leak": build_library(folder / "leak", "leak.so", (BUILD_TREE, PIP_CORE, OPT)),
        "rpath": build_library(folder / "rpath", "rpath.so", (BESIDE, OPT), new_dtags=False),
    }


def pjrt_wheel(folder: Path, major: int, version: str, library: Path, **kwargs) -> Path:
    package = f"jax_plugins/xla_rocm{major}"
    files = {f"{package}/__init__.py": b"", f"{package}/xla_rocm_plugin.so": library.read_bytes(), **kwargs.pop("extra", {})}
    return make_wheel(folder, f"jax_rocm{major}_pjrt", version, "py3-none-manylinux_2_28_x86_64", files,
                      entry_points=f"[jax_plugins]\nxla_rocm{major} = jax_plugins.xla_rocm{major}\n", **kwargs)


def plugin_wheel(folder: Path, major: int, version: str, python: str, modules: dict[str, Path], **kwargs) -> Path:
    package = f"jax_rocm{major}_plugin"
    files = {f"{package}/__init__.py": b"", **{f"{package}/{name}": lib.read_bytes() for name, lib in modules.items()},
             **kwargs.pop("extra", {})}
    requires = (f"jax-rocm{major}-pjrt=={version}", 'amd_hipblas_instinct; extra == "with-rocm"')
    return make_wheel(folder, package, version, f"{python}-{python}-manylinux_2_28_x86_64", files, requires=requires, **kwargs)


@pytest.mark.parametrize("path, expected", [
    ("jax_plugins/xla_rocm10/xla_rocm_plugin.so", "jax_plugins/xla_rocm<N>/xla_rocm_plugin.so"),
    ("jax_rocm7_plugin/_prng.cpython-314-x86_64-linux-gnu.so", "jax_rocm<N>_plugin/_prng.so"),
    ("jax_rocm7_plugin/_prng.cpython-313t-x86_64-linux-gnu.so", "jax_rocm<N>_plugin/_prng.so"),
    ("jax_rocm10_plugin/_prng.so", "jax_rocm<N>_plugin/_prng.so"),
    ("jax_rocm7_plugin/_x.abi3.so", "jax_rocm<N>_plugin/_x.so"),
    ("jax_rocm10_pjrt-0.12.0.dist-info/entry_points.txt", "<dist-info>/entry_points.txt"),
    ("jax_rocm7_plugin-0.10.2.dev20261205+gd6cea05.rocm7.2.4.dist-info/RECORD", "<dist-info>/RECORD"),
    ("jax_rocm7_plugin/version.py", "jax_rocm<N>_plugin/version.py"),
])
def test_member_paths_are_normalised(path, expected):
    assert wc.normalise_member(path) == expected


def test_names_keep_their_separators_when_normalised():
    assert wc.normalise_name("jax-rocm10-pjrt") == wc.normalise_name("jax-rocm7-pjrt") == "jax-rocm<N>-pjrt"
    assert wc.normalise_name("[jax_plugins] xla_rocm7 = jax_plugins.xla_rocm7") == "[jax_plugins] xla_rocm<N> = jax_plugins.xla_rocm<N>"


@pytest.mark.parametrize("entry, kind", [
    (PIP_CORE, "therock_pip"), (PIP_FAMILY, "therock_pip"), (PIP_SITE, "therock_pip"), (PIP_USR, "therock_pip"),
    (BESIDE, "origin"), ("${ORIGIN}/../lib", "origin"), (OPT, "absolute"), ("/usr/lib64", "absolute"),
    (BUILD_TREE, "build_tree"), ("external/local_config_rocm/rocm/rocm/lib", "build_tree"),
    ("/root/.cache/bazel/_bazel_root/0123/execroot/_main/bazel-out/k8-opt/bin", "build_tree"),
])
def test_runpath_kinds(entry, kind):
    assert wc.runpath_kind(entry) == kind


def test_a_runpath_policy_says_its_order_families_and_pythons():
    theirs, ours = wc.RunpathPolicy(THEIRS_RUNPATH), wc.RunpathPolicy(OURS_RUNPATH)
    assert theirs.order == ("origin", "therock_pip", "absolute") and ours.order == ("therock_pip", "origin", "absolute")
    assert ours.pip_families == ("gfx94X_dcgpu",) and ours.python_versions == ("3.12", "3.13")
    assert ours.pip_site_dirs == ("dist-packages", "site-packages") and theirs.pip_site_dirs == ("dist-packages",)
    assert ours.of_kind("absolute") == (OPT,) and ours.of_kind("build_tree") == ()
    assert ours.summary() == ("6 entries (TheRock pip 4, $ORIGIN-relative 1, absolute 1); order: TheRock pip > "
                              "$ORIGIN-relative > absolute; 1 pip families; python3.12-3.13 dist-packages+site-packages; "
                              "$ORIGIN-relative: $ORIGIN/../rocm/lib; absolute: /opt/rocm/lib")
    assert wc.RunpathPolicy(()).summary() == "none"


def test_a_wheel_is_read_with_the_runpath_and_needed_its_library_was_linked_with(tmp_path, libraries):
    info = {"artifacts": {"xla_rocm_plugin.so": {"origin": "examples", "stand_ins": ["//xla:x"]}}}
    wheel = wc.read_wheel(pjrt_wheel(tmp_path, 7, "0.10.2+rocm7.2.4", libraries["ours"], requires_python=">=3.11",
                                     extra={"jax_plugins/xla_rocm7/build_info.json": json.dumps(info).encode(),
                                            "jax_plugins/xla_rocm7/notes.so": b"a text file named like a library\n"}))
    assert (wheel.distribution, wheel.version, wheel.kind, wheel.rocm_major) == ("jax-rocm7-pjrt", "0.10.2+rocm7.2.4", "pjrt", 7)
    assert wheel.tags == ("py3-none-manylinux_2_28_x86_64",) and wheel.python_tag == "py3" and not wheel.root_is_purelib
    assert wheel.requires_python == ">=3.11" and wheel.requires_dist == ()
    assert [str(e) for e in wheel.entry_points] == ["[jax_plugins] xla_rocm7 = jax_plugins.xla_rocm7"]
    (elf,) = wheel.elf_members  # notes.so is no ELF file
    assert elf.path == "jax_plugins/xla_rocm7/xla_rocm_plugin.so" and elf.normalised == "jax_plugins/xla_rocm<N>/xla_rocm_plugin.so"
    assert elf.runpath == OURS_RUNPATH and elf.rpath == () and elf.policy.entries == OURS_RUNPATH
    assert elf.needed[:2] == ("libamdhip64.so.7", "libhipblas.so.3") and "libc.so.6" in elf.needed
    assert elf.rocm_needed == ("libamdhip64.so.7", "libhipblas.so.3") and "libc.so.6" in elf.system_needed
    assert wheel.stand_ins == ("jax_plugins/xla_rocm<N>/xla_rocm_plugin.so",)
    assert wheel.packages == ("jax_plugins/xla_rocm<N>",) and wheel.extension_modules == ("xla_rocm_plugin.so",)


def test_an_rpath_is_read_as_the_search_path_where_there_is_no_runpath(tmp_path, libraries):
    wheel = wc.read_wheel(pjrt_wheel(tmp_path, 7, "1.0", libraries["rpath"]))
    (elf,) = wheel.elf_members
    assert elf.runpath == () and elf.rpath == (BESIDE, OPT) and elf.policy.order == ("origin", "absolute")
    assert elf.rocm_needed == ()


def test_a_build_tree_entry_is_named(tmp_path, libraries):
    (elf,) = wc.read_wheel(pjrt_wheel(tmp_path, 7, "1.0", libraries["leak"])).elf_members
    assert elf.policy.of_kind("build_tree") == (BUILD_TREE,) and elf.policy.order == ("build_tree", "therock_pip", "absolute")
    assert "build tree: " + BUILD_TREE in elf.policy.summary()


def test_two_wheels_side_by_side(tmp_path, libraries):
    theirs = wc.read_wheel(plugin_wheel(tmp_path, 10, "0.12.0", "cp312", {"_prng.so": libraries["theirs"]},
                                        top_level=True, requires_python=">=3.12"))
    info = json.dumps({"artifacts": {"_prng.cpython-314-x86_64-linux-gnu.so": {"origin": "jax"}}}).encode()
    ours = wc.read_wheel(plugin_wheel(tmp_path, 7, "0.10.2", "cp314",
                                      {"_prng.cpython-314-x86_64-linux-gnu.so": libraries["ours"],
                                       "_extra.cpython-314-x86_64-linux-gnu.so": libraries["ours"]},
                                      extra={"jax_rocm7_plugin/build_info.json": info}, requires_python="==3.14.*"))
    side = wc.SideBySide(theirs, ours)
    assert "jax_rocm<N>_plugin/_prng.so" in side.layout_both
    assert side.layout_theirs_only == ("<dist-info>/top_level.txt",)
    assert side.layout_ours_only == ("jax_rocm<N>_plugin/_extra.so", "jax_rocm<N>_plugin/build_info.json")
    assert ours.stand_ins == ()  # origin jax: no stand-in
    rows = {r.aspect: r for r in side.rows()}
    assert rows["distribution"].agrees and (rows["distribution"].theirs, rows["distribution"].ours) == (
        "jax-rocm10-plugin", "jax-rocm7-plugin")
    assert not rows["version"].agrees and not rows["tags"].agrees and not rows["Requires-Python"].agrees
    assert rows["Requires-Dist"].agrees and "jax-rocm<N>-pjrt==<version>" in rows["Requires-Dist"].ours
    assert rows["entry points"].agrees and rows["entry points"].theirs == "none"
    assert rows["packages"].agrees and not rows["extension modules"].agrees
    prng = rows["RUNPATH jax_rocm<N>_plugin/_prng.so"]
    assert not prng.agrees and prng.theirs.startswith("5 entries") and prng.ours.startswith("6 entries")
    assert rows["RUNPATH jax_rocm<N>_plugin/_extra.so"].theirs == "(no such file)"
    needed = rows["NEEDED jax_rocm<N>_plugin/_prng.so"]
    assert not needed.agrees and needed.theirs.startswith("libamdhip64.so.7") and "libhipblas.so.3" in needed.ours
    # Ours searches every place theirs does, in another order; the reverse does not hold.
    assert side.runpath_missing_from_ours("jax_rocm<N>_plugin/_prng.so") == ()
    assert wc.SideBySide(ours, theirs).runpath_missing_from_ours("jax_rocm<N>_plugin/_prng.so") == (PIP_USR,)
    assert side.runpath_missing_from_ours("jax_rocm<N>_plugin/_extra.so") == ()
    table = side.table().splitlines()
    assert table[0].startswith("| aspect | jax_rocm10_plugin-0.12.0-cp312") and len(table) == 2 + len(rows)
    assert "| distribution | jax-rocm10-plugin | jax-rocm7-plugin | yes |" in table


def test_a_cell_with_a_bar_is_escaped(tmp_path, libraries):
    theirs = wc.read_wheel(plugin_wheel(tmp_path, 10, "1.0", "cp312", {"_prng.so": libraries["theirs"]},
                                        requires_python=">=3.12|odd"))
    ours = wc.read_wheel(plugin_wheel(tmp_path, 7, "1.0", "cp312", {"_prng.so": libraries["theirs"]}))
    row = next(line for line in wc.SideBySide(theirs, ours).table().splitlines() if line.startswith("| Requires-Python"))
    assert row == "| Requires-Python | >=3.12\\|odd | none | no |"


def test_the_counterpart_is_the_same_kind_and_python_else_our_newest(tmp_path, libraries):
    lib = {"_prng.so": libraries["theirs"]}
    theirs_plugin = wc.read_wheel(plugin_wheel(tmp_path / "t", 10, "0.12.0", "cp312", lib))
    ours = [wc.read_wheel(plugin_wheel(tmp_path / "o", 7, "0.10.2", py, lib)) for py in ("cp39", "cp314", "cp313")]
    ours.append(wc.read_wheel(pjrt_wheel(tmp_path / "o", 7, "0.10.2", libraries["ours"])))
    assert wc.pick_counterpart(theirs_plugin, ours).python_tag == "cp314"
    ours.append(wc.read_wheel(plugin_wheel(tmp_path / "o", 7, "0.10.2", "cp312", lib)))
    assert wc.pick_counterpart(theirs_plugin, ours).python_tag == "cp312"
    theirs_pjrt = wc.read_wheel(pjrt_wheel(tmp_path / "t", 10, "0.12.0", libraries["theirs"], purelib=True))
    assert wc.pick_counterpart(theirs_pjrt, ours).kind == "pjrt" and theirs_pjrt.root_is_purelib
    assert wc.pick_counterpart(theirs_pjrt, [w for w in ours if w.kind == "plugin"]) is None


def test_folders_are_compared_wheel_by_wheel(tmp_path, libraries):
    for folder, major, version in ((tmp_path / "t", 10, "0.12.0"), (tmp_path / "o", 7, "0.10.2")):
        pjrt_wheel(folder, major, version, libraries["theirs" if major == 10 else "ours"])
        plugin_wheel(folder, major, version, "cp312", {"_prng.so": libraries["theirs"]})
    sides = wc.compare_folders((tmp_path / "t").glob("*.whl"), (tmp_path / "o").glob("*.whl"))
    assert [(s.theirs.kind, s.ours.kind, s.theirs.rocm_major, s.ours.rocm_major) for s in sides] == [
        ("pjrt", "pjrt", 10, 7), ("plugin", "plugin", 10, 7)]


def test_a_wheel_without_one_dist_info_is_refused(tmp_path):
    path = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x/__init__.py", "")
    with pytest.raises(ValueError, match="0 .dist-info folders"):
        wc.read_wheel(path)
