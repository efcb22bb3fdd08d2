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
import difflib
import os
import re
import sys
import types
from pathlib import Path

from . import inputs, options, preflight, sandbox, sources, toolkit
from .commands import check_doctor, check_native, cmd_doctor, cmd_native
from .dist_wheels import check_dist_wheels, cmd_dist_wheels
from .options import CHECKED_VALUES, OPTIONS
from .paths import CACHE, CHECKOUT
from .preflight import check_preflight, cmd_preflight
from .request import Request

# (name, help, the command, its input checks). The checks run before the checkout lock, the
# sandbox and Bazel, so that a wrong input costs seconds and says one line (InputError, exit 2),
# even while another build holds the checkout; they return the request the command runs with
# (dist_wheels': with the kind of wheel it decided).
COMMANDS = (
    ("doctor", "provision the offline sandbox (Bazel 7.7.1 + ROCm) and print the detected toolchain", cmd_doctor,
     check_doctor),
    ("dist_wheels", "build both wheels into dist/ (what release CI runs)", cmd_dist_wheels, check_dist_wheels),
    ("native", "build the PJRT plugin and the FFI extension modules", cmd_native, check_native),
    ("preflight", "check @local_config_rocm against an XLA/JAX tree's names and calls, then build and test against it",
     cmd_preflight, check_preflight),
)


def bazelrc_configs(path: Path = CHECKOUT / "rocm" / "rocm.bazelrc") -> list[str]:
    """The config names a bazelrc defines (`build:NAME ...`, `common:NAME ...`), in order."""
    names = re.findall(r"^\w+:([\w.-]+)\s", path.read_text(), re.M)
    return list(dict.fromkeys(names))


def _near(word: str, choices: list[str]) -> list[str]:
    """The choices a mistyped word is near, nearest first (at most two)."""
    return difflib.get_close_matches(word, choices, n=2, cutoff=0.6)


class OneLineParser(argparse.ArgumentParser):
    """argparse's errors as one line (InputError: `ci_build: ...`, exit 2), not its whole usage
    first: with the choice meant where a word is near one, and for Bazel's --config, where configs go."""

    def error(self, message: str):
        config = re.search(r"unrecognized arguments: .*?--config[= ]?(\S*)", message)
        choice = re.search(r"invalid choice: '?([^' ]*)'? \(choose from (.*)\)", message)  # quoting varies by Python
        if config:
            name, configs = config.group(1), bazelrc_configs()
            near = _near(name, configs)
            which = ("is one of rocm/rocm.bazelrc's" if name in configs else
                     f"is none of rocm/rocm.bazelrc's (nearest: {', '.join(near)})" if near else
                     "is none of rocm/rocm.bazelrc's")
            message = (f"--config={name} {which}, and ci_build takes no --config: it passes those itself "
                       "(dist_wheels: rocm_release, what JAX's --config=rocm_release_wheel builds); a config of your "
                       "own goes in user.bazelrc at the checkout's root (`build --config=NAME`)")
        elif choice:
            near = _near(choice.group(1), [c.strip(" '") for c in choice.group(2).split(",")])
            message += f"; did you mean {' or '.join(near)}?" if near else ""
        raise inputs.InputError(f"{message} (build/ci_build --help lists the commands and options)")


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="build/ci_build", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, parents=[options.options_parser(True)],
                                epilog="Every option goes before or after COMMAND; those marked [dist_wheels] or "
                                       "[doctor] apply to that command only. `build/ci_build COMMAND --help` lists them too.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_, fn, _ in COMMANDS:
        sub.add_parser(name, help=help_, description=fn.__doc__, parents=[options.options_parser(False)])
    return p


