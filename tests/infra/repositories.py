"""Where Bazel keeps an external repository, as Bazel itself names it.

A repository's canonical name is Bazel's to spell (`_main~sources~jax` in Bazel 7, `+sources+jax`
with --incompatible_use_plus_in_repo_names, Bazel 8's default and .bazelrc's --config=bazel9):
the tests ask Bazel (`bazel mod dump_repo_mapping ""`: the main repository's apparent names ->
canonical ones) instead of writing either spelling down.

    python3 -m tests.infra.repositories jax [BAZEL_FLAGS...]   # prints OUTPUT_BASE/external/<canonical name of @jax>

(from the checkout, where `bazel` is this project's; the shell scripts of the bazel tier run it so).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable


def canonical(apparent: str, mapping: str) -> str:
    """The canonical name of the main repository's `apparent` repository in the mapping Bazel printed."""
    names = json.loads(mapping)
    if apparent not in names:
        raise KeyError(f"the main repository sees no @{apparent} (it sees {', '.join(sorted(names))})")
    return names[apparent]


def folder(run: Callable[..., subprocess.CompletedProcess], apparent: str, *flags: str) -> str:
    """OUTPUT_BASE/external/<canonical name>; `run(*argv)` runs a command where Bazel runs (in_sandbox)."""
    mapping = run("bazel", "mod", "dump_repo_mapping", *flags, "").stdout
    base = run("bazel", "info", *flags, "output_base").stdout.strip()
    return f"{base}/external/{canonical(apparent, mapping)}"


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python3 -m tests.infra.repositories NAME [BAZEL_FLAGS...]  (prints OUTPUT_BASE/external/<its canonical name>)",
              file=sys.stderr)
        return 2

    def run(*cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, check=True, capture_output=True, text=True)

    print(folder(run, argv[0], *argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
