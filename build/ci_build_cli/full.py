"""Full mode: upstream's module graph in full/ (XLA and rules_ml_toolchain as Bazel modules,
this project's ROCm injected), run by Debian's Bazel in the sandbox."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import urllib.request
from pathlib import Path

from third_party.gpus import extract_archive
from tools.digest import sha256_of

from . import full_closure, inputs, jax_patches, pythons, sandbox, sources, toolkit
from .paths import CACHE, CHECKOUT
from .pythons import Interpreter
from .request import Request

# The root module of upstream's graph (full/MODULE.bazel), and how Debian's Bazel in the
# sandbox runs it: without the sandbox's kernels-mode stand-in modules (--nosystem_rc drops
# them; full/debian.bazelrc says what Debian's Bazel needs instead), but with what every
# workspace in the sandbox shares, the action cache among it: the part of the system rc the
# sandbox also writes alone (sandbox/environment.py, SHARED_BAZELRC).
FULL = CHECKOUT / "full"
SHARED_BAZELRC = "/etc/bazel.shared.bazelrc"
FULL_BAZEL = ["/usr/bin/bazel", "--nosystem_rc", f"--bazelrc={SHARED_BAZELRC}", "--bazelrc=debian.bazelrc",
              f"--output_user_root={CACHE / 'bazel'}"]


def registry_unreachable(timeout: float = 10) -> str | None:
    """Why the Bazel Central Registry cannot be reached from here (None: it can)."""
    try:
        urllib.request.urlopen(urllib.request.Request(f"{jax_patches.BCR}/bazel_registry.json", method="HEAD"), timeout=timeout).close()
    except OSError as e:
        return str(getattr(e, "reason", e))
    return None


# Full mode's path flags: what upstream's graph resolves and fetches from, offline.
PATH_FLAGS = ("registry", "distdir", "bazelrc")


def _local_path(flag: str, value: str, want_dir: bool, path: str | None = None) -> Path:
    """A path flag's file or folder (`path`, else the value): there, of the right kind, readable
    (InputError naming the flag as given)."""
    path = Path(path or value).expanduser()
    kind = "folder" if want_dir else "file"
    if not path.exists():
        raise inputs.InputError(f"{flag}={value} does not exist (relative paths are taken from the current directory, "
                                f"{Path.cwd()}): name the {kind} tests/infra/real_trees.py wrote, or leave the flag out")
    if path.is_dir() != want_dir:
        raise inputs.InputError(f"{flag}={value} is a {'file' if want_dir else 'folder'}, not a {kind}: name the {kind} "
                                "tests/infra/real_trees.py wrote")
    if not os.access(path, os.R_OK | (os.X_OK if want_dir else 0)):
        raise inputs.InputError(f"{flag}={value} is not readable by this user: fix its permissions, or name another")
    return path


def check_inputs(request: Request) -> None:
    """Full mode's inputs, before the lock, the sandbox and Bazel (InputError): its path flags
    refused in kernels mode, which does not read them; in full mode --bazelrc a readable file,
    --distdir a readable folder, --registry a registry (a folder with modules/, or an http(s) or
    file URL), and without one, the Bazel Central Registry reachable (upstream's graph resolves
    from it: offline, nothing else could build)."""
    given = [f"--{name}={getattr(request, name)}" for name in PATH_FLAGS if getattr(request, name)]
    if given and request.mode != "full":
        raise inputs.InputError(f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} read by full mode's Bazel "
                                "only, and this build is kernels mode (the examples/xla stand-in): drop "
                                f"{'it' if len(given) == 1 else 'them'} (in kernels mode, Bazel's own options go in "
                                "user.bazelrc at the checkout's root), or name a real XLA for full mode")
    if request.mode != "full":
        return
    if request.bazelrc:
        _local_path("--bazelrc", request.bazelrc, want_dir=False)
    if request.distdir:
        _local_path("--distdir", request.distdir, want_dir=True)
    registry = request.registry
    if registry and "://" in registry:
        scheme = registry.split("://", 1)[0]
        if scheme not in ("https", "http", "file"):
            raise inputs.InputError(f"--registry={registry}: Bazel reads a registry from an https://, http:// or "
                                    f"file:// URL or a folder, not a {scheme}:// one; did you mean https://?")
        if scheme == "file":
            registry = registry.removeprefix("file://")
    if registry and "://" not in registry:
        folder = _local_path("--registry", request.registry, want_dir=True, path=registry)
        if not (folder / "modules").is_dir():
            raise inputs.InputError(f"--registry={request.registry} is not a Bazel registry (it has no modules/ "
                                    "folder): pass a checkout of the Bazel Central Registry")
    if not request.registry and not request.dry_run:
        why = registry_unreachable()
        if why:
            raise inputs.InputError(f"a real XLA builds in full mode, upstream's module graph, which resolves from the "
                                    f"Bazel Central Registry ({jax_patches.BCR}: {why}). Offline, pass --registry=DIR --distdir=DIR "
                                    "--bazelrc=FILE as tests/infra/real_trees.py lays them out (docs/full-mode.md#offline), "
                                    "or build the offline demo with --sources=examples")


def full_python(python: Interpreter) -> list[str]:
    """Full mode builds JAX's modules for one Python per Bazel run, XLA's hermetic one, as JAX's
    build does: the flags that make it and @local_config_python the same (full/jaxlib/rocm/defs.bzl
    checks). Several Pythons are several runs in one output base (dist_wheels.plan_build)."""
    return [f"--repo_env=HERMETIC_PYTHON_VERSION={python.version}", f"--repo_env=JAX_ROCM_PYTHON={python.path}"]


def full_flags(request: Request, configs: tuple[str, ...] = ("rocm",)) -> list[str]:
    """Flags of a full-mode command: rocm/rocm.bazelrc's `configs` and the toolkit (as in kernels
    mode: full/.bazelrc imports the same file), the XLA checkout as the xla module, where modules
    resolve from."""
    flags = toolkit.rocm_flags(request, configs)
    if request.xla_source_dir:
        xla = Path(request.xla_source_dir).expanduser().resolve()
        flags += [f"--override_module=xla={xla}", f"--override_repository=xla={xla}"]
    if request.registry:
        flags.append(f"--registry={request.registry if '://' in request.registry else Path(request.registry).resolve().as_uri()}")
    if request.distdir:
        flags.append(f"--distdir={Path(request.distdir).resolve()}")
    if request.jax_source_dir:
        flags.append(f"--repo_env=JAX_SOURCE_DIR={Path(request.jax_source_dir).expanduser().resolve()}")
    return flags


def bazelrc_trees(bazelrc: Path) -> list[str]:
    """The folders a --bazelrc file (and the files it imports) names with --override_module or
    --override_repository (e.g. the full.bazelrc of tests/infra/real_trees.py), and the files it
    imports: what the sandbox must mount for Bazel to read them."""
    text = bazelrc.read_text()
    named = {str(Path(p)) for p in re.findall(r"--override_(?:module|repository)=[^=\s]+=(/\S+)", text)}
    for imported in re.findall(r"^(?:try-)?import\s+(/\S+)", text, re.M):
        if Path(imported).is_file():
            named |= {str(Path(imported).parent), *bazelrc_trees(Path(imported))}
    return sorted(named)


def full_binds(request: Request) -> list[str]:
    paths = [p for p in (request.xla_source_dir, request.registry if request.registry and "://" not in request.registry else None,
                         request.distdir, request.jax_source_dir) if p]
    binds = [str(Path(p).expanduser().resolve()) for p in paths]
    if request.bazelrc:
        rc = Path(request.bazelrc).expanduser().resolve()
        binds += [str(rc.parent), *(t for t in bazelrc_trees(rc) if rc.parent not in Path(t).parents)]
    return binds


def full_bazel(request: Request, binds: list[str] = ()) -> list[str]:
    """Debian's Bazel in the sandbox, in full/ (full/debian.bazelrc), with the full-mode inputs
    mounted, and --bazelrc's file read last."""
    extra = [f"--bazelrc={Path(request.bazelrc).expanduser().resolve()}"] if request.bazelrc else []
    return (sandbox.sandbox_run(request, [*full_binds(request), *binds]) + ["sh", "-c", 'cd "$0" && exec "$@"', str(FULL),
                                                                     *FULL_BAZEL, *extra])


