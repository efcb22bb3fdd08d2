"""third_party/gpus/toolkit_sources.py: XLA's toolkit names (their order, its table, the merge
of TF_ROCM_MULTIPLE_PATHS, ROCM_DISTRO_LINKS) on tables written here and folders under tmp_path.

The one test of XLA's own table reads the XLA tree JAX_ROCM_TEST_XLA_TREE names (skipped
without it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT
from third_party.gpus import toolkit_sources as ts

pytestmark = pytest.mark.unit

PROGRAM = CHECKOUT / "third_party" / "gpus" / "toolkit_sources.py"
XLA_TREE_ENV = "JAX_ROCM_TEST_XLA_TREE"

# A table in the shape of XLA's rocm_redist.bzl (names and digests made up here).
TABLE = '''
"""A made-up ROCm distribution list."""

rocm_redist = {
    "plain": struct(
        packages = [
            {
                "url": "https://example.invalid/therock-dist-linux-gfx942-7.99.0.tar.gz",
                "sha256": "%s",
            },
        ],
        required_softlinks = [],
        rocm_root = "",
    ),
    "linked": struct(
        packages = [{"url": "https://example.invalid/linked.tar.gz", "sha256": "%s"}],
        required_softlinks = [struct(target = "llvm/amdgcn", link = "amdgcn")],
        rocm_root = "top",
    ),
    "wheels": struct(
        packages = [
            {"url": "https://example.invalid/rocm_sdk_core-7.99.0-py3-none-linux_x86_64.whl", "sha256": "%s"},
            {
                "url": "https://example.invalid/rocm_sdk_devel-7.99.0-py3-none-linux_x86_64.whl",
                "sha256": "%s",
                "sub_package": "rocm_sdk_devel/_devel.tar",
            },
        ],
        required_softlinks = [],
        rocm_root = "_rocm_sdk_devel",
    ),
    "two": struct(
        packages = [
            {"url": "https://example.invalid/a.tar.gz", "sha256": "%s"},
            {"url": "https://example.invalid/b.tar.gz", "sha256": "%s"},
        ],
        required_softlinks = [],
        rocm_root = "",
    ),
    "escaping": struct(
        packages = [{"url": "https://example.invalid/e.tar.gz", "sha256": "%s"}],
        required_softlinks = [struct(target = "../../etc", link = "etc")],
        rocm_root = "",
    ),
}

def create_rocm_distro(distro_url, distro_hash, symlinks):
    return struct(packages = [{"url": distro_url, "sha256": distro_hash}], required_softlinks = [], rocm_root = "")
''' % tuple(f"{i:064x}" for i in range(1, 8))


def error_of(call, *args) -> str:
    with pytest.raises(ts.SourceError) as e:
        call(*args)
    message = str(e.value)
    assert "\n" not in message
    return message


# ---- the table ---------------------------------------------------------------------------


def test_the_table_is_read_with_structs_as_dicts_and_the_rest_as_literals():
    table = ts.redistributions(TABLE)
    assert list(table) == ["plain", "linked", "wheels", "two", "escaping"]
    assert table["linked"] == {"packages": [{"url": "https://example.invalid/linked.tar.gz", "sha256": f"{2:064x}"}],
                               "required_softlinks": [{"target": "llvm/amdgcn", "link": "amdgcn"}], "rocm_root": "top"}


def test_a_distro_is_its_one_tarball_with_links_and_root():
    table = ts.redistributions(TABLE)
    assert ts.distro(table, "plain") == ts.Distro("plain", "https://example.invalid/therock-dist-linux-gfx942-7.99.0.tar.gz",
                                                  f"{1:064x}", (), "")
    assert ts.distro(table, "linked") == ts.Distro("linked", "https://example.invalid/linked.tar.gz", f"{2:064x}",
                                                   (("llvm/amdgcn", "amdgcn"),), "top")


def test_an_unknown_name_lists_the_known_ones_and_the_file():
    message = error_of(ts.distro, ts.redistributions(TABLE), "rocm_7.13.0_gfx908", "xla/third_party/gpus/rocm/rocm_redist.bzl")
    assert message == ("ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908 is not in XLA's redistribution table "
                       "(xla/third_party/gpus/rocm/rocm_redist.bzl); known: plain, linked, wheels, two, escaping")


def test_pip_wheels_are_refused_with_the_pip_install_way():
    message = error_of(ts.distro, ts.redistributions(TABLE), "wheels")
    assert message.startswith("ROCM_DISTRO_VERSION=wheels (")
    assert "pip wheels" in message and "rocm_sdk_devel-7.99.0-py3-none-linux_x86_64.whl" in message
    assert "`pip install`" in message and "--repo_env=ROCM_PATH=$(rocm-sdk path --root)" in message


def test_two_tarballs_in_one_entry_are_refused_naming_both():
    message = error_of(ts.distro, ts.redistributions(TABLE), "two")
    assert "has 2 tarballs (a.tar.gz, b.tar.gz)" in message and "one tarball per distribution" in message
    assert "TF_ROCM_MULTIPLE_PATHS" in message


def test_an_entrys_links_may_not_leave_the_tree():
    message = error_of(ts.distro, ts.redistributions(TABLE), "escaping")
    assert "../../etc:etc" in message and "without `..`" in message


@pytest.mark.parametrize(("text", "says"), [
    ("x = 1\n", "has no `rocm_redist = {...}` table"),
    ("rocm_redist = {\n", "cannot be read"),
    ('rocm_redist = {"a": struct(packages = [load_it()])}\n', "`load_it()` in rocm_redist is not a struct()"),
    ('rocm_redist = {"a": struct(n = 7)}\n', "`7` in rocm_redist is not a struct()"),
    ('rocm_redist = {"a": "b"}\n', "rocm_redist is not a dict of struct()s"),
    ('rocm_redist = {"a": struct(**kw)}\n', "`struct(**kw)` in rocm_redist is not a struct()"),
])
def test_what_is_not_a_table_is_named(text, says):
    message = error_of(ts.redistributions, text, "some/rocm_redist.bzl")
    assert message.startswith("some/rocm_redist.bzl") and says in message


def test_an_entry_without_packages_or_digest_is_refused():
    table = ts.redistributions('rocm_redist = {"a": struct(packages = []), "b": struct(packages = [{"url": "u"}])}\n')
    assert "has no list of packages" in error_of(ts.distro, table, "a")
    assert "lacks a url or a sha256" in error_of(ts.distro, table, "b")


def xla_table() -> tuple[Path, str]:
    """(path, text) of the rocm_redist.bzl of the XLA tree JAX_ROCM_TEST_XLA_TREE names; skips without it."""
    tree = os.environ.get(XLA_TREE_ENV, "").strip()
    if not tree:
        pytest.skip(f"{XLA_TREE_ENV} is unset: set it to an XLA checkout (e.g. of main) to read its rocm_redist.bzl")
    path = Path(tree).expanduser() / ts.REDIST_TABLE
    return path, path.read_text()


def test_every_entry_of_a_real_xla_table_resolves_or_is_refused_by_name():
    """Any XLA tree's table (main's, or JAX 0.10.2's pin with its pip-wheel entry): each tarball
    entry gives its package's URL and digest; each pip-wheel entry is refused, by name."""
    path, text = xla_table()
    table = ts.redistributions(text, str(path))
    assert table, f"{path} has an empty table"
    for name, entry in table.items():
        assert f'"{name}"' in text  # a name of the file, not of the reader
        if any(p["url"].endswith(".whl") for p in entry["packages"]):
            assert "pip wheels" in error_of(ts.distro, table, name, str(path))
        else:
            found = ts.distro(table, name, str(path))
            assert (found.url, found.sha256) == (entry["packages"][0]["url"], entry["packages"][0]["sha256"])
            assert found.url in text and found.sha256 in text


