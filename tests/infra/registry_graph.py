"""This project's module graph as a networked user resolves it, read and compared offline.

A networked user's bazelisk resolves MODULE.bazel against the Bazel Central Registry; offline,
Debian's Bazel overrides eight rule sets with its own copies and tools/offline stands in for
four more. The gated test tests/bazel/test_registry_graph.py resolves the graph against a
registry checkout with no override, compares it with docs/registry.md (the versions a networked
user gets, each beside its offline stand-in) and analyses the wheels with those versions'
sources. These are its pure parts: the registry it puts in front of the checkout (each version
laid out locally by tests/infra/real_trees.py --graph-module, as a `local_path` source, so that Bazel
resolves exactly as the registry says and fetches nothing), and readers of `bazel mod graph`,
of the table in docs/registry.md and of Debian's package versions.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# Debian's packages of the modules its /etc/bazel/bazelrc overrides (bazel-bootstrap 7.7.1).
DEBIAN_PACKAGES = {
    "bazel-platforms": "platforms",
    "bazel-rules-cc": "rules_cc",
    "bazel-rules-java": "rules_java",
    "bazel-rules-python": "rules_python",
    "bazel-rules-proto": "rules_proto",
    "bazel-rules-license": "rules_license",
    "bazel-skylib": "bazel_skylib",
    "bazel-features": "bazel_features",
}


def local_sources(registry: Path, modules: Path) -> dict[str, str]:
    """The files of a registry to put in front of `registry` (--registry=file://this
    --registry=file://registry): for each folder NAME-VERSION of `modules` whose version the
    registry holds, the registry's own MODULE.bazel and metadata.json and a source.json taking
    the folder as a local_path. Bazel asks registries in order, so every other version comes
    from `registry` unchanged, and resolution is the registry's. By relative path."""
    files: dict[str, str] = {"bazel_registry.json": "{}\n"}
    for tree in sorted(p for p in modules.iterdir() if p.is_dir()):
        # Names (abseil-cpp) and versions (5.3.0-21.7) both hold dashes: the split the registry has.
        splits = [(tree.name[:i], tree.name[i + 1:]) for i, c in enumerate(tree.name) if c == "-"]
        found = [(n, v) for n, v in splits if (registry / "modules" / n / v / "MODULE.bazel").is_file()]
        if not found:
            continue
        name, version = found[0]
        version_dir = registry / "modules" / name / version
        files[f"modules/{name}/{version}/MODULE.bazel"] = (version_dir / "MODULE.bazel").read_text()
        files[f"modules/{name}/{version}/source.json"] = json.dumps({"type": "local_path", "path": str(tree)}) + "\n"
        files[f"modules/{name}/metadata.json"] = (registry / "modules" / name / "metadata.json").read_text()
    return files


def selected_versions(graph: str) -> dict[str, str]:
    """Module name -> version of the modules `bazel mod graph` prints (the root and builtin
    modules, which have no version, left out)."""
    found = {}
    for line in graph.splitlines():
        match = re.search(r"([A-Za-z0-9_.-]+)@(\S+)", line)
        if match and not line.startswith("<root>") and match.group(2) != "_":
            found[match.group(1)] = match.group(2)
    return found


def root_deps(module_bazel: str) -> dict[str, str]:
    """The bazel_dep(name, version) of a MODULE.bazel, by name."""
    deps = {}
    for call in re.findall(r"bazel_dep\(([^)]*)\)", module_bazel):
        args = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', call))
        deps[args["name"]] = args.get("version", "")
    return deps


def debian_version(package_version: str) -> str:
    """The upstream version of a Debian package version: 1.9.1-2 -> 1.9.1, 7.7.1+ds-8 -> 7.7.1."""
    version = package_version.split(":", 1)[-1].rsplit("-", 1)[0]
    return re.sub(r"[+~](ds|dfsg)\d*$", "", version)


def debian_stand_ins(dpkg_query: str) -> dict[str, str]:
    """Module name -> upstream version of Debian's copies, from `dpkg-query -W` lines (package version)."""
    found = {}
    for line in dpkg_query.splitlines():
        package, _, version = line.strip().partition(" ")
        if package in DEBIAN_PACKAGES and version:
            found[DEBIAN_PACKAGES[package]] = debian_version(version)
    return found


def documented(markdown: str) -> dict[str, tuple[str, str]]:
    """docs/registry.md's table: module -> (the networked version, the offline stand-in as
    `Debian VERSION`, `tools/offline VERSION` or `none`)."""
    rows = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"`[\w.-]+`", cells[0]):
            rows[cells[0].strip("`")] = (cells[1].strip("`"), cells[2].replace("`", ""))
    return rows


def module_version(module_bazel: str) -> str:
    """The version a MODULE.bazel's module() declares ('' when it declares none)."""
    call = re.search(r"\bmodule\(([^)]*)\)", module_bazel)
    version = re.search(r'\bversion\s*=\s*"([^"]*)"', call.group(1)) if call else None
    return version.group(1) if version else ""
