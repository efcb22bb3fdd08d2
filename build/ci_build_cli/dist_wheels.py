"""`ci_build dist_wheels`: both wheels built, checked, tagged and collected into --output-dir.

What the inputs say of each other is checked before anything runs (toolkit.check_inputs,
full.check_inputs); what only the toolkit can say, before the compile: --rocm-version against
the finder's answer for a toolkit folder (or the default search), or, for a TheRock tarball,
against the manifest the repository rule read once it fetched the tarball.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from third_party.gpus import find_rocm_config as finder

from . import full, inputs, pythons, sandbox, sources, toolkit, wheels
from .options import RBE_CONFIGS
from .paths import CACHE, CHECKOUT, OURS, SANDBOX_PROFILE
from .request import Request

# The finder's answer, as the root module of either mode's graph names it (kernels mode's and
# full/MODULE.bazel both use_repo our @local_config_rocm).
ROCM_CONFIG = "@local_config_rocm//:rocm_config.json"


# --compiler=clang: the sandbox's clang (Debian sid's LLVM 22).
SANDBOX_CLANG = "/usr/lib/llvm-22/bin/clang"


def clang(request: Request) -> str:
    """The clang of --compiler=clang: the sandbox's; in host mode the same path where this machine
    has it (the same flags, the same build), else the clang on PATH (InputError if none)."""
    if not request.host or Path(SANDBOX_CLANG).exists():
        return SANDBOX_CLANG
    found = shutil.which("clang")
    if not found:
        raise inputs.InputError(f"--compiler=clang in host mode: no clang on PATH (nor {SANDBOX_CLANG}): install clang, "
                                "or leave --compiler out")
    return found


def step(number: int, what: str) -> None:
    print(f"ci_build dist_wheels [{number}/3]: {what}", file=sys.stderr, flush=True)


def probe_toolkit(request: Request) -> tuple[str, dict | None]:
    """(which toolkit, the finder's rocm_config.json of it or None), before any build, for a
    toolkit folder or the default search: the finder over the toolkit the build will use (in the
    sandbox, where it looks; in host mode on this machine). A TheRock tarball is checked by its
    name (toolkit.check_inputs) and its manifest (check_fetched_toolkit) instead."""
    path = request.rocm_source.repo_env.get("ROCM_PATH")
    probe = ["python3", finder.__file__] + (["--rocm-path", path] if path else [])
    result = sandbox.spawn(sandbox.wrap(request, probe), cwd=CHECKOUT, capture_output=True, text=True)
    if result.returncode != 0:
        return f"the toolkit at {path or 'the default search'}", None
    config = json.loads(result.stdout)
    return f"the toolkit at {config['rocm_toolkit_path']}", config


def check_toolkit(request: Request) -> None:
    """--rocm-version and --amdgpu-targets against the toolkit itself, before Bazel (InputError):
    its release, and the targets its clang compiles for (the finder's answer)."""
    where, config = probe_toolkit(request)
    if request.rocm_version:
        versions = [config.get("rocm_version") if config else None]
        if not inputs.version_agrees(request.rocm_version, versions):
            raise inputs.InputError(toolkit.version_mismatch(request.rocm_version, where, versions))
    supported = (config or {}).get("amdgpu_targets_supported")
    if request.amdgpu_targets and supported:
        unknown = finder.unknown_targets(list(request.amdgpu_targets), supported)
        if unknown:
            raise inputs.InputError(f"--amdgpu-targets={inputs.listed_targets(request.amdgpu_targets)}: "
                                    f"{', '.join(unknown)} is not a target "
                                    f"{where}'s clang ({config.get('clang_path')}) compiles for; it knows: "
                                    f"{' '.join(supported)}")


def say_why_it_failed(request: Request, rc: int, command: list[str], output: str) -> None:
    """After a failed build: the wheel settings Bazel's messages named, in ci_build's flags; in
    full mode, the one closing line naming what Bazel could not fetch; where an action failed, the
    way out of a damaged output base (sandbox.damaged_outputs_hint)."""
    for line in wheels.in_ci_build_words(output):
        print(f"ci_build dist_wheels: {line}", file=sys.stderr)
    sandbox.say_damaged_outputs_hint("dist_wheels", rc, command, output)
    if request.mode == "full":
        full.say_stop_line(request, "dist_wheels", output)


def check_fetched_toolkit(request: Request, plan: BuildPlan) -> int:
    """--rocm-version against a TheRock tarball's own manifest, before the compile: `bazel build
    --nobuild` with the build's own flags runs the repository rule (download, extraction, the
    finder) and the analysis the build then reuses; its rocm_config.json, which Bazel names
    (@local_config_rocm, whatever the repository's canonical name), says the release."""
    name = toolkit.tarball_release(request)[0]
    print(f"ci_build dist_wheels: fetching {name} to check --rocm-version={request.rocm_version} against its manifest "
          "before anything compiles", file=sys.stderr, flush=True)
    wheels.prepare_events_file(plan.events)
    command = plan.command("--nobuild")
    rc, output = sandbox.run_bazel(command, dry_run=False)
    if rc:
        say_why_it_failed(request, rc, command, output)
        return rc
    queried = wheels.query_files(plan.bazel, plan.flags, ROCM_CONFIG)
    try:
        config = json.loads(queried.paths[0].read_text())
    except (AttributeError, IndexError, OSError, ValueError) as e:
        print(f"ci_build dist_wheels: cannot read what the repository rule found ({ROCM_CONFIG}: "
              f"{e if queried else 'Bazel did not name it'})", file=sys.stderr)
        return 1
    versions = [config.get("rocm_version"), (config.get("therock") or {}).get("rocm_package_version")]
    if not inputs.version_agrees(request.rocm_version, versions):
        raise inputs.InputError(toolkit.version_mismatch(request.rocm_version, f"{name}, by its manifest,", versions))
    return 0


def choose_wheel_kind(request: Request) -> Request:
    """The request with the kind of wheel decided (inputs.wheel_kind: dev for wheels that will hold
    stand-ins unless --wheel-kind or --allow-stand-ins says otherwise), with a note when it chose
    dev itself. After the source trees are checked: the stand-ins are found in them."""
    stand_ins = sources.expected_stand_ins(request)
    kind = inputs.wheel_kind(request.wheel_kind, stand_ins, request.allow_stand_ins, request.wheel_date,
                             request.wheel_commit)
    notes = request.notes
    if request.wheel_kind is None and kind == "dev":
        notes += (f"making dev wheels, as they will hold stand-ins ({'; '.join(stand_ins)}); --wheel-kind=release "
                  "--allow-stand-ins makes release wheels of them, labelled as such",)
    return dataclasses.replace(request, wheel_kind=kind, notes=notes)


def check_dist_wheels(request: Request) -> Request:
    """dist_wheels' inputs, before the lock (cli.main): what they say of each other, the
    toolkit, the source trees, the kind of wheel (decided here when --wheel-kind is not given:
    the request returned, which the command runs with), the manylinux policy, --output-dir, then
    what may ask the network: full mode's and the pins."""
    request = toolkit.check_inputs(request)
    sources.check_local_sources(request)
    if request.python_versions:
        pythons.check_requested(request.python_versions, sources.jax_pythons(request.source_dirs.get("jax")).pythons,
                                request.host)
    request = choose_wheel_kind(request)
    required = wheels.required_policy(request)
    if required:
        wheels.policy_name(required)  # a misspelt policy fails before anything runs
    inputs.output_dir(request.output_dir or CHECKOUT / "dist")
    full.check_inputs(request)
    sources.check_pins_reachable(request)
    return request


@dataclasses.dataclass(frozen=True)
class BuildPlan:
    """One `bazel build` of wheels: the command up to `build`, its flags, the wheel target (a
    rocm_wheel_set), the Pythons of its plugin wheels, and where its build events go (which
    name the wheels: wheels.built_wheels)."""
    bazel: list[str]
    flags: list[str]
    target: str
    interpreters: list[pythons.Interpreter]
    events: Path = dataclasses.field(default_factory=wheels.events_file)

    def build_args(self, *extra: str) -> list[str]:
        """The flags, `extra` ones, the event flags, then the target."""
        return [*self.flags, *extra, *wheels.event_flags(self.events), self.target]

    def command(self, *extra: str) -> list[str]:
        return self.bazel + ["build", *self.build_args(*extra)]


def prepare_toolkit(request: Request) -> int:
    """Says which toolkit, makes the sandbox (and fetches the pinned archives), and checks the
    toolkit against --rocm-version and --amdgpu-targets where that needs no build."""
    toolkit.announce_rocm_source(request)
    names = toolkit.wheel_names_note(request)
    if names:
        print(f"ci_build dist_wheels: {names}", file=sys.stderr)
    rc = sandbox.provision(request, SANDBOX_PROFILE)
    if rc:
        return rc
    if (request.rocm_version or request.amdgpu_targets) and not request.dry_run and not toolkit.tarball_release(request):
        check_toolkit(request)
    return 0


def choose_interpreters(request: Request) -> list[pythons.Interpreter]:
    """The Pythons to build plugin wheels for (pythons.pick_interpreters), saying which of
    upstream's are left out when --python-versions does not choose."""
    host = request.host
    supported = sources.jax_pythons(request.source_dirs.get("jax")).pythons  # what the JAX tree builds for
    found = pythons.find_host_interpreters() if host else pythons.find_interpreters(predict_from_layers=not request.dry_run)
    if found is None:  # a dry run, and no sandbox yet: it is not made to find its Pythons
        found = pythons.assumed_sandbox_interpreters(supported)
    interpreters = pythons.pick_interpreters(request.python_versions, found, supported, host)
    if not request.python_versions:
        for line in pythons.left_out(found, supported, host):
            print(f"ci_build dist_wheels: {line}", file=sys.stderr)
    return interpreters


def release_configs(request: Request) -> tuple[str, ...]:
    """rocm/rocm.bazelrc's configs of a release build, in either mode: one that includes rocm
    (rocm_release; with remote execution its config, then release_settings), then the host
    toolchain's (Zig's clang for glibc 2.28: the sandbox's glibc no longer decides the policy;
    --compiler configures the sandbox's own toolchain, --host-toolchain=sandbox)."""
    rbe = RBE_CONFIGS[request.rbe]
    configs = (rbe, "release_settings") if rbe else ("rocm_release",)
    return configs + (("manylinux_2_28",) if request.host_toolchain == "manylinux_2_28" else ())


def reproducible() -> list[str]:
    return [f"--action_env=SOURCE_DATE_EPOCH={os.environ['SOURCE_DATE_EPOCH']}"] if os.environ.get("SOURCE_DATE_EPOCH") else []


def kernels_build_flags(request: Request, interpreters: list[pythons.Interpreter]) -> list[str]:
    """This project's graph: the release configs and the toolkit, the wheels' version flags, the
    Pythons, the compiler."""
    flags = sandbox.bazel_flags(request, release_configs(request)) + wheels.wheel_flags(request)
    if interpreters:
        flags.append(f"--repo_env=JAX_ROCM_PYTHON={','.join(i.path for i in interpreters)}")
    if request.compiler == "clang":
        flags.append(f"--repo_env=CC={clang(request)}")
    return flags + reproducible()


PJRT_AND_PLUGIN, PLUGIN_ONLY = "//:jax_rocm_wheels", "//:jax_rocm_plugin_wheel"


def plan_build(request: Request, interpreters: list[pythons.Interpreter]) -> list[BuildPlan] | int:
    """The builds of the wheels: in this project's graph one, for every Python; in upstream's
    (full/) one per Python, as JAX's own build runs, in one output base and action cache, the
    PJRT wheel (which no Python changes) built by the first only. An exit code where full mode's
    preparation failed."""
    binds = [i.bind for i in interpreters if i.bind]
    if request.mode != "full":
        return [BuildPlan(sandbox.bazel(request, binds), kernels_build_flags(request, interpreters), PJRT_AND_PLUGIN,
                          interpreters)]
    rc = full.prepare(request)
    if rc:
        return rc
    bazel = full.full_bazel(request, binds)
    flags = full.full_flags(request, release_configs(request)) + wheels.wheel_flags(request) + reproducible()
    return [BuildPlan(bazel, [*flags, *full.full_python(python)], PJRT_AND_PLUGIN if n == 0 else PLUGIN_ONLY, [python])
            for n, python in enumerate(interpreters)]


def refuse_unlabelled_release(request: Request, built: list[wheels.BuiltWheel]) -> int:
    """What the built wheels' build_info.json say of stand-ins, against the kind of wheel: the
    flags foretold it (choose_wheel_kind), the wheels have the last word."""
    stand_ins = {w.path.name: w.stand_ins for w in built if w.stand_ins}
    if not stand_ins:
        return 0
    listed = "; ".join(f"{name}: {', '.join(a)}" for name, a in stand_ins.items())
    if request.wheel_kind == "release" and not request.allow_stand_ins:
        print(f"ci_build dist_wheels: refusing to make release wheels that hold stand-ins from examples/ ({listed}). "
              "Build them from the real sources (the PJRT plugin needs XLA: --xla-source-dir=DIR or the pin; JAX's "
              "modules need JAX: --jax-source-dir=PATH or the pin; _triton and rocm_plugin_extension need XLA's "
              "internals), make --wheel-kind=dev or nightly wheels, or pass "
              "--allow-stand-ins to ship them labelled as such.", file=sys.stderr)
        return 1
    print(f"ci_build dist_wheels: these wheels hold stand-ins from examples/, labelled in their description and "
          f"build_info.json: {listed}", file=sys.stderr)
    return 0


def audited_tag(paths: list[Path], required: str | None) -> str | None:
    """The platform tag the audit allows (None, said, where it could not run or a wheel failed):
    a policy that was required (and met) is the tag, being what the toolchain promises even where
    today's symbols would also meet an older one; otherwise the best policy certified."""
    verdicts = wheels.audit_wheels(paths, required)
    if verdicts is None:
        print("ci_build dist_wheels: the wheel audit could not run (see above)", file=sys.stderr)
        return None
    failed = [name for name, v in verdicts.items() if not v["ok"]]
    if failed:
        print(f"ci_build dist_wheels: {len(failed)} wheel(s) failed the audit: {', '.join(failed)}", file=sys.stderr)
        return None
    if required:
        return f"{wheels.policy_name(required)}_x86_64"
    return wheels.least_compatible([v["platform_tag"] for v in verdicts.values()])


def report_toolkit(request: Request, info: dict, output_dir: Path) -> int:
    """Says what the wheels were built against; 1 where --rocm-version disagrees (the checks
    before the build saw the toolkit the flags name; this one also sees one MODULE.bazel declares)."""
    release = info.get("rocm_package_version") or info["rocm_version"]
    family = f", TheRock family {info['rocm_therock_family']}" if info.get("rocm_therock_family") else ""
    print(f"ci_build dist_wheels: built against ROCm {release} ({info.get('rocm_source', '?')}{family}) "
          f"for amdgpu targets {','.join(info.get('amdgpu_targets', []))}", file=sys.stderr)
    if request.rocm_version and not inputs.version_agrees(request.rocm_version, (info["rocm_version"], info.get("rocm_package_version"))):
        print(f"ci_build dist_wheels: built against ROCm {release}, but --rocm-version={request.rocm_version}; point the "
              f"build at that toolkit with --rocm-path or --therock-path (nothing was written to {output_dir})",
              file=sys.stderr)
        return 1
    return 0


def build_one(request: Request, plan: BuildPlan, required: str | None) -> list[Path] | int:
    """One Bazel run of the wheels: built, checked for stand-ins, audited, then built again with
    the tag the audit allows; the tagged wheels' paths, or an exit code."""
    if not request.dry_run:
        wheels.prepare_events_file(plan.events)
    if request.mode == "full":  # where the graph cannot be complete (offline, no LLVM): as much as can be had
        rc = full.build_what_can_be_built(request, "dist_wheels", plan.bazel, plan.flags, [plan.target],
                                          wheels.event_flags(plan.events))
    else:
        rc, output = sandbox.run_bazel(plan.command(), request.dry_run)
        sandbox.say_damaged_outputs_hint("dist_wheels", rc, plan.command(), output)
    if rc:
        return rc
    if request.dry_run:
        return []
    built = wheels.built_wheels(plan.events)
    if not built:
        print(f"ci_build dist_wheels: Bazel built {plan.target} but names no wheel of it (see above)", file=sys.stderr)
        return 1
    if refuse_unlabelled_release(request, built):
        return 1
    step(2, "auditing the manylinux policy (ROCm libraries excluded)")
    tag = audited_tag([w.path for w in built], required)
    if tag is None:
        return 1
    step(3, f"tagging the wheels {tag}")
    wheels.prepare_events_file(plan.events)
    rc = sandbox.run(plan.command(f"--{OURS}wheel:platform_tag={tag}"), dry_run=False)
    if rc:
        return rc
    built = wheels.built_wheels(plan.events)
    if not built:
        print(f"ci_build dist_wheels: Bazel tagged {plan.target} but names no wheel of it (see above)", file=sys.stderr)
        return 1
    return [w.path for w in built]


def collect(paths: list[Path], output_dir: Path) -> int:
    """The tagged wheels into --output-dir, and their table."""
    try:
        collected = wheels.collect_wheels(paths, output_dir)
    except OSError as e:
        print(f"ci_build dist_wheels: cannot write the wheels to {output_dir}: {e.strerror or e}; free space there or "
              f"choose another --output-dir and run again (the build is cached: it only copies). Nothing was left "
              "there; Bazel's bazel-bin still holds the last build's", file=sys.stderr)
        return 1
    print(wheels.summary_table(collected))
    return 0


def cmd_dist_wheels(request: Request) -> int:
    """Build jax_rocm<N>_pjrt and one jax_rocm<N>_plugin per Python, check them, and leave them in --output-dir."""
    required = wheels.required_policy(request)
    output_dir = inputs.output_dir(request.output_dir or CHECKOUT / "dist")  # checked already (check_dist_wheels)
    rc = prepare_toolkit(request)
    if rc:
        return rc
    plans = plan_build(request, choose_interpreters(request))
    if isinstance(plans, int):
        return plans
    with contextlib.ExitStack() as stack:
        if not request.dry_run:  # read after each build; nothing of it is left in /tmp, whatever the outcome
            stack.callback(wheels.remove_events_folder, plans[0].events)
        if request.rocm_version and toolkit.tarball_release(request):
            if request.dry_run:
                print(f"# first: the same build with --nobuild (the repository rule fetches the tarball), then "
                      f"--rocm-version={request.rocm_version} against its manifest (rocm_config.json)", file=sys.stderr)
            else:
                rc = check_fetched_toolkit(request, plans[0])
                if rc:
                    return rc
        built: list[Path] = []
        kept = "" if request.dry_run else stack.enter_context(tempfile.TemporaryDirectory(prefix="ci_build-wheels-", dir=CACHE))
        for n, plan in enumerate(plans, 1):
            python = f" for Python {plan.interpreters[0].version} ({n} of {len(plans)})" if len(plans) > 1 else ""
            step(1, f"building the wheels with Bazel{python}")
            paths = build_one(request, plan, required)
            if isinstance(paths, int):
                return paths
            # A later run (another Python) rewrites bazel-bin: each run's wheels are kept aside.
            for path in paths:
                shutil.copyfile(path, Path(kept) / path.name)
                built.append(Path(kept) / path.name)
        if request.dry_run:
            print("# then, after each build: build/ci_build_cli/wheel_audit.py on its wheels" +
                  (f" (--manylinux={required})" if required else "") + ", and the same build with "
                  f"--{OURS}wheel:platform_tag=" + (f"{required}_x86_64" if required else "<the policy it certifies>"),
                  file=sys.stderr)
            return 0
        # The tagged wheels hold the same build_info.json.
        return report_toolkit(request, wheels.read_wheel(built[0]).build_info, output_dir) or collect(built, output_dir)
