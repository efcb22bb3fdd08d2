"""Offline build sandbox: a Debian sid root with Bazel 7.7.1 and a real ROCm.

The host is Debian 12 (no modern Bazel, no ROCm). Debian sid packages
`bazel-bootstrap` 7.7.1 and experimental packages ROCm 7.2; both need sid's
libc, so they live in a root filesystem that this tool builds, keeps up to date
and enters:

  ensure [--rocm=minimal|full] [--python=3.15]
                                 build or update the root (idempotent, atomic, locked); --python
                                 adds Debian's Python of that version, which no profile holds
  run [--] CMD...                run CMD inside it, with this checkout at the same path
  serve --socket PATH            a session: one namespace whose agent runs every `run` given
                                 JAX_ROCM_SANDBOX_SESSION=PATH (what ci_build and the tests open)
  info                           Bazel / clang / HIP versions and the root's size
  clean [--all|--action-cache]   remove the root (--all: every cache; --action-cache: that cache alone)
  prune                          remove output bases of deleted checkouts and superseded action
                                 caches; trim the action cache to its bound

Every Bazel inside shares one action cache (a Bazel disk cache per root, bounded by
JAX_ROCM_ACTION_CACHE_GB, default 20; JAX_ROCM_ACTION_CACHE=off for none): a second
checkout, a test's copy or an emptied output base takes the results instead of rebuilding.

Everything lives under ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/. The package
set is declared once, in sandbox/layers.py; its hash names the root,
so a change to it rebuilds. A root is built beside the current one and swapped in with one
atomic symlink rename: an interrupted `ensure` never leaves a root that `run`
would use. Every command inside the root runs in private mount and PID
namespaces: no mount and no process (a Bazel server included) outlives it.

This file is the command line; sandbox/ does the work, one module per
concern (its __init__.py has the map). Stdlib only; runs on the host's Python 3.11, as root or
as an ordinary user (then in a user namespace of its own: it needs mmdebstrap, uidmap and a
subordinate id range, and says so when one is missing).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Sequence

from . import SandboxError, action_cache, interrupted, log
from .build import check_prerequisites, ensure, read_stamp, ready_root, remove_tree, require_privileges
from .cache import Paths, flock
from .environment import (
    PASS_ENV,
    PASS_ENV_PREFIXES,
    RUN_TMPFS,
    run_binds,
    sandbox_env,
    standard_binds,
)
from .layers import DEFAULT_MIRROR, DEFAULT_PROFILE, OPTIONAL_PYTHONS, PROFILES
from .namespaces import Enter, enter
from .output_bases import orphans, output_bases
from .session import SESSION_ENV, agent_argv, die_with_parent_if_asked, run as run_in_session


def cmd_ensure(args: argparse.Namespace, paths: Paths) -> int:
    if args.check:
        try:
            check_prerequisites(paths, args.rocm, args.python)
        except SandboxError as e:
            log(f"error: {e}")
            return 2
        return 0
    ensure(paths, args.rocm, args.mirror, args.python)
    return 0


def cmd_run(args: argparse.Namespace, paths: Paths) -> int:
    require_privileges()
    argv = list(args.cmd)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise SandboxError("run: no command given; usage: python3 -m sandbox run [--] CMD [ARGS...]")
    if ready_root(paths) is None:
        if args.no_ensure:
            raise SandboxError(f"run --no-ensure: no sandbox under {paths.sandbox} yet; `python3 -m sandbox ensure` "
                               "makes it (or run without --no-ensure)")
        ensure(paths, args.rocm or DEFAULT_PROFILE, args.mirror)
    elif args.rocm:
        ensure(paths, args.rocm, args.mirror)
    cwd = Path.cwd()
    with flock(paths.use_lock, exclusive=False, waiting_msg="waiting for the sandbox to be swapped or cleaned"):
        root = ready_root(paths)
        if root is None:
            raise SandboxError(f"sandbox root under {paths.sandbox} is corrupted or was removed; run `python3 -m sandbox ensure`")
        disk_cache = shared_action_cache(paths, root)
        spec = Enter(
            tuple(argv), root, tuple(run_binds(paths, [Path(b) for b in args.bind], cwd, disk_cache)),
            sandbox_env(args.env), str(cwd), tmpfs=RUN_TMPFS,
        )
        session = os.environ.get(SESSION_ENV)
        rc = run_in_session(session, root, spec.binds, argv, spec.env or {}, spec.cwd) if session else None
        if rc is None:
            rc = enter(spec)
    if rc < 0:  # died by a signal: die by the same one
        signal.signal(-rc, signal.SIG_DFL)
        os.kill(os.getpid(), -rc)
    return rc


def cmd_serve(args: argparse.Namespace, paths: Paths) -> int:
    require_privileges()
    with flock(paths.use_lock, exclusive=False, waiting_msg="waiting for the sandbox to be swapped or cleaned"):
        root = ready_root(paths)
        if root is None:
            raise SandboxError(f"serve: no sandbox under {paths.sandbox} yet; `python3 -m sandbox ensure` makes it")
        binds = tuple(run_binds(paths, [], Path("/"), shared_action_cache(paths, root)))
        return enter(Enter(agent_argv(args.socket, root, binds), root, binds, sandbox_env(), "/", tmpfs=RUN_TMPFS,
                           session=True))


def shared_action_cache(paths: Paths, root: Path) -> Path | None:
    """The root's action cache for this `run` (None with JAX_ROCM_ACTION_CACHE=off), trimmed to
    its bound first when the last trim is an hour old."""
    if not action_cache.enabled(dict(os.environ)):
        return None
    bound = action_cache_bound()
    cache = paths.action_cache(root)
    if action_cache.due(cache):
        trim_action_cache(cache, bound, quiet=True)
    return cache


def action_cache_bound() -> int:
    try:
        return action_cache.bound_bytes(dict(os.environ))
    except ValueError as e:
        raise SandboxError(str(e)) from None


def trim_action_cache(cache: Path, bound: int, quiet: bool = False) -> action_cache.TrimResult:
    try:
        result = action_cache.trim(cache, bound)
    except OSError as e:
        raise SandboxError(f"cannot trim the action cache {cache} ({e}); remove it with "
                           "`python3 -m sandbox clean --action-cache`") from None
    if not result.skipped:
        action_cache.mark_trimmed(cache)
    if result.deleted or not quiet:
        log(f"action cache {cache}: {result.size / 1e9:.1f} GB in {result.entries} entries, bound "
            f"{bound / 1e9:.0f} GB ({action_cache.BOUND_ENV}); "
            + ("another collector is trimming it" if result.skipped else
               f"{result.deleted} least recently used removed, {result.freed / 1e9:.1f} GB freed"))
    return result


def capture(root: Path, paths: Paths, argv: Sequence[str]) -> str:
    read_fd, write_fd = os.pipe()
    result: list[bytes] = []

    def read_all() -> None:
        while chunk := os.read(read_fd, 1 << 16):
            result.append(chunk)

    reader = threading.Thread(target=read_all)
    reader.start()
    try:
        enter(Enter(tuple(argv), root, tuple(standard_binds(paths)), sandbox_env(), "/", stdout=write_fd, stderr=write_fd,
                    tmpfs=RUN_TMPFS))
    finally:
        os.close(write_fd)
        reader.join()
        os.close(read_fd)
    return b"".join(result).decode(errors="replace")


def cmd_info(args: argparse.Namespace, paths: Paths) -> int:
    require_privileges()
    root = ready_root(paths)
    if root is None:
        raise SandboxError(f"no usable sandbox under {paths.sandbox}: run `python3 -m sandbox ensure`")
    stamp = read_stamp(root)
    assert stamp is not None
    script = ("bazel --version; clang=$(ls -d /usr/lib/llvm-*/bin/clang 2>/dev/null | sort -V | tail -1); "
              "[ -n \"$clang\" ] && $clang --version | head -1; "
              "command -v hipcc >/dev/null && hipcc --version 2>/dev/null | grep -i 'HIP version'; "
              "grep -h 'define ROCM_VERSION_\\(MAJOR\\|MINOR\\|PATCH\\)' /usr/include/rocm-core/rocm_version.h 2>/dev/null "
              "| awk '{printf \"%s%s\", sep, $3; sep=\".\"} END {if (NR) print \"\"}' | sed 's/^/ROCm /'; "
              "python3 --version")
    out = capture(root, paths, ["/bin/sh", "-c", script])
    size = subprocess.run(["du", "-sxh", str(root)], capture_output=True, text=True).stdout.split("\t")[0]
    print(f"root:    {root}")
    print(f"layers:  {', '.join(n for n, _ in stamp.layers)}")
    print(f"created: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(stamp.created))}")
    print(f"size:    {size}")
    cache = paths.action_cache(root)
    cached = sum(e.size for e in action_cache.entries(cache))
    print(f"actions: {cache} ({cached / 1e9:.1f} GB"
          + ("" if action_cache.enabled(dict(os.environ)) else f"; off: {action_cache.SWITCH_ENV}=off") + ")")
    for line in filter(None, map(str.strip, out.splitlines())):
        print(f"         {line}")
    return 0


def cmd_clean(args: argparse.Namespace, paths: Paths) -> int:
    require_privileges()
    with flock(paths.build_lock, exclusive=True, waiting_msg="waiting for a running `ensure` to finish"), \
         flock(paths.use_lock, exclusive=True, waiting_msg="waiting for running sandbox commands to finish"):
        if args.action_cache:
            log(f"removing {paths.action_caches}")
            remove_tree(paths.action_caches)
            log("clean")
            return 0
        paths.current.unlink(missing_ok=True)
        for p in sorted(paths.sandbox.glob("root-*")):
            log(f"removing {p}")
            remove_tree(p)
        if args.all:
            for p in (paths.apt_archives, paths.bazel_user_root, paths.action_caches):
                log(f"removing {p}")
                remove_tree(p)
    log("clean")
    return 0


def cmd_prune(args: argparse.Namespace, paths: Paths) -> int:
    require_privileges()
    gone = orphans(output_bases(paths.bazel_user_root))
    # What the file system gained, not `du` of each: output bases hold tens of thousands of files.
    free_before = shutil.disk_usage(paths.bazel_user_root).free if gone else 0
    for base in gone:
        log(f"removing {base.path.name}: its checkout {base.workspace} no longer exists")
        remove_tree(base.path)
    freed = shutil.disk_usage(paths.bazel_user_root).free - free_before if gone else 0
    log(f"pruned {len(gone)} output base(s) of deleted checkouts under {paths.bazel_user_root}, "
        f"about {max(freed, 0) / 2**30:.1f} GiB freed")
    prune_action_caches(paths)
    return 0


def prune_action_caches(paths: Paths) -> None:
    """Removes the action caches of roots that are no longer current and trims the current
    one to its bound (under the use lock held shared: a `clean` cannot remove the root meanwhile)."""
    bound = action_cache_bound()
    with flock(paths.use_lock, exclusive=False, waiting_msg="waiting for the sandbox to be swapped or cleaned"):
        root = ready_root(paths)
        keep = paths.action_cache(root) if root is not None else None
        for cache in sorted(paths.action_caches.glob("*")) if paths.action_caches.is_dir() else []:
            if cache != keep:
                log(f"removing the action cache {cache.name}: no current root has exactly its packages")
                remove_tree(cache)
        if keep is not None and keep.is_dir():
            trim_action_cache(keep, bound)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m sandbox",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  python3 -m sandbox ensure --rocm=full          # Bazel + the whole ROCm library set\n"
            "  python3 -m sandbox run -- bazel build //...    # build this checkout offline\n"
            "  python3 -m sandbox run --bind /srv/src -- make -C /srv/src   # another host folder\n"
            "  python3 -m sandbox info\n\n"
            f"Caches live under ${{XDG_CACHE_HOME:-~/.cache}}/jax-rocm-build (now {Paths.default().cache}).\n"
            "Inside `run`: this checkout, /tmp and the current directory at their own paths (a --bind below\n"
            "them adds nothing); "
            "the host's CA bundle, resolv.conf and pip settings; environment: " + ", ".join(PASS_ENV[:6]) +
            ", proxies and " + " ".join(p + "*" for p in PASS_ENV_PREFIXES) + ".\n"
            "Exit status of `run` is the command's; 125 means the sandbox itself failed."
        ),
    )
    p.add_argument("--mirror", default=os.environ.get("JAX_ROCM_SANDBOX_MIRROR", DEFAULT_MIRROR),
                   help="Debian mirror (default: %(default)s; env JAX_ROCM_SANDBOX_MIRROR)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    e = sub.add_parser("ensure", help="create or update the root (a no-op when up to date)")
    e.add_argument("--rocm", choices=sorted(PROFILES), default=DEFAULT_PROFILE,
                   help="minimal: hipcc, HIP runtime and headers, rocm-core, device libs; "
                        "full: also rocBLAS, hipBLAS(Lt), hipSOLVER, hipSPARSE, hipFFT, hipRAND, RCCL, MIOpen, rocPRIM, hipCUB, "
                        "ROCm SMI, rocminfo, and hwloc (default: %(default)s; a full root satisfies minimal)")
    e.add_argument("--python", action="append", default=[], choices=sorted(OPTIONAL_PYTHONS), metavar="X.Y",
                   help=f"also install Debian's Python X.Y with its headers ({', '.join(sorted(OPTIONAL_PYTHONS))}), for a "
                        "JAX tree that builds for it: no profile holds it; the root keeps it for every later ensure "
                        "until a change of the package set rebuilds the root (repeatable)")
    e.add_argument("--check", action="store_true",
                   help="only check that this machine can build the root where it must (root, or mmdebstrap, uidmap and "
                        "subordinate ids): exit 2 with one line naming what is missing, before anything is downloaded")
    e.set_defaults(fn=cmd_ensure)
    r = sub.add_parser("run", help="run a command inside the root (ensures it first if there is none)")
    r.add_argument("--rocm", choices=sorted(PROFILES), default=None, help="ensure this profile first")
    r.add_argument("--no-ensure", action="store_true",
                   help="fail (exit 125) where there is no sandbox yet instead of making it (what ci_build --dry-run asks)")
    r.add_argument("--bind", action="append", default=[], metavar="PATH", help="also mount this host path at the same path (repeatable)")
    r.add_argument("--env", "-e", action="append", default=[], metavar="NAME[=VALUE]",
                   help="pass or set an environment variable (repeatable)")
    r.add_argument("cmd", nargs=argparse.REMAINDER, metavar="[--] CMD...")
    r.set_defaults(fn=cmd_run)
    s = sub.add_parser("serve", help="run a session: one namespace for the `run`s given JAX_ROCM_SANDBOX_SESSION=PATH, "
                                     "whose Bazel servers last from one command to the next (until this ends)")
    s.add_argument("--socket", required=True, metavar="PATH", help="where the session's agent listens (a new path under /tmp)")
    s.set_defaults(fn=cmd_serve)
    i = sub.add_parser("info", help="print Bazel, clang, HIP and ROCm versions and the root's size")
    i.set_defaults(fn=cmd_info)
    c = sub.add_parser("clean", help="remove the root (keeps downloaded packages, Bazel's output root and the action cache)")
    c.add_argument("--all", action="store_true", help="also remove downloaded packages, Bazel's output root and the action cache")
    c.add_argument("--action-cache", action="store_true",
                   help="remove only the action cache that every build in the sandbox shares (nothing else)")
    c.set_defaults(fn=cmd_clean)
    pr = sub.add_parser("prune", help="remove Bazel output bases whose checkout no longer exists (copies in deleted "
                                      "temporary folders leave 0.1-4 GB each) and the action caches of superseded "
                                      "roots, and trim the current action cache to its bound; the tests run it first")
    pr.set_defaults(fn=cmd_prune)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    die_with_parent_if_asked()
    args = parser().parse_args(argv)
    try:
        return args.fn(args, Paths.default())
    except SandboxError as e:
        log(f"error: {e}")
        return 125 if args.command == "run" else 1
    except OSError as e:  # the cache folder read-only, the disk full ...: the file and the cause, no traceback
        where = f" {e.filename}" if e.filename else ""
        log(f"error: cannot write{where}: {e.strerror or e}; free space there, or point XDG_CACHE_HOME at a writable "
            "folder with room (the sandbox keeps its root, packages and Bazel's outputs under it)")
        return 125 if args.command == "run" else 1
    except KeyboardInterrupt:  # a partial root is removed by the next `ensure`
        return interrupted("sandbox")

