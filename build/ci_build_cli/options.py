"""The option table: every ci_build flag defined once (Option), accepted before or after the
subcommand, with the subcommands that use it; the values checked as they are parsed."""

from __future__ import annotations

import argparse
import dataclasses

from . import inputs, sources


@dataclasses.dataclass(frozen=True)
class Option:
    """One ci_build option: defined once, accepted before or after the subcommand."""
    flags: tuple[str, ...]
    group: str
    kwargs: dict
    commands: tuple[str, ...] = ()  # the subcommands that use it; () = every one

    @property
    def dest(self) -> str:
        return self.flags[0].lstrip("-").replace("-", "_")

    @property
    def default(self):
        return self.kwargs.get("default", False if self.kwargs.get("action") == "store_true" else None)


# dist_wheels --rbe[=MODE]: the rocm/rocm.bazelrc config of each mode.
# --rbe modes and the bazelrc config each builds with ("off", the default: none).
RBE_CONFIGS = {"off": None, "remote": "rocm_rbe", "dynamic": "rocm_rbe_dynamic"}

SOURCES, ROCM, WHEELS, DOCTOR, GENERAL = ("sources (XLA and JAX)", "ROCm", "wheels (dist_wheels)", "doctor", "general")
DIST_WHEELS = ("dist_wheels",)

