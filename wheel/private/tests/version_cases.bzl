"""The cases wheel/private/version.bzl is tested on, in both languages: version_test.bzl runs
them through the Starlark, tests/unit/test_wheel_version_cases.py asks packaging whether each
version is canonical PEP 440 (and how they order) and ci_build how it says each flag. Plain
literals only (commits as JAX's CI passes them, a full `git rev-parse HEAD`): the Python test
reads this file with ast.literal_eval."""

# wheel_version(**pieces) == version.
VERSION_CASES = [
    {"id": "release", "pieces": {"base": "0.7.1"}, "version": "0.7.1"},
    {"id": "release_ignores_commit", "pieces": {"base": "0.7.1", "kind": "release", "commit": "abcdef0"}, "version": "0.7.1"},
    {"id": "nightly", "pieces": {"base": "0.7.1", "kind": "nightly", "date": "20250102"}, "version": "0.7.1.dev20250102"},
    {"id": "dev", "pieces": {"base": "0.7.1", "kind": "dev", "date": "20250102", "commit": "abcdef0123"}, "version": "0.7.1.dev20250102+gabcdef0"},
    {"id": "dev_upper_commit", "pieces": {"base": "0.7.1", "kind": "dev", "date": "20250102", "commit": "ABCDEF0"}, "version": "0.7.1.dev20250102+gabcdef0"},
    {"id": "post", "pieces": {"base": "0.7.1", "post": 1}, "version": "0.7.1.post1"},
    {"id": "post_nightly", "pieces": {"base": "0.7.1", "kind": "nightly", "date": "20250102", "post": 1}, "version": "0.7.1.post1.dev20250102"},
    {"id": "local", "pieces": {"base": "0.7.1", "local": "rocm7.2.4"}, "version": "0.7.1+rocm7.2.4"},
    {"id": "local_lowered", "pieces": {"base": "0.7.1", "local": "ROCm7.2.4"}, "version": "0.7.1+rocm7.2.4"},
    {"id": "nightly_local", "pieces": {"base": "0.7.1", "kind": "nightly", "date": "20250102", "local": "rocm7.2.4"}, "version": "0.7.1.dev20250102+rocm7.2.4"},
    {"id": "dev_post_local", "pieces": {"base": "0.7.1", "kind": "dev", "date": "20250102", "commit": "ABCDEF0123456789", "local": "rocm7.2.4", "post": 3}, "version": "0.7.1.post3.dev20250102+gabcdef0.rocm7.2.4"},
    {"id": "dev_local", "pieces": {"base": "0.7.1", "kind": "dev", "date": "20250102", "commit": "ABCDEF0123456789", "local": "rocm7.2.4"}, "version": "0.7.1.dev20250102+gabcdef0.rocm7.2.4"},
    {"id": "therock_nightly_local", "pieces": {"base": "0.10.2", "local": "rocm7.10.0a20251120"}, "version": "0.10.2+rocm7.10.0a20251120"},

    # The five examples XLA's python_wheel.bzl documents, each spelled as JAX's CI spells it.
    {"id": "xla_nightly", "pieces": {"base": "2.19.0", "kind": "nightly", "date": "20250107", "ml_wheel": True}, "version": "2.19.0.dev20250107"},
    {"id": "xla_release", "pieces": {"base": "2.19.0", "kind": "release", "ml_wheel": True}, "version": "2.19.0"},
    {"id": "xla_rc", "pieces": {"base": "2.19.0", "kind": "release", "suffix": "rc1", "ml_wheel": True}, "version": "2.19.0rc1"},
    {"id": "xla_custom", "pieces": {"base": "2.19.0", "kind": "custom", "date": "20250107", "commit": "cbe478fc5d2e1a0b9c8d7e6f5a4b3c2d1e0f9a8b", "suffix": "custom", "ml_wheel": True}, "version": "2.19.0.dev20250107+cbe478fc5custom"},
    {"id": "xla_snapshot", "pieces": {"base": "2.19.0", "kind": "snapshot", "ml_wheel": True}, "version": "2.19.0.dev0+selfbuilt"},

    # JAX's kinds with this project's pieces.
    {"id": "rc_dash", "pieces": {"base": "0.7.1", "kind": "release", "suffix": "-rc1"}, "version": "0.7.1rc1"},  # JAX drops the '-'
    {"id": "rc", "pieces": {"base": "0.7.1", "kind": "release", "suffix": "rc1"}, "version": "0.7.1rc1"},
    {"id": "rc_post_local", "pieces": {"base": "0.7.1", "kind": "release", "suffix": "rc1", "post": 1, "local": "rocm7.2.4"}, "version": "0.7.1rc1.post1+rocm7.2.4"},
    {"id": "nightly_drops_suffix", "pieces": {"base": "0.7.1", "kind": "nightly", "date": "20250102", "suffix": "rc1", "ml_wheel": True}, "version": "0.7.1.dev20250102"},
    {"id": "custom_hash_zeros", "pieces": {"base": "0.7.1", "kind": "custom", "date": "20250102", "commit": "00cbe478fc5d2e1a0b9c8d7e6f5a4b3c2d1e0f9a", "ml_wheel": True}, "version": "0.7.1.dev20250102+cbe478fc5"},
    {"id": "custom_hash_upper", "pieces": {"base": "0.7.1", "kind": "custom", "commit": "CBE478FC5D2E1A0B9C8D7E6F5A4B3C2D1E0F9A8B", "ml_wheel": True}, "version": "0.7.1+cbe478fc5"},
    {"id": "custom_date", "pieces": {"base": "0.7.1", "kind": "custom", "date": "20250102", "ml_wheel": True}, "version": "0.7.1.dev20250102"},
    {"id": "custom_bare", "pieces": {"base": "0.7.1", "kind": "custom", "ml_wheel": True}, "version": "0.7.1"},
    {"id": "custom_local", "pieces": {"base": "0.7.1", "kind": "custom", "date": "20250102", "commit": "cbe478fc5d2e1a0b9c8d7e6f5a4b3c2d1e0f9a8b", "local": "rocm7.2.4", "ml_wheel": True}, "version": "0.7.1.dev20250102+cbe478fc5.rocm7.2.4"},
    {"id": "snapshot_local", "pieces": {"base": "0.7.1", "kind": "snapshot", "suffix": "rc1", "local": "rocm7.2.4", "ml_wheel": True}, "version": "0.7.1.dev0+selfbuilt.rocm7.2.4"},
    {"id": "snapshot_post", "pieces": {"base": "0.7.1", "kind": "snapshot", "post": 2, "ml_wheel": True}, "version": "0.7.1.post2.dev0+selfbuilt"},
    {"id": "dev_suffix", "pieces": {"base": "0.7.1", "kind": "dev", "date": "20250102", "commit": "cbe478fc5d2e1a0b9c8d7e6f5a4b3c2d1e0f9a8b", "suffix": "custom", "ml_wheel": True}, "version": "0.7.1.dev20250102+gcbe478fcustom"},
]

