"""The repository speaks of its users' world (issue 57): no file of it names a tool of the
machines it was developed on, or one of their absolute paths.

Users have their own checkout (wherever they cloned it), and the gated tier's repositories as a
folder of `git clone --mirror` copies (docs/testing.md); the docs, code, comments and test data
say so in those words and with neutral sample paths (~/mirror, /home/me/jax-rocm-build).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CHECKOUT, tracked

pytestmark = pytest.mark.unit

# What no file may hold, matched case-insensitively: the name of the tool the development machines
# look code up and fetch repositories with, its `fetch` verb, the checkout's and the tool's folders
# there, and the wording that tied the mirror folder's layout or grpc's absence to that tool. Each is precise enough that nothing a user's
# world says (Bazel's `fetch`, "fetches", `--mirror`, a chroot's /work, a "snapshot" wheel) matches.
# Each is written in two pieces: this file is tracked too, and is scanned like every other one
# (not left out by name), so it must not hold any of them whole.
# The tool's mirror folder, in three pieces: no line here holds even the folder's last part whole.
MIRROR_FOLDER = "/work" + "/." + "mirror"
FORBIDDEN = (
    "search" + " tool",
    "/work" + "/main",
    MIRROR_FOLDER,
    "/work" + "/.library",
    "fetch" + " github:",
    "the library" + " at /work",
    "+NAME/repo" + " (what the",
    "fetch" + " limit",
)


def occurrences(path: Path, name: str | None = None) -> list[str]:
    """`NAME:LINE: text` for each line of the file (a symbolic link: its target) holding a
    forbidden string; NAME is `name`, else the path."""
    name = name or str(path)
    if path.is_symlink():
        lines = [os.readlink(path)]
    else:
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        folded = line.casefold()
        if any(word.casefold() in folded for word in FORBIDDEN):
            found.append(f"{name}:{number}: {line.strip()[:160]}")
    return found


def test_no_tracked_file_names_the_development_machines_tools_or_paths():
    names = tracked()
    assert len(names) > 100, names
    found = [f"{name} (its path)" for name in names if any(w.casefold() in name.casefold() for w in FORBIDDEN)]
    for name in names:
        path = CHECKOUT / name
        if path.is_symlink() or path.is_file():  # a file deleted but not yet staged is skipped
            found += occurrences(path, name)
    assert not found, (
        "these name a tool or an absolute path of the development machines; say it in the user's words "
        "(a folder of `git clone --mirror` copies, e.g. ~/mirror; a checkout at e.g. /home/me/jax-rocm-build):\n"
        + "\n".join(found))


def test_a_planted_line_is_named_by_file_and_line_and_the_users_words_are_not(tmp_path):
    planted = tmp_path / "notes.md"
    planted.write_text("Lay the trees out:\n\n"
                       f"    python3 -m tests.infra.real_trees --mirror {MIRROR_FOLDER} --dest ~/.cache/trees\n"
                       "with each repository where the Search" + " Tool's fetch puts it.\n")
    assert occurrences(planted, "notes.md") == [
        f"notes.md:3: python3 -m tests.infra.real_trees --mirror {MIRROR_FOLDER} --dest ~/.cache/trees",
        "notes.md:4: with each repository where the Search" + " Tool's fetch puts it."]
    fine = tmp_path / "fine.md"
    fine.write_text("`bazel fetch //...` fetches every repository; `python3 -m tools.prefetch` too.\n"
                    "git clone --mirror https://github.com/OWNER/NAME ~/mirror/OWNER+NAME.git\n"
                    "cd /work && exec \"$@\"   # the chroot's /work\n"
                    "ML_WHEEL_TYPE=snapshot; a checkout at /home/me/jax-rocm-build\n")
    assert occurrences(fine) == []
    link = tmp_path / "link"
    link.symlink_to("/work" + "/main/README.md")
    assert occurrences(link, "link") == ["link:1: " + "/work" + "/main/README.md"]


def test_this_file_holds_none_of_the_words_it_looks_for():
    """It is scanned like every other tracked file: the words are built from pieces above."""
    assert occurrences(Path(__file__)) == []
