#!/usr/bin/env python3
"""Replays Bazel's spawns the way an isolating remote worker runs them; run inside the sandbox, as root.

    python3 -m tests.infra.isolated_replay --execroot DIR --log exec.json --mnemonic HipCompile ... \
        [--forbid PATH ...] [--replace-input EXEC_PATH=FILE ...]

(from the checkout, or a copy of it: a module of the checkout.)

Reads an execution log (bazel build --execution_log_json_file=exec.json, with
--materialize_param_files) and, for each spawn of the named mnemonics:
* scan: its arguments, environment and param files must not name any --forbid path (the
  output base, the checkout, /var/tmp);
* replay: an input root holds exactly the spawn's inputs (hard links to, or copies of, the
  files Bazel resolved them to in the exec root); the command runs there in fresh mount and
  PID namespaces, chroot'ed into a root that has only the OS's /usr and /etc (read-only),
  an empty private /tmp, /proc and /dev: nothing of the output base, the checkout or the
  host. Its exit status and whether each output is byte-identical to Bazel's are reported.
--replace-input swaps one input's content (a negative control: an input that reaches
outside the root must make the replay fail).

Prints one JSON object: {"spawns": [{mnemonic, target, inputs, exit, stderr, outputs, leaks}]}.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Builds the isolated root on the empty folder $1 and runs the command in it: $2 the input
# root, then argv. The caller gives fresh mount and PID namespaces (unshare), so every mount
# ends with it, and removes both folders.
ISOLATE = r"""
set -e
R=$1
shift
mount -t tmpfs tmpfs "$R"
mount --make-rprivate "$R"
mkdir -p "$R/usr" "$R/etc" "$R/tmp" "$R/work" "$R/proc" "$R/dev"
mount --rbind /usr "$R/usr"; mount -o remount,bind,ro "$R/usr"
mount --rbind /etc "$R/etc"; mount -o remount,bind,ro "$R/etc"
for d in bin lib lib64 sbin; do ln -s "usr/$d" "$R/$d"; done
mount --bind "$1" "$R/work"
mount -t tmpfs tmpfs "$R/tmp"
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
shift
exec chroot "$R" /usr/bin/env -i "$@"
"""


def read_log(path: Path) -> list[dict]:
    """The spawns of a JSON execution log (a stream of JSON objects)."""
    text, decoder, spawns, at = path.read_text(), json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return spawns
        obj, at = decoder.raw_decode(text, at)
        spawns.append(obj)


def leaks(spawn: dict, execroot: Path, forbidden: list[str]) -> list[str]:
    """Where a forbidden path appears in the spawn's arguments, environment or param files."""
    found = []
    texts = [("argument", a) for a in spawn.get("commandArgs", [])]
    texts += [("environment", f"{e['name']}={e['value']}") for e in spawn.get("environmentVariables", [])]
    for item in spawn.get("inputs", []):
        if item["path"].endswith(".params"):
            param_file = execroot / item["path"]
            if param_file.is_file():
                texts += [(f"param file {item['path']}", line) for line in param_file.read_text(errors="replace").splitlines()]
    for where, text in texts:
        for path in forbidden:
            if path in text:
                found.append(f"{where}: {text}")
    return found


def stage(spawn: dict, execroot: Path, root: Path, replacements: dict[str, Path]) -> None:
    """The input root: each input at its exec path, its content as Bazel resolved it."""
    for item in spawn.get("inputs", []):
        rel = item["path"]
        source = replacements.get(rel) or (execroot / rel)
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():  # an empty tree artifact
            target.mkdir(exist_ok=True)
            continue
        real = source.resolve()
        try:
            os.link(real, target)
        except OSError:
            shutil.copy2(real, target)
        if rel in replacements:
            target.chmod(0o755)
    for out in spawn.get("listedOutputs", []):
        (root / out).parent.mkdir(parents=True, exist_ok=True)


def replay(spawn: dict, execroot: Path, replacements: dict[str, Path], script: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
        root, isolated = Path(tmp) / "input", Path(tmp) / "isolated"
        isolated.mkdir()
        stage(spawn, execroot, root, replacements)
        env = [f"{e['name']}={e['value']}" for e in spawn.get("environmentVariables", [])]
        # The command runs from the exec root: /work.
        argv = ["sh", "-c", 'cd /work && exec "$@"', "sh", *spawn["commandArgs"]]
        result = subprocess.run(["unshare", "-m", "-p", "-f", "--propagation", "unchanged", "sh", str(script), str(isolated), str(root),
                                 *env, *argv], capture_output=True, text=True)
        outputs = {}
        for out in spawn.get("listedOutputs", []):
            mine, bazels = root / out, execroot / out
            if not mine.exists():
                outputs[out] = "missing"
            elif mine.is_dir():
                outputs[out] = "directory"
            elif not bazels.is_file():
                outputs[out] = "not written by Bazel"
            else:
                outputs[out] = "identical" if mine.read_bytes() == bazels.read_bytes() else "differs"
        return {"exit": result.returncode, "stderr": result.stderr[-3000:], "outputs": outputs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--execroot", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--mnemonic", action="append", required=True, help="replay spawns of this mnemonic (repeatable)")
    parser.add_argument("--forbid", action="append", default=[], help="a path no command line may name (repeatable)")
    parser.add_argument("--replace-input", action="append", default=[], metavar="EXEC_PATH=FILE")
    parser.add_argument("--no-replay", action="store_true", help="only scan")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="spawns replayed at once (default: the cores)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("needs root (mount namespaces): run it inside python3 -m sandbox run")
    replacements = {}
    for item in args.replace_input:
        path, _, file = item.partition("=")
        replacements[path] = Path(file)
    spawns = [s for s in read_log(args.log) if s.get("mnemonic") in args.mnemonic]
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
        f.write(ISOLATE)

    def examine(spawn: dict) -> dict:
        entry = {
            "mnemonic": spawn.get("mnemonic"),
            "target": spawn.get("targetLabel", ""),
            "progress": spawn.get("progressMessage", ""),
            "argv": spawn.get("commandArgs", []),
            "inputs": [i["path"] for i in spawn.get("inputs", [])],
            "environment": {e["name"]: e["value"] for e in spawn.get("environmentVariables", [])},
            "leaks": leaks(spawn, args.execroot, args.forbid),
        }
        if not args.no_replay:
            entry |= replay(spawn, args.execroot, replacements, Path(f.name))
        return entry

    try:
        # Each spawn replays from Bazel's inputs, not from another replay's outputs: they are
        # independent, and Zig's runtime alone takes a core for about 40 s.
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            report = list(pool.map(examine, spawns))
    finally:
        os.unlink(f.name)
    print(json.dumps({"spawns": report}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
