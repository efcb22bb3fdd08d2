#!/usr/bin/env python3
"""`bwrap` for buildbox-run-bubblewrap inside the sandbox root: the real bwrap, made able to run there.

tests/infra/rbe/cluster.py --runner=isolated puts this first on the worker's PATH as
`bwrap`; buildbox-run-bubblewrap finds it there and passes it the isolation it builds
for each action (the staged input root as /, the worker image's read-only binds, a
private /tmp, /proc, /dev, new PID/network/UTS/IPC namespaces, every capability
dropped). That isolation is kept whole; two things the sandbox's chroot
(sandbox/namespaces.py) does not allow are changed:

  - bwrap makes / a slave mount, which fails (EINVAL) where / is a chroot's folder
    and not a mount: so this first binds the sandbox's / (recursively) onto an empty
    folder in a private mount namespace and chroots there, where / is a mount;
  - the kernel refuses a user namespace to a chroot'ed process (EPERM), and
    buildbox-run-bubblewrap always asks for one (--unshare-user --uid 0 --gid 0):
    so those are dropped. bwrap then runs as the real root, which needs no user
    namespace for the others, and the action still runs as uid 0 with no capability.

And one that is not about the sandbox: buildbox binds the input root at / and runs the
action there. Real workers keep it in a folder (Buildbarn's /worker/build/<id>/root),
and Zig 0.17 with a relative ZIG_LIB_DIR fails where the working folder is / ("import
of file outside module path" compiling its std), so the input root goes to INPUT_ROOT
and the action's working folder with it; the isolation is the same.

    bwrap_in_sandbox.py BWRAP-ARGS...    (JAX_ROCM_RBE_BWRAP_MOUNT names the empty folder)
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Sequence

REAL_BWRAP = "/usr/bin/bwrap"
MOUNT_ENV = "JAX_ROCM_RBE_BWRAP_MOUNT"
# How many values each of bwrap's options (0.13, `bwrap --help`) takes: to tell the
# options from the command, whose own arguments must pass through untouched.
OPTION_VALUES = {
    **dict.fromkeys((
        "--level-prefix", "--unshare-all", "--share-net", "--unshare-user", "--unshare-user-try", "--unshare-ipc",
        "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup", "--unshare-cgroup-try",
        "--disable-userns", "--assert-userns-disabled", "--clearenv", "--new-session", "--die-with-parent",
        "--as-pid-1", "--not-a-security-boundary"), 0),
    **dict.fromkeys((
        "--args", "--argv0", "--userns", "--userns2", "--pidns", "--uid", "--gid", "--hostname", "--chdir",
        "--unsetenv", "--lock-file", "--sync-fd", "--remount-ro", "--overlay-src", "--tmp-overlay", "--ro-overlay",
        "--exec-label", "--file-label", "--proc", "--dev", "--tmpfs", "--mqueue", "--dir", "--seccomp",
        "--add-seccomp-fd", "--block-fd", "--userns-block-fd", "--info-fd", "--json-status-fd", "--cap-add",
        "--cap-drop", "--perms", "--size"), 1),
    **dict.fromkeys((
        "--setenv", "--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--ro-bind", "--ro-bind-try",
        "--bind-fd", "--ro-bind-fd", "--file", "--bind-data", "--ro-bind-data", "--symlink", "--chmod"), 2),
    "--overlay": 3,
}
# Where the action's input root is bound instead of / (the docstring says why).
INPUT_ROOT = "/worker/root"
# The user-namespace options, dropped (the module's docstring says why).
USER_NAMESPACE_OPTIONS = frozenset(("--unshare-user", "--unshare-user-try", "--userns", "--userns2", "--uid", "--gid",
                                    "--disable-userns", "--assert-userns-disabled"))


class UnknownOption(Exception):
    pass


_CLONE_NEWNS = 0x00020000
_MS_BIND = 4096
_MS_REC = 16384


def without_user_namespace(args: Sequence[str]) -> list[str]:
    """bwrap's arguments less the user-namespace options, with an input root bound at / moved
    to INPUT_ROOT (and --chdir under it); the command (from the first argument that is not
    an option, or after `--`) is left as it is."""
    out, i, moved = [], 0, False
    while i < len(args):
        arg = args[i]
        if arg == "--" or not arg.startswith("--"):
            return out + list(args[i:])
        if arg not in OPTION_VALUES:
            raise UnknownOption(f"bwrap option {arg} is not in OPTION_VALUES of tests/infra/rbe/bwrap_in_sandbox.py; "
                                "add it there with the number of values it takes (bwrap --help)")
        end = i + 1 + OPTION_VALUES[arg]
        option = list(args[i:end])
        if arg in ("--bind", "--dev-bind") and option[2] == "/":
            option[2] = INPUT_ROOT
            moved = True
        elif arg == "--chdir" and moved:
            option[1] = os.path.normpath(INPUT_ROOT + "/" + option[1])
        if arg not in USER_NAMESPACE_OPTIONS:
            out += option
        i = end
    return out


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def enter_mounted_root(mount_point: str) -> None:
    """Makes / a mount: binds the current / onto `mount_point` in a mount namespace of
    our own, then chroots there."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    # The sandbox's mounts are private already, so nothing propagates back out.
    _check(libc.mount(b"/", mount_point.encode(), None, ctypes.c_ulong(_MS_BIND | _MS_REC), None),
           f"bind / on {mount_point}")
    cwd = os.getcwd()
    os.chroot(mount_point)
    os.chdir(cwd)


def main(argv: Sequence[str]) -> int:
    mount_point = os.environ.get(MOUNT_ENV)
    if not mount_point or not os.path.isdir(mount_point):
        print(f"bwrap_in_sandbox: {MOUNT_ENV} must name an empty folder (tests/infra/rbe/cluster.py sets it)",
              file=sys.stderr)
        return 1
    try:
        args = without_user_namespace(argv)
    except UnknownOption as e:
        print(f"bwrap_in_sandbox: {e}", file=sys.stderr)
        return 1
    try:
        enter_mounted_root(mount_point)
    except OSError as e:
        print(f"bwrap_in_sandbox: {e}; run the cluster as root inside the sandbox (python3 -m sandbox run)",
              file=sys.stderr)
        return 1
    os.execv(REAL_BWRAP, [REAL_BWRAP, *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
