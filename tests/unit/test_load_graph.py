"""The Starlark load graph between packages has no cycle.

Nodes are Bazel packages: this module's (`rocm`, `rocm/private`, `third_party/gpus` ...) and
those of the repositories its rules generate from templates (@local_config_rocm's root and
`rocm` packages, @zig_sdk), whose loads are read from the templates, placeholders resolved
through the substitutions the rules pass. Other repositories are leaves. The template map is
read from the repository rules' own `rctx.template` calls, so a new template is covered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, tracked

pytestmark = pytest.mark.unit

_LOAD = re.compile(r'^\s*load\(\s*"([^"]+)"', re.MULTILINE)
_SUBSTITUTION = re.compile(r'"(%\{\w+\})":\s*str\(Label\("([^"]+)"\)\)')

# The repository each template-writing rule file generates (the names its extension gives).
GENERATORS = {
    "third_party/gpus/rocm_configure.bzl": "local_config_rocm",
    "toolchains/manylinux/extensions.bzl": "zig_sdk",
}


def _files() -> list[Path]:
    """This module's .bzl and BUILD files (full/ is a module of its own; examples/ are stand-ins)."""
    return [CHECKOUT / f for f in tracked("*.bzl", "*BUILD", "*BUILD.bazel") if not f.startswith(("examples/", "full/"))]


def _package_of(path: Path) -> str:
    folder = path.parent
    while folder != CHECKOUT and not ((folder / "BUILD.bazel").exists() or (folder / "BUILD").exists()):
        folder = folder.parent
    return "//" + str(folder.relative_to(CHECKOUT)) if folder != CHECKOUT else "//"


def label_package(label: str, here: str) -> str:
    """The package a load label names, from a file in package `here` (`@repo//pkg`, `//pkg`)."""
    if label.startswith(":") or "//" not in label:
        return here
    repo, _, rest = label.partition("//")
    repo = repo.lstrip("@")
    package = "//" + rest.split(":")[0]
    if repo in ("", "jax_rocm_build"):
        return package.rstrip("/") if package != "//" else "//"
    return f"@{repo}{package}".rstrip("/") if package != "//" else f"@{repo}//"


def _generated_templates(rule_file: Path) -> dict[Path, str]:
    """template file -> the path it is written to in the generated repository."""
    text = rule_file.read_text()
    labels = dict(re.findall(r'"(\w+)":\s*Label\("//([^"]+)"\)', text))
    labels |= dict(re.findall(r'"(\w+)":\s*attr\.label\(default = Label\("//([^"]+)"\)', text))
    written = {}
    for out, listed, attribute in re.findall(r'rctx\.template\(\s*"([^"]+)",\s*(?:_TEMPLATES\["(\w+)"\]|rctx\.attr\.(\w+))', text):
        package, _, name = labels[listed or attribute].partition(":")
        written[CHECKOUT / package / name] = out
    return written


def load_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in _files():
        here = _package_of(path)
        for label in _LOAD.findall(path.read_text()):
            graph.setdefault(here, set()).add(label_package(label, here))
    for rule_file, repo in GENERATORS.items():
        rule = CHECKOUT / rule_file
        substitutions = dict(_SUBSTITUTION.findall(rule.read_text()))
        for template, out in _generated_templates(rule).items():
            folder = str(Path(out).parent)
            here = f"@{repo}//" + ("" if folder == "." else folder)
            for label in _LOAD.findall(template.read_text()):
                if label in substitutions:  # str(Label(...)) in the rule: this module's
                    label = substitutions[label]
                elif label.startswith("//"):  # written in the template: the generated repository's own
                    label = f"@{repo}{label}"
                assert "%{" not in label, f"{template}: load of {label}, which {rule_file} does not substitute with a Label"
                graph.setdefault(here, set()).add(label_package(label, here))
    for node in graph:
        graph[node].discard(node)
    return graph


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a path that returns to its start, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_label_package():
    assert label_package("//rocm/private:x.bzl", "//rocm") == "//rocm/private"
    assert label_package(":x.bzl", "//rocm") == "//rocm"
    assert label_package("@local_config_rocm//:build_defs.bzl", "//rocm") == "@local_config_rocm//"
    assert label_package("@local_config_rocm//rocm:build_defs.bzl", "//") == "@local_config_rocm//rocm"


def test_templates_are_read():
    graph = load_graph()
    # The generated repositories' loads are in the graph (else the test would see no cycle through them).
    assert "//rocm/private" in graph["@local_config_rocm//"]
    assert "//rocm/private" in graph["@local_config_rocm//rocm"]
    assert "//toolchains/manylinux" in graph["@zig_sdk//"]


def test_no_load_cycle_between_packages():
    graph = load_graph()
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_rocm_and_the_repository_rule_load_one_way():
    """rocm/ (the extension) loads the repository rule in third_party/gpus/; the rule's
    implementation never loads rocm/'s."""
    graph = load_graph()
    loads = {(a, b) for a, targets in graph.items() for b in targets}
    assert ("//rocm", "//third_party/gpus") in loads
    back = sorted((a, b) for a, b in loads if a.startswith("//third_party/gpus") and b.startswith("//rocm"))
    assert not back, back
