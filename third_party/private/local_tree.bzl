"""local_tree: a directory of this checkout as a repository, with its own BUILD files.

For examples/jax (@jax_examples), a tree this module's extension declares; unlike
local_repository it can be declared from a module extension in every Bazel 7 release.
"""

def _local_tree_impl(rctx):
    root = rctx.path(rctx.attr.path)
    if not root.exists:
        fail("local_tree: %s does not exist; is this checkout complete?" % root)
    for entry in root.readdir():
        rctx.symlink(entry, entry.basename)
    if hasattr(rctx, "watch_tree"):
        rctx.watch_tree(root)

local_tree = repository_rule(
    implementation = _local_tree_impl,
    doc = "Symlinks the top-level entries of `path` (absolute) into the repository.",
    attrs = {"path": attr.string(mandatory = True)},
    local = True,
)
