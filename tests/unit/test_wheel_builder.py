"""wheel/private/wheel_builder.py on small synthetic specs: the version's check, metadata, archive layout, determinism.

The wheels are read back with the readers pip's world uses (packaging's metadata and
wheel-name parsers, email.parser, configparser, PyPA's wheel.wheelfile.WheelFile, which checks
RECORD's hashes on read: in a Python of its own, where `wheel` is not this checkout's package);
everything is written under tmp_path. The real wheels are checked in tests/e2e.
"""

from __future__ import annotations

import configparser
import csv
import email.parser
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

import pytest
from packaging import metadata, requirements, utils

import wheel_builder as wb
from tests.conftest import sandbox_environment

pytestmark = pytest.mark.unit


DIST = "jax_rocm7_pjrt"
PROJECT = "jax-rocm7-pjrt"
DEV_VERSION = "0.7.1.dev20250102+gabcdef0.rocm7.2.4"
TAG = "py3-none-manylinux_2_28_x86_64"
EPOCH = 1700000000  # 2023-11-14 22:13:20 UTC; even seconds, as zip's 2 s resolution needs


# Reads every member of the wheel argv[1] with PyPA's wheel.wheelfile.WheelFile, which checks each
# against RECORD as it reads it (WheelError on a mismatch, or on a member RECORD does not list).
# Run isolated (-I): neither the checkout nor the
# working folder nor PYTHONPATH is on its sys.path; it makes sure it has PyPA's distribution.
PYPA_READ_ALL = """
import sys
from importlib.metadata import distribution
from pathlib import Path

import wheel
from wheel.wheelfile import WheelFile

pypa = Path(distribution("wheel").locate_file("wheel/__init__.py")).resolve()
assert Path(wheel.__file__).resolve() == pypa, f"imported {wheel.__file__}, not PyPA's wheel ({pypa})"
with WheelFile(sys.argv[1]) as archive:
    for name in archive.namelist():
        archive.read(name)
print(len(archive.namelist()), "members match RECORD")
"""


def pypa_read_all(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-c", PYPA_READ_ALL, str(path)], cwd=path.parent, capture_output=True,
                          text=True, timeout=300)


def read_wheel(path: Path) -> zipfile.ZipFile:
    """The wheel, once PyPA's wheel.wheelfile.WheelFile has read every member of it against RECORD."""
    result = pypa_read_all(path)
    assert result.returncode == 0 and "members match RECORD" in result.stdout, result.stdout + result.stderr
    return zipfile.ZipFile(path)


def spec_data(tmp_path: Path, **overrides) -> dict:
    """A spec as wheel/private/wheel.bzl writes it, with its sources under tmp_path/src."""
    src = tmp_path / "src"
    (src / "nested").mkdir(parents=True, exist_ok=True)
    (src / "__init__.py").write_text("from .loader import *\n")
    (src / "libplugin.so").write_bytes(b"\x7fELF" + bytes(range(256)) * 64)
    (src / "nested" / "helper.py").write_text("def f():\n    return 1\n")
    (src / "DESCRIPTION.md").write_text("# JAX ROCm plugin\n\nThe **PJRT** plugin.\n\nSecond paragraph: colons: fine.\n")
    data = {
        "distribution": DIST,
        "version": DEV_VERSION,
        "python_tag": "py3",
        "abi_tag": "none",
        "platform_tag": "manylinux_2_28_x86_64",
        "summary": "JAX XLA PJRT Plugin for AMD GPUs (ROCm 7.2.4)",
        "description_file": "src/DESCRIPTION.md",
        "requires_python": ">=3.11",
        "requires_dist": ["jax-rocm7-plugin=={version}", "numpy>=2"],
        "extras": {"with-rocm": ["amd_rocm_hip_runtime_instinct", "amd_hipblas_instinct>=7.2"]},
        "classifiers": ["Environment :: GPU", "Programming Language :: Python :: 3"],
        "license": "Apache-2.0",
        "home_page": "https://github.com/jax-ml/jax",
        "author": "JAX team and jax-rocm-build",
        "entry_points": {"jax_plugins": {"xla_rocm7": "jax_plugins.xla_rocm7"},
                         "console_scripts": {"rocm-info": "jax_plugins.xla_rocm7.info:main"}},
        # Deliberately unsorted: the archive sorts them.
        "files": [
            {"src": "src/libplugin.so", "dest": "jax_plugins/xla_rocm7/libplugin.so", "executable": True},
            {"src": "src/nested/helper.py", "dest": "jax_plugins/xla_rocm7/nested/helper.py"},
            {"src": "src/__init__.py", "dest": "jax_plugins/xla_rocm7/__init__.py"},
        ],
        "root_is_purelib": False,
        "build_info": {"dest": "jax_plugins/xla_rocm7/build_info.json",
                       "data": {"built_by": "jax-rocm-build", "rocm_version": "7.2.4", "amdgpu_targets": ["gfx942"]}},
    }
    data.update(overrides)
    return data


def make_spec(tmp_path: Path, **overrides):
    return wb.spec_from_json(spec_data(tmp_path, **overrides), tmp_path)


@pytest.fixture
def built(tmp_path):
    """(spec, wheel path) of the full example spec."""
    spec = make_spec(tmp_path)
    return spec, wb.write_wheel(spec, tmp_path / "out", timestamp=EPOCH, workers=1)


# --- the version: wheel/private/version.bzl's, held to packaging's word ------------------------
# (How the version is put together from its pieces is tested in Starlark, wheel/private/tests,
# and the cases against packaging in tests/unit/test_wheel_version_cases.py.)

