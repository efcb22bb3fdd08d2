"""Offline stand-in for buildozer's `buildozer_binary` module extension.

bazel_tools declares this extension for `bazel mod tidy` only; `bazel mod`
evaluates it for any subcommand, so it must exist. The repository it makes has
a `buildozer` that explains why it cannot run here.
"""

def _buildozer_binary_repo_impl(rctx):
    rctx.file(
        "buildozer",
        "#!/bin/sh\necho 'buildozer is not available offline (tools/offline stand-in); run bazel mod tidy with network access' >&2\nexit 1\n",
        executable = True,
    )
    rctx.file("BUILD.bazel", 'exports_files(["buildozer"])\n')

_buildozer_binary_repo = repository_rule(implementation = _buildozer_binary_repo_impl)

def _buildozer_binary_impl(_mctx):
    _buildozer_binary_repo(name = "buildozer_binary")

buildozer_binary = module_extension(implementation = _buildozer_binary_impl)