# wheel_version(**pieces) refuses: its problem holds `says` (the flag or variable to fix, or
# what is wrong); `cli_flag` is the flag build/ci_build says that setting as ("": JAX's variable
# or none, which ci_build leaves as it is).
PROBLEM_CASES = [
    {"pieces": {"base": "0.7.1", "kind": "nightly"}, "says": "--@jax_rocm_build//wheel:date=YYYYMMDD", "cli_flag": "--wheel-date"},
    {"pieces": {"base": "0.7.1", "kind": "dev", "commit": "abcdef0"}, "says": "--@jax_rocm_build//wheel:date=YYYYMMDD", "cli_flag": "--wheel-date"},
    {"pieces": {"base": "0.7.1", "kind": "nightly", "date": "2025-01-02"}, "says": "--@jax_rocm_build//wheel:date=YYYYMMDD", "cli_flag": "--wheel-date"},
    {"pieces": {"base": "0.7.1", "kind": "nightly", "date": "02025010"}, "says": "--@jax_rocm_build//wheel:date=YYYYMMDD", "cli_flag": "--wheel-date"},  # .dev2025010 would be its canonical form
    {"pieces": {"base": "0.7.1", "kind": "dev", "date": "20250102"}, "says": "--@jax_rocm_build//wheel:commit=SHA", "cli_flag": "--wheel-commit"},
    {"pieces": {"base": "0.7.1", "kind": "dev", "date": "20250102", "commit": "abc12"}, "says": "--@jax_rocm_build//wheel:commit=SHA", "cli_flag": "--wheel-commit"},
    {"pieces": {"base": "0.7.1", "kind": "dev", "date": "20250102", "commit": "not-a-sha"}, "says": "--@jax_rocm_build//wheel:commit=SHA", "cli_flag": "--wheel-commit"},
    {"pieces": {"base": "0.7.1", "post": -1}, "says": "--@jax_rocm_build//wheel:post_release=N", "cli_flag": "--wheel-post-release"},
    {"pieces": {"base": "0.7"}, "says": "--@jax_rocm_build//wheel:version=X.Y.Z", "cli_flag": "--wheel-version"},
    {"pieces": {"base": "0.07.1"}, "says": "--@jax_rocm_build//wheel:version=X.Y.Z", "cli_flag": "--wheel-version"},
    {"pieces": {"base": "0.7.1rc1"}, "says": "--@jax_rocm_build//wheel:version=X.Y.Z", "cli_flag": "--wheel-version"},
    {"pieces": {"base": "v0.7.1"}, "says": "--@jax_rocm_build//wheel:version=X.Y.Z", "cli_flag": "--wheel-version"},
    {"pieces": {"base": "0.7.1.post1"}, "says": "--@jax_rocm_build//wheel:version=X.Y.Z", "cli_flag": "--wheel-version"},
    {"pieces": {"base": "1!0.7.1"}, "says": "--@jax_rocm_build//wheel:version=X.Y.Z", "cli_flag": "--wheel-version"},
    {"pieces": {"base": " 0.7.1"}, "says": "--@jax_rocm_build//wheel:version=X.Y.Z", "cli_flag": "--wheel-version"},
    {"pieces": {"base": "0.7.1", "local": "rocm7..2"}, "says": "--@jax_rocm_build//wheel:rocm_version_extra=false", "cli_flag": "--no-rocm-version-extra"},
    {"pieces": {"base": "0.7.1", "local": "rocm7-2"}, "says": "--@jax_rocm_build//wheel:rocm_version_extra=false", "cli_flag": "--no-rocm-version-extra"},  # rocm7.2 would be its canonical form
    {"pieces": {"base": "0.7.1", "local": "rocm 7"}, "says": "--@jax_rocm_build//wheel:rocm_version_extra=false", "cli_flag": "--no-rocm-version-extra"},
    {"pieces": {"base": "0.7.1", "local": "rocm7.02"}, "says": "--@jax_rocm_build//wheel:rocm_version_extra=false", "cli_flag": "--no-rocm-version-extra"},
    {"pieces": {"base": "0.7.1", "kind": "weekly"}, "says": "not one of release, nightly, dev, custom, snapshot", "cli_flag": ""},

    # Where ML_WHEEL_TYPE chose the kind, JAX's variables are named.
    {"pieces": {"base": "0.7.1", "kind": "nightly", "ml_wheel": True}, "says": "ML_WHEEL_BUILD_DATE", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "nightly", "date": "2025-01-02", "ml_wheel": True}, "says": "ML_WHEEL_BUILD_DATE", "cli_flag": ""},  # wheel.bzl drops JAX's dashes first
    {"pieces": {"base": "0.7.1", "kind": "custom", "date": "2025012", "ml_wheel": True}, "says": "ML_WHEEL_BUILD_DATE", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "custom", "commit": "not-a-sha", "ml_wheel": True}, "says": "ML_WHEEL_GIT_HASH", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "custom", "commit": "abc12", "ml_wheel": True}, "says": "ML_WHEEL_GIT_HASH", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "release", "suffix": ".rc1", "ml_wheel": True}, "says": "ML_WHEEL_VERSION_SUFFIX \".rc1\" goes after X.Y.Z of a release and makes \"0.7.1.rc1\", which is not a canonical PEP 440 version (as rc1 it would be: 0.7.1rc1)", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "release", "suffix": "RC1", "ml_wheel": True}, "says": "(as rc1 it would be: 0.7.1rc1)", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "release", "suffix": "rc 1", "ml_wheel": True}, "says": "ML_WHEEL_VERSION_SUFFIX", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "release", "suffix": "rc01", "ml_wheel": True}, "says": "ML_WHEEL_VERSION_SUFFIX", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "custom", "date": "20250102", "suffix": "custom", "ml_wheel": True}, "says": "ML_WHEEL_VERSION_SUFFIX \"custom\" goes after the date of a custom version without a hash", "cli_flag": ""},
    {"pieces": {"base": "0.7.1", "kind": "custom", "commit": "cbe478fc5d2e1a0b9c8d7e6f5a4b3c2d1e0f9a8b", "suffix": "c..", "ml_wheel": True}, "says": "ML_WHEEL_VERSION_SUFFIX \"c..\" goes after the git hash", "cli_flag": ""},
]

