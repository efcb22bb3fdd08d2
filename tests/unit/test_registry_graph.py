"""tests/infra/registry_graph.py on inputs of the test's own making (the registry itself is the gated tier's)."""

from __future__ import annotations

import json

import pytest

from tests.infra import registry_graph
from tests.infra.real_trees import CHECKOUT

pytestmark = pytest.mark.unit

# `bazel mod graph --include_builtin` of Bazel 7.7.1, cut down.
GRAPH = """<root> (jax_rocm_build@0.0.0)
├───bazel_tools@_
│   ├───rules_java@7.6.5
│   │   └───bazel_features@1.27.0
│   └───zlib@1.3.1.bcr.3
├───local_config_platform@_
├───rules_cc@0.0.11
│   └───platforms@0.0.10 (*)
└───rules_proto@5.3.0-21.7
    └───protobuf@21.7 (cycle)
"""


def test_the_graph_names_each_module_with_a_version_once():
    assert registry_graph.selected_versions(GRAPH) == {
        "rules_java": "7.6.5", "bazel_features": "1.27.0", "zlib": "1.3.1.bcr.3", "rules_cc": "0.0.11",
        "platforms": "0.0.10", "rules_proto": "5.3.0-21.7", "protobuf": "21.7"}


def test_the_front_registry_gives_the_laid_out_versions_as_local_paths_and_nothing_else(tmp_path):
    registry, modules = tmp_path / "registry", tmp_path / "modules"
    for name, version in (("rules_cc", "0.0.11"), ("rules_cc", "0.0.9"), ("upb", "0.0.0-20220923-a547704"),
                          ("abseil-cpp", "20211102.0")):
        (registry / "modules" / name / version).mkdir(parents=True)
        (registry / "modules" / name / version / "MODULE.bazel").write_text(f'module(name = "{name}", version = "{version}")\n')
        (registry / "modules" / name / "metadata.json").write_text('{"versions": []}\n')
    for folder in ("rules_cc-0.0.11", "upb-0.0.0-20220923-a547704", "abseil-cpp-20211102.0", "rules_cc-9.9",
                   "bazel_features-repositories-7.7.1"):
        (modules / folder).mkdir(parents=True)
    (modules / "stray.txt").write_text("")
    files = registry_graph.local_sources(registry, modules)
    assert sorted(files) == ["bazel_registry.json", "modules/abseil-cpp/20211102.0/MODULE.bazel",
                             "modules/abseil-cpp/20211102.0/source.json", "modules/abseil-cpp/metadata.json",
                             "modules/rules_cc/0.0.11/MODULE.bazel", "modules/rules_cc/0.0.11/source.json",
                             "modules/rules_cc/metadata.json", "modules/upb/0.0.0-20220923-a547704/MODULE.bazel",
                             "modules/upb/0.0.0-20220923-a547704/source.json", "modules/upb/metadata.json"]
    assert json.loads(files["modules/rules_cc/0.0.11/source.json"]) == {"type": "local_path", "path": str(modules / "rules_cc-0.0.11")}
    assert files["modules/rules_cc/0.0.11/MODULE.bazel"] == 'module(name = "rules_cc", version = "0.0.11")\n'


def test_debians_package_versions_are_read_as_the_upstream_ones():
    dpkg = "bazel-skylib 1.9.1-2\nbazel-features 1.11.0-2\nbazel-bootstrap 7.7.1+ds-8+b1\nbazel-rules-cc 1:0.0.11+dfsg-3\n"
    assert registry_graph.debian_stand_ins(dpkg) == {"bazel_skylib": "1.9.1", "bazel_features": "1.11.0", "rules_cc": "0.0.11"}
    assert registry_graph.debian_version("7.7.1+ds-8") == "7.7.1"


def test_module_files_are_read_for_their_deps_and_their_version():
    text = ('module(\n    name = "zlib",\n    version = "1.3.1.bcr.3",\n)\n'
            'bazel_dep(name = "platforms", version = "0.0.10")\nbazel_dep(name = "rules_cc", version = "0.0.11", dev_dependency = True)\n')
    assert registry_graph.module_version(text) == "1.3.1.bcr.3"
    assert registry_graph.module_version('bazel_dep(name = "a", version = "1")\n') == ""
    assert registry_graph.root_deps(text) == {"platforms": "0.0.10", "rules_cc": "0.0.11"}


def test_the_documented_table_holds_what_module_bazel_asks_for_directly():
    """What the gated test measures in full; here, that docs/registry.md keeps up with MODULE.bazel."""
    table = registry_graph.documented((CHECKOUT / "docs" / "registry.md").read_text())
    wanted = registry_graph.root_deps((CHECKOUT / "MODULE.bazel").read_text())
    assert wanted and {name: table[name][0] for name in wanted} == wanted
    assert all(offline == "none" or offline.split()[0] in ("Debian", "tools/offline") for _, offline in table.values())
