"""sha256 of a file: the one helper for this project's Python.

Imported as `tools.digest` by the CLI, the developer tools and the tests.
third_party/private/source_tree.py calls hashlib itself: the repository rule runs that file with nothing of the project beside it.
"""

from __future__ import annotations

import hashlib
import os


def sha256_of(path: str | os.PathLike) -> str:
    """The file's sha256 as hex, read in blocks: a TheRock tarball of GBs is never held in memory."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
