"""One way to import the project's Python: the checkout is the package root (docs/layout.md).

No file edits sys.path or loads a module by its file path, no module is a symlink, and every
module of the checkout's packages imports by its full name from the checkout alone.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, SOURCE_CHECKOUT, tracked

pytestmark = pytest.mark.unit

SYS_PATH_EDIT = re.compile(r"sys\.path\.(?:insert|append|extend|remove)\(|sys\.path\s*(?:\[[^\]]*\])?\s*\+?=(?!=)|site\.addsitedir\(")
LOAD_BY_PATH = re.compile(r"spec_from_file_location|SourceFileLoader|runpy\.run_path|imp\.load_source")
# The packages of the checkout whose modules must import by name (their __main__ modules run).
PACKAGES = ("build", "sandbox", "tools", "wheel", "bench", "third_party/gpus", "tests/infra")


def python_files() -> list[Path]:
    """Every Python file of the checkout but the stand-ins' and this test (its patterns)."""
    files = [CHECKOUT / f for f in tracked("*.py") if not f.startswith("examples/") and f != "tests/unit/test_python_imports.py"]
    # Python programs without the suffix.
    return files + [CHECKOUT / "build" / "ci_build", CHECKOUT / "tools" / "bazel"]


def test_the_patterns_catch_an_edit_and_a_load_by_path():
    assert SYS_PATH_EDIT.search("sys.path.insert(0, here)") and SYS_PATH_EDIT.search("sys.path[:0] = [x]")
    assert SYS_PATH_EDIT.search("sys.path += [x]") and not SYS_PATH_EDIT.search("if x in sys.path: pass")
    assert not SYS_PATH_EDIT.search("assert sys.path == before")
    assert LOAD_BY_PATH.search("importlib.util.spec_from_file_location(name, path)")


def test_no_file_edits_sys_path():
    offenders = [f"{f.relative_to(CHECKOUT)}:{n}" for f in python_files()
                 for n, line in enumerate(f.read_text().splitlines(), 1) if SYS_PATH_EDIT.search(line)]
    assert not offenders, offenders


def test_no_module_is_loaded_by_its_path():
    offenders = [f"{f.relative_to(CHECKOUT)}:{n}" for f in python_files()
                 for n, line in enumerate(f.read_text().splitlines(), 1) if LOAD_BY_PATH.search(line)]
    assert not offenders, offenders


def test_no_module_is_a_symlink():
    out = subprocess.run(["git", "ls-files", "-s"], cwd=CHECKOUT, capture_output=True, text=True, check=True).stdout
    links = [line.split("\t", 1)[1] for line in out.splitlines() if line.startswith("120000 ") and line.endswith(".py")]
    assert not links, links


def modules_of_packages() -> list[str]:
    names = []
    for package in PACKAGES:
        for f in tracked(f"{package}/*.py"):
            if f.endswith("/__main__.py") or f.startswith("examples/"):
                continue
            names.append(f.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
    return sorted(names)


@pytest.mark.parametrize("name", modules_of_packages())
def test_every_module_imports_by_its_name(name):
    module = importlib.import_module(name)
    assert Path(module.__file__).resolve().is_relative_to(SOURCE_CHECKOUT.resolve())


@pytest.mark.parametrize("package", ["build", "wheel", "tools"])
def test_our_packages_are_not_pypas(package):
    """build/, wheel/ and tools/ are regular packages: PyPA's `wheel` (installed in the test venv)
    and `build` cannot stand in for them."""
    module = importlib.import_module(package)
    assert module.__file__ is not None and Path(module.__file__).parent.resolve() == (SOURCE_CHECKOUT / package).resolve()


def test_ci_build_runs_from_another_folder(tmp_path):
    """build/ci_build, the one program run by its path, finds its package from anywhere, and a
    `build/` package in the caller's folder does not stand in for the checkout's."""
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "__init__.py").write_text("raise ImportError('the caller\\'s build/ was imported')\n")
    result = subprocess.run([sys.executable, str(CHECKOUT / "build" / "ci_build"), "--help"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: build/ci_build")


def module_imports(path: Path, name: str) -> set[str]:
    """The checkout's modules `path` (module `name`) imports, those under TYPE_CHECKING included:
    each `import a.b`, `from a.b import c` (a.b.c where that is a module) and relative import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def checkout_modules() -> dict[str, Path]:
    modules = {}
    for relative in tracked("*.py"):
        if relative.startswith(("examples/", "full/")) or not relative.startswith(PACKAGES):
            continue
        parts = relative.removesuffix(".py").split("/")
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = CHECKOUT / relative
    return modules


def import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    return next((c for n in sorted(graph) if n not in state and (c := visit(n))), None)


def test_the_import_cycle_scan_finds_one():
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b"}, "b": set()}) is None


def test_no_two_modules_import_each_other_even_for_types():
    """The modules of the checkout's packages import in one direction: no cycle, counting imports
    made only for type checking (a Request's field typed by a module that imports request.py)."""
    modules = checkout_modules()
    graph = {name: {m for m in module_imports(path, name) if m in modules and m != name} for name, path in modules.items()}
    assert len(graph) > 80 and graph["build.ci_build_cli.cli"]
    assert import_cycle(graph) is None
