"""`ci_build preflight`: this project against an XLA (and JAX) tree, both directions of the
names first (seconds, offline: preflight_names, preflight_calls, preflight_interface,
preflight_xla_targets), then a build and the native tests against it."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from third_party.gpus import extract_archive

from . import full, inputs, preflight_calls, preflight_interface, preflight_names, preflight_xla_targets, sandbox, sources, toolkit
from .commands import NATIVE_TARGETS, NATIVE_TESTS
from .paths import CACHE, CHECKOUT, PREFETCH, SANDBOX, SANDBOX_PROFILE
from .request import Request

XLA_MAIN = "https://github.com/openxla/xla"
# Where JAXCI_CLONE_MAIN_XLA=1 clones it (a fresh shallow clone, pulled on each run).
XLA_MAIN_CLONE = CACHE / "xla-main"
# Where `preflight` writes its probe package (one folder per run; .gitignore'd).
PREFLIGHT_PROBES = CHECKOUT / "build" / "preflight_probe"


def xla_checkout(environ: Mapping[str, str]) -> tuple[str | None, bool]:
    """preflight's XLA where --xla-source-dir names none, as upstream CI names it (cli.parse_args
    decides it once): (JAXCI_XLA_GIT_DIR's checkout, False), else with JAXCI_CLONE_MAIN_XLA=1
    (XLA_MAIN_CLONE, True: cmd_preflight clones XLA's main branch there first), else (None, False)."""
    if environ.get("JAXCI_XLA_GIT_DIR"):
        return environ["JAXCI_XLA_GIT_DIR"], False
    if environ.get("JAXCI_CLONE_MAIN_XLA") == "1":
        return str(XLA_MAIN_CLONE), True
    return None, False


def clone_xla_main(dest: Path, dry_run: bool) -> int:
    if dest.is_dir():
        return sandbox.run(["git", "-C", str(dest), "pull", "--ff-only"], dry_run)
    return sandbox.run(["git", "clone", "--depth=1", XLA_MAIN, str(dest)], dry_run)


def check_xla_targets(request: Request) -> int:
    """The other direction, in well under a second and without Bazel: every XLA target this
    project's BUILD files name (for --mode) is declared in the XLA tree. 1 if one is not."""
    if not request.xla_source_dir:
        return 0
    xla = Path(request.xla_source_dir).expanduser()
    used = preflight_xla_targets.xla_labels(preflight_xla_targets.our_texts(CHECKOUT, request.mode))
    try:
        packages = preflight_xla_targets.build_files(preflight_names.tree_texts(xla))
    except (OSError, extract_archive.UnsafeArchive) as e:
        detail = " ".join(str(e).split())
        raise inputs.InputError(f"preflight: cannot read {xla}: {detail}") from None
    missing = preflight_xla_targets.missing(used, packages)
    for m in missing:
        print(f"ci_build preflight: missing in XLA: {m.label} ({m.why}; used in {m.used_in})", file=sys.stderr)
    if missing:
        print(f"ci_build preflight: {xla} lacks {len(missing)} of the {len(used)} XLA targets this project's {request.mode}-mode "
              "BUILD files name; follow XLA's rename in the files named above", file=sys.stderr)
        return 1
    print(f"ci_build preflight: {xla} declares all {len(used)} XLA targets this project's {request.mode}-mode BUILD files name",
          file=sys.stderr)
    return 0


@contextlib.contextmanager
def probe_package(files: dict[str, str], prefix: str) -> Iterator[tuple[Path, str]]:
    """A folder of this checkout holding `files` (relative path -> text), and its package's
    label; removed afterwards, whatever happens."""
    PREFLIGHT_PROBES.mkdir(exist_ok=True)
    where = Path(tempfile.mkdtemp(prefix=prefix, dir=PREFLIGHT_PROBES))
    try:
        for relative, text in files.items():
            (where / relative).parent.mkdir(parents=True, exist_ok=True)
            (where / relative).write_text(text)
        yield where, "//" + where.relative_to(CHECKOUT).as_posix()
    finally:
        shutil.rmtree(where, ignore_errors=True)


def check_rocm_names(request: Request, texts: list[tuple[str, str]]) -> int:
    """The first step of a pre-flight, in seconds: every @local_config_rocm label and
    build_defs.bzl symbol the XLA/JAX trees' files (`texts`) name, asked of this project's
    @local_config_rocm through `bazel query` (Bazel's own answer). Prints each missing one
    with the first file that uses it; 1 if any is missing."""
    trees = [Path(p) for p in (request.xla_source_dir, request.jax_source_dir) if p]
    t0 = time.monotonic()
    uses = preflight_names.collect_texts(texts)
    labels = preflight_names.labels_of(uses)
    symbols = sum(len(s) for s in preflight_names.symbols_by_module(uses).values())
    print(f"ci_build preflight: {', '.join(str(t) for t in trees)} name {len(labels)} targets and load {symbols} "
          f"symbols of @local_config_rocm; asking Bazel which this project's answers", file=sys.stderr)
    if request.dry_run:
        return 0
    files = {f"{folder}/BUILD.bazel": text for folder, text in preflight_names.probe_packages(uses).items()}
    files["BUILD.bazel"] = ""  # so that the pattern below matches even with no symbol
    with probe_package(files, "p") as (_, package):
        expression = " + ".join([f"set({' '.join(labels)})"] * bool(labels) + [f"{package}/...:all"])
        cmd = sandbox.bazel(request) + ["query", "--keep_going", *toolkit.rocm_flags(request), "--output=label", expression]
        print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
        result = sandbox.spawn(cmd, cwd=CHECKOUT, capture_output=True, text=True)
    present = preflight_names.present_labels(result.stdout)
    missing = {label for label in labels if label not in present}
    missing |= preflight_names.missing_symbols(result.stderr) & set(uses)
    if result.returncode not in (0, 3) or (result.returncode == 3 and not missing):
        # 3 is query's "partial result" (a missing name); anything else is Bazel failing
        print(result.stderr, file=sys.stderr)
        print(f"ci_build preflight: bazel query failed (exit {result.returncode}) before it could answer", file=sys.stderr)
        return result.returncode or 1
    for line in preflight_names.report(uses, missing):
        print(f"ci_build preflight: {line}", file=sys.stderr)
    took = time.monotonic() - t0
    if missing:
        print(f"ci_build preflight: @local_config_rocm lacks {len(missing)} of the {len(uses)} names these trees use "
              f"({took:.1f} s); add them to third_party/gpus/templates (XLA's meaning: its third_party/gpus/rocm/"
              "BUILD.tpl and build_defs.bzl.tpl)", file=sys.stderr)
        return 1
    print(f"ci_build preflight: @local_config_rocm answers all {len(uses)} names ({took:.1f} s)", file=sys.stderr)
    return 0


def check_rocm_calls(request: Request, texts: list[tuple[str, str]],
                     findings: preflight_calls.Findings | None = None) -> int:
    """The second step, in seconds: every call the trees make into @local_config_rocm's .bzl
    files, every select() keyed on one of its targets, every one of its targets in a deps list
    and every value they give its build settings, made again in a probe package of this
    checkout (preflight_calls) so that Bazel says what ours rejects: loading for the calls,
    analysis for the rest. One line per rejection, at the tree's file:line; 1 if any."""
    t0 = time.monotonic()
    findings = findings or preflight_calls.collect(texts)
    probe = preflight_calls.probe_files(findings)
    print(f"ci_build preflight: {len(findings.calls)} distinct calls into @local_config_rocm, {len(findings.select_keys)} "
          f"select() keys, {len(findings.dependencies)} of its targets in deps, {len(findings.flag_values)} build-setting "
          "values; asking Bazel which this project's accepts", file=sys.stderr)
    if request.dry_run:
        return 0
    with probe_package(probe.files, "c") as (where, package):
        flags = shlex.join(toolkit.rocm_flags(request))
        bazel = shlex.join(sandbox.bazel_word(request))
        # One sandbox run, one Bazel server: each command's errors in a file of its own.
        script = [f"{bazel} query --keep_going {flags} {package}/{preflight_calls.CALLS_DIR}/...:all >/dev/null 2>{where}/calls.err",
                  f"{bazel} build --nobuild --keep_going {flags} {package}/{preflight_calls.ANALYSIS_DIR}:all 2>{where}/analysis.err"]
        settings = sorted(probe.flag_settings.items())
        for n, ((setting, value), target) in enumerate(settings):
            script.append(f"{bazel} build --nobuild {flags} {shlex.quote(f'--{setting}={value}')} "
                          f"{package}/{preflight_calls.ANALYSIS_DIR}:{target} 2>{where}/flag{n}.err")
        cmd = sandbox.wrap(request, ["sh", "-c", "; ".join(script) + "; true"])
        print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
        sandbox.spawn(cmd, cwd=CHECKOUT)
        read = lambda name: (where / name).read_text() if (where / name).is_file() else ""  # noqa: E731
        found = preflight_calls.call_rejections(probe, str(where), package, findings, read("calls.err"))
        found += preflight_calls.analysis_rejections(probe, str(where), package, findings, read("analysis.err"))
        for n, ((setting, value), _) in enumerate(settings):
            rejection = preflight_calls.flag_rejection(findings, setting, value, package, read(f"flag{n}.err"))
            found += [rejection] if rejection else []
    rejections = sorted(r for r in found if not r.toolkit_gap)
    gaps = sorted(r for r in found if r.toolkit_gap)
    for rejection in rejections:
        print(f"ci_build preflight: {rejection.line()}", file=sys.stderr)
    for gap in gaps:
        print(f"ci_build preflight: note: {gap.line()}", file=sys.stderr)
    if gaps:
        print(f"ci_build preflight: note: the toolkit lacks {len(gaps)} librar{'y' if len(gaps) == 1 else 'ies'} these trees "
              "link (above): targets that need them fail to build with it, the rest build", file=sys.stderr)
    took = time.monotonic() - t0
    checked = len(findings.calls) + len(findings.select_keys) + len(findings.dependencies) + len(findings.flag_values)
    if rejections:
        print(f"ci_build preflight: @local_config_rocm rejects {len(rejections)} of the {checked} calls and uses above "
              f"({took:.1f} s); make third_party/gpus/templates accept them as XLA's does (its third_party/gpus/rocm/"
              "build_defs.bzl.tpl and BUILD.tpl)", file=sys.stderr)
        return 1
    print(f"ci_build preflight: @local_config_rocm accepts all {checked} calls and uses ({took:.1f} s)", file=sys.stderr)
    return 0


def interface_command(request: Request, where: Path, names: list[str],
                      configs: list[preflight_interface.Config]) -> list[str]:
    """The one sandbox run of check_interface, its answers written into the probe folder `where`."""
    package = "//" + where.relative_to(CHECKOUT).as_posix() if names else None
    lines = preflight_interface.script(sandbox.bazel_word(request), str(where), package, configs)
    return sandbox.wrap(request, ["sh", "-c", "; ".join(lines) + "; true"])


def _read(where: Path, name: str) -> str:
    return (where / name).read_text(errors="replace") if (where / name).is_file() else ""


def _errors(bazel_stderr: str) -> list[str]:
    return [line for line in bazel_stderr.splitlines() if line.startswith("ERROR:")]


def check_interface(request: Request, texts: list[tuple[str, str]]) -> int:
    """The third step, in seconds: every environment variable XLA's rocm_configure.bzl reads is
    read by ours or named by it as not needed, and every --config name JAX's build/rocm/rocm.bazelrc
    defines is defined by ours; both asked of Bazel in one run (preflight_interface). One line per
    unanswered name, at the tree's file:line; 1 if any.

    In both modes from this checkout's own root: our rocm_configure.bzl is the same file there,
    and full/.bazelrc imports the same rocm/rocm.bazelrc, while full/'s Bazel would resolve
    upstream's whole graph (the registry) to expand a config that sets a Starlark flag."""
    t0 = time.monotonic()
    pi = preflight_interface
    environ_files = pi.tree_files(texts, pi.XLA_ROCM_CONFIGURE)
    bazelrc_files = pi.tree_files(texts, pi.JAX_ROCM_BAZELRC)
    names: dict[str, pi.EnvName] = {}
    configs: dict[str, pi.Config] = {}
    for file, text in environ_files:
        try:
            findings = pi.environ_names(text, file)
        except pi.UnreadableStarlark as e:
            print(f"ci_build preflight: cannot read the environment variables of {e}", file=sys.stderr)
            return 1
        for name, use in findings.names.items():
            names.setdefault(name, use)
        for read in findings.unresolved:
            print(f"ci_build preflight: note: {read.file}:{read.line}: {read.how}: which variable it reads is not known from "
                  "the text; not checked", file=sys.stderr)
    for file, text in bazelrc_files:
        for name, config in pi.bazelrc_configs(text, file).items():
            configs.setdefault(name, config)
    if request.xla_source_dir and not environ_files:
        print(f"ci_build preflight: note: {request.xla_source_dir} has no {pi.XLA_ROCM_CONFIGURE}: the environment variables "
              "it reads are not checked", file=sys.stderr)
    if request.jax_source_dir and not bazelrc_files:
        print(f"ci_build preflight: note: {request.jax_source_dir} has no {pi.JAX_ROCM_BAZELRC}: its --config names are not "
              "checked", file=sys.stderr)
    unasked = [c for c in configs.values() if pi.config_command([], c) is None]
    for config in unasked:
        print(f"ci_build preflight: note: {config.where}: --config={config.name} is for {', '.join(config.commands)} only; "
              "not checked", file=sys.stderr)
    asked = [c for c in configs.values() if c not in unasked]
    if not names and not asked:
        return 0
    asking = [f"XLA's rocm_configure.bzl reads {len(names)} environment variables"] * bool(names)
    asking += [f"JAX's rocm.bazelrc defines {len(asked)} --config names"] * bool(asked)
    print(f"ci_build preflight: {' and '.join(asking)}; asking Bazel which this project's answers", file=sys.stderr)
    env_list = sorted(names)
    if request.dry_run:
        print("+ " + shlex.join(interface_command(request, PREFLIGHT_PROBES / "iXXXXXXXX", env_list, asked)), file=sys.stderr)
        return 0
    with probe_package(pi.environ_probe(env_list) if env_list else {}, "i") as (where, package):
        cmd = interface_command(request, where, env_list, asked)
        print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
        sandbox.spawn(cmd, cwd=CHECKOUT)
        env_out, env_err = _read(where, "env.out"), _read(where, "env.err")
        answers = [(_read(where, f"config{i}.err"), _read(where, f"config{i}.rc").strip()) for i in range(len(asked) + 1)]
    took = time.monotonic() - t0
    rc = 0
    if env_list:
        missing = pi.unanswered(env_list, package, env_out)
        if missing is None:
            print("\n".join(_errors(env_err)[-20:]) or env_err[-4000:], file=sys.stderr)
            print(f"ci_build preflight: our {pi.OUR_ROCM_CONFIGURE} did not load in the probe (above): it must export "
                  f"{pi.READ} and {pi.NOT_NEEDED}", file=sys.stderr)
            rc = 1
        else:
            for line in pi.environ_report(names, missing):
                print(f"ci_build preflight: {line}", file=sys.stderr)
            if missing:
                print(f"ci_build preflight: ours does not answer {len(missing)} of the {len(names)} environment variables "
                      f"XLA's rocm_configure.bzl reads ({took:.1f} s); read them in third_party/gpus/rocm_configure.bzl "
                      f"({pi.READ}) or say there why not ({pi.NOT_NEEDED})", file=sys.stderr)
                rc = 1
            else:
                print(f"ci_build preflight: ours answers all {len(names)} environment variables XLA's rocm_configure.bzl "
                      f"reads ({took:.1f} s)", file=sys.stderr)
    if asked:
        rc = max(rc, _config_answers(asked, answers, took))
    return rc


def _config_answers(asked: list[preflight_interface.Config], answers: list[tuple[str, str]], took: float) -> int:
    """Reads Bazel's answers (stderr, exit status) for the sentinel, then each config."""
    pi = preflight_interface
    (sentinel_err, _), *answers = answers
    if pi.SENTINEL not in pi.not_defined(sentinel_err):
        print("\n".join(_errors(sentinel_err)[-20:]) or sentinel_err[-4000:], file=sys.stderr)
        print(f"ci_build preflight: Bazel did not say that --config={pi.SENTINEL}, which no .rc file defines, is undefined "
              "(above): its silence on JAX's configs would prove nothing", file=sys.stderr)
        return 1
    missing, unanswered = [], []
    for config, (err, status) in zip(asked, answers):
        if config.name in pi.not_defined(err):
            missing.append(config)
        elif not status:  # its command never ran to the end (the run was cut short)
            unanswered.append(config.name)
        elif status != "0":
            # Defined, and Bazel stopped later (a flag ours rejects): not this check's, worth a
            # note. `bazel test` without targets always stops, saying so.
            said = [e for e in _errors(err) if "Unable to run tests" not in e]
            if said:
                print(f"ci_build preflight: note: --config={config.name} is defined, but Bazel stopped at: {said[0]}",
                      file=sys.stderr)
    for line in pi.config_report(missing, "this project's .bazelrc"):
        print(f"ci_build preflight: {line}", file=sys.stderr)
    if unanswered:
        print(f"ci_build preflight: Bazel gave no answer for --config={', '.join(unanswered)}: the run ended before it",
              file=sys.stderr)
        return 1
    if missing:
        print(f"ci_build preflight: this project's .bazelrc lacks {len(missing)} of the {len(asked)} --config names JAX's "
              f"rocm.bazelrc defines ({took:.1f} s); define them in rocm/rocm.bazelrc", file=sys.stderr)
        return 1
    print(f"ci_build preflight: this project's .bazelrc defines all {len(asked)} --config names of JAX's rocm.bazelrc "
          f"({took:.1f} s)", file=sys.stderr)
    return 0


def check_preflight(request: Request) -> Request:
    """preflight's inputs, before the lock (cli.main): the toolkit, which XLA (--xla-source-dir,
    else $JAXCI_XLA_GIT_DIR, else a clone with JAXCI_CLONE_MAIN_XLA=1: xla_checkout; --names-only
    can do with a JAX tree alone) and the local trees."""
    request = toolkit.check_inputs(request)
    if not (request.xla_source_dir or (request.names_only and request.jax_source_dir)):
        raise inputs.InputError("preflight: which XLA? Pass --xla-source-dir=DIR, set JAXCI_XLA_GIT_DIR=DIR, or "
                                "JAXCI_CLONE_MAIN_XLA=1 to clone XLA's main branch.")
    sources.check_local_sources(request)
    if not request.names_only:
        full.check_inputs(request)  # --names-only reads files, and builds nothing
    return request


def cmd_preflight(request: Request) -> int:
    """XLA pre-flight: first check that this project's @local_config_rocm answers every name the
    XLA (and JAX) tree uses and accepts every call it makes, and that ours answers the environment
    variables XLA's rocm_configure reads and the --config names JAX's rocm.bazelrc defines
    (seconds, offline), then build the native artifacts against the XLA
    checkout and run the native tests (--names-only stops after the check).

    The checkout: --xla-source-dir, else $JAXCI_XLA_GIT_DIR, else (with JAXCI_CLONE_MAIN_XLA=1)
    a fresh shallow clone of XLA's main branch under ~/.cache/jax-rocm-build/xla-main."""
    if request.clone_xla:
        rc = clone_xla_main(Path(request.xla_source_dir), request.dry_run)
        if rc:
            print(f"ci_build preflight: could not clone {XLA_MAIN} (no network?); pass --xla-source-dir=DIR", file=sys.stderr)
            return rc
    rc = 0 if request.host else sandbox.run(SANDBOX + ["ensure", "--rocm=full"], request.dry_run)
    # Full mode's graph applies JAX's patches (full/jax_patches): written first, so that
    # `preflight --names-only` with a JAX tree is also how to write them without a build. The
    # name check needs none of them and stays offline: there, patches that cannot be had (the
    # pinned JAX archive or the registry's files are downloads) are a note, not a failure.
    if not rc and request.mode == "full" and (request.jax_source_dir or not request.names_only):
        try:
            rc = full.prepare(request)
        except inputs.InputError as e:
            if not request.names_only:
                raise
            print(f"ci_build preflight: note: {e} (the name check needs no patches; a build does)", file=sys.stderr)
    # Each check reported in full: the names XLA/JAX use of ours, how they call ours, the
    # environment and --config names around them, then the names we use of XLA.
    if rc:
        return rc
    # The trees' Bazel files, read once for the names and for the calls.
    trees = [Path(p) for p in (request.xla_source_dir, request.jax_source_dir) if p]
    try:
        texts = preflight_names.named_texts(trees)
    except (OSError, extract_archive.UnsafeArchive) as e:
        detail = " ".join(str(e).split())
        raise inputs.InputError(f"preflight: cannot read {', '.join(map(str, trees))}: {detail}") from None
    # The calls are read (seconds of Python over XLA's BUILD files) while Bazel answers the names.
    with concurrent.futures.ThreadPoolExecutor(1) as reader:
        calls = reader.submit(preflight_calls.collect, texts)
        rc = check_rocm_names(request, texts)
        rc = max(rc, check_rocm_calls(request, texts, calls.result()), check_interface(request, texts),
                 check_xla_targets(request))
    if rc or request.names_only:
        return rc
    if request.mode == "full":
        return preflight_full(request)
    sources.check_pins_reachable(request)
    toolkit.announce_rocm_source(request)
    flags = sandbox.bazel_flags(request)
    host = request.host
    if host:
        sandbox.provision(request, SANDBOX_PROFILE)  # the pinned PyPI archives (the sandbox's PREFETCH below also fetches abseil)
    return sandbox.run_steps("preflight", [
        *([] if host else [PREFETCH]),
        sandbox.bazel(request) + ["build", *flags, *NATIVE_TARGETS],
        sandbox.bazel(request) + ["test", *flags, *NATIVE_TESTS],
    ], request.dry_run)


def preflight_full(request: Request) -> int:
    """Full mode, after the names: resolve upstream's graph with the XLA checkout as its xla
    module, check that every module sees our local_config_rocm, then build the plugin and the
    FFI modules in that graph."""
    in_full = full.full_bazel(request)
    flags = full.full_flags(request)
    # The root module's mapping first: it names the others' canonical names (Bazel 7 spells
    # them `xla~`, Bazel 8 `xla+`) and this project's local_config_rocm, which they must all see.
    resolve = in_full + ["mod", "dump_repo_mapping", "", *flags]
    print("+ " + shlex.join(resolve), file=sys.stderr, flush=True)
    if request.dry_run:
        return full.build_native(request, "preflight")
    t0 = time.monotonic()
    result = sandbox.spawn(resolve, cwd=CHECKOUT, capture_output=True, text=True)
    mappings = _repo_mappings(result, 1)
    if mappings is None:
        return result.returncode or 1
    [root] = mappings
    modules = {"xla": "local_config_rocm", "rules_ml_toolchain": "config_rocm_hipcc", "jax_rocm_build": "local_config_rocm"}
    ours = root.get("local_config_rocm")
    missing = [name for name in (*modules, "local_config_rocm") if name not in root]
    if missing:
        print(f"ci_build preflight: full/MODULE.bazel's root module does not see {', '.join(missing)}: full/MODULE.bazel "
              "is out of date", file=sys.stderr)
        return 1
    canonical = [root[name] for name in modules]
    result = sandbox.spawn(in_full + ["mod", "dump_repo_mapping", *canonical, *flags], cwd=CHECKOUT, capture_output=True, text=True)
    found = _repo_mappings(result, len(canonical))
    if found is None:
        return result.returncode or 1
    wrong = [f"{module} maps {name} to {mapping.get(name)}" for (module, name), mapping in zip(modules.items(), found)
             if mapping.get(name) != ours]
    if wrong:
        print(f"ci_build preflight: in the full graph, not every module sees this project's ROCm ({ours}): "
              f"{'; '.join(wrong)}; full/MODULE.bazel's override_repo lines are out of date", file=sys.stderr)
        return 1
    print(f"ci_build preflight: upstream's graph resolved ({time.monotonic() - t0:.1f} s): xla, rules_ml_toolchain and "
          "this project see our @local_config_rocm", file=sys.stderr)
    return full.build_native(request, "preflight")


def _repo_mappings(result, count: int) -> list[dict[str, str]] | None:
    """The `count` JSON mappings `bazel mod dump_repo_mapping` printed; None (having said why)
    when the graph did not resolve."""
    mappings = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode == 0 and len(mappings) == count:
        return mappings
    print(result.stderr[-4000:], file=sys.stderr)
    print("ci_build preflight: upstream's module graph did not resolve (above); offline, pass --registry=DIR (a "
          "checkout of the Bazel Central Registry) and --distdir=DIR (the pinned rules_ml_toolchain archive)",
          file=sys.stderr)
    return None

