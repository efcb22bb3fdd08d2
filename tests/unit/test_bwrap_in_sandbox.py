"""Unit tests of tests/infra/rbe/bwrap_in_sandbox.py: which of bwrap's arguments it passes on.

The isolation itself (bwrap run through it by buildbox-run-bubblewrap) is proven in the
bazel tier: tests/bazel/test_rbe_isolation.py.
"""

from __future__ import annotations

import pytest

from tests.infra.rbe import bwrap_in_sandbox

pytestmark = pytest.mark.unit

# What buildbox-run-bubblewrap 1.4.30 passed bwrap for one genrule (recorded from a run).
RECORDED = [
    "--unshare-pid", "--die-with-parent", "--bind", "/tmp/s/casd/cas/staging/cas-tmpdirYQiAqC", "/",
    "--unshare-net", "--unshare-uts", "--hostname", "buildbox", "--unshare-ipc", "--chdir", "/",
    "--unshare-user", "--uid", "0", "--gid", "0", "--cap-drop", "ALL", "--unsetenv", "HOME",
    "--setenv", "PATH", "/bin:/usr/bin:/usr/local/bin", "--proc", "/proc", "--tmpfs", "/tmp",
    "--ro-bind", "/usr", "/usr", "--ro-bind", "/usr/lib", "/lib", "--dev", "/dev",
    "/bin/bash", "-c", "cat a > b",
]


@pytest.fixture(scope="module")
def shim():
    return bwrap_in_sandbox


def test_the_user_namespace_options_are_dropped_and_the_input_root_moved_off_slash(shim):
    out = shim.without_user_namespace(RECORDED)
    dropped = ["--unshare-user", "--uid", "0", "--gid", "0"]
    assert RECORDED[12:17] == dropped
    expected = [a for i, a in enumerate(RECORDED) if not (12 <= i < 17)]
    expected[4] = expected[11] = "/worker/root"  # --bind STAGED /, --chdir /
    assert out == expected
    # The isolation is all still there.
    for kept in ("--unshare-pid", "--unshare-net", "--cap-drop", "--tmpfs", "--proc", "--dev"):
        assert kept in out


def test_the_command_and_its_arguments_pass_untouched(shim):
    assert shim.without_user_namespace(["--unshare-pid", "tool", "--uid", "5"]) == ["--unshare-pid", "tool", "--uid", "5"]
    assert shim.without_user_namespace(["--chdir", "/", "--", "--uid", "x"]) == ["--chdir", "/", "--", "--uid", "x"]
    # A value that looks like an option is a value, not the command's start or an option.
    assert shim.without_user_namespace(["--setenv", "X", "--uid", "--uid", "7", "sh"]) == ["--setenv", "X", "--uid", "sh"]


def test_the_working_folder_follows_the_input_root_only_when_it_was_moved(shim):
    assert shim.without_user_namespace(["--bind", "/s", "/", "--chdir", "sub/dir", "sh"]) == [
        "--bind", "/s", "/worker/root", "--chdir", "/worker/root/sub/dir", "sh"]
    assert shim.without_user_namespace(["--bind", "/s", "/x", "--chdir", "/x", "sh"]) == [
        "--bind", "/s", "/x", "--chdir", "/x", "sh"]


def test_an_option_it_does_not_know_is_refused_not_guessed(shim):
    with pytest.raises(shim.UnknownOption, match="--newfangled.*bwrap --help"):
        shim.without_user_namespace(["--newfangled", "x", "sh"])


def test_without_its_mount_folder_it_says_who_sets_it(shim, monkeypatch, capsys):
    monkeypatch.delenv(shim.MOUNT_ENV, raising=False)
    assert shim.main(["--unshare-pid", "true"]) == 1
    assert "tests/infra/rbe/cluster.py sets it" in capsys.readouterr().err
