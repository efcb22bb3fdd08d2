"""How the project's Python imports (docs/layout.md): three roots, named once
(tools/modules.PYTHON_ROOTS: the checkout, build/, wheel/private/), layers that import downward.

No file edits sys.path or loads a module by its file path, no module is a symlink, every module
imports by its name from the roots alone, PyPA's `build` and `wheel` are what those names find
with every root on the path, and the import graph has no circle and no edge from a lower layer up.
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
from tools.modules import CHECKOUT as ROOTS_CHECKOUT, PYTHON_ROOTS, python_roots

pytestmark = pytest.mark.unit

SYS_PATH_EDIT = re.compile(r"sys\.path\.(?:insert|append|extend|remove)\(|sys\.path\s*(?:\[[^\]]*\])?\s*\+?=(?!=)|site\.addsitedir\(")
LOAD_BY_PATH = re.compile(r"spec_from_file_location|SourceFileLoader|runpy\.run_path|imp\.load_source")
# The folders whose modules must import by name (their __main__ modules run), each under its root.
PACKAGES = ("build/ci_build_cli", "wheel/private", "sandbox", "tools", "bench", "third_party/gpus", "third_party/private",
            "tests/infra")
# The layers, lowest first: a module imports only from its own layer and those below it.
# third_party/ and wheel/private/ are the programs Bazel runs (stdlib and their declared
# dependencies alone); the sandbox is ci_build's run-time; tools/, what every program shares and
# the developer tools; ci_build_cli, the CLI; tests/ and bench/, what checks them all.
LAYERS = (("third_party", "runpath", "wheel_builder", "pytest_rocm"), ("sandbox",), ("tools",), ("ci_build_cli",),
          ("tests", "bench"))

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


def module_name(relative: str) -> str:
    """The module a tracked file is, under the deepest of the Python roots holding it."""
    folders = [r.relative_to(ROOTS_CHECKOUT).as_posix() for r in PYTHON_ROOTS if r != ROOTS_CHECKOUT]
    root = max((f for f in folders if relative.startswith(f + "/")), key=len, default="")
    parts = relative[len(root) + 1 if root else 0:].removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_a_file_is_named_by_its_root():
    assert module_name("build/ci_build_cli/cli.py") == "ci_build_cli.cli"
    assert module_name("build/ci_build_cli/__init__.py") == "ci_build_cli"
    assert module_name("wheel/private/runpath.py") == "runpath"
    assert module_name("sandbox/cache.py") == "sandbox.cache" and module_name("tests/run.py") == "tests.run"


def modules_of_packages() -> list[str]:
    return sorted(module_name(f) for package in PACKAGES for f in tracked(f"{package}/*.py") if not f.endswith("/__main__.py"))

@pytest.mark.parametrize("name", modules_of_packages())
def test_every_module_imports_by_its_name(name):
    module = importlib.import_module(name)
    assert Path(module.__file__).resolve().is_relative_to(SOURCE_CHECKOUT.resolve())


def test_pypas_build_and_wheel_are_what_their_names_import_with_every_root_on_the_path(tmp_path):
    """build/ and wheel/ are folders, not packages: a Python with the project's roots on its path
    (as every program of the project runs) imports PyPA's `build` and `wheel` (both in the test
    venv), and the project's own modules beside them."""
    probe = ("import build, wheel, wheel.wheelfile, ci_build_cli.cli, runpath; "
             "print(build.__file__, wheel.__file__, ci_build_cli.cli.__file__, runpath.__file__)")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(python_roots(SOURCE_CHECKOUT))}
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    build, wheel, cli, runpath = map(Path, result.stdout.split())
    for pypa in (build, wheel):
        assert "site-packages" in pypa.parts and not pypa.is_relative_to(SOURCE_CHECKOUT), pypa
    assert cli == SOURCE_CHECKOUT / "build" / "ci_build_cli" / "cli.py"
    assert runpath == SOURCE_CHECKOUT / "wheel" / "private" / "runpath.py"
    assert not (SOURCE_CHECKOUT / "build" / "__init__.py").exists() and not (SOURCE_CHECKOUT / "wheel" / "__init__.py").exists()


def test_ci_build_puts_exactly_the_python_roots_on_the_path(tmp_path):
    """build/ci_build spells the roots before any module can be imported: the list it gives
    ci_build is tools/modules.PYTHON_ROOTS (a sitecustomize on the caller's PYTHONPATH reports it in
    the Python the launcher starts, the first whose PYTHONPATH is longer than the caller's)."""
    report = "import os\nif os.pathsep in os.environ['PYTHONPATH']:\n    print(os.environ['PYTHONPATH'], flush=True)\n    os._exit(0)\n"
    (tmp_path / "sitecustomize.py").write_text(report)
    result = subprocess.run([sys.executable, str(CHECKOUT / "build" / "ci_build"), "--help"], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().split(":") == [*python_roots(CHECKOUT), str(tmp_path)]


def test_ci_build_runs_from_another_folder(tmp_path):
    """build/ci_build, the one program run by its path, finds its package from anywhere, and a
    `ci_build_cli/` or `third_party/` package in the caller's folder does not stand in for the checkout's."""
    for name in ("ci_build_cli", "third_party"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('the caller\\'s {name}/ was imported')\n")
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
    return {module_name(relative): CHECKOUT / relative for package in PACKAGES + ("tests",)
            for relative in tracked(f"{package}/*.py")}


def import_graph() -> dict[str, set[str]]:
    modules = checkout_modules()
    return {name: {m for m in module_imports(path, name) if m in modules and m != name} for name, path in modules.items()}

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
    graph = import_graph()
    assert len(graph) > 80 and graph["ci_build_cli.cli"]
    assert import_cycle(graph) is None


def layer_of(module: str) -> int:
    top = module.split(".")[0]
    return next(rank for rank, names in enumerate(LAYERS) if top in names)


def upward_edges(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if layer_of(b) > layer_of(a))


def test_the_layer_scan_finds_an_upward_edge():
    assert upward_edges({"tools.prefetch": {"ci_build_cli.full"}, "ci_build_cli.full": {"sandbox.cache"}}) == [
        "tools.prefetch -> ci_build_cli.full"]
    assert upward_edges({"sandbox.cli": {"runpath"}}) == []


def test_no_import_runs_from_a_lower_layer_up():
    """What Bazel runs imports nothing of the project; the sandbox nothing above it; tools/
    nothing of the CLI; the CLI nothing of the tests (docs/layout.md draws the layers)."""
    graph = import_graph()
    assert {layer_of(m) for m in graph} == set(range(len(LAYERS))), "every layer has modules"
    assert not upward_edges(graph), upward_edges(graph)