@pytest.mark.parametrize("version, normal", [("0.7.1RC1", "0.7.1rc1"), ("0.7.1+rocm7.02", "0.7.1+rocm7.2"), ("0.07.1", "0.7.1")])
def test_a_version_not_in_canonical_form_is_refused_with_packagings_form(tmp_path, version, normal):
    with pytest.raises(wb.SpecError, match=f"not in PEP 440's canonical form \\(packaging writes it {re.escape(normal)}\\)"):
        make_spec(tmp_path, version=version)


def test_a_version_pep440_cannot_read_is_refused(tmp_path):
    with pytest.raises(wb.SpecError, match="'v0.7 1' is not a PEP 440 version"):
        make_spec(tmp_path, version="v0.7 1")


def test_the_file_the_rule_declared_must_have_the_formats_name(tmp_path, capsys):
    """--out names the .whl as the rule declared it; a name the format would not give is refused
    (the Starlark and packaging disagree), and nothing is written."""
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec_data(tmp_path)))
    declared = tmp_path / "out" / f"{DIST}-{DEV_VERSION}-py3-none-linux_x86_64.whl"  # another platform tag
    assert wb.main(["--quiet", "--spec", str(spec_file), "--out", str(declared), "--base-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"the rule declared the wheel {declared.name}, but the format names it {DIST}-{DEV_VERSION}-{TAG}.whl" in err
    assert not declared.parent.exists() or list(declared.parent.iterdir()) == []

    right = tmp_path / "out" / f"{DIST}-{DEV_VERSION}-{TAG}.whl"
    assert wb.main(["--quiet", "--spec", str(spec_file), "--out", str(right), "--base-dir", str(tmp_path)]) == 0
    assert sorted(right.parent.iterdir()) == [right]
    read_wheel(right).close()


def test_the_spec_carries_jax_pieces_into_the_wheel(tmp_path):
    """wheel.bzl's spec with a version of JAX's ML_WHEEL_* kinds: the wheel's name and build_info.json agree."""
    data = spec_data(tmp_path)
    data["version"] = "0.7.1.dev20250102+cbe478fc5custom.rocm7.2.4"  # version.bzl's for JAX's custom kind
    data["build_info"] = {"dest": "jax_plugins/xla_rocm7/build_info.json", "data": {"jax_version": "0.7.1"}}
    spec = wb.spec_from_json(data, tmp_path)
    path = wb.write_wheel(spec, tmp_path / "out", workers=1)
    assert path.name == "jax_rocm7_pjrt-0.7.1.dev20250102+cbe478fc5custom.rocm7.2.4-py3-none-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path) as archive:
        info = json.loads(archive.read("jax_plugins/xla_rocm7/build_info.json"))
    assert info["plugin_version"] == "0.7.1.dev20250102+cbe478fc5custom.rocm7.2.4"


# --- names and the file name -------------------------------------------------------------------

@pytest.mark.parametrize("distribution", ["jax_rocm7_pjrt", "jax-rocm7-pjrt", "Jax.ROCm7__pjrt", "JAX_rocm7-_.pjrt"])
def test_names_are_normalised(distribution):
    spec = wb.WheelSpec(distribution, DEV_VERSION, "s", (), platform_tag="manylinux_2_28_x86_64")
    assert spec.project_name == PROJECT
    assert spec.file_stem == DIST
    assert spec.filename() == f"{DIST}-{DEV_VERSION}-{TAG}.whl"
    assert spec.dist_info == f"{DIST}-{DEV_VERSION}.dist-info"
    assert f"Name: {PROJECT}\n" in wb.metadata_text(spec)


@pytest.mark.parametrize("distribution", ["jax rocm7", "-jax_rocm7", "jax_rocm7.", "jax_rocm7>=1", "jax_rocm7[x]", "jax/rocm7", ""])
def test_invalid_names_are_rejected(tmp_path, distribution):
    spec = make_spec(tmp_path, distribution=distribution)
    for make in (spec.filename, lambda: wb.metadata_text(spec), lambda: wb.write_wheel(spec, tmp_path / "out")):
        with pytest.raises(wb.SpecError, match=re.escape(f"distribution {distribution!r} is not a valid name")):
            make()
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra, normalised", [("with-rocm", "with-rocm"), ("With_ROCm", "with-rocm"), ("rocm.7", "rocm-7")])
def test_extras_are_normalised(tmp_path, extra, normalised):
    message = email.parser.Parser().parsestr(wb.metadata_text(make_spec(tmp_path, extras={extra: ["numpy"]})))
    assert message.get_all("Provides-Extra") == [normalised]
    assert message.get_all("Requires-Dist")[-1] == f'numpy; extra == "{normalised}"'


@pytest.mark.parametrize("extra", ["with rocm", 'rocm" or "1', "rocm-", ""])
def test_invalid_extras_are_rejected(tmp_path, extra):
    with pytest.raises(wb.SpecError, match=re.escape(f"extra {extra!r} is not a valid name")):
        wb.metadata_text(make_spec(tmp_path, extras={extra: ["numpy"]}))


def test_file_name_parses_back(built):
    spec, path = built
    assert path.name == f"{DIST}-{DEV_VERSION}-{TAG}.whl"
    name, version, build, tags = utils.parse_wheel_filename(path.name)
    assert (name, str(version), build) == (PROJECT, DEV_VERSION, ())
    assert {str(t) for t in tags} == {"py3-none-manylinux_2_28_x86_64"}


@pytest.mark.parametrize("tags", [{"python_tag": "py-3"}, {"abi_tag": "CP311"}, {"platform_tag": "linux x86_64"},
                                  {"python_tag": "py3."}, {"python_tag": "py2..py3"}, {"abi_tag": ""}])
def test_bad_tags_are_rejected(tmp_path, tags):
    spec = make_spec(tmp_path, **tags)
    with pytest.raises(wb.SpecError, match="wheel tag"):
        spec.filename()


# --- METADATA, WHEEL, entry_points.txt, build_info.json ----------------------------------------

def test_metadata_fields_parse_back(built):
    spec, path = built
    with read_wheel(path) as wheel:
        text = wheel.read(f"{spec.dist_info}/METADATA").decode("utf-8")
    parsed = metadata.Metadata.from_email(text, validate=True)
    assert str(parsed.metadata_version) == "2.4"
    assert parsed.name == PROJECT and str(parsed.version) == DEV_VERSION
    assert parsed.summary == "JAX XLA PJRT Plugin for AMD GPUs (ROCm 7.2.4)"
    assert parsed.license_expression == "Apache-2.0"
    assert str(parsed.requires_python) == ">=3.11"
    assert parsed.classifiers == ["Environment :: GPU", "Programming Language :: Python :: 3"]
    assert parsed.provides_extra == ["with-rocm"]
    assert [str(r) for r in parsed.requires_dist] == [
        f"jax-rocm7-plugin=={DEV_VERSION}",
        "numpy>=2",
        'amd_rocm_hip_runtime_instinct; extra == "with-rocm"',
        'amd_hipblas_instinct>=7.2; extra == "with-rocm"',
    ]
    extra_reqs = [r for r in parsed.requires_dist if r.marker]
    assert all(r.marker.evaluate({"extra": "with-rocm"}) and not r.marker.evaluate({"extra": ""}) for r in extra_reqs)
    assert parsed.description_content_type == "text/markdown"
    assert parsed.description == "# JAX ROCm plugin\n\nThe **PJRT** plugin.\n\nSecond paragraph: colons: fine.\n"
    assert parsed.home_page == "https://github.com/jax-ml/jax"
    assert parsed.author == "JAX team and jax-rocm-build"


def test_metadata_headers_and_body_with_email_parser(tmp_path):
    spec = make_spec(tmp_path)
    message = email.parser.Parser().parsestr(wb.metadata_text(spec))
    assert message["Metadata-Version"] == "2.4"
    assert message["Name"] == PROJECT and message["Version"] == DEV_VERSION
    assert message.get_all("Requires-Dist")[0] == f"jax-rocm7-plugin=={DEV_VERSION}"
    assert [r for r in message.get_all("Requires-Dist") if r.endswith('; extra == "with-rocm"')] == [
        'amd_rocm_hip_runtime_instinct; extra == "with-rocm"', 'amd_hipblas_instinct>=7.2; extra == "with-rocm"']
    assert message["License-Expression"] == "Apache-2.0" and message["License"] is None
    assert message.get_payload() == "# JAX ROCm plugin\n\nThe **PJRT** plugin.\n\nSecond paragraph: colons: fine.\n"


def test_an_extras_requirement_keeps_its_own_marker(tmp_path):
    """The extra's condition is added to the requirement's marker, not put in its place, and an 'or' in it stays inside."""
    spec = make_spec(tmp_path, extras={"with-rocm": ['amd_hipblas_instinct>=7.2; python_version >= "3.12" or os_name == \'nt\'']})
    [text] = [r for r in email.parser.Parser().parsestr(wb.metadata_text(spec)).get_all("Requires-Dist") if "hipblas" in r]
    requirement = requirements.Requirement(text)
    assert requirement.name == "amd_hipblas_instinct" and str(requirement.specifier) == ">=7.2"
    outcomes = {(extra, python, os_name): requirement.marker.evaluate({"extra": extra, "python_version": python, "os_name": os_name})
                for extra in ("with-rocm", "") for python in ("3.11", "3.12") for os_name in ("posix", "nt")}
    assert {k for k, wanted in outcomes.items() if wanted} == {("with-rocm", "3.12", "posix"), ("with-rocm", "3.12", "nt"),
                                                               ("with-rocm", "3.11", "nt")}


@pytest.mark.parametrize("where", ["requires_dist", "extras"])
@pytest.mark.parametrize("requirement, named", [
    ("numpy >= = 2", "numpy >= = 2"),
    ("jax rocm", "jax rocm"),
    ("numpy; python_version >> '3'", "numpy; python_version >> '3'"),
    ("jax-rocm7-plugin==={version} extra", f"jax-rocm7-plugin==={DEV_VERSION} extra"),  # named as written into METADATA
])
def test_invalid_requirements_are_rejected(tmp_path, where, requirement, named):
    spec = make_spec(tmp_path, **{where: {"with-rocm": [requirement]} if where == "extras" else [requirement]})
    with pytest.raises(wb.SpecError, match=re.escape(f"requirement {named!r} is not a PEP 508 requirement")):
        wb.metadata_text(spec)
    with pytest.raises(wb.SpecError, match="is not a PEP 508 requirement"):
        wb.write_wheel(spec, tmp_path / "out")
    assert list((tmp_path / "out").glob("*")) == []


@pytest.mark.parametrize("requires_python", ["3.11", ">=3.11 or <4", "=>3.11", ">= 3.11.*"])
def test_invalid_requires_python_is_rejected(tmp_path, requires_python):
    with pytest.raises(wb.SpecError, match=re.escape(f"Requires-Python {requires_python!r} is not a version specifier")):
        wb.metadata_text(make_spec(tmp_path, requires_python=requires_python))


def test_minimal_metadata_has_no_optional_fields():
    spec = wb.WheelSpec(DIST, "0.7.1", "s", ())
    assert wb.metadata_text(spec) == "Metadata-Version: 2.4\nName: jax-rocm7-pjrt\nVersion: 0.7.1\nSummary: s\n"


def test_multiline_metadata_values_are_rejected():
    spec = wb.WheelSpec(DIST, "0.7.1", "one\nSecond-Header: injected", ())
    with pytest.raises(wb.SpecError, match="Summary must be one line"):
        wb.metadata_text(spec)


def test_wheel_file(built):
    spec, path = built
    with read_wheel(path) as wheel:
        message = email.parser.Parser().parsestr(wheel.read(f"{spec.dist_info}/WHEEL").decode())
    assert message["Wheel-Version"] == "1.0"
    assert message["Root-Is-Purelib"] == "false"
    assert message.get_all("Tag") == [TAG]
    assert message["Generator"] == wb.GENERATOR


def test_a_compressed_tag_set_has_a_tag_line_for_each_tag(tmp_path):
    spec = make_spec(tmp_path, python_tag="py2.py3", platform_tag="manylinux_2_28_x86_64.manylinux2014_x86_64")
    assert spec.filename().endswith("-py2.py3-none-manylinux_2_28_x86_64.manylinux2014_x86_64.whl")
    message = email.parser.Parser().parsestr(wb.wheel_text(spec))
    assert message.get_all("Tag") == ["py2-none-manylinux2014_x86_64", "py2-none-manylinux_2_28_x86_64",
                                      "py3-none-manylinux2014_x86_64", "py3-none-manylinux_2_28_x86_64"]


def test_purelib_wheel_says_true(tmp_path):
    assert "Root-Is-Purelib: true\n" in wb.wheel_text(make_spec(tmp_path, root_is_purelib=True))


def test_entry_points_parse_with_configparser(built):
    spec, path = built
    with read_wheel(path) as wheel:
        text = wheel.read(f"{spec.dist_info}/entry_points.txt").decode()
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    assert parser.sections() == ["console_scripts", "jax_plugins"]
    assert dict(parser["jax_plugins"]) == {"xla_rocm7": "jax_plugins.xla_rocm7"}
    assert dict(parser["console_scripts"]) == {"rocm-info": "jax_plugins.xla_rocm7.info:main"}


def test_no_entry_points_file_without_entry_points(tmp_path):
    spec = make_spec(tmp_path, entry_points={})
    names = [e.name for e in wb.plan_entries(spec)]
    assert not any(n.endswith("entry_points.txt") for n in names)


def test_build_info_gets_plugin_version(built):
    spec, path = built
    with read_wheel(path) as wheel:
        info = json.loads(wheel.read("jax_plugins/xla_rocm7/build_info.json"))
    assert info == {"built_by": "jax-rocm-build", "rocm_version": "7.2.4", "amdgpu_targets": ["gfx942"],
                    "plugin_version": DEV_VERSION}


# --- RECORD, order, modes, timestamps ----------------------------------------------------------

def test_record_matches_every_entry(built):
    spec, path = built
    with read_wheel(path) as wheel:  # WheelFile has raised WheelError on a hash mismatch
        contents = {name: wheel.read(name) for name in wheel.namelist()}
    record_name = f"{spec.dist_info}/RECORD"
    rows = list(csv.reader(io.StringIO(contents[record_name].decode())))
    assert rows[-1] == [record_name, "", ""]
    assert {r[0] for r in rows} == set(contents)
    for name, digest, size in rows[:-1]:
        assert digest == wb.record_hash(hashlib.sha256(contents[name]).digest())
        assert int(size) == len(contents[name])
    assert contents["jax_plugins/xla_rocm7/libplugin.so"] == spec.files[0].src.read_bytes()


def test_record_hash_form():
    assert wb.record_hash(hashlib.sha256(b"").digest()) == "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"


def test_wheelfile_rejects_a_tampered_member(built, tmp_path):
    """The negative control: WheelFile really does check what RECORD says."""
    spec, path = built
    tampered = tmp_path / "tampered" / path.name
    tampered.parent.mkdir()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tampered, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, data + b"#" if info.filename.endswith("__init__.py") else data)
    result = pypa_read_all(tampered)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "wheel.wheelfile.WheelError: Hash mismatch for file 'jax_plugins/xla_rocm7/__init__.py'" in result.stderr
    with pytest.raises(AssertionError, match="Hash mismatch"):
        read_wheel(tampered)
    assert pypa_read_all(path).returncode == 0, "the untampered wheel passes"


def test_entry_order_payload_sorted_dist_info_last_record_last(built):
    spec, path = built
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    dist_info = spec.dist_info
    assert names == [
        "jax_plugins/xla_rocm7/__init__.py",
        "jax_plugins/xla_rocm7/build_info.json",
        "jax_plugins/xla_rocm7/libplugin.so",
        "jax_plugins/xla_rocm7/nested/helper.py",
        "jax_plugins/xla_rocm7/version.py",
        f"{dist_info}/METADATA",
        f"{dist_info}/WHEEL",
        f"{dist_info}/entry_points.txt",
        f"{dist_info}/RECORD",
    ]
    assert [e.name for e in wb.plan_entries(spec)] == names[:-1]


def test_modes_and_timestamp(built):
    _, path = built
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    modes = {i.filename.rsplit("/", 1)[-1]: i.external_attr >> 16 for i in infos}
    assert modes["libplugin.so"] == 0o100755
    assert {m for n, m in modes.items() if n != "libplugin.so"} == {0o100644}
    assert {i.create_system for i in infos} == {3}
    assert {i.compress_type for i in infos} == {zipfile.ZIP_DEFLATED}
    assert {i.date_time for i in infos} == {time.gmtime(EPOCH)[:6]} == {(2023, 11, 14, 22, 13, 20)}


@pytest.mark.parametrize("environ, expected", [
    ({}, wb.EPOCH_1980),
    ({"SOURCE_DATE_EPOCH": ""}, wb.EPOCH_1980),
    ({"SOURCE_DATE_EPOCH": "0"}, wb.EPOCH_1980),
    ({"SOURCE_DATE_EPOCH": "315532799"}, wb.EPOCH_1980),
    ({"SOURCE_DATE_EPOCH": " 1700000000\n"}, 1700000000),
])
def test_source_date_epoch(environ, expected):
    assert wb.source_date_epoch(environ) == expected


@pytest.mark.parametrize("value", ["yesterday", "-1", "1.5e9"])
def test_source_date_epoch_not_a_number(value):
    with pytest.raises(wb.SpecError, match="SOURCE_DATE_EPOCH"):
        wb.source_date_epoch({"SOURCE_DATE_EPOCH": value})


def test_main_uses_source_date_epoch_clamped_to_1980(tmp_path, monkeypatch, capsys):
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec_data(tmp_path)))
    for value, expected in (("0", (1980, 1, 1, 0, 0, 0)), (str(EPOCH), time.gmtime(EPOCH)[:6])):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
        out = tmp_path / f"out-{value}"
        assert wb.main(["--spec", str(spec_file), "--out-dir", str(out), "--base-dir", str(tmp_path)]) == 0
        with zipfile.ZipFile(capsys.readouterr().out.strip()) as archive:
            assert {i.date_time for i in archive.infolist()} == {expected}


