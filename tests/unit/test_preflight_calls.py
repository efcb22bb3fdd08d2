"""preflight_calls: how a tree calls @local_config_rocm, the probe that repeats the calls, and
Bazel's errors mapped back to the tree's file:line (the errors are Bazel 7.7's own words)."""

from __future__ import annotations

import pytest

from ci_build_cli import preflight_calls as pc

pytestmark = pytest.mark.unit

BUILD = '''load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm", _lib = "rocm_library")
load("@config_rocm_hipcc//:build_defs.bzl", "hipcc_config")
load("//xla:xla.bzl", "xla_cc_test")

_lib(
    name = "kernels_" + SUFFIX,
    srcs = ["k.cu.cc"] + glob(["*.h"]),
    deps = [":a", "@local_config_rocm//rocm:rocm_headers"],
    linkstatic = True,
    copts = some_copts(),
    magic = compute(),
    visibility = internal_visibility(["//xla:friends"]),
)

cc_library(
    name = "b",
    deps = [":a"] + if_rocm(["@local_config_rocm//rocm:hipblas"]),
    copts = select({"@local_config_rocm//rocm:using_hipcc": ["-DX"], "//conditions:default": []}),
)

config_setting(name = "lo", flag_values = {"@local_config_rocm//rocm:rocm_path_type": "link_only"})

bzl_library(name = "defs", deps = ["@local_config_rocm//rocm:build_defs_bzl"])
'''

BZL = '''load("@local_config_rocm//rocm:build_defs.bzl", "rocm_gpu_architectures", "if_rocm_is_configured")

_ARCHS = rocm_gpu_architectures()

def tsl_copts(extra):
    return extra + if_rocm_is_configured(["-DTENSORFLOW_USE_ROCM=1"])
'''


def scan(text: str, file: str = "xla/x/BUILD"):
    return pc.collect([(file, text)])


def test_a_call_keeps_its_keywords_literals_and_the_type_of_what_it_computes():
    findings = scan(BUILD)
    (call,) = [c for c in findings.calls if c.symbol == "rocm_library"]
    assert call.module == "@local_config_rocm//rocm:build_defs.bzl"
    assert dict(call.keywords) == {
        "name": '"probe"',  # computed: a string by its name
        "srcs": "[]",  # list + glob(): a list
        "deps": '[":a", "@local_config_rocm//rocm:rocm_headers"]',  # a literal: itself
        "linkstatic": "True",
        "copts": "[]",  # computed: a list, as every rule's copts
        "magic": "None",  # computed, nothing known of its type: the default
        "visibility": '["//visibility:public"]',
    }
    assert findings.calls[call] == pc.Where("xla/x/BUILD", 5)
    assert findings.argument_lines[call]["linkstatic"] == 9
    assert call.source("f") == ('f(name = "probe", srcs = [], deps = [":a", "@local_config_rocm//rocm:rocm_headers"], '
                                'linkstatic = True, copts = [], magic = None, visibility = ["//visibility:public"])')


def test_what_a_tree_does_with_a_result_is_repeated():
    findings = scan(BUILD)
    (in_build,) = [c for c in findings.calls if c.symbol == "if_rocm"]
    assert in_build.source("f") == '[":a"] + f(["@local_config_rocm//rocm:hipblas"])'
    findings = scan(BZL, "xla/tsl/tsl.bzl")
    (archs,) = [c for c in findings.calls if c.symbol == "rocm_gpu_architectures"]
    assert archs.top_level_of_bzl, "called when the .bzl file loads: the probe calls it there too"
    (configured,) = [c for c in findings.calls if c.symbol == "if_rocm_is_configured"]
    assert not configured.top_level_of_bzl
    assert configured.use == "", "`extra` is a parameter of unknown type: nothing is added to the call"


def test_rules_ml_toolchains_name_for_the_repository_is_ours_too():
    findings = scan('load("@config_rocm_hipcc//:build_defs.bzl", "hipcc_config")\nx = hipcc_config().rocm_root\n', "x.bzl")
    (call,) = findings.calls
    assert call.module == "@local_config_rocm//:build_defs.bzl"
    assert call.source("f") == "f().rocm_root"