def test_xla_mains_table_gives_rocm_7_13_gfx908():
    """XLA main's rocm_7.13.0_gfx908, from the tree JAX_ROCM_TEST_XLA_TREE names."""
    path, text = xla_table()
    if '"rocm_7.13.0_gfx908"' not in text:
        pytest.skip(f"{path} has no rocm_7.13.0_gfx908 entry: {XLA_TREE_ENV} names an XLA older than main's of 2026")
    found = ts.distro(ts.redistributions(text, str(path)), "rocm_7.13.0_gfx908", str(path))
    assert found.url == "https://repo.amd.com/rocm/tarball/therock-dist-linux-gfx908-7.13.0.tar.gz"
    assert found.sha256 == "5d84753a8d8895ff2f6137a2a922ee8f36ce9c2e01b60a99d3ee776a683bfc34"
    assert found.links == () and found.rocm_root == ""


# ---- ROCM_DISTRO_LINKS -------------------------------------------------------------------


def test_links_spec_is_pairs_of_relative_paths():
    assert ts.parse_links("") == ()
    assert ts.parse_links("llvm/amdgcn:amdgcn, lib/llvm:llvm") == (("llvm/amdgcn", "amdgcn"), ("lib/llvm", "llvm"))


@pytest.mark.parametrize(("spec", "says"), [
    ("a:b,", "'' is not target:link"),
    ("a:", "'a:' is not target:link"),
    (":b", "':b' is not target:link"),
    ("a:b:c", "'a:b:c' is not target:link"),
    ("/etc:etc", "/etc:etc: '/etc' is not a path inside"),
    ("llvm:../outside", "llvm:../outside: '../outside' is not a path inside"),
    ("llvm:a/../../b", "'a/../../b' is not a path inside"),
    ("llvm:.", "the tree's root itself"),
    ("a:x,b:x", "x is made a link more than once"),
])
def test_bad_links_specs_are_refused_naming_the_pair(spec, says):
    message = error_of(ts.parse_links, spec)
    assert message.startswith("ROCM_DISTRO_LINKS") and says in message


