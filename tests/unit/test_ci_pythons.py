"""The Pythons ci_build builds plugin wheels for follow the JAX tree it builds (issue 54, item 6):
the tree's own list, one build/requirements_lock_3_NN.txt per Python
(third_party/private/source_tree.py's pythons_of), not one fixed list. --jax-source-dir's tree
is read, examples/jax carries the list of the 0.10.2 it stands in for, and the pin records its
archive's (third_party/jax/pin.json, written by tools/update_pins.py). Nothing here runs the
sandbox, Bazel or the network."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ci_build_cli import cli, full, pythons, sources
from tests.conftest import CHECKOUT, EXAMPLES_JAX, bazel_build, require_jax_tree
from tests.infra.archives import tar_of, zip_of
from third_party.private import source_tree

pytestmark = pytest.mark.unit

PIN = json.loads((CHECKOUT / "third_party" / "jax" / "pin.json").read_text())
# What JAX 0.11.0's tree holds of what is read here (file names as JAX has them; the contents
# are this test's own): it builds for 3.12 to 3.14, and 3.14 free-threaded too.
JAX_0_11 = {"jax/version.py": '_version = "0.11.0"\n', "jaxlib/gpu/prng.cc": "// prng",
            **{f"build/requirements_lock_{v}.txt": "# a lock\n" for v in ("3_12", "3_13", "3_14", "3_14_ft")},
            "build/requirements.in": "numpy\n", "build/nvidia-requirements.txt": "\n"}


def tree_of(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def entries(files: dict[str, str], top: str = "jax-jax-v0.11.0/") -> list:
    return [(top + name, "file", text.encode()) for name, text in files.items()]


# --- the reading: one pure function of the tree's file names ---------------------------------


def test_each_lock_file_is_a_python_free_threaded_ones_and_other_files_are_not():
    names = ["build/requirements_lock_3_12.txt", "build/requirements_lock_3_9.txt", "build/requirements_lock_3_14_ft.txt",
             "build/requirements_lock_3_11.txt.orig", "build/requirements.in", "other/build/requirements_lock_3_15.txt",
             "build/requirements_lock_3_13.txt", "requirements_lock_3_10.txt"]
    assert source_tree.pythons_of(names) == ("3.9", "3.12", "3.13")  # oldest first, as numbers: 3.9 before 3.12
    assert source_tree.pythons_of(names + names) == ("3.9", "3.12", "3.13")
    assert source_tree.pythons_of(["jax/version.py"]) == ()


@pytest.mark.parametrize("form", ["checkout", "tar", "zip"])
def test_a_checkout_and_an_archive_of_it_name_the_same_pythons(tmp_path, form):
    if form == "checkout":
        tree = tree_of(tmp_path / "jax", JAX_0_11)
    else:
        tree = (tar_of if form == "tar" else zip_of)(tmp_path / f"jax.{'tar.gz' if form == 'tar' else 'zip'}", entries(JAX_0_11))
    assert source_tree.tree_pythons(tree) == ("3.12", "3.13", "3.14")
    assert source_tree.identify(tree)[0] == "0.11.0"


def test_a_tree_without_lock_files_names_none(tmp_path):
    assert source_tree.tree_pythons(tree_of(tmp_path / "jax", {"jax/version.py": '_version = "0.11.0"\n'})) == ()
    assert source_tree.tree_pythons(tar_of(tmp_path / "jax.tar.gz", entries({"jaxlib/gpu/x.cc": "//"}))) == ()


def test_examples_jax_and_the_pin_name_the_pythons_of_the_release_they_are():
    """The stand-in carries the list of JAX 0.10.2, the release it stands in for, which is the
    pin's: the same Pythons, whichever of the two a build takes."""
    assert source_tree.identify(EXAMPLES_JAX)[0] == PIN["release"] == "0.10.2"
    assert source_tree.tree_pythons(EXAMPLES_JAX) == tuple(PIN["pythons"]) == ("3.11", "3.12", "3.13", "3.14")
    assert sources.jax_pythons(sources.EXAMPLE_TREES["jax"]) == sources.JaxPythons(
        ("3.11", "3.12", "3.13", "3.14"), "0.10.2", "examples/jax, the stand-in")
    assert str(sources.jax_pythons(None)) == "JAX 0.10.2 (the pin, third_party/jax/pin.json)"