OPTIONS = (
    Option(("--dry-run",), GENERAL, dict(action="store_true", help="print the commands without running them")),
    Option(("--host",), GENERAL, dict(
        action="store_true",
        help="host mode: no sandbox; run your own Bazel ($BAZEL, else bazelisk, else bazel on PATH) on this machine, "
             "with your ROCm and your Pythons (every python3.X on PATH with headers); the same checks, wheels, audit "
             "and tags (also JAX_ROCM_HOST=1; docs/host-mode.md)")),
    Option(("--sources",), SOURCES, dict(
        choices=("pinned", "examples"), default="pinned",
        help="pinned: XLA and JAX from third_party/{xla,jax}/pin.json (needs network the first time); examples: "
             "the offline stand-ins examples/xla (the PJRT plugin) and examples/jax (JAX's modules), labelled "
             "stand-ins in the wheels (default: %(default)s). --xla-source-dir / --jax-source-dir take precedence")),
    Option(("--mode",), SOURCES, dict(
        choices=("kernels", "full"),
        help="which graph builds; by default the sources decide: full for a real XLA (the pin, --xla-source-dir), "
             "kernels for the examples/xla stand-in. full: upstream's graph in full/ (XLA and rules_ml_toolchain as "
             "Bazel modules, our ROCm injected; the registry and the network, or --registry and --distdir); kernels: "
             "this project's own graph (JAX's FFI modules from JAX's files, offline; XLA's PJRT plugin only from "
             "examples/xla)"), ("native", "preflight", "dist_wheels")),
    Option(("--registry",), SOURCES, dict(
        metavar="DIR|URL", help="full mode: where Bazel modules resolve from (a checkout of the Bazel Central Registry "
                                "offline; default: the BCR)"), ("native", "preflight", "dist_wheels")),
    Option(("--distdir",), SOURCES, dict(
        metavar="DIR", help="full mode: archives Bazel may take instead of downloading them (e.g. the pinned "
                            "rules_ml_toolchain archive)"), ("native", "preflight", "dist_wheels")),
    Option(("--bazelrc",), SOURCES, dict(
        metavar="FILE", help="full mode: a bazelrc read after full/'s own, e.g. the full.bazelrc tests/infra/real_trees.py "
                             "writes (the graph's modules and XLA's archives from local trees, offline)"),
        ("native", "preflight", "dist_wheels")),
    Option(("--names-only",), SOURCES, dict(
        action="store_true", help="stop after checking that @local_config_rocm answers every name the trees use and "
                                  "accepts every call they make (seconds, offline, no compile); --jax-source-dir alone "
                                  "is then enough"), ("preflight",)),
    Option(("--xla-source-dir",), SOURCES, dict(
        metavar="DIR", help="build against this XLA checkout, in full mode (its xla module: --override_module=xla=DIR "
                            "--override_repository=xla=DIR, as upstream CI types it)")),
    Option(("--jax-source-dir",), SOURCES, dict(
        metavar="PATH", help="build JAX's modules from this JAX checkout or archive of one, e.g. ~/jax or "
                             "jax-v0.10.2.tar.gz, of a release this project builds (JAX "
                             f"{sources.supported_jax()}; = --override_repository=jax=PATH; default: the pin, or "
                             "examples/jax with --sources=examples)")),
    Option(("--amdgpu-targets",), ROCM, dict(
        metavar="LIST", help="e.g. gfx942,gfx950 (commas, semicolons or spaces, as TF_ROCM_AMDGPU_TARGETS; "
                             "default: the list JAX's wheels use; with a TheRock release, those of it that it has "
                             "device code for: a multi-arch release's kernel packs, a legacy tarball's family)")),
    Option(("--rocm-path",), ROCM, dict(
        metavar="DIR", help="the ROCm toolkit, mounted into the sandbox at the same path; wins over ROCM_PATH (default: "
                            "$ROCM_PATH if set, which must exist; else the sandbox's search: Debian's ROCm)")),
    Option(("--therock-path",), ROCM, dict(
        metavar="URL|TARBALL|DIR",
        help="build against a TheRock release: an https:// URL (needs --therock-sha256), a file:// URL or path of a "
             "tarball (multi-arch, full or of one family, or a legacy per-family one), or an extracted toolkit"),
        DIST_WHEELS),
    Option(("--therock-sha256",), ROCM, dict(metavar="HEX", help="sha256 of the TheRock tarball (computed for a local one)"),
           DIST_WHEELS),
    Option(("--rocm-version",), ROCM, dict(metavar="X.Y.Z", help="fail unless the toolkit found is this ROCm release"),
           DIST_WHEELS),
    Option(("--rocm",), DOCTOR, dict(
        choices=("minimal", "full"), default="full",
        help="ROCm package set of the sandbox (default: %(default)s, what the ROCm wheels need)"), ("doctor",)),
    Option(("--python-versions",), WHEELS, dict(
        metavar="LIST", help="e.g. 3.11,3.14 (default: those of the Pythons the JAX tree builds for, one "
                             "build/requirements_lock_3_NN.txt each (JAX 0.10.2: 3.11 to 3.14), that an interpreter "
                             "with headers serves, in the sandbox or on the host; each left out is named; one the tree "
                             "does not build for is refused)"),
        DIST_WHEELS),
    Option(("--host-toolchain",), WHEELS, dict(
        choices=("manylinux_2_28", "sandbox"), default="manylinux_2_28",
        help="manylinux_2_28: Zig's clang for glibc 2.28 and its libc++ (--config=manylinux_2_28; the wheels must then "
             "meet manylinux_2_28 and are tagged so); sandbox: the sandbox's own compiler (Debian sid's glibc decides "
             "the policy) (default: %(default)s)"), DIST_WHEELS),
    Option(("--compiler",), WHEELS, dict(choices=("gcc", "clang"), default="gcc",
                                         help="host C++ compiler of --host-toolchain=sandbox (default: %(default)s)"),
           DIST_WHEELS),
    Option(("--wheel-version",), WHEELS, dict(
        metavar="X.Y.Z", help="the JAX release the wheels belong to (default: the JAX tree's jax/version.py, else the pin's)"),
        DIST_WHEELS),
    Option(("--wheel-kind",), WHEELS, dict(
        choices=inputs.WHEEL_KINDS,
        help="release X.Y.Z, nightly X.Y.Z.devYYYYMMDD, dev X.Y.Z.devYYYYMMDD+g<commit> (default: dev when the "
             "wheels will hold stand-ins, as kernels mode's always do, unless --allow-stand-ins is given; release "
             "otherwise)"), DIST_WHEELS),
    Option(("--wheel-date",), WHEELS, dict(metavar="YYYYMMDD", help="date of a nightly/dev version (default: today, UTC)"),
           DIST_WHEELS),
    Option(("--wheel-commit",), WHEELS, dict(metavar="SHA", help="commit of a dev version (default: the JAX tree's)"), DIST_WHEELS),
    Option(("--wheel-post-release",), WHEELS, dict(type=int, default=0, metavar="N", help="append .postN"), DIST_WHEELS),
    Option(("--no-rocm-version-extra",), WHEELS, dict(action="store_true", help="no +rocmX.Y.Z local version"), DIST_WHEELS),
    Option(("--manylinux",), WHEELS, dict(
        metavar="POLICY", help="fail unless the wheels meet this policy, e.g. manylinux_2_28, naming each symbol that is too new, "
                               "and tag them with it (default: the host toolchain's, manylinux_2_28; with "
                               "--host-toolchain=sandbox, tag them with the best policy auditwheel certifies)"), DIST_WHEELS),
    Option(("--rbe",), WHEELS, dict(
        nargs="?", const="remote", default="off", choices=tuple(RBE_CONFIGS), metavar="off|remote|dynamic",
        help="build on remote execution, executor from user.bazelrc: --rbe or --rbe=remote = --config=rocm_rbe (every "
             "action remote); --rbe=dynamic = --config=rocm_rbe_dynamic (each action raced locally and remotely); "
             "off (default): local"),
        DIST_WHEELS),
    Option(("--allow-stand-ins",), WHEELS, dict(
        action="store_true", help="make release wheels that hold artifacts built from examples/ stand-ins (they "
                                  "are labelled as such); without it --wheel-kind=release of them is refused, and "
                                  "they are dev wheels by default"), DIST_WHEELS),
    Option(("--output-dir",), WHEELS, dict(metavar="DIR", help="where the wheels go (default: dist/ in the checkout)"), DIST_WHEELS),
)