def test_links_are_made_relative_inside_the_root(tmp_path):
    root = tmp_path / "dist"
    (root / "llvm" / "amdgcn" / "bitcode").mkdir(parents=True)
    assert ts.make_links(root, ts.parse_links("llvm/amdgcn:amdgcn,llvm/amdgcn/bitcode:lib/bc")) == 2
    assert os.readlink(root / "amdgcn") == "llvm/amdgcn"
    assert os.readlink(root / "lib" / "bc") == "../llvm/amdgcn/bitcode"
    assert (root / "lib" / "bc").resolve() == (root / "llvm" / "amdgcn" / "bitcode").resolve()
    assert ts.make_links(root, [("llvm/amdgcn", "amdgcn")]) == 0  # already there: kept


def test_links_that_would_escape_through_a_link_or_miss_are_refused(tmp_path):
    root = tmp_path / "dist"
    (root / "llvm").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "out").symlink_to(tmp_path / "outside")
    assert "leads outside" in error_of(ts.make_links, root, [("llvm", "out/llvm")])
    assert "leads outside" in error_of(ts.make_links, root, [("out", "o2")])
    assert "amdgcn is not in" in error_of(ts.make_links, root, [("amdgcn", "a")])
    (root / "taken").write_text("")
    assert "taken is already in" in error_of(ts.make_links, root, [("llvm", "taken")])
    assert sorted(p.name for p in root.iterdir()) == ["llvm", "out", "taken"]  # nothing made
    assert list((tmp_path / "outside").iterdir()) == []


# ---- TF_ROCM_MULTIPLE_PATHS --------------------------------------------------------------


def tree(root: Path, files: list[str]) -> Path:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    return root


def linked(into: Path) -> dict[str, str]:
    """Every link of a merged tree -> where it leads."""
    return {p.relative_to(into).as_posix(): os.readlink(p) for p in sorted(into.rglob("*")) if p.is_symlink()}


