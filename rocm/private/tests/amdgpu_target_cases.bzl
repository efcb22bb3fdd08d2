"""The cases an amdgpu target list is tested on in both languages: the Starlark that reads
--//rocm:amdgpu_targets at analysis (rocm/private/amdgpu_targets.bzl, by rocm_private_test.bzl)
and the finder's Python that ci_build reads --amdgpu-targets and TF_ROCM_AMDGPU_TARGETS with
before Bazel (third_party/gpus/find_rocm_config.py, by tests/unit/test_amdgpu_target_cases.py).
Starlark cannot call the Python, so the two are held to one answer per case. Plain literals
only: the Python test reads this file with ast.literal_eval."""

# split_amdgpu_targets(value) and split_targets(value) == targets.
SPLIT_CASES = [
    {"value": "gfx942", "targets": ["gfx942"]},
    {"value": "gfx942,gfx950", "targets": ["gfx942", "gfx950"]},
    {"value": "gfx942;gfx950 gfx942", "targets": ["gfx942", "gfx950"]},
    {"value": "gfx942\tgfx950\n gfx90a;;", "targets": ["gfx942", "gfx950", "gfx90a"]},
    {"value": " , ;", "targets": []},
    {"value": "", "targets": []},
    {"value": "gfx90a:xnack-,gfx942:sramecc+:xnack+", "targets": ["gfx90a:xnack-", "gfx942:sramecc+:xnack+"]},
    {"value": "gfx1100,,gfx1100,gfx1201", "targets": ["gfx1100", "gfx1201"]},
]

# A toolkit whose clang knows `supported`: the targets of `requested` it does not know
# (unknown_targets; the Starlark names each "'<target>' is not an amdgpu target"), and the
# features no code object takes (the Starlark: "unknown target feature '<feature>'").
CHECK_CASES = [
    {"requested": "gfx942,gfx90a:xnack-", "supported": ["gfx90a", "gfx942", "gfx950"], "unknown": [], "bad_features": []},
    {"requested": "gfx9999", "supported": ["gfx90a", "gfx942"], "unknown": ["gfx9999"], "bad_features": []},
    {"requested": "gfx942 gfx1100 gfx1999", "supported": ["gfx942", "gfx1100"], "unknown": ["gfx1999"], "bad_features": []},
    {"requested": "gfx90a:xnack", "supported": ["gfx90a"], "unknown": [], "bad_features": ["xnack"]},
    {"requested": "gfx90a:xnack+:sramecc", "supported": ["gfx90a"], "unknown": [], "bad_features": ["sramecc"]},
    {"requested": "gfx1200:xnack+,gfx1300", "supported": ["gfx1200"], "unknown": ["gfx1300"], "bad_features": []},
    {"requested": "GFX942", "supported": ["gfx942"], "unknown": ["GFX942"], "bad_features": []},
]

# A TheRock toolkit with device code for `covered`, whose clang knows `supported`: the targets
# a build may ask for (the finder's allowed_targets, which the Starlark is handed), and those of
# `requested` it refuses as not covered (uncovered_targets; generic targets need no device code).
COVERAGE_CASES = [
    {"requested": "gfx942,gfx950", "supported": ["gfx942", "gfx950", "gfx1100"], "covered": ["gfx942", "gfx950"], "allowed": ["gfx942", "gfx950"], "uncovered": []},
    {"requested": "gfx942,gfx1100", "supported": ["gfx942", "gfx950", "gfx1100"], "covered": ["gfx942", "gfx950"], "allowed": ["gfx942", "gfx950"], "uncovered": ["gfx1100"]},
    {"requested": "gfx9-4-generic", "supported": ["gfx942", "gfx9-4-generic"], "covered": ["gfx942"], "allowed": ["gfx942", "gfx9-4-generic"], "uncovered": []},
    {"requested": "gfx942:xnack+,gfx950:sramecc-", "supported": ["gfx942", "gfx950"], "covered": ["gfx942", "gfx950"], "allowed": ["gfx942", "gfx950"], "uncovered": []},
    {"requested": "gfx942:xnack+,gfx1100:xnack-", "supported": ["gfx942", "gfx1100"], "covered": ["gfx942"], "allowed": ["gfx942"], "uncovered": ["gfx1100"]},
    {"requested": "gfx1100 gfx1101 gfx942", "supported": ["gfx942", "gfx1100", "gfx1101"], "covered": ["gfx942"], "allowed": ["gfx942"], "uncovered": ["gfx1100", "gfx1101"]},
]