def test_the_stand_in_lock_files_are_its_own():
    for lock in sorted((EXAMPLES_JAX / "build").iterdir()):
        assert lock.read_text().startswith("# examples/jax stand-in (not JAX's file)."), lock


def test_a_real_jax_tree_names_the_pythons_its_jaxlib_says_it_supports():
    """Gated: the tree JAX_ROCM_TEST_JAX_TREE names (a checkout or archive). Its lock files
    name the Pythons jaxlib's own metadata lists (jaxlib/setup.py's classifiers); at the pin's
    release, the ones the pin records."""
    tree = require_jax_tree()
    found = source_tree.tree_pythons(tree)
    assert found and all(re.fullmatch(r"3\.\d+", v) for v in found), found
    setup = source_tree.read_files(tree, ["jaxlib/setup.py"])["jaxlib/setup.py"].decode()
    assert found == tuple(sorted(set(re.findall(r"Programming Language :: Python :: (3\.\d+)", setup)),
                                 key=lambda v: int(v.split(".")[1])))
    if source_tree.identify(tree)[0] == PIN["release"]:
        assert found == tuple(PIN["pythons"])


# --- ci_build: --python-versions refused in one line, the default chosen from the tree --------


def one_line(capsys) -> str:
    err = capsys.readouterr().err.splitlines()
    said = [line for line in err if line.startswith("ci_build:")]
    assert len(said) == 1 and err[-1] == said[0], err
    return said[0]


@pytest.fixture
def jax_0_11(tmp_path) -> Path:
    return tree_of(tmp_path / "jax", JAX_0_11)


@pytest.mark.parametrize("form", ["checkout", "archive"])
def test_python_3_11_is_refused_for_jax_0_11_in_one_line_before_anything_runs(recorded, capsys, monkeypatch, jax_0_11,
                                                                              tmp_path, form):
    tree = jax_0_11 if form == "checkout" else tar_of(tmp_path / "jax-v0.11.0.tar.gz", entries(JAX_0_11))
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: pytest.fail("the sandbox was asked for its Pythons"))
    assert cli.main(["--sources=examples", f"--jax-source-dir={tree}", "--dry-run", "dist_wheels",
                     "--python-versions=3.11"]) == 2
    assert one_line(capsys) == (f"ci_build: --python-versions=3.11: JAX 0.11.0 (--jax-source-dir={tree}) builds jaxlib for "
                                "Python 3.12, 3.13 and 3.14, not 3.11: name some of those, or give a JAX tree that "
                                "supports 3.11 (--jax-source-dir=PATH)")
    assert recorded == []


@pytest.mark.parametrize("sources_flags, named", [([], "JAX 0.10.2 (the pin, third_party/jax/pin.json)"),
                                                   (["--sources=examples"], "JAX 0.10.2 (examples/jax, the stand-in)")])
def test_python_3_15_is_refused_for_jax_0_10_2(recorded, capsys, sources_flags, named):
    assert cli.main([*sources_flags, "--dry-run", "dist_wheels", "--python-versions=3.14,3.15"]) == 2
    assert one_line(capsys) == (f"ci_build: --python-versions=3.14,3.15: {named} builds jaxlib for Python 3.11, 3.12, 3.13 "
                                "and 3.14, not 3.15: name some of those, or give a JAX tree that supports 3.15 "
                                "(--jax-source-dir=PATH)")
    assert recorded == []