# What `native` and `preflight` build in full mode: upstream's PJRT plugin and every extension module.
NATIVE_TARGETS = ["//:xla_rocm_plugin", "//:rocm_extensions"]


def sandbox_python(request: Request) -> Interpreter:
    """The Python `native` and `preflight` build JAX's modules for in full mode: the sandbox's
    first of those the JAX tree builds for (InputError where it has none of them)."""
    tree = sources.jax_pythons(request.source_dirs.get("jax"))
    found = pythons.find_interpreters(predict_from_layers=not request.dry_run)
    if found is None:
        found = pythons.assumed_sandbox_interpreters(tree.pythons)
    inside = [i for i in found if i.bind is None and i.version in tree.pythons]
    if not inside:
        have = ", ".join(i.version for i in found if i.bind is None) or "none"
        raise inputs.InputError(f"{tree} builds jaxlib for Python {', '.join(tree.pythons)}, and the sandbox has none "
                                f"of them (it has {have}): add one (python3 -m sandbox ensure --help), or build "
                                "from another JAX tree")
    return inside[0]


def build_native(request: Request, name: str) -> int:
    """`native` (and `preflight`'s build) in full mode: the plugin and the modules in upstream's
    graph, or as much of them as can be had (build_what_can_be_built)."""
    flags = [*full_flags(request), *full_python(sandbox_python(request))]
    return build_what_can_be_built(request, name, full_bazel(request), flags, NATIVE_TARGETS)