def test_two_installations_merge_into_one_tree_of_links(tmp_path):
    a = tree(tmp_path / "hip", ["bin/hipcc", "lib/libamdhip64.so.7", "include/hip/hip_runtime.h", ".hidden", "lib/.keep"])
    b = tree(tmp_path / "blas", ["lib/libhipblas.so.3", "include/hipblas/hipblas.h"])
    (a / "lib" / "libamdhip64.so").symlink_to("libamdhip64.so.7")
    (b / "share").mkdir()
    (b / "share" / "doc").symlink_to(tmp_path / "hip" / "include")  # a link to a folder: linked, not walked
    into = tmp_path / "merged"
    assert ts.merge([a, b], None, into) == 8
    assert linked(into) == {
        "bin/hipcc": f"{a}/bin/hipcc", "include/hip/hip_runtime.h": f"{a}/include/hip/hip_runtime.h",
        "include/hipblas/hipblas.h": f"{b}/include/hipblas/hipblas.h", "lib/.keep": f"{a}/lib/.keep",
        "lib/libamdhip64.so": f"{a}/lib/libamdhip64.so", "lib/libamdhip64.so.7": f"{a}/lib/libamdhip64.so.7",
        "lib/libhipblas.so.3": f"{b}/lib/libhipblas.so.3", "share/doc": f"{b}/share/doc"}
    assert (into / "lib" / "libamdhip64.so").read_text() == "lib/libamdhip64.so.7"  # the chain still resolves
    assert not (into / ".hidden").exists()  # `PATH/*` leaves a top-level dotfile out, as XLA's find does


def test_a_path_in_two_installations_is_refused_naming_both(tmp_path):
    a = tree(tmp_path / "a", ["lib/libamdhip64.so"])
    b = tree(tmp_path / "b", ["lib/libamdhip64.so"])
    message = error_of(ts.merge, [a, b], None, tmp_path / "m")
    assert message.startswith(f"TF_ROCM_MULTIPLE_PATHS: lib/libamdhip64.so is in both {a} and {b};")
    assert "remove one of them" in message
    assert not (tmp_path / "m").exists()  # refused before anything is written


def test_a_file_under_a_link_another_installation_made_is_an_overlap(tmp_path):
    a = tree(tmp_path / "a", ["real/x"])
    (a / "lib").symlink_to(a / "real")
    b = tree(tmp_path / "b", ["lib/libhipblas.so"])
    assert f"lib is in both {a} and {b}" in error_of(ts.merge, [a, b], None, tmp_path / "m")
    # and the other way round: a folder of the first, a link of the second
    assert f"lib is in both {b} and {a}" in error_of(ts.merge, [b, a], None, tmp_path / "m2")


def test_llvm_path_is_linked_as_llvm_lib_llvm_and_amdgcn(tmp_path):
    a = tree(tmp_path / "a", ["lib/libamdhip64.so"])
    llvm = tree(tmp_path / "llvm", ["bin/clang", "amdgcn/bitcode/ocml.bc"])
    into = tmp_path / "m"
    assert ts.merge([a], llvm, into) == 4
    assert linked(into) == {"amdgcn": f"{llvm}/amdgcn", "lib/libamdhip64.so": f"{a}/lib/libamdhip64.so",
                            "lib/llvm": str(llvm), "llvm": str(llvm)}
    assert (into / "lib" / "llvm" / "bin" / "clang").read_text() == "bin/clang"


def test_llvm_path_over_an_installations_llvm_is_an_overlap(tmp_path):
    a = tree(tmp_path / "a", ["llvm/bin/clang"])
    llvm = tree(tmp_path / "llvm", ["bin/clang"])
    assert error_of(ts.merge, [a], llvm, tmp_path / "m").startswith(f"LLVM_PATH: llvm is in both {a} and {llvm}")


def test_missing_paths_and_repeats_are_named(tmp_path):
    a = tree(tmp_path / "a", ["x"])
    assert error_of(ts.merge, [a, tmp_path / "gone"], None, tmp_path / "m").startswith(
        f"TF_ROCM_MULTIPLE_PATHS: {tmp_path / 'gone'} is not a directory")
    assert "more than once" in error_of(ts.merge, [a, tmp_path / "a" / "."], None, tmp_path / "m")
    assert error_of(ts.merge, [a], tmp_path / "nollvm", tmp_path / "m").startswith(f"LLVM_PATH={tmp_path / 'nollvm'} is not")
    tree(tmp_path / "m", ["old"])
    assert "is not an empty folder" in error_of(ts.merge, [a], None, tmp_path / "m")


# ---- which name decides ------------------------------------------------------------------


