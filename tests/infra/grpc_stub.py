"""A load-only grpc module: the names the given trees load from grpc's .bzl files, and nothing else.

    python3 tests/infra/grpc_stub.py --dest ~/.cache/trees/modules/grpc-load-only ~/.cache/trees/xla-pin ...

grpc's repository was too large to clone where full mode's gated tier (docs/full-mode.md) was
measured, and the tier needs grpc only so that XLA's BUILD files load: they load
`cc_grpc_library` (and a few names more) from `@grpc//bazel:...` or
`@com_github_grpc_grpc//bazel:...`. This scans the trees for those load statements and writes
a module named grpc whose bazel/*.bzl files define each name loaded, written here (no file of
grpc's is copied or needed):

  * the rule macros (cc_grpc_library, py_grpc_library, and any other name called with a `name`)
    declare their target so that the package loads, depending on grpc's own C++ targets
    (`//:grpc++_codegen_proto`, which grpc's cc_grpc_library adds, or `//:grpc++`), which this
    module does not have: whatever needs grpc's code fails to load with that label named
    (tests/bazel/test_full_mode.py lists them as what cannot be had here);
  * the WORKSPACE-era functions (grpc_deps, grpc_extra_deps) do nothing: Bzlmod never calls them.

Each stub takes the keyword arguments its caller passes (`plugin_flags`, the argument JAX's
patch adds to cc_grpc_library, among them) and ignores what it has no use for.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# The apparent names XLA and JAX give grpc's module (XLA main: grpc; before: com_github_grpc_grpc).
GRPC_REPOSITORIES = ("grpc", "com_github_grpc_grpc")
# A load of a grpc .bzl: load("@grpc//bazel:file.bzl", "a", b = "c", ...), over several lines too.
LOAD = re.compile(r'load\(\s*"@(?:' + "|".join(GRPC_REPOSITORIES) + r')//([\w/.-]*):([\w.-]+\.bzl)"'
                  r'((?:\s*,\s*(?:\w+\s*=\s*)?"\w+")*)\s*,?\s*\)')
# Files Bazel reads Starlark from.
STARLARK = re.compile(r"^(BUILD|BUILD\.bazel|WORKSPACE|WORKSPACE\.bazel|MODULE\.bazel|.*\.bzl|.*\.BUILD|BUILD\..*)$")
WRITTEN_BY = "Written by tests/infra/grpc_stub.py"
# The label every target of the stub depends on and the stub does not declare: grpc's C++ library.
MISSING = "//:grpc++"

# Names whose body is known: what the stub of each declares.
RULE_MACROS = {
    "cc_grpc_library": '''
def cc_grpc_library(name, srcs = [], deps = [], proto_only = False, well_known_protos = False, generate_mocks = False,
                    allow_deprecated = False, use_external = False, grpc_only = False, plugin_flags = [], **kwargs):
    """A C++ library of the services in `srcs`: here a library that needs grpc's C++ code (the
    label grpc's own macro adds to `deps`, which callers pass grpc++ in already)."""
    native.cc_library(name = name, deps = deps + [Label("{missing}_codegen_proto")], **_common(kwargs))
''',
    "py_grpc_library": '''
def py_grpc_library(name, srcs = [], deps = [], strip_prefixes = [], grpc_library = None, **kwargs):
    """Python stubs of the services in `srcs`: here a target that needs grpc's code."""
    native.filegroup(name = name, srcs = [Label("{missing}")], **_common(kwargs))
''',
}
NO_OPS = ("grpc_deps", "grpc_extra_deps", "grpc_test_only_deps")
GENERIC = '''
def {fn}(*args, **kwargs):
    """Unknown to this stub: declares a target that needs grpc's code when called with a name."""
    if "name" in kwargs:
        native.filegroup(name = kwargs["name"], srcs = [Label("{missing}")], **_common(kwargs))
'''
NO_OP = '''
def {fn}(*args, **kwargs):
    """A WORKSPACE-era function: Bzlmod never calls it."""
    pass
'''
COMMON = '''
# The attributes every rule takes; the rest of a caller's arguments are the real macro's own.
_COMMON = ("compatible_with", "tags", "testonly", "visibility", "target_compatible_with")

def _common(kwargs):
    return {{k: v for k, v in kwargs.items() if k in _COMMON}}
'''


def loaded_names(trees: list[Path]) -> dict[str, set[str]]:
    """grpc's .bzl files the trees load (path in grpc's repository) -> the names loaded from each."""
    found: dict[str, set[str]] = {}
    for tree in trees:
        for path in tree.rglob("*"):
            if not STARLARK.match(path.name) or path.is_symlink() or not path.is_file():
                continue
            text = path.read_text(errors="replace")
            if "grpc" not in text:
                continue
            for package, file, names in LOAD.findall(text):
                found.setdefault(f"{package}/{file}" if package else file, set()).update(re.findall(r'"(\w+)"', names))
    return found


def stub_file(names: set[str]) -> str:
    lines = ['"""Written by tests/infra/grpc_stub.py: a load-only stand-in of grpc\'s file of that name (docs/full-mode.md)."""',
             COMMON.format()]
    for fn in sorted(names):
        if fn in RULE_MACROS:
            lines.append(RULE_MACROS[fn].format(missing=MISSING))
        elif fn in NO_OPS:
            lines.append(NO_OP.format(fn=fn))
        else:
            lines.append(GENERIC.format(fn=fn, missing=MISSING))
    return "\n".join(lines).rstrip() + "\n"


def write_stub(dest: Path, trees: list[Path]) -> dict[str, list[str]]:
    """Writes the module at dest (replacing what the stub wrote there before); file -> names defined."""
    found = loaded_names(trees)
    if not found:
        raise ValueError(f"no load of grpc's .bzl files in {', '.join(map(str, trees))}: nothing to stand in for")
    if dest.is_dir() and any(dest.iterdir()):
        module = dest / "MODULE.bazel"
        if not (module.is_file() and module.read_text().startswith(f'"""{WRITTEN_BY}')):
            raise ValueError(f"{dest} holds files this generator did not write: name an empty or new folder")
        for old in dest.rglob("*"):
            if old.is_file():
                old.unlink()
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "MODULE.bazel").write_text(f'"""{WRITTEN_BY}: grpc\'s .bzl names for loading only; no C++ target '
                                       '(docs/full-mode.md)."""\n\nmodule(name = "grpc")\n')
    (dest / "BUILD.bazel").write_text("# No target: whatever depends on grpc's code names //:grpc++ and does not load.\n")
    packages = {Path(f).parent for f in found}
    for package in packages:
        (dest / package).mkdir(parents=True, exist_ok=True)
        files = sorted(Path(f).name for f in found if Path(f).parent == package)
        build = dest / package / "BUILD.bazel"
        if package != Path("."):
            build.write_text(f"exports_files({files!r})\n".replace("'", '"'))
    for file, names in sorted(found.items()):
        (dest / file).write_text(stub_file(names))
    return {file: sorted(names) for file, names in sorted(found.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", type=Path, required=True, help="the module folder to write")
    parser.add_argument("trees", type=Path, nargs="+", help="trees whose loads of grpc's .bzl files the stub answers")
    args = parser.parse_args(argv)
    try:
        written = write_stub(args.dest.expanduser().resolve(), [t.expanduser().resolve() for t in args.trees])
    except (ValueError, OSError) as e:
        print(f"grpc_stub: error: {e}", file=sys.stderr)
        return 1
    for file, names in written.items():
        print(f"grpc_stub: {args.dest}/{file}: {', '.join(names)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