def build_what_can_be_built(request: Request, name: str, bazel: list[str], flags: list[str],
                            targets: list[str], events: list[str] = ()) -> int:
    """Builds `targets` in upstream's graph. Where Bazel could not fetch part of it (offline: LLVM),
    none of them can be built, so everything of their graph that needs nothing missing is built
    instead (their closure, build/ci_build_cli/full_closure.py), and the run ends with one line naming what
    is missing, exit 1. The clean --expunge hint comes only after a failed compile or link.
    `events`: flags of the targets' build alone (wheels.event_flags), not of the closure's."""
    command = bazel + ["build", *flags, *events, "--keep_going", *targets]
    rc, output = sandbox.run_bazel(command, request.dry_run)
    if rc == 0:
        return 0
    if any(unfetched(output)) and not request.dry_run:
        print(f"ci_build {name}: Bazel could not fetch part of the graph; building everything of it that needs nothing "
              "missing", file=sys.stderr, flush=True)
        partial = build_the_closure(bazel, flags, targets)
        if partial:
            print(f"ci_build {name}: {partial}", file=sys.stderr)
    sandbox.say_damaged_outputs_hint(name, rc, command, output)
    say_stop_line(request, name, output)
    return rc


def say_stop_line(request: Request, name: str, output: str) -> None:
    """Prints stop_line as `ci_build NAME: ...`, LLVM's archive read from --xla-source-dir."""
    xla = Path(request.xla_source_dir).expanduser().resolve() if request.xla_source_dir else None
    print(f"ci_build {name}: {stop_line(output, xla)}", file=sys.stderr)