def test_xla_precedence_is_xlas_order_with_its_qualifiers():
    assert [(s.name, s.qualifiers) for s in ts.XLA_PRECEDENCE] == [
        ("ROCM_PATH", ()), ("TF_ROCM_MULTIPLE_PATHS", ("LLVM_PATH",)),
        ("ROCM_DISTRO_URL", ("ROCM_DISTRO_HASH", "ROCM_DISTRO_LINKS")), ("ROCM_DISTRO_VERSION", ())]


@pytest.mark.parametrize(("environ", "winner"), [
    ({}, None),
    ({"ROCM_DISTRO_VERSION": "v"}, "ROCM_DISTRO_VERSION"),
    ({"ROCM_DISTRO_VERSION": "v", "ROCM_DISTRO_URL": "u"}, "ROCM_DISTRO_URL"),
    ({"ROCM_DISTRO_VERSION": "v", "THEROCK_URL": "t"}, "THEROCK_URL"),
    ({"ROCM_DISTRO_URL": "u", "TF_ROCM_MULTIPLE_PATHS": "/a:/b"}, "TF_ROCM_MULTIPLE_PATHS"),
    ({"TF_ROCM_MULTIPLE_PATHS": "/a", "ROCM_PATH": "/opt/rocm"}, "ROCM_PATH"),
    ({"ROCM_PATH": " ", "ROCM_DISTRO_VERSION": "v"}, "ROCM_DISTRO_VERSION"),  # blank: cleared (--repo_env=ROCM_PATH=)
])
def test_the_first_name_set_in_xlas_order_decides(environ, winner):
    choice = ts.choose(environ)
    assert choice.winner == winner and choice.conflict is None
    assert choice.value == (environ[winner].strip() if winner else None)


def test_the_note_names_the_winner_the_order_and_what_is_not_used():
    choice = ts.choose({"ROCM_PATH": "/usr", "ROCM_DISTRO_VERSION": "rocm_7.13.0_gfx908", "HOME": "/root"})
    assert choice.losers == (("ROCM_DISTRO_VERSION", "rocm_7.13.0_gfx908"),)
    assert choice.note() == ("rocm_configure: ROCM_PATH=/usr decides the toolkit (XLA's order: ROCM_PATH, "
                             "TF_ROCM_MULTIPLE_PATHS, ROCM_DISTRO_URL, ROCM_DISTRO_VERSION); not used: "
                             "ROCM_DISTRO_VERSION=rocm_7.13.0_gfx908")
    assert ts.choose({"ROCM_PATH": "/usr"}).note() is None  # nothing to say


def test_a_losers_qualifiers_are_losers_and_a_lone_qualifier_is_an_orphan():
    choice = ts.choose({"ROCM_PATH": "/r", "ROCM_DISTRO_URL": "u", "ROCM_DISTRO_HASH": "h", "LLVM_PATH": "/l"})
    assert choice.losers == (("ROCM_DISTRO_URL", "u"), ("ROCM_DISTRO_HASH", "h"))
    assert choice.orphans == (("LLVM_PATH", "/l"),)
    assert choice.note().endswith("not used: ROCM_DISTRO_URL=u, ROCM_DISTRO_HASH=h, LLVM_PATH=/l (it qualifies "
                                  "TF_ROCM_MULTIPLE_PATHS, which is not set)")
    alone = ts.choose({"THEROCK_SHA256": "s"})
    assert alone.winner is None and alone.orphans == (("THEROCK_SHA256", "s"),)
    assert alone.note().startswith("rocm_configure: none of ROCM_PATH, ")
    assert "this project's THEROCK_URL ranks with ROCM_DISTRO_URL" in alone.note()


def test_both_tarball_names_are_a_conflict_unless_a_higher_name_decides():
    choice = ts.choose({"ROCM_DISTRO_URL": "u", "THEROCK_URL": "t", "ROCM_DISTRO_VERSION": "v"})
    assert choice.winner is None and choice.losers == (("ROCM_DISTRO_VERSION", "v"),)
    assert choice.conflict.startswith("ROCM_DISTRO_URL=u and THEROCK_URL=t both name the toolkit's tarball")
    assert "--repo_env=THEROCK_URL=" in choice.conflict and choice.note("ci_build").startswith("ci_build: ROCM_DISTRO_URL=u")
    above = ts.choose({"ROCM_DISTRO_URL": "u", "THEROCK_URL": "t", "ROCM_PATH": "/r"})
    assert above.winner == "ROCM_PATH" and above.conflict is None
    assert [n for n, _ in above.losers] == ["ROCM_DISTRO_URL", "THEROCK_URL"]


