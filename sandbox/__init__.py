"""The developer sandbox (`python3 -m sandbox`): a Debian sid root with Bazel and ROCm.

One module per concern, in the order a command goes through them:

  layers.py       what a root contains: the package layers, their hashes, a root's stamp,
                  and the plan from the stamp found to the layers wanted
  cache.py        where roots and caches live (${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build)
                  and the locks that keep `ensure`, `run` and `clean` apart
  build.py        building a root: debootstrap (mmdebstrap without root), apt layers, atomic
                  swap, garbage collection
  environment.py  what a command inside a root sees: mounts, environment, bazelrc, launcher
  action_cache.py the Bazel disk cache every workspace of a root shares: its key and bound
  namespaces.py   running a command in private mount and PID namespaces (chroot'ed or not),
                  owned without root by a user namespace that maps the user's subordinate ids
  session.py      one namespace for every `run` of a command that runs many (ci_build, the
                  tests), so that Bazel's servers last from one to the next; session_agent.py
                  is its agent inside the root

cli.py is the command line over them (`python3 -m sandbox`, __main__.py). Stdlib only: it
runs on the host's Python 3.11, as root or not, before any venv exists.
"""

from __future__ import annotations

import os
import sys


class SandboxError(Exception):
    """A one-line, actionable failure; printed without a traceback."""


def log(msg: str) -> None:
    print(f"sandbox: {msg}", file=sys.stderr, flush=True)


def fmt_secs(s: float) -> str:
    return f"{s:.1f} s" if s < 120 else f"{int(s // 60)} min {int(s % 60)} s"


def interrupted(tool: str) -> int:
    """Exit status 130 of an interrupted `tool`, saying so only where it is the command the user
    typed (the leader of its process group): a terminal's Ctrl-C reaches the whole group, and the
    command the user ran (ci_build) answers for its helpers in one line."""
    if os.getpgrp() == os.getpid():
        print(f"{tool}: interrupted", file=sys.stderr, flush=True)
    return 130