def build_the_closure(bazel: list[str], flags: list[str], targets: list[str]) -> str | None:
    """The rules of the targets' graph that depend on nothing Bazel could not load, built with
    --keep_going; what was built, in one line (None where the query itself failed)."""
    # Query takes no build settings (--@...): the graph is every select() branch anyway.
    query_flags = [f for f in flags if not f.startswith("--@")]
    query = bazel + ["query", *query_flags, "--keep_going", "--output=xml", f"deps({' + '.join(targets)})"]
    print("+ " + shlex.join(query), file=sys.stderr, flush=True)
    result = sandbox.spawn(query, cwd=CHECKOUT, capture_output=True, text=True)
    if not result.stdout.strip():
        print(result.stderr[-3000:], file=sys.stderr)
        return None
    graph = full_closure.Graph.from_xml(result.stdout)
    free = full_closure.closure(graph).free
    wanted = graph.select(free, full_closure.BUILT_REPOSITORIES, full_closure.NOT_FOR_THIS_BUILD)
    # Libraries as their archives: Bazel would otherwise link a shared library of every
    # cc_library asked for by name, which no wheel uses (hundreds here, each a Zig link with
    # the manylinux toolchain); binaries (the modules, XLA's tools) as they are.
    libraries = [label for label in wanted if graph.kinds.get(label) == "cc_library"]
    others = [label for label in wanted if graph.kinds.get(label) != "cc_library"]
    outcomes = []
    # /tmp: the sandbox mounts it at the same path, so Bazel inside reads and writes these.
    with tempfile.TemporaryDirectory(prefix="ci_build-closure-", dir="/tmp") as scratch:
        for name, labels, groups in (("others", others, []), ("libraries", libraries, ["--output_groups=archive"])):
            if not labels:
                continue
            listed, events = Path(scratch) / f"{name}.txt", Path(scratch) / f"{name}.json"
            listed.write_text("\n".join(labels) + "\n")
            sandbox.run_bazel(bazel + ["build", *flags, "--keep_going", *groups, f"--target_pattern_file={listed}",
                                       f"--build_event_json_file={events}"], dry_run=False)
            if events.is_file():
                outcomes.append(full_closure.build_outcome(full_closure.read_events(events)))
    outcome = full_closure.Outcome(tuple(sorted({b for o in outcomes for b in o.built})),
                                   {k: v for o in outcomes for k, v in o.failed.items()}) if outcomes else None
    if outcome is None:
        return None
    failed = f"; {len(outcome.failed)} failed: {', '.join(sorted(outcome.failed)[:5])}" if outcome.failed else ""
    return (f"built {len(outcome.built)} of the {len(wanted)} rules of XLA, TSL, JAX and this project that need nothing "
            f"missing ({len(free)} of the graph's {len(graph.inputs)} rules do){failed}")


# How Bazel names a repository it could not fetch ("no such package '@@xla~~llvm_extension~
# llvm-raw//': java.io.IOException: Error downloading [URL, URL] ..."), and a target a laid-out
# stand-in lacks ("no such target '@@grpc~//:grpc++'").
_NO_PACKAGE = re.compile(r"no such package '@@?([^/']+)//[^']*'(?:: java\.io\.IOException: Error downloading \[([^],\]]+))?")
_NO_TARGET = re.compile(r"no such target '@@?([^/']+)//([^']*)'")


def graph_name(canonical: str) -> str:
    """A repository's name inside the graph, from its canonical name as Bazel 7 (`~`) or 8 (`+`)
    spells it: `xla~~llvm_extension~llvm-raw` or `+_repo_rules+llvm-raw` -> llvm-raw, the module
    `rules_python~` or `rules_python+` -> rules_python."""
    return re.split(r"[~+]", canonical.rstrip("~+"))[-1]


def unfetched(output: str) -> tuple[dict[str, str], list[str]]:
    """(repository Bazel could not fetch or load -> the first URL it tried, "" if it named none;
    targets a repository lacked), each once, in the order Bazel named them."""
    repos: dict[str, str] = {}
    for canonical, url in _NO_PACKAGE.findall(output):
        repos[graph_name(canonical)] = repos.get(graph_name(canonical)) or url
    targets = list(dict.fromkeys(f"@{graph_name(repo)}//{target}" for repo, target in _NO_TARGET.findall(output)))
    return repos, targets


def llvm_archive(xla: Path | None) -> str | None:
    """LLVM's archive as the XLA tree pins it (third_party/llvm/workspace.bzl): its URL and sha256."""
    try:
        text = (xla / "third_party" / "llvm" / "workspace.bzl").read_text() if xla else ""
    except OSError:
        return None
    commit, sha256 = (re.search(rf'{name} = "([0-9a-f]+)"', text) for name in ("LLVM_COMMIT", "LLVM_SHA256"))
    if not (commit and sha256):
        return None
    return (f"https://github.com/llvm/llvm-project/archive/{commit[1]}.tar.gz (sha256 {sha256[1]}, "
            f"{xla}/third_party/llvm/workspace.bzl)")


