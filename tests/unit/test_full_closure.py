"""ci_build_cli/full_closure.py: which rules of a partly loaded graph can build, and what a build made of them."""

from __future__ import annotations

import json

import pytest

from ci_build_cli import full_closure

pytestmark = pytest.mark.unit

# deps(//p:plugin) as `bazel query --keep_going --output=xml` gives it when @llvm-project failed to load:
# the rules that name its labels are listed, the labels themselves are not.
QUERY = """<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
  <rule class="cc_library" location="/x/p/BUILD:1:1" name="//p:plugin">
    <rule-input name="//p:executor"/><rule-input name="//p:compiler"/>
  </rule>
  <rule class="cc_library" location="/x/p/BUILD:5:1" name="//p:executor">
    <rule-input name="//p:status"/><rule-input name="//p:sort_kernel"/><rule-input name="//p:executor.cc"/>
  </rule>
  <rule class="rocm_library" location="/x/p/BUILD:9:1" name="//p:sort_kernel"><rule-input name="//p:status"/></rule>
  <rule class="cc_library" location="/x/p/BUILD:12:1" name="//p:status"/>
  <rule class="cc_library" location="/x/p/BUILD:14:1" name="//p:compiler">
    <rule-input name="//p:ir"/><rule-input name="//p:status"/>
  </rule>
  <rule class="cc_library" location="/x/p/BUILD:18:1" name="//p:ir">
    <rule-input name="@llvm-project//mlir:IR"/><rule-input name="@llvm-project//llvm:Support"/>
  </rule>
  <source-file location="/x/p/executor.cc:1:1" name="//p:executor.cc"/>
</query>
"""


def test_a_rule_is_in_the_closure_only_if_nothing_below_it_failed_to_load():
    graph = full_closure.Graph.from_xml(QUERY)
    found = full_closure.closure(graph)
    assert found.rules == ("//p:compiler", "//p:executor", "//p:ir", "//p:plugin", "//p:sort_kernel", "//p:status")
    assert found.free == ("//p:executor", "//p:sort_kernel", "//p:status")
    assert found.cut_by == {"@llvm-project//mlir": 1, "@llvm-project//llvm": 1}
    assert found.path_to_unloaded(graph, "//p:plugin") == ["//p:plugin", "//p:compiler", "//p:ir", "@llvm-project//mlir:IR"]
    assert found.path_to_unloaded(graph, "//p:executor") == []


def test_a_deep_chain_is_walked_without_recursion():
    chain = "".join(f'<rule class="cc_library" name="//d:n{i}"><rule-input name="//d:n{i + 1}"/></rule>' for i in range(5000))
    graph = full_closure.Graph.from_xml(f'<query>{chain}<rule class="cc_library" name="//d:n5000">'
                                        '<rule-input name="@llvm-project//llvm:Support"/></rule></query>')
    assert full_closure.closure(graph).free == ()


def test_each_requested_targets_result_and_the_first_cause_of_a_failure_are_read_from_the_events(tmp_path):
    events = [
        {"id": {"started": {}}, "started": {"command": "build"}},
        {"id": {"targetCompleted": {"label": "@@xla~//p:status", "configuration": {"id": "c"}}}, "completed": {"success": True}},
        {"id": {"targetCompleted": {"label": "@@xla~//p:windows", "configuration": {"id": "c"}}},
         "children": [{"actionCompleted": {"primaryOutput": "x.o", "label": "@@xla~//p:windows"}}],
         "completed": {"failureDetail": {"message": "clang failed"}}},
        {"id": {"targetCompleted": {"label": "@@xla~//p:tracer", "configuration": {"id": "c"}}},
         "children": [{"configuredLabel": {"label": "@@rocm//rocm:rocprofiler_sdk"}}],
         "aborted": {"reason": "ANALYSIS_FAILURE", "description": ""}},
        {"id": {"targetConfigured": {"label": "@@xla~//p:headers"}},
         "aborted": {"reason": "LOADING_FAILURE", "description": "Error downloading python"}},
    ]
    path = tmp_path / "events.json"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    outcome = full_closure.build_outcome(full_closure.read_events(path))
    assert outcome.built == ("@@xla~//p:status",)
    assert outcome.failed == {"@@xla~//p:windows": "@@xla~//p:windows", "@@xla~//p:tracer": "@@rocm//rocm:rocprofiler_sdk",
                              "@@xla~//p:headers": "Error downloading python"}
    graph = full_closure.Graph.from_xml(QUERY)
    lines = full_closure.report(graph, outcome)
    assert lines[1] == "built: 1 of the 4 requested; failed: 3"
    assert lines[-1] == "  //p:plugin -> //p:compiler -> //p:ir -> @llvm-project//mlir:IR"
