"""How many actions a set of Bazel commands executed, and how many they took from a cache.

    JAX_ROCM_BAZEL_EVENTS=/tmp/events python3 -m tests.run -m bazel
    python3 -m bench.action_counts /tmp/events

With JAX_ROCM_BAZEL_EVENTS=DIR, every build-like command Bazel runs in the sandbox writes its
build events to a file of its own in DIR (sandbox/environment.py, the launcher).
This sums the spawns each command's BuildMetrics counts by runner: executed (sandboxed, local,
remote), taken from a cache (disk cache hit, remote cache hit), and Bazel-internal ones.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

CACHED = ("disk cache hit", "remote cache hit")


def runner_counts(events_file: Path) -> collections.Counter | None:
    """The spawn runners of one command's BuildMetrics event; None if it has none (interrupted)."""
    for line in events_file.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        metrics = event.get("buildMetrics")
        if metrics is not None:
            counts = collections.Counter()
            for runner in metrics.get("actionSummary", {}).get("runnerCount", []):
                counts[runner.get("name", "?")] += int(runner.get("count", 0))
            return counts
    return None


def summarize(files: list[Path]) -> dict:
    total, commands, unfinished = collections.Counter(), 0, 0
    for f in files:
        counts = runner_counts(f)
        if counts is None:
            unfinished += 1
            continue
        commands += 1
        total.update(counts)
    total.pop("total", None)  # Bazel lists the sum as a runner of its own
    cached = sum(total[r] for r in CACHED)
    internal = total["internal"]
    executed = sum(total.values()) - cached - internal
    return {"commands": commands, "unfinished": unfinished, "executed": executed, "cached": cached,
            "internal": internal, "runners": dict(sorted(total.items()))}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("events_dir", type=Path)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    files = sorted(args.events_dir.glob("*.json"))
    if not files:
        print(f"action_counts: no build event files in {args.events_dir}", file=sys.stderr)
        return 1
    s = summarize(files)
    if args.json:
        print(json.dumps(s))
        return 0
    spawns = s["executed"] + s["cached"]
    share = f" ({100 * s['cached'] / spawns:.0f} % from a cache)" if spawns else ""
    print(f"{s['commands']} Bazel commands ({s['unfinished']} without metrics): {s['executed']} spawns executed, "
          f"{s['cached']} taken from a cache{share}, {s['internal']} internal")
    print("by runner: " + ", ".join(f"{name} {n}" for name, n in s["runners"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
