"""JAX's patches of the modules full mode overrides: read from a JAX tree, written into full/.

JAX's root MODULE.bazel overrides these modules' versions and patches them; full/MODULE.bazel
replaces that root, so it applies the same patches, read from the JAX source the build uses
(written to full/jax_patches, which Git ignores: they are JAX's files). Without them XLA's
packages do not load: protobuf lacks the :arena XLA's GPU service names, grpc's
cc_grpc_library the plugin_flags XLA's //xla passes.

ci_build writes them before every full-mode command (full.prepare); the gated tier's trees get
them by running this module:

    PYTHONPATH=build python3 -m ci_build_cli.jax_patches --source JAX_TREE --folder DIR --registry REGISTRY
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from third_party.gpus import extract_archive
from third_party.private import source_tree

from .paths import CHECKOUT

PATCHED_MODULES = ("abseil-cpp", "grpc", "protobuf", "rules_python")
JAX_PATCHES = CHECKOUT / "full" / "jax_patches"


class JaxPatchError(Exception):
    """JAX's overrides cannot be read or applied as full/MODULE.bazel applies them."""


def jax_patch_plan(module_bazel: str) -> dict[str, list[str]]:
    """Module -> the patch files (paths in JAX's tree, in JAX's order) that JAX's MODULE.bazel
    applies through single_version_override, for each of PATCHED_MODULES (empty: none)."""
    plan: dict[str, list[str]] = {name: [] for name in PATCHED_MODULES}
    for node in ast.walk(ast.parse(module_bazel)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "single_version_override"):
            continue
        kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg in ("module_name", "patches", "patch_strip")}
        if kw.get("module_name") not in plan or not kw.get("patches"):
            continue
        if kw.get("patch_strip", 0) != 1:
            raise JaxPatchError(f"JAX patches {kw['module_name']} with patch_strip = {kw.get('patch_strip', 0)}; "
                                "full/MODULE.bazel applies JAX's patches with 1")
        for label in kw["patches"]:
            if not label.startswith("//") or ":" not in label:
                raise JaxPatchError(f"JAX's patch {label} of {kw['module_name']} is not a label of its own tree")
            package, _, name = label[2:].partition(":")
            plan[kw["module_name"]].append(f"{package}/{name}" if package else name)
    return plan


def jax_module_file(source: Path) -> str:
    module = source_tree.read_files(source, ["MODULE.bazel"]).get("MODULE.bazel")
    if module is None:
        raise JaxPatchError(f"{source} has no MODULE.bazel: not a JAX tree of the Bazel module era")
    return module.decode()


def jax_patches(source: Path, module_file: str | None = None) -> dict[str, bytes]:
    """Module -> JAX's patches of it, concatenated in JAX's order (b"" when JAX has none);
    `module_file`: the source's MODULE.bazel when the caller has read it already."""
    plan = jax_patch_plan(module_file if module_file is not None else jax_module_file(source))
    files = source_tree.read_files(source, [f for patches in plan.values() for f in patches])
    missing = [f for patches in plan.values() for f in patches if f not in files]
    if missing:
        raise JaxPatchError(f"{source} lacks the patch files its MODULE.bazel names: {', '.join(missing)}")
    return {name: b"".join(files[f] if files[f].endswith(b"\n") else files[f] + b"\n" for f in patches)
            for name, patches in plan.items()}



BCR = "https://bcr.bazel.build"


def overridden_versions(module_bazel: str) -> dict[str, str]:
    """Module -> the version full/MODULE.bazel's single_version_override pins."""
    versions = {}
    for node in ast.walk(ast.parse(module_bazel)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "single_version_override":
            kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg in ("module_name", "version")}
            if "version" in kw:
                versions[kw["module_name"]] = kw["version"]
    return versions


def _sections(patch: str) -> list[str]:
    """A unified diff split into one text per file (at `diff --git` lines, else at `--- ` headers)."""
    heads = [m.start() for m in re.finditer(r"^diff --git ", patch, re.M)]
    if not heads:
        heads = [m.start() for m in re.finditer(r"^--- .*\n\+\+\+ ", patch, re.M)]
    if not heads:
        return [patch]
    bounds = [*heads, len(patch)]
    return ([patch[:bounds[0]]] if bounds[0] else []) + [patch[a:b] for a, b in zip(bounds, bounds[1:])]