# ---- the command line --------------------------------------------------------------------


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The program as the repository rule runs it: python3 FILE ARGS, with only `env` (and PATH)."""
    return subprocess.run([sys.executable, str(PROGRAM), *args], capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ["PATH"], **(env or {})}, cwd=cwd)


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr.startswith("toolkit_sources: ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr.strip()


def test_cli_choose_reads_the_names_from_its_environment():
    result = cli("choose", env={"ROCM_PATH": "/usr", "ROCM_DISTRO_VERSION": "rocm_7.13.0_gfx908", "ROCM_DISTRO_URL": ""})
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["winner"] == "ROCM_PATH" and answer["value"] == "/usr"
    assert answer["losers"] == [["ROCM_DISTRO_VERSION", "rocm_7.13.0_gfx908"]]
    assert answer["note"].startswith("rocm_configure: ROCM_PATH=/usr decides the toolkit")
    assert json.loads(cli("choose").stdout) == {"winner": None, "value": None, "losers": [], "orphans": [],
                                                "conflict": None, "note": None}


def test_cli_choose_fails_on_a_conflict():
    error = one_line_error(cli("choose", env={"ROCM_DISTRO_URL": "u", "THEROCK_URL": "t"}))
    assert error.startswith("toolkit_sources: ROCM_DISTRO_URL=u and THEROCK_URL=t both name")


def test_cli_distro_answers_json_and_names_errors(tmp_path):
    table = tmp_path / "rocm_redist.bzl"
    table.write_text(TABLE)
    result = cli("distro", "--table", str(table), "--name", "linked")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"name": "linked", "url": "https://example.invalid/linked.tar.gz",
                                         "sha256": f"{2:064x}", "links": [["llvm/amdgcn", "amdgcn"]], "rocm_root": "top"}
    assert one_line_error(cli("distro", "--table", str(table), "--name", "x")).startswith(
        f"toolkit_sources: ROCM_DISTRO_VERSION=x is not in XLA's redistribution table ({table})")
    assert "cannot be read" in one_line_error(cli("distro", "--table", str(tmp_path / "none.bzl"), "--name", "x"))


def test_cli_merge_and_links(tmp_path):
    a = tree(tmp_path / "a", ["lib/libamdhip64.so", "llvm/amdgcn/x.bc"])
    b = tree(tmp_path / "b", ["lib/libhipblas.so"])
    result = cli("merge", "--into", "merged", str(a), str(b), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"files": 3}
    assert (tmp_path / "merged" / "lib" / "libhipblas.so").is_symlink()
    assert "names" in one_line_error(cli("merge", "--into", "m2", str(a), str(a), cwd=tmp_path))  # more than once
    assert "lib/libamdhip64.so is in both" in one_line_error(cli("merge", "--into", "m3", str(a), str(tmp_path / "merged"),
                                                                 cwd=tmp_path))
    result = cli("links", "--root", str(tmp_path / "merged"), "llvm/amdgcn:amdgcn")
    assert json.loads(result.stdout) == {"links": 1}
    assert (tmp_path / "merged" / "amdgcn" / "x.bc").read_text() == "llvm/amdgcn/x.bc"
    assert "is not a path inside" in one_line_error(cli("links", "--root", str(tmp_path), "/etc:etc"))


def test_cli_usage_errors_are_one_line_and_help_teaches():
    assert "toolkit_sources: " in one_line_error(cli("merge", "--into", "x"))  # no PATH
    assert "invalid choice" in one_line_error(cli("nonsense"))
    helped = cli("--help")
    assert helped.returncode == 0 and "XLA's order" in helped.stdout and "ROCM_DISTRO_LINKS" in helped.stdout
