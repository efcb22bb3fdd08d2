#!/usr/bin/env python3
"""Copy this checkout's files (tracked, and untracked but not ignored) to DEST.

    python3 tests/infra/copy_workspace.py DEST

What a fresh clone plus local edits would hold: benchmarks and tests build in such a
copy so that they get a private Bazel output base and never edit the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent.parent


def copy_workspace(dest: Path, checkout: Path = CHECKOUT) -> Path:
    names = subprocess.run(["git", "-C", str(checkout), "ls-files", "-co", "--exclude-standard", "-z"],
                           check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = checkout / name
        if not src.exists() and not src.is_symlink():  # deleted in the work tree
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name, follow_symlinks=False)
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    copy_workspace(Path(sys.argv[1]))