def rebased_module_file(patch: str, module_file: str) -> str:
    """JAX's patch with the part that edits MODULE.bazel made anew against the registry's
    MODULE.bazel: GNU patch finds a hunk a few lines off, Bazel's patcher does not, and JAX's
    grpc patch is 4 lines off the registry's grpc 1.78.0 MODULE.bazel. The change is JAX's,
    line for line; only where it lands is recomputed."""
    out = []
    for section in _sections(patch):
        if not re.search(r"^\+\+\+ b/MODULE\.bazel\s*$", section, re.M):
            out.append(section)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "MODULE.bazel"
            target.write_text(module_file)
            applied = subprocess.run(["patch", "-p1", "--batch", "--forward", "--fuzz=0", "-d", tmp], input=section.encode(),
                                     capture_output=True)
            if applied.returncode != 0:
                raise JaxPatchError("JAX's patch of MODULE.bazel does not apply to the registry's, even a few lines off: "
                                    + applied.stdout.decode(errors="replace").strip()[-300:])
            new = target.read_text()
        header = section[:section.index("--- ")] if "--- " in section else ""
        out.append(header + "".join(difflib.unified_diff(module_file.splitlines(True), new.splitlines(True),
                                                         "a/MODULE.bazel", "b/MODULE.bazel")))
    return "".join(out)


def registry_module_file(registry: str | None, name: str, version: str) -> str:
    """modules/<name>/<version>/MODULE.bazel of the registry full mode resolves from (--registry:
    a directory or URL; default the Bazel Central Registry)."""
    base = registry or BCR
    if "://" not in base:
        return (Path(base).expanduser() / "modules" / name / version / "MODULE.bazel").read_text()
    if base.startswith("file://"):
        return (Path(base[len("file://"):]) / "modules" / name / version / "MODULE.bazel").read_text()
    url = f"{base.rstrip('/')}/modules/{name}/{version}/MODULE.bazel"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.read().decode()
    except OSError as e:
        raise JaxPatchError(f"cannot read {url} ({e}); offline, pass --registry=DIR (a checkout of the registry)") from None


# What full/MODULE.bazel include()s: JAX's versions of the modules it patches (they move with
# JAX: 0.10.2 takes abseil 20260107.1, 0.11.0 20260526.0, which XLA main needs), and the patches.
JAX_OVERRIDES = "jax_overrides.MODULE.bazel"


def overrides_file(versions: dict[str, str], patched: set[str], source: str) -> str:
    lines = [f"# Written by build/ci_build from the MODULE.bazel of {source}: the versions JAX takes of the",
             "# modules it patches, and its patches (jax_patches/*.patch). Included by full/MODULE.bazel."]
    for name in PATCHED_MODULES:
        if name not in versions:
            raise JaxPatchError(f"JAX's MODULE.bazel has no single_version_override of {name} with a version; "
                                "full mode takes that module's version from it")
        patches = f'["//jax_patches:{name}.patch"]' if name in patched else "[]"
        lines += ["", "single_version_override(", f'    module_name = "{name}",', "    patch_strip = 1,",
                  f"    patches = {patches},", f'    version = "{versions[name]}",', ")"]
    return "\n".join(lines) + "\n"


def write_jax_patches(source: Path, folder: Path = JAX_PATCHES, registry: str | None = None,
                      rebase: bool = True) -> dict[str, int]:
    """Writes full/jax_patches/<module>.patch from JAX's source, each MODULE.bazel part re-anchored
    on the registry's file (rebase), and the overrides naming them at JAX's versions; module ->
    bytes of its patch."""
    written = {}
    folder.mkdir(parents=True, exist_ok=True)
    module_file = jax_module_file(source)  # an archive: read once, for the versions and the patches
    versions = overridden_versions(module_file)
    outputs = {}
    for name, text in jax_patches(source, module_file).items():
        if rebase and b"+++ b/MODULE.bazel" in text:
            text = rebased_module_file(text.decode(), registry_module_file(registry, name, versions[name])).encode()
        if text:
            outputs[f"{name}.patch"] = text
        written[name] = len(text)
    outputs[JAX_OVERRIDES] = overrides_file(versions, {n for n, size in written.items() if size}, source.name).encode()
    for stale in folder.glob("*.patch"):
        if stale.name not in outputs:
            stale.unlink()
    for name, text in outputs.items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != text:  # unchanged: no new repository key
            path.write_bytes(text)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ci_build_cli.jax_patches", description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="a JAX checkout or archive")
    parser.add_argument("--folder", type=Path, default=JAX_PATCHES, help="where to write them (default: %(default)s)")
    parser.add_argument("--registry", help="the registry full mode resolves from: a folder or URL (default: " + BCR + ")")
    args = parser.parse_args(argv)
    try:
        written = write_jax_patches(args.source, folder=args.folder, registry=args.registry)
    except (JaxPatchError, OSError, extract_archive.UnsafeArchive, SyntaxError, ValueError) as e:
        print(f"jax_patches: {' '.join(str(e).split())}", file=sys.stderr)
        return 1
    print(", ".join(f"{m} ({n} bytes)" for m, n in written.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