# --- determinism and the parallel deflate ------------------------------------------------------

def test_two_builds_are_byte_identical(tmp_path):
    spec = make_spec(tmp_path)
    first = wb.write_wheel(spec, tmp_path / "a", timestamp=EPOCH)
    second = wb.write_wheel(make_spec(tmp_path), tmp_path / "b", timestamp=EPOCH)
    assert first.name == second.name
    assert first.read_bytes() == second.read_bytes()
    assert wb.write_wheel(spec, tmp_path / "c", timestamp=EPOCH + 2).read_bytes() != first.read_bytes()


def mixed_bytes(size: int) -> bytes:
    """Runs of os.urandom, a repeat of its last 16 KiB, and repetitive text of varying length, so
    piece edges fall in all three and back-references reach into the previous piece."""
    out = bytearray()
    text = b"\x00\x00\x00\x00jax-rocm-build .text .rodata hipModuleLaunchKernel\n" * 2048
    i = 0
    while len(out) < size:
        noise = os.urandom(64 << 10)
        out += noise + noise[-(16 << 10):] + text[: 16384 + (i * 7919) % 65536]
        i += 1
    return bytes(out[:size])


@pytest.fixture(scope="module")
def big_library(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("big") / "libbig.so"
    path.write_bytes(mixed_bytes((20 << 20) + 12345))  # not a multiple of PIECE: a short last piece
    return path


def test_large_file_is_identical_for_any_number_of_workers(tmp_path, big_library, monkeypatch):
    pieces: list[tuple[int, int, bool]] = []
    deflate_piece = wb._deflate_piece

    def spy(data, history, level, last):
        pieces.append((len(data), len(history), last))
        return deflate_piece(data, history, level, last)

    monkeypatch.setattr(wb, "_deflate_piece", spy)
    files = (wb.FileEntry(big_library, "pkg/libbig.so", True), wb.FileEntry(big_library.with_name("small.py"), "pkg/a.py"))
    big_library.with_name("small.py").write_text("x = 1\n")
    spec = wb.WheelSpec(DIST, "0.7.1", "big", files)
    one = wb.write_wheel(spec, tmp_path / "w1", timestamp=EPOCH, workers=1)
    size = big_library.stat().st_size
    n_pieces = size // wb.PIECE + 1
    # Full pieces and a short last one, primed with the previous piece's 32 KiB from the second on;
    # the small file does not go through ParallelDeflate.
    assert pieces == [(wb.PIECE, 0, False)] + [(wb.PIECE, wb.WINDOW, False)] * (n_pieces - 2) + [
        (size % wb.PIECE, wb.WINDOW, True)]
    # More workers than cores (this machine may have 2): the bytes still do not change.
    two = wb.write_wheel(spec, tmp_path / "w2", timestamp=EPOCH, workers=2)
    sixteen = wb.write_wheel(spec, tmp_path / "w16", timestamp=EPOCH, workers=16)
    assert len(pieces) == 3 * n_pieces
    assert one.read_bytes() == two.read_bytes() == sixteen.read_bytes()

    expected = hashlib.sha256(big_library.read_bytes()).hexdigest()
    with zipfile.ZipFile(sixteen) as archive:
        assert archive.testzip() is None  # every member's CRC
        info = archive.getinfo("pkg/libbig.so")
        assert info.external_attr >> 16 == 0o100755
        assert info.compress_size < 0.75 * info.file_size  # the repetitive runs did compress
    with read_wheel(sixteen) as wheel:  # RECORD's sha256 checked on read, and ours too
        assert hashlib.sha256(wheel.read("pkg/libbig.so")).hexdigest() == expected


def test_default_workers_is_every_core_this_process_may_use(tmp_path, monkeypatch):
    # The cores this process may use (3), not the machine's (64), on every Python.
    monkeypatch.setattr(wb.os, "process_cpu_count", lambda: 3, raising=False)
    monkeypatch.setattr(wb.os, "sched_getaffinity", lambda pid: {0, 1, 2})
    monkeypatch.setattr(wb.os, "cpu_count", lambda: 64)
    assert wb.default_workers() == 3
    monkeypatch.undo()
    pools = []
    real_pool = wb.concurrent.futures.ThreadPoolExecutor

    def recording_pool(max_workers):
        pools.append(max_workers)
        return real_pool(max_workers)

    monkeypatch.setattr(wb.concurrent.futures, "ThreadPoolExecutor", recording_pool)
    monkeypatch.setattr(wb, "default_workers", lambda: 48)
    wb.write_wheel(make_spec(tmp_path), tmp_path / "out", timestamp=EPOCH)
    wb.write_wheel(make_spec(tmp_path), tmp_path / "out2", timestamp=EPOCH, workers=1000)
    assert pools == [48, wb.MAX_WORKERS]  # the default is no longer capped at 8; only the memory bound caps it
    with pytest.raises(wb.SpecError, match="at least 1"):
        wb.write_wheel(make_spec(tmp_path), tmp_path / "out3", timestamp=EPOCH, workers=0)


class InFlightMeter:
    """Measures, from outside ParallelDeflate, the bytes it holds between calls: bytes given to
    compress() minus the bytes its returned stream inflates back to."""

    def __init__(self):
        self.fed = self.returned = self.peak = 0
        self.inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        self.instances = []

    def returned_stream(self, stream) -> None:
        self.returned += len(self.inflater.decompress(bytes(stream)))

    def deflate_class(self):
        meter = self

        class Metered(wb.ParallelDeflate):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                meter.instances.append(self)

            def compress(self, data):
                meter.fed += len(data)
                stream = super().compress(data)
                meter.returned_stream(stream)
                meter.peak = max(meter.peak, meter.fed - meter.returned)
                return stream

            def flush(self):
                stream = super().flush()
                meter.returned_stream(stream)
                return stream

        return Metered


def test_bytes_in_flight_are_bounded_by_the_budget_not_by_the_workers(tmp_path, big_library, monkeypatch):
    """16 workers, a budget of 4 pieces: reading never runs more than the budget (plus the
    partial piece being filled) ahead of writing. A bound by worker count (the old 2 pieces
    per worker) would let 32 pieces in flight here, since deflating is made slower than reading."""
    budget = 4 * wb.PIECE
    meter = InFlightMeter()
    deflate_piece = wb._deflate_piece

    def slow_deflate(data, history, level, last):
        time.sleep(0.002)  # reading outruns deflating, so only the bound stops it
        return deflate_piece(data, history, level, last)

    monkeypatch.setattr(wb, "_deflate_piece", slow_deflate)
    monkeypatch.setattr(wb, "IN_FLIGHT_BUDGET", budget)
    monkeypatch.setattr(wb, "ParallelDeflate", meter.deflate_class())
    spec = wb.WheelSpec(DIST, "0.7.1", "big", (wb.FileEntry(big_library, "pkg/libbig.so"),))
    wheel = wb.write_wheel(spec, tmp_path / "out", timestamp=EPOCH, workers=16)

    assert meter.returned == meter.fed == big_library.stat().st_size and meter.inflater.eof
    assert big_library.stat().st_size > 16 * budget
    assert meter.peak <= budget + wb.PIECE
    [deflate] = meter.instances
    assert deflate.peak_in_flight <= budget and deflate.in_flight == 0
    # The same bytes as with the real budget: the budget, like the workers, changes only memory.
    monkeypatch.undo()
    assert wheel.read_bytes() == wb.write_wheel(spec, tmp_path / "real", timestamp=EPOCH, workers=2).read_bytes()


def test_a_budget_smaller_than_a_piece_is_refused():
    with pytest.raises(ValueError, match="cannot hold one"):
        wb.ParallelDeflate(6, None, wb.PIECE - 1)


# Runs a script as __main__ and then prints its process's peak RSS. VmHWM is the peak of this
# process's own memory since exec; ru_maxrss (wait4, RUSAGE_CHILDREN) is not: Linux starts it
# at the RSS of the process that forked (or vforked) the child, here a pytest that may be large.
PEAK_RSS_OF_MAIN = """
import runpy, sys
module, sys.argv = sys.argv[1], sys.argv[1:]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    status = 0
except SystemExit as e:
    status = e.code
with open("/proc/self/status") as f:
    print("peak", next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:")))
sys.exit(status)
"""


def test_peak_rss_of_the_command_stays_under_128_mb_with_many_workers(tmp_path):
    """The command line on 192 MiB (each MiB incompressible noise, then text) with MAX_WORKERS
    threads: peak RSS within 128 MB. The old bound, 2 pieces of 4 MiB per worker, reached
    134 MB here; a bound per worker of any size grows with cores."""
    library = tmp_path / "lib.so"
    block = os.urandom(900 << 10) + b"jax-rocm-build .text hipModuleLaunchKernel\n" * 2800
    with open(library, "wb") as f:
        for _ in range(192 << 20 // len(block)):
            f.write(block)
    (tmp_path / "spec.json").write_text(json.dumps({
        "distribution": DIST, "version": "0.7.1", "summary": "rss",
        "files": [{"src": str(library), "dest": "pkg/lib.so"}]}))
    # Level 1: the bound does not depend on the level, and the test stays quick.
    result = subprocess.run([sys.executable, "-c", PEAK_RSS_OF_MAIN, "wheel_builder",
                             "--spec", str(tmp_path / "spec.json"), "--out-dir", str(tmp_path / "out"),
                             "--compresslevel", "1", "--workers", str(wb.MAX_WORKERS), "--quiet"],
                            env=sandbox_environment(), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    peak = int(result.stdout.split()[-1])
    assert 16 << 20 < peak <= 128_000_000, f"peak RSS {peak / 2**20:.1f} MiB"  # above 16 MiB: a Python was measured
    with read_wheel(next((tmp_path / "out").glob("*.whl"))) as wheel:
        assert hashlib.sha256(wheel.read("pkg/lib.so")).digest() == hashlib.sha256(library.read_bytes()).digest()


def test_parallel_deflate_of_an_exact_multiple_of_pieces(tmp_path):
    """A file of exactly PARALLEL_MIN_SIZE: two full pieces then an empty final one."""
    path = tmp_path / "exact.so"
    path.write_bytes((b"0123456789abcdef" * 4096 + os.urandom(4096)) * (wb.PARALLEL_MIN_SIZE // (65536 + 4096)) +
                     b"z" * (wb.PARALLEL_MIN_SIZE % (65536 + 4096)))
    assert path.stat().st_size == wb.PARALLEL_MIN_SIZE
    spec = wb.WheelSpec(DIST, "0.7.1", "exact", (wb.FileEntry(path, "pkg/exact.so"),))
    wheels = [wb.write_wheel(spec, tmp_path / str(n), timestamp=EPOCH, workers=n) for n in (1, 2)]
    assert wheels[0].read_bytes() == wheels[1].read_bytes()
    with read_wheel(wheels[0]) as wheel:
        assert wheel.read("pkg/exact.so") == path.read_bytes()


@pytest.mark.parametrize("write", [100_000, wb.PIECE, 3 * wb.PIECE + 5])
def test_parallel_deflate_stream_is_raw_deflate(big_library, write):
    """Writes that straddle pieces, match them, or span several; a budget of two pieces
    makes compress() wait for the oldest piece."""
    import concurrent.futures

    data = big_library.read_bytes()[: 5 * wb.PIECE + 777]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        compressor = wb.ParallelDeflate(6, pool, 2 * wb.PIECE)
        stream = b"".join(compressor.compress(data[i:i + write]) for i in range(0, len(data), write))
        assert compressor.peak_in_flight <= 2 * wb.PIECE
        stream += compressor.flush()
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    assert inflater.decompress(stream) + inflater.flush() == data
    assert inflater.eof and inflater.unused_data == b""


def test_parallel_deflate_copies_a_buffer_the_caller_reuses(big_library):
    """Pieces are deflated after compress() returns, so a reused buffer must not change them."""
    import concurrent.futures

    data = big_library.read_bytes()[: 4 * wb.PIECE]
    buffer = bytearray(wb.PIECE)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        compressor = wb.ParallelDeflate(6, pool)
        stream = bytearray()
        for i in range(0, len(data), wb.PIECE):
            buffer[:] = data[i:i + wb.PIECE]
            stream += compressor.compress(memoryview(buffer))
        buffer[:] = bytes(wb.PIECE)  # overwritten before any piece may have been deflated
        stream += compressor.flush()
    assert zlib.decompress(bytes(stream), -zlib.MAX_WBITS) == data


# --- rejected layouts and failures -------------------------------------------------------------

@pytest.mark.parametrize("dest", [
    "../evil.so", "pkg/../../evil.so", "/abs/evil.so", "./pkg/x.py", "pkg//x.py", "pkg/x/", "pkg\\x.py", "",
])
def test_unsafe_destinations_are_rejected(tmp_path, dest):
    data = spec_data(tmp_path)
    data["files"].append({"src": "src/__init__.py", "dest": dest})
    spec = wb.spec_from_json(data, tmp_path)
    with pytest.raises(wb.SpecError, match="relative '/'-separated path"):
        wb.write_wheel(spec, tmp_path / "out")
    assert list((tmp_path / "out").glob("*")) == []


def test_duplicate_destinations_are_rejected(tmp_path):
    data = spec_data(tmp_path)
    data["files"].append({"src": "src/nested/helper.py", "dest": "jax_plugins/xla_rocm7/__init__.py"})
    with pytest.raises(wb.SpecError, match="two files go to jax_plugins/xla_rocm7/__init__.py"):
        wb.plan_entries(wb.spec_from_json(data, tmp_path))
    clash = spec_data(tmp_path, build_info={"dest": "jax_plugins/xla_rocm7/__init__.py", "data": {}})
    with pytest.raises(wb.SpecError, match="two files go to"):
        wb.plan_entries(wb.spec_from_json(clash, tmp_path))


@pytest.mark.parametrize("dest", [
    f"{DIST}-{DEV_VERSION}.dist-info/METADATA",
    f"{DIST}-{DEV_VERSION}.dist-info/extra.txt",
    "other-1.0.dist-info/RECORD",
    f"{DIST}-{DEV_VERSION}.data/scripts/tool",
])
def test_files_into_metadata_folders_are_rejected(tmp_path, dest):
    data = spec_data(tmp_path)
    data["files"].append({"src": "src/__init__.py", "dest": dest})
    with pytest.raises(wb.SpecError, match="metadata folders"):
        wb.write_wheel(wb.spec_from_json(data, tmp_path), tmp_path / "out")


def test_missing_source_names_it_and_leaves_no_partial_wheel(tmp_path):
    data = spec_data(tmp_path)
    # Sorted after the other payload, so some entries are already written when it fails.
    data["files"].append({"src": "src/gone.so", "dest": "jax_plugins/xla_rocm7/zz_gone.so"})
    out = tmp_path / "out"
    with pytest.raises(wb.SpecError) as error:
        wb.write_wheel(wb.spec_from_json(data, tmp_path), out)
    assert "jax_plugins/xla_rocm7/zz_gone.so" in str(error.value)
    assert str(tmp_path / "src" / "gone.so") in str(error.value)
    assert list(out.iterdir()) == []


def test_main_reports_a_bad_spec_on_stderr(tmp_path, capsys):
    spec_file = tmp_path / "spec.json"
    out = tmp_path / "out"
    cases = [
        (spec_data(tmp_path, version="0.7.1.dev"), "packaging writes it 0.7.1.dev0"),
        ({k: v for k, v in spec_data(tmp_path).items() if k != "summary"}, "summary"),
        ({k: v for k, v in spec_data(tmp_path).items() if k != "version"}, "version"),
        (spec_data(tmp_path, files=[{"src": "src/gone.so", "dest": "pkg/gone.so"}]), "gone.so"),
    ]
    for data, needle in cases:
        spec_file.write_text(json.dumps(data))
        assert wb.main(["--spec", str(spec_file), "--out-dir", str(out), "--base-dir", str(tmp_path)]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"wheel_builder: {spec_file}: ") and needle in captured.err
    assert not out.exists() or list(out.iterdir()) == []


def test_main_prints_the_wheel_path(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec_data(tmp_path)))
    out = tmp_path / "out"
    assert wb.main(["--spec", str(spec_file), "--out-dir", str(out), "--base-dir", str(tmp_path)]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed == out / f"{DIST}-{DEV_VERSION}-{TAG}.whl"
    assert sorted(p.name for p in out.iterdir()) == [printed.name]
    with read_wheel(printed) as wheel:
        assert wheel.read("jax_plugins/xla_rocm7/nested/helper.py") == b"def f():\n    return 1\n"
        assert {i.date_time for i in wheel.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_the_description_names_the_wheel_and_holds_its_build_info(tmp_path, monkeypatch):
    """--description-out: what ci_build reads instead of looking for wheels by folder name; the
    path as the action gave --out-dir (Bazel's: from the execution root)."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.json").write_text(json.dumps(spec_data(tmp_path)))
    assert wb.main(["--quiet", "--spec", "spec.json", "--out-dir", "bin/renamed", "--description-out", "bin/w.json"]) == 0
    description = json.loads((tmp_path / "bin/w.json").read_text())
    assert description["wheel"] == f"bin/renamed/{DIST}-{DEV_VERSION}-{TAG}.whl"
    assert (tmp_path / description["wheel"]).is_file()
    assert (description["distribution"], description["version"]) == (PROJECT, DEV_VERSION)
    assert "-".join(description[t] for t in ("python_tag", "abi_tag", "platform_tag")) == TAG
    with read_wheel(tmp_path / description["wheel"]) as wheel:
        assert json.loads(wheel.read("jax_plugins/xla_rocm7/build_info.json")) == description["build_info"]
    assert description["build_info"]["plugin_version"] == DEV_VERSION


def test_spec_from_json_defaults_and_relative_paths(tmp_path):
    data = {"distribution": DIST, "version": "0.7.1", "summary": "s",
            "files": [{"src": "src/__init__.py", "dest": "pkg/__init__.py"}], "description_file": None, "build_info": None}
    spec_data(tmp_path)  # writes the sources
    spec = wb.spec_from_json(data, tmp_path)
    assert spec.tag == "py3-none-any" and spec.version == "0.7.1"
    assert spec.files == (wb.FileEntry(tmp_path / "src/__init__.py", "pkg/__init__.py", False),)
    assert spec.description == "" and spec.build_info_dest == "" and not spec.root_is_purelib


# --- regressions: bugs found in review, fixed ---

def test_regression_compresslevel_applies_to_small_files(tmp_path):
    path = tmp_path / "text.py"
    path.write_bytes(b"x = 1\n" * 20000)
    spec = wb.WheelSpec(DIST, "0.7.1", "s", (wb.FileEntry(path, "pkg/text.py"),))
    sizes = []
    for level in (0, 9):
        with zipfile.ZipFile(wb.write_wheel(spec, tmp_path / str(level), compresslevel=level)) as archive:
            sizes.append(archive.getinfo("pkg/text.py").compress_size)
    assert sizes[0] >= path.stat().st_size > sizes[1]


@pytest.mark.parametrize("content", ["{not json", None])
def test_regression_main_reports_unreadable_spec(tmp_path, capsys, content):
    spec_file = tmp_path / "spec.json"
    if content is not None:
        spec_file.write_text(content)
    assert wb.main(["--spec", str(spec_file), "--out-dir", str(tmp_path / "out")]) == 1
    assert "wheel_builder:" in capsys.readouterr().err


def test_regression_source_date_epoch_after_2107(tmp_path):
    """A SOURCE_DATE_EPOCH past what a zip entry can carry is clamped to its last second."""
    timestamp = wb.source_date_epoch({"SOURCE_DATE_EPOCH": "4500000000"})  # 2112
    assert timestamp == wb.EPOCH_2107
    wheel = wb.write_wheel(wb.WheelSpec(DIST, "0.7.1", "s", ()), tmp_path / "out", timestamp=timestamp)
    with zipfile.ZipFile(wheel) as archive:  # zip keeps seconds / 2: compared to the minute
        assert {i.date_time[:5] for i in archive.infolist()} == {(2107, 12, 31, 23, 59)}


# --- what the wheel says about whose code it holds -------------------------------------------


def test_a_repository_rules_source_info_replaces_the_pin_in_build_info(tmp_path):
    (tmp_path / "jax_source_info.json").write_text(json.dumps({"origin": "local archive", "commit": "990e6a0b"}))
    data = spec_data(tmp_path)
    data["build_info"]["data"]["sources"] = {"jax": {"origin": "pinned"}, "nanobind": {"origin": "pinned"}}
    data["build_info"]["source_info_files"] = {"jax": "jax_source_info.json"}
    spec = wb.spec_from_json(data, tmp_path)
    assert spec.build_info["sources"] == {"jax": {"origin": "local archive", "commit": "990e6a0b"},
                                          "nanobind": {"origin": "pinned"}}


def test_stand_ins_are_named_in_the_description_and_nothing_is_said_without_them(tmp_path):
    artifacts = {"_prng.so": {"origin": "jax", "stand_ins": []},
                 "_triton.so": {"origin": "examples", "stand_ins": ["@jax_examples//jaxlib/rocm:hip_vendor"]}}
    data = spec_data(tmp_path)
    data["build_info"]["data"]["artifacts"] = artifacts
    description = wb.spec_from_json(data, tmp_path).description
    note = description.split("## Stand-ins inside", 1)[1]
    assert "`_triton.so` was built from jax-rocm-build's `examples/` stand-ins" in note and "_prng" not in note
    assert wb.stand_in_note({"_prng.so": {"origin": "jax", "stand_ins": []}}) == ""
    assert " were built " in wb.stand_in_note({"a": {"origin": "examples"}, "b": {"origin": "examples"}})