# canonical_version_problem(text) == "" exactly when canonical: what packaging's str(Version(text)) gives back unchanged.
CANONICAL_CASES = [
    ("0.7.1", True),
    ("1.0.0", True),
    ("1", True),
    ("1!1.0", True),
    ("1.0a1", True),
    ("1.0b2.post3.dev4", True),
    ("1.0rc1.post1+rocm7.2.4", True),
    ("1.0.dev0+selfbuilt.rocm7.2.4", True),
    ("0.10.2+rocm7.10.0a20251120", True),
    ("1.0+0", True),
    ("01.0", False),
    ("1.00", False),
    ("1.0RC1", False),
    ("1.0c1", False),
    ("1.0.rc1", False),
    ("1.0-rc1", False),
    ("1.0rc01", False),
    ("1.0rc", False),
    ("1.0alpha1", False),
    ("1.0.post01", False),
    ("1.0.dev01", False),
    ("1.0.dev1.post1", False),
    ("1.0post1", False),
    ("1.0+ABC", False),
    ("1.0+a-b", False),
    ("1.0+a_b", False),
    ("1.0+a..b", False),
    ("1.0+abc.01", False),
    ("1.0+", False),
    ("v1.0", False),
    (" 1.0", False),
    ("1.0.dev20250102custom", False),
    ("01!1.0", False),
]

