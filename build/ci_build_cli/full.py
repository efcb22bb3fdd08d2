"""Full mode: upstream's module graph in full/ (XLA and rules_ml_toolchain as Bazel modules,
this project's ROCm injected), run by Debian's Bazel in the sandbox."""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from third_party.gpus import extract_archive
from third_party.private import source_tree

from . import inputs, sandbox, toolkit
from .paths import CACHE, CHECKOUT
from .pythons import Interpreter

# The root module of upstream's graph (full/MODULE.bazel), and how Debian's Bazel in the
# sandbox runs it: without the sandbox's kernels-mode stand-in modules (full/debian.bazelrc).
FULL = CHECKOUT / "full"
FULL_BAZEL = ["/usr/bin/bazel", "--nosystem_rc", "--bazelrc=debian.bazelrc", f"--output_user_root={CACHE / 'bazel'}"]
# What each module of the full graph must call local_config_rocm (and rules_ml_toolchain,
# config_rocm_hipcc): this project's repository.
OUR_ROCM = "jax_rocm_build~~rocm~local_config_rocm"


def in_this_module(flags: list[str]) -> list[str]:
    """Kernels-mode flags of this project's settings (--//rocm:..., --//wheel:...) as full/'s root
    module names them: this project is the module jax_rocm_build there."""
    return [re.sub(r"^--(no)?//", r"--\1@jax_rocm_build//", f) for f in flags]


def one_python(versions: list[str]) -> str:
    return (f"full mode builds for one Python per run (XLA's hermetic Python), not {', '.join(versions) or 'none'}; "
            "pass --python-versions=3.X")


def check_inputs(args: argparse.Namespace) -> None:
    """--mode=full with several --python-versions fails before anything runs (InputError)."""
    versions = args.python_versions.split(",") if args.python_versions else []
    if args.mode == "full" and len(versions) > 1:
        raise inputs.InputError(f"--mode=full and --python-versions={args.python_versions}: {one_python(versions)}")


def full_python(interpreters: list[Interpreter]) -> list[str]:
    """Full mode builds JAX's modules for one Python, XLA's hermetic one, as JAX's build does:
    the flags that make it and @local_config_python the same (full/jaxlib/rocm/defs.bzl checks).
    Any other number of interpreters is an InputError (--python-versions=3.X chooses one)."""
    if len(interpreters) != 1:
        raise inputs.InputError(one_python([i.version for i in interpreters]))
    python = interpreters[0]
    return [f"--repo_env=HERMETIC_PYTHON_VERSION={python.version}", f"--repo_env=JAX_ROCM_PYTHON={python.path}"]


def full_flags(args: argparse.Namespace) -> list[str]:
    """Flags of a full-mode command: the XLA checkout as the xla module, where modules resolve from."""
    flags = in_this_module(toolkit.rocm_flags(args))
    if args.xla_source_dir:
        xla = Path(args.xla_source_dir).expanduser().resolve()
        flags += [f"--override_module=xla={xla}", f"--override_repository=xla={xla}"]
    if args.registry:
        flags.append(f"--registry={args.registry if '://' in args.registry else Path(args.registry).resolve().as_uri()}")
    if args.distdir:
        flags.append(f"--distdir={Path(args.distdir).resolve()}")
    if args.jax_source_dir:
        flags.append(f"--repo_env=JAX_SOURCE_DIR={Path(args.jax_source_dir).expanduser().resolve()}")
    return flags


def full_binds(args: argparse.Namespace) -> list[str]:
    paths = [p for p in (args.xla_source_dir, args.registry if args.registry and "://" not in args.registry else None,
                         args.distdir, args.jax_source_dir) if p]
    return [str(Path(p).expanduser().resolve()) for p in paths]


def full_bazel(args: argparse.Namespace, binds: list[str] = ()) -> list[str]:
    """Debian's Bazel in the sandbox, in full/ (full/debian.bazelrc), with the full-mode inputs mounted."""
    return sandbox.sandbox_run(args, [*full_binds(args), *binds]) + ["sh", "-c", 'cd "$0" && exec "$@"', str(FULL), *FULL_BAZEL]


# JAX's root MODULE.bazel overrides these modules' versions and patches them; full/MODULE.bazel
# replaces that root, so it applies the same patches, read from the JAX source the build uses
# (written to full/jax_patches, which Git ignores: they are JAX's files). Without them XLA's
# packages do not load: protobuf lacks the :arena XLA's GPU service names, grpc's
# cc_grpc_library the plugin_flags XLA's //xla passes.
PATCHED_MODULES = ("abseil-cpp", "grpc", "protobuf", "rules_python")
JAX_PATCHES = FULL / "jax_patches"


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


def jax_source_for_patches(args: argparse.Namespace) -> Path:
    """The JAX source full mode builds: --jax-source-dir, else the pinned archive (in --distdir,
    in this project's download cache, or downloaded there and checked against the pin)."""
    if args.jax_source_dir:
        return Path(args.jax_source_dir).expanduser().resolve()
    pin = json.loads((CHECKOUT / "third_party" / "jax" / "pin.json").read_text())
    url = pin["urls"][0].replace("{commit}", pin["commit"])
    name = url.rsplit("/", 1)[1]
    for folder in [Path(args.distdir).expanduser()] if args.distdir else []:
        if (folder / name).is_file() and hashlib.sha256((folder / name).read_bytes()).hexdigest() == pin["sha256"]:
            return folder / name
    cached = CACHE / "downloads" / f"{pin['sha256'][:16]}-{name}"
    if not cached.is_file():
        print(f"ci_build: downloading JAX's pinned sources for its module patches: {url}", file=sys.stderr, flush=True)
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(cached.suffix + ".partial")
        try:
            with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as out:
                out.write(response.read())
        except OSError as e:
            partial.unlink(missing_ok=True)
            raise JaxPatchError(f"cannot download {url} ({e}); offline, pass --jax-source-dir=PATH (a JAX checkout or "
                                "archive of the pinned tag) or --distdir=DIR holding " + name) from None
        if hashlib.sha256(partial.read_bytes()).hexdigest() != pin["sha256"]:
            partial.unlink()
            raise JaxPatchError(f"{url} does not have the sha256 third_party/jax/pin.json pins ({pin['sha256']})")
        partial.rename(cached)
    return cached


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


def prepare(args: argparse.Namespace) -> int:
    """Before any full-mode Bazel command: JAX's patches in full/jax_patches (0), or why not (InputError:
    the JAX source given, or the pinned one, cannot give them)."""
    source = args.jax_source_dir or "the pinned JAX archive"
    if args.dry_run:
        print(f"# first: JAX's patches of {', '.join(PATCHED_MODULES)} from {source} into {JAX_PATCHES} (as its "
              "MODULE.bazel applies them)", file=sys.stderr)
        return 0
    try:
        found = jax_source_for_patches(args)
        written = write_jax_patches(found, registry=args.registry)
    except (JaxPatchError, OSError, extract_archive.UnsafeArchive, SyntaxError, ValueError) as e:
        detail = " ".join(str(e).split())  # one line, whatever the reader's message
        raise inputs.InputError(f"full mode applies JAX's patches of {', '.join(PATCHED_MODULES)} and cannot read them: "
                                f"{detail}") from None
    print(f"ci_build: JAX's module patches from {found}: " + ", ".join(f"{m} ({n} bytes)" for m, n in written.items()),
          file=sys.stderr)
    return 0