def stop_line(output: str, xla: Path | None) -> str:
    """The one closing line of a full-mode build that stopped for want of what Bazel could not
    fetch: which repositories (LLVM's archive by XLA's URL and sha256), and how to provide them."""
    repos, targets = unfetched(output)
    if not repos and not targets:
        return ("full mode's build failed (above). It downloads what JAX's own build downloads (docs/full-mode.md); "
                "without network, --registry=DIR, --distdir=DIR and --bazelrc=FILE as tests/infra/real_trees.py lays them out")
    named = []
    for repo, url in repos.items():
        where = (llvm_archive(xla) if repo in ("llvm-raw", "llvm-project") else None) or url
        named.append(f"{repo} ({where})" if where else repo)
    fetch = f"could not fetch {', '.join(named)}" if named else "fetched everything"
    lacking = f"; targets the laid-out trees lack: {', '.join(targets)}" if targets else ""
    return (f"full mode built what it could (--keep_going) and stopped: Bazel {fetch}{lacking}: put those archives in a "
            "--distdir=DIR (Bazel takes a file by its name and sha256), name module trees with --registry=DIR or a "
            "--bazelrc=FILE, or build with the network")


def jax_source_for_patches(request: Request) -> Path:
    """The JAX source full mode builds: --jax-source-dir, else the pinned archive (in --distdir,
    in this project's download cache, or downloaded there and checked against the pin)."""
    if request.jax_source_dir:
        return Path(request.jax_source_dir).expanduser().resolve()
    pin = json.loads((CHECKOUT / "third_party" / "jax" / "pin.json").read_text())
    url = pin["urls"][0].replace("{commit}", pin["commit"])
    name = url.rsplit("/", 1)[1]
    for folder in [Path(request.distdir).expanduser()] if request.distdir else []:
        if (folder / name).is_file() and sha256_of(folder / name) == pin["sha256"]:
            return folder / name
    cached = CACHE / "downloads" / f"{pin['sha256'][:16]}-{name}"
    if not cached.is_file():
        print(f"ci_build: downloading JAX's pinned sources for its module patches: {url}", file=sys.stderr, flush=True)
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(cached.suffix + ".partial")
        try:
            with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as out:
                shutil.copyfileobj(response, out, 1 << 20)
        except OSError as e:
            partial.unlink(missing_ok=True)
            raise jax_patches.JaxPatchError(f"cannot download {url} ({e}); offline, pass --jax-source-dir=PATH (a JAX checkout or "
                                "archive of the pinned tag) or --distdir=DIR holding " + name) from None
        if sha256_of(partial) != pin["sha256"]:
            partial.unlink()
            raise jax_patches.JaxPatchError(f"{url} does not have the sha256 third_party/jax/pin.json pins ({pin['sha256']})")
        partial.rename(cached)
    return cached


def prepare(request: Request) -> int:
    """Before any full-mode Bazel command: JAX's patches in full/jax_patches (0), or why not (InputError:
    the JAX source given, or the pinned one, cannot give them)."""
    source = request.jax_source_dir or "the pinned JAX archive"
    if request.dry_run:
        print(f"# first: JAX's patches of {', '.join(jax_patches.PATCHED_MODULES)} from {source} into {jax_patches.JAX_PATCHES} (as its "
              "MODULE.bazel applies them)", file=sys.stderr)
        return 0
    try:
        found = jax_source_for_patches(request)
        written = jax_patches.write_jax_patches(found, registry=request.registry)
    except (jax_patches.JaxPatchError, OSError, extract_archive.UnsafeArchive, SyntaxError, ValueError) as e:
        detail = " ".join(str(e).split())  # one line, whatever the reader's message
        raise inputs.InputError(f"full mode applies JAX's patches of {', '.join(jax_patches.PATCHED_MODULES)} and cannot read them: "
                                f"{detail}") from None
    print(f"ci_build: JAX's module patches from {found}: " + ", ".join(f"{m} ({n} bytes)" for m, n in written.items()),
          file=sys.stderr)
    return 0