# wheel_file_name(distribution, version, python_tag, abi_tag, platform_tag) == name: as
# wheel_builder.py's WheelSpec.filename() writes it with packaging (PEP 503's runs of - _ .
# are one separator, written '_'; a compressed tag set is one tag).
FILE_NAME_CASES = [
    {"distribution": "jax_rocm7_pjrt", "version": "0.7.1.dev20250102+gabcdef0.rocm7.2.4", "python_tag": "py3", "abi_tag": "none", "platform_tag": "manylinux_2_28_x86_64", "name": "jax_rocm7_pjrt-0.7.1.dev20250102+gabcdef0.rocm7.2.4-py3-none-manylinux_2_28_x86_64.whl"},
    {"distribution": "jax_rocm10_plugin", "version": "0.10.2+rocm10.0.0", "python_tag": "cp314", "abi_tag": "cp314", "platform_tag": "linux_x86_64", "name": "jax_rocm10_plugin-0.10.2+rocm10.0.0-cp314-cp314-linux_x86_64.whl"},
    {"distribution": "Jax.ROCm7--plugin", "version": "0.7.1", "python_tag": "cp313", "abi_tag": "cp313", "platform_tag": "linux_x86_64", "name": "jax_rocm7_plugin-0.7.1-cp313-cp313-linux_x86_64.whl"},
    {"distribution": "JAX_rocm7-_.pjrt", "version": "0.7.1", "python_tag": "py3", "abi_tag": "none", "platform_tag": "any", "name": "jax_rocm7_pjrt-0.7.1-py3-none-any.whl"},
    {"distribution": "pkg", "version": "1.0", "python_tag": "py2.py3", "abi_tag": "none", "platform_tag": "manylinux_2_28_x86_64.manylinux2014_x86_64", "name": "pkg-1.0-py2.py3-none-manylinux_2_28_x86_64.manylinux2014_x86_64.whl"},
]
