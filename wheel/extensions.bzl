"""The `ml_wheel` module extension: @ml_wheel_env, the wheel identity JAX's spelling gives.

    ml_wheel = use_extension("//wheel:extensions.bzl", "ml_wheel")
    use_repo(ml_wheel, "ml_wheel_env")

--repo_env=ML_WHEEL_TYPE, ML_WHEEL_BUILD_DATE, ML_WHEEL_GIT_HASH and ML_WHEEL_VERSION_SUFFIX
(wheel/private/ml_wheel.bzl; wheel/README.md says what each makes of the version).
"""

load("//wheel/private:ml_wheel.bzl", "ml_wheel_env")

def _ml_wheel_impl(_mctx):
    ml_wheel_env(name = "ml_wheel_env")

ml_wheel = module_extension(
    implementation = _ml_wheel_impl,
    doc = "Makes @ml_wheel_env: JAX's ML_WHEEL_* variables, checked, for the wheel rule.",
)
