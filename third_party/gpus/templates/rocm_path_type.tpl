
# --@local_config_rocm//rocm:rocm_path_type: what every shipped .so searches for ROCm at run
# time (third_party/gpus/private/runpath.bzl). XLA's name, values and default; --config=rocm_release
# takes link_only.
string_flag(
    name = "rocm_path_type",
    build_setting_default = "system",
    values = %{values},
)

# XLA's config_settings over rocm_path_type (its third_party/gpus/rocm/BUILD.tpl), plus system.
config_setting(
    name = "build_hermetic",
    flag_values = {":rocm_path_type": "hermetic"},
)

config_setting(
    name = "multiple_rocm_paths",
    flag_values = {":rocm_path_type": "multiple"},
)

config_setting(
    name = "link_only",
    flag_values = {":rocm_path_type": "link_only"},
)

config_setting(
    name = "system",
    flag_values = {":rocm_path_type": "system"},
)
