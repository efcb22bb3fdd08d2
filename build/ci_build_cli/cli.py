"""ci_build: the one entry point release CI and developers call.

    python3 build/ci_build doctor                                  # provision the offline sandbox, print the toolchain
    python3 build/ci_build --sources=examples native               # the native artifacts, offline, from examples/
    python3 build/ci_build --xla-source-dir=~/xla native           # ... from a local XLA checkout (full mode)
    python3 build/ci_build --xla-source-dir=~/xla preflight        # XLA pre-flight: names, then a build against it
    python3 build/ci_build --sources=examples dist_wheels           # both wheels into dist/, offline
    python3 build/ci_build dist_wheels                              # the release wheels from the pins (full mode)

Every subcommand turns its flags into sandbox/Bazel invocations and prints
them; it holds no build logic of its own. Later subcommands (dist_wheels)
build the ROCm wheels.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import inputs, options, sandbox, sources
from .commands import check_doctor, check_native, cmd_doctor, cmd_native
from .dist_wheels import check_dist_wheels, cmd_dist_wheels
from .options import CHECKED_VALUES, OPTIONS
from .paths import CACHE, CHECKOUT
from .preflight import check_preflight, cmd_preflight

# (name, help, the command, its input checks). The checks run before the checkout lock, the
# sandbox and Bazel, so that a wrong input costs seconds and says one line (InputError, exit 2),
# even while another build holds the checkout.
COMMANDS = (
    ("doctor", "provision the offline sandbox (Bazel 7.7.1 + ROCm) and print the detected toolchain", cmd_doctor,
     check_doctor),
    ("dist_wheels", "build both wheels into dist/ (what release CI runs)", cmd_dist_wheels, check_dist_wheels),
    ("native", "build the PJRT plugin and the FFI extension modules", cmd_native, check_native),
    ("preflight", "check @local_config_rocm against an XLA/JAX tree's names and calls, then build and test against it",
     cmd_preflight, check_preflight),
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="build/ci_build", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, parents=[options.options_parser(True)],
                                epilog="Every option goes before or after COMMAND; those marked [dist_wheels] or "
                                       "[doctor] apply to that command only. `build/ci_build COMMAND --help` lists them too.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_, fn, check in COMMANDS:
        c = sub.add_parser(name, help=help_, description=fn.__doc__, parents=[options.options_parser(False)])
        c.set_defaults(fn=fn, check=check)
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, wherever they were given; an option for another subcommand is an error, not
    ignored (InputError: one line, not argparse's usage)."""
    p = parser()
    args = p.parse_args(options.spell_out_optional_values(sys.argv[1:] if argv is None else argv))
    for option in OPTIONS:
        value = getattr(args, option.dest)
        if option.commands and args.command not in option.commands and value != option.default:
            raise inputs.InputError(f"{option.flags[0]}={value} is an option of {' and '.join(option.commands)}, "
                                    f"which `{args.command}` does not use: drop it, or run {option.commands[0]}")
    for dest, check in CHECKED_VALUES.items():
        if getattr(args, dest) is not None:
            setattr(args, dest, check(getattr(args, dest)))
    args.host = args.host or sandbox.host_from_env(os.environ.get(sandbox.HOST_ENV))
    if args.command in MODE_COMMANDS:
        args.mode = sources.decide_mode(args.mode, real_xla_asked(args))
    if args.host and args.mode == "full":
        raise inputs.InputError("full mode (XLA's real PJRT plugin, from the pin or --xla-source-dir, builds only in "
                                "upstream's graph) runs with the sandbox's Debian Bazel (full/debian.bazelrc), not in "
                                "host mode: drop --host (or unset JAX_ROCM_HOST), or build the examples/xla stand-in "
                                "in host mode with --sources=examples")
    return args


# The subcommands that build, and so run one mode or the other (sources.decide_mode).
MODE_COMMANDS = ("native", "preflight", "dist_wheels")


def real_xla_asked(args: argparse.Namespace) -> bool:
    """Whether the command line (and, for preflight, upstream CI's JAXCI_* variables) names a
    real XLA for the PJRT plugin."""
    if args.command == "preflight" and not args.xla_source_dir and (
            os.environ.get("JAXCI_XLA_GIT_DIR") or os.environ.get("JAXCI_CLONE_MAIN_XLA") == "1"):
        return True
    return sources.real_xla(args)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        inputs.checkout_path(CHECKOUT)
        args.check(args)
        if args.dry_run:
            return args.fn(args)
        inputs.cache_dir(CACHE)  # the checkout lock lives there
        with sandbox.checkout_lock(args.command):
            return args.fn(args)
    except inputs.InputError as e:
        print(f"ci_build: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # The sandbox's PID namespace ends Bazel and everything it started with it.
        print("ci_build: interrupted; no partial wheel was written (run it again to go on)", file=sys.stderr)
        return 130