def test_select_keys_cc_dependencies_and_flag_values_are_collected():
    findings = scan(BUILD)
    assert findings.select_keys == {"@local_config_rocm//rocm:using_hipcc": pc.Where("xla/x/BUILD", 18)}
    # hipblas is inside if_rocm's argument: still a cc dependency; build_defs_bzl is a bzl_library's.
    assert set(findings.dependencies) == {"@local_config_rocm//rocm:rocm_headers", "@local_config_rocm//rocm:hipblas"}
    assert findings.flag_values == {("@local_config_rocm//rocm:rocm_path_type", "link_only"): pc.Where("xla/x/BUILD", 21)}
    rc = pc.collect([(".bazelrc", "build --foo\nbuild:rocm --@@local_config_rocm//rocm:rocm_path_type=hermetic\n")])
    assert rc.flag_values == {("@local_config_rocm//rocm:rocm_path_type", "hermetic"): pc.Where(".bazelrc", 2)}


def test_a_file_python_cannot_parse_is_left_to_bazel():
    assert pc.collect([("x/BUILD", 'load("@local_config_rocm//rocm:build_defs.bzl", "if_rocm")\nif_rocm(\n')]).calls == {}


def test_the_probe_makes_each_call_in_a_package_of_its_own():
    findings = pc.collect([("xla/x/BUILD", BUILD), ("xla/tsl/tsl.bzl", BZL)])
    probe = pc.probe_files(findings)
    assert len(probe.call_packages) == len(findings.calls) == 4
    for package, call in probe.call_packages.items():
        bzl = probe.files[f"{package}/probe.bzl"]
        assert f'load("{call.module}", _callee = "{call.symbol}")' in bzl
        assert call.source("_callee") in bzl
        assert probe.files[f"{package}/BUILD.bazel"].endswith('load(":probe.bzl", "probe")\n\nprobe()\n')
        if call.top_level_of_bzl:
            assert f"_RESULT = {call.source('_callee')}" in bzl
    assert any(c.top_level_of_bzl for c in probe.call_packages.values()), "no call at a .bzl file's top level"
    analysis = probe.files["analysis/BUILD.bazel"].splitlines()
    assert probe.analysis_lines
    for line, target in probe.analysis_lines.items():
        assert f'name = "{target}"' in analysis[line - 1]
    assert probe.analysis_targets["select0"] == ("select", "@local_config_rocm//rocm:using_hipcc")
    assert probe.flag_settings == {("@local_config_rocm//rocm:rocm_path_type", "link_only"): "flag0"}


PROBE_DIR, PROBE = "/ws/build/preflight_probe/cx1", "//build/preflight_probe/cx1"

CALL_ERRORS = f"""Starting local Bazel server and connecting to it...
ERROR: {PROBE_DIR}/calls/c0/BUILD.bazel:4:6: {PROBE}/calls/c0:kernels: no such attribute 'linkstatic' in 'rocm_library' rule
ERROR: package contains errors: build/preflight_probe/cx1/calls/c0
ERROR: package contains errors: build/preflight_probe/cx1/calls/c1: Traceback (most recent call last):
\tFile "{PROBE_DIR}/calls/c1/BUILD.bazel", line 4, column 6, in <toplevel>
\t\tprobe()
\tFile "{PROBE_DIR}/calls/c1/probe.bzl", line 5, column 12, in probe
\t\t_callee(["-DZ"], when_missing = [])
\tFile "/out/external/_main~rocm~local_config_rocm/build_defs.bzl", line 18, column 5, in if_rocm
\t\tdef if_rocm(if_true, if_false = []):
Error: if_rocm() got unexpected keyword argument: when_missing
ERROR: {PROBE_DIR}/calls/c2/BUILD.bazel:2:6: Traceback (most recent call last):
Error in load: file '@@_main~rocm~local_config_rocm//rocm:build_defs.bzl' does not contain symbol 'gone'
WARNING: --keep_going specified, ignoring errors. Results may be inaccurate
"""


def test_call_errors_map_to_the_trees_line_of_the_argument():
    findings = pc.collect([("xla/x/BUILD", BUILD), ("xla/tsl/tsl.bzl", BZL)])
    lib = next(c for c in findings.calls if c.symbol == "rocm_library")
    archs = next(c for c in findings.calls if c.symbol == "rocm_gpu_architectures")
    macro = pc.Call("@local_config_rocm//rocm:build_defs.bzl", "if_rocm", ('["-DZ"]',), (("when_missing", "[]"),), "", False)
    findings.calls[macro], findings.argument_lines[macro] = pc.Where("jax/BUILD", 30), {"when_missing": 31}
    probe = pc.Probe({}, {"calls/c0": lib, "calls/c1": macro, "calls/c2": archs}, {}, {}, {})
    lines = [r.line() for r in pc.call_rejections(probe, PROBE_DIR, PROBE, findings, CALL_ERRORS)]
    assert lines == [
        "jax/BUILD:31: if_rocm(when_missing = ...): if_rocm() got unexpected keyword argument: when_missing",
        "xla/x/BUILD:9: rocm_library(linkstatic = ...): no such attribute 'linkstatic' in 'rocm_library' rule",
    ], "a missing symbol is the name check's to report"