def test_python_3_15_is_built_for_a_tree_that_supports_it(recorded, capsys, monkeypatch, jax_0_11):
    (jax_0_11 / "build" / "requirements_lock_3_15.txt").write_text("# a lock\n")
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [pythons.Interpreter("3.14", "/usr/bin/python3.14", None),
                                                                   pythons.Interpreter("3.15", "/usr/bin/python3.15", None)])
    assert cli.main(["--sources=examples", f"--jax-source-dir={jax_0_11}", "--dry-run", "dist_wheels",
                     "--python-versions=3.15"]) == 0
    assert "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.15" in bazel_build(recorded)


def test_without_the_flag_the_pythons_found_are_those_the_tree_builds_for(recorded, capsys, monkeypatch, jax_0_11):
    """JAX 0.11 builds for 3.12 to 3.14: a 3.11 found is left alone (and not mounted), the 3.12
    missing is named; the pin's 0.10.2 takes the same 3.11."""
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [
        pythons.Interpreter("3.11", "/opt/py311/bin/python3.11", "/opt/py311"),
        pythons.Interpreter("3.13", "/usr/bin/python3.13", None), pythons.Interpreter("3.14", "/usr/bin/python3.14", None)])
    assert cli.main(["--sources=examples", f"--jax-source-dir={jax_0_11}", "--dry-run", "dist_wheels"]) == 0
    err = capsys.readouterr().err
    build = bazel_build(recorded)
    assert "--repo_env=JAX_ROCM_PYTHON=/usr/bin/python3.13,/usr/bin/python3.14" in build and "/opt/py311" not in build
    assert [v for v in ("3.11", "3.12", "3.13", "3.14", "3.15") if f"Python {v} left out" in err] == ["3.12"]
    recorded.clear()
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels"]) == 0
    assert "--repo_env=JAX_ROCM_PYTHON=/opt/py311/bin/python3.11,/usr/bin/python3.13,/usr/bin/python3.14" in \
        bazel_build(recorded)


def test_a_tree_that_records_no_pythons_has_the_pins_and_the_line_says_so(recorded, capsys, tmp_path):
    tree = tree_of(tmp_path / "jax", {"jax/version.py": '_version = "0.11.0"\n', "jaxlib/gpu/prng.cc": "//"})
    assert cli.main(["--sources=examples", f"--jax-source-dir={tree}", "--dry-run", "dist_wheels",
                     "--python-versions=3.15"]) == 2
    assert one_line(capsys).startswith(f"ci_build: --python-versions=3.15: JAX 0.11.0 (--jax-source-dir={tree}, which "
                                       "records no build/requirements_lock_3_NN.txt: the pin's Pythons, "
                                       "third_party/jax/pin.json) builds jaxlib for Python 3.11, 3.12, 3.13 and 3.14, not "
                                       "3.15")


def test_full_mode_builds_native_for_the_sandboxs_first_python_the_tree_builds_for(monkeypatch, jax_0_11, tmp_path):
    (tmp_path / "xla" / "xla").mkdir(parents=True)
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [
        pythons.Interpreter("3.11", "/usr/bin/python3.11", None), pythons.Interpreter("3.12", "/opt/py/bin/python3.12", "/opt/py"),
        pythons.Interpreter("3.13", "/usr/bin/python3.13", None)])
    request = cli.parse_args([f"--xla-source-dir={tmp_path / 'xla'}", f"--jax-source-dir={jax_0_11}", "--dry-run", "native"])
    assert full.sandbox_python(request).version == "3.13"
    pinned = cli.parse_args([f"--xla-source-dir={tmp_path / 'xla'}", "--dry-run", "native"])
    assert full.sandbox_python(pinned).version == "3.11"
    monkeypatch.setattr(pythons, "find_interpreters", lambda **_: [pythons.Interpreter("3.11", "/usr/bin/python3.11", None)])
    with pytest.raises(cli.inputs.InputError, match=re.escape(
            f"JAX 0.11.0 (--jax-source-dir={jax_0_11}) builds jaxlib for Python 3.12, 3.13, 3.14, and the sandbox has none "
            "of them (it has 3.11)")):
        full.sandbox_python(request)