def options_parser(with_defaults: bool) -> argparse.ArgumentParser:
    """Every option, as a parent parser: with its defaults for the top-level parser, with
    argparse.SUPPRESS for the subcommands' copies (a subparser writes its defaults over the
    namespace, which would clobber a value given before the subcommand)."""
    p = argparse.ArgumentParser(add_help=False)
    groups: dict[str, argparse._ArgumentGroup] = {}
    for option in OPTIONS:
        kwargs = dict(option.kwargs)
        if "help" in kwargs:
            kwargs["help"] = kwargs["help"].replace("%(default)s", str(option.default))
        if option.commands:
            kwargs["help"] = f"{kwargs.get('help', '')} [{', '.join(option.commands)}]"
        if not with_defaults:
            kwargs["default"] = argparse.SUPPRESS
        if option.group not in groups:
            groups[option.group] = p.add_argument_group(option.group)
        groups[option.group].add_argument(*option.flags, **kwargs)
    return p


def spell_out_optional_values(argv: list[str]) -> list[str]:
    """`--rbe dist_wheels` -> `--rbe=remote dist_wheels`: argparse gives an option whose value is
    optional (nargs="?") the next word whatever it is, so a bare flag before the subcommand
    would swallow it. Only a word among the option's choices is taken as its value."""
    optional = {flag: o.kwargs for o in OPTIONS if o.kwargs.get("nargs") == "?" for flag in o.flags}
    spelled = []
    for i, word in enumerate(argv):
        kwargs = optional.get(word)
        if kwargs is not None and (i + 1 == len(argv) or argv[i + 1] not in kwargs["choices"]):
            word = f"{word}={kwargs['const']}"
        spelled.append(word)
    return spelled


# Flag values checked (and normalised) as soon as they are parsed.
CHECKED_VALUES = {
    "rocm_version": inputs.rocm_version,
    "amdgpu_targets": inputs.amdgpu_targets,
    "python_versions": inputs.python_versions,
    "therock_sha256": inputs.sha256,
    "wheel_version": inputs.wheel_version,
    "wheel_date": inputs.wheel_date,
    "wheel_commit": inputs.wheel_commit,
    "wheel_post_release": inputs.wheel_post_release,
}