ANALYSIS_ERRORS = f"""ERROR: {PROBE_DIR}/analysis/BUILD.bazel:4:10: @@_main~rocm~local_config_rocm//rocm:rocm_headers is not a valid \
select() condition for {PROBE}/analysis:select0.
To inspect the select(), run: bazel query --output=build {PROBE}/analysis:select0.
ERROR: /out/external/_main~rocm~local_config_rocm/rocm/BUILD.bazel:249:13: in rocm_missing rule \
@@_main~rocm~local_config_rocm//rocm:rocm_smi:
Traceback (most recent call last):
\tFile "/out/external/_main~rocm~local_config_rocm/build_defs.bzl", line 66, column 9, in _rocm_missing_impl
\t\tfail("%s: %s" % (ctx.label, ctx.attr.message))
Error in fail: @@_main~rocm~local_config_rocm//rocm:rocm_smi: the ROCm this build uses has no rocm_smi. Install librocm-smi-dev.
ERROR: /out/external/_main~rocm~local_config_rocm/rocm/BUILD.bazel:249:13: Analysis of target \
'@@_main~rocm~local_config_rocm//rocm:rocm_smi' failed
ERROR: /out/external/_main~rocm~local_config_rocm/rocm/BUILD.bazel:12:8: in deps attribute of cc_library rule \
{PROBE}/analysis:deps1: '@@_main~rocm~local_config_rocm//rocm:rocm_rpath' does not have mandatory providers: 'CcInfo'
WARNING: errors encountered while analyzing target '{PROBE}/analysis:select0', it will not be built.
WARNING: errors encountered while analyzing target '{PROBE}/analysis:deps0', it will not be built.
WARNING: errors encountered while analyzing target '{PROBE}/analysis:deps1', it will not be built.
"""


def test_analysis_errors_tell_incompatibilities_from_libraries_the_toolkit_lacks():
    findings = pc.Findings({}, {}, {"@local_config_rocm//rocm:rocm_headers": pc.Where("xla/tsl/tsl.bzl", 112)},
                           {"@local_config_rocm//rocm:rocm_smi": pc.Where("xla/p/BUILD", 51),
                            "@local_config_rocm//rocm:rocm_rpath": pc.Where("xla/q/BUILD", 7)}, {})
    probe = pc.probe_files(findings)
    assert probe.analysis_lines == {4: "select0", 5: "deps0", 6: "deps1"}
    rejections = pc.analysis_rejections(probe, PROBE_DIR, PROBE, findings, ANALYSIS_ERRORS)
    assert [(r.line(), r.toolkit_gap) for r in rejections] == [
        ("xla/p/BUILD:51: dependency @local_config_rocm//rocm:rocm_smi (in deps): the ROCm this build uses has no "
         "rocm_smi. Install librocm-smi-dev.", True),
        ("xla/q/BUILD:7: dependency @local_config_rocm//rocm:rocm_rpath (in deps): in deps attribute of cc_library rule "
         "'@local_config_rocm//rocm:rocm_rpath' does not have mandatory providers: 'CcInfo'", False),
        ("xla/tsl/tsl.bzl:112: select() key @local_config_rocm//rocm:rocm_headers: @local_config_rocm//rocm:rocm_headers "
         "is not a valid select() condition for the tree's target.", False),
    ]


def test_a_flag_value_is_rejected_only_when_its_analysis_failed():
    findings = pc.Findings({}, {}, {}, {}, {("@local_config_rocm//rocm:rocm_path_type", "everywhere"): pc.Where(".bazelrc", 3)})
    refused = ("ERROR: /out/external/_main~rocm~local_config_rocm/rocm/BUILD.bazel:30:12: in string_flag rule "
               "@@_main~rocm~local_config_rocm//rocm:rocm_path_type: \nTraceback (most recent call last):\n"
               "Error in fail: Error setting @@_main~rocm~local_config_rocm//rocm:rocm_path_type: invalid value 'everywhere'.\n")
    rejection = pc.flag_rejection(findings, "@local_config_rocm//rocm:rocm_path_type", "everywhere", PROBE, refused)
    assert rejection.line() == (".bazelrc:3: --@local_config_rocm//rocm:rocm_path_type=everywhere: Error setting "
                                "@local_config_rocm//rocm:rocm_path_type: invalid value 'everywhere'.")
    assert pc.flag_rejection(findings, "@local_config_rocm//rocm:rocm_path_type", "everywhere", PROBE, "INFO: done\n") is None