def parse_args(argv: list[str] | None = None) -> Request:
    """The Request of a command line, made once: the options, wherever they were given, their
    values checked, and what follows from them and the environment decided (host mode,
    preflight's XLA, the source trees, the mode, the toolkit). An option for another subcommand
    is an error, not ignored; so is any input that cannot work (InputError: one line, not
    argparse's usage), in the order the checks run: the values, the mode, the checkout's path,
    then the toolkit."""
    parsed = parser().parse_args(options.spell_out_optional_values(sys.argv[1:] if argv is None else argv))
    command = parsed.command
    for option in OPTIONS:
        value = getattr(parsed, option.dest)
        if option.commands and command not in option.commands and value != option.default:
            raise inputs.InputError(f"{option.flags[0]}={value} is an option of {' and '.join(option.commands)}, "
                                    f"which `{command}` does not use: drop it, or run {option.commands[0]}")
    values = {option.dest: getattr(parsed, option.dest) for option in OPTIONS}
    for dest, check in CHECKED_VALUES.items():
        if values[dest] is not None:
            values[dest] = check(values[dest])
    given = {}
    if values["host"]:
        given["host"] = "--host"
    elif sandbox.host_from_env(os.environ.get(sandbox.HOST_ENV)):
        values["host"], given["host"] = True, f"{sandbox.HOST_ENV}=1 (from the environment)"
    if command == "dist_wheels":
        inputs.ml_wheel_environment(os.environ)
    clone_xla = False
    if command == "preflight" and not values["xla_source_dir"]:
        values["xla_source_dir"], clone_xla = preflight.xla_checkout(os.environ)
        if values["xla_source_dir"] and not clone_xla:
            given["xla"] = f"JAXCI_XLA_GIT_DIR={values['xla_source_dir']} (from the environment)"
    for name in ("xla", "jax"):
        if values[f"{name}_source_dir"] and name not in given:
            given[name] = f"--{name}-source-dir={values[f'{name}_source_dir']}"
    dirs = sources.source_dirs(values["sources"], values["xla_source_dir"], values["jax_source_dir"])
    if command in MODE_COMMANDS:
        values["mode"] = sources.decide_mode(values["mode"], sources.real_xla(dirs))
    if values["host"] and values["mode"] == "full":
        raise inputs.InputError("full mode (XLA's real PJRT plugin, from the pin or --xla-source-dir, builds only in "
                                "upstream's graph) runs with the sandbox's Debian Bazel (full/debian.bazelrc), not in "
                                "host mode: drop --host (or unset JAX_ROCM_HOST), or build the examples/xla stand-in "
                                "in host mode with --sources=examples")
    inputs.checkout_path(CHECKOUT)
    # The sandbox's doctor checks the sandbox's own ROCm, whatever the flags and the environment name.
    rocm_source = (toolkit.rocm_source(values["rocm_path"], values["therock_path"], values["therock_sha256"],
                                       os.environ.get("ROCM_PATH"), values["host"], os.environ)
                   if command != "doctor" or values["host"] else toolkit.RocmSource())
    return Request(command=command, **values, clone_xla=clone_xla, source_dirs=types.MappingProxyType(dirs),
                   rocm_source=rocm_source, given=types.MappingProxyType(given))


# The subcommands that build, and so run one mode or the other (sources.decide_mode).
MODE_COMMANDS = ("native", "preflight", "dist_wheels")


def main(argv: list[str] | None = None) -> int:
    sandbox.session.die_with_parent_if_asked()
    try:
        request = parse_args(argv)
        _, _, run, check = next(c for c in COMMANDS if c[0] == request.command)
        request = check(request)
        inputs.cache_dir(CACHE)  # the checkout lock, the sandbox and Bazel's outputs live there
        sandbox.check_prerequisites(request)
        for note in request.notes:  # once every input has been answered
            print(f"ci_build {request.command}: {note}", file=sys.stderr)
        if request.dry_run:
            return run(request)
        with sandbox.checkout_lock(request.command):
            return run(request)
    except inputs.InputError as e:
        print(f"ci_build: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # The sandbox's PID namespace ends Bazel and everything it started with it.
        print("ci_build: interrupted; no partial wheel was written (run it again to go on)", file=sys.stderr)
        return 130
