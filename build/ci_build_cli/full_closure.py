"""The part of a target's graph that builds without what cannot be had here, and what it built.

Full mode's real graph (docs/full-mode.md) loads except LLVM, MLIR and what hangs from them.
This reads `bazel query --keep_going --output=xml 'deps(TARGETS)'`: a rule whose transitive
dependencies all loaded is in the closure; a rule that reaches a label Bazel could not load is
cut, and the labels that cut it are counted by package. Then it reads the build event file of
`bazel build --keep_going` over that closure (--build_event_json_file) and reports what was
built, what failed, and the first cause of each failure.

    bazel query --keep_going --output=xml 'deps(//:xla_rocm_plugin)' > graph.xml
    PYTHONPATH=build python3 -m ci_build_cli.full_closure targets graph.xml > closure.txt
    bazel build --keep_going --target_pattern_file=closure.txt --build_event_json_file=events.json
    PYTHONPATH=build python3 -m ci_build_cli.full_closure report graph.xml events.json
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

# Kinds that name files or settings, not something to build.
NOT_BUILT = frozenset({"source-file", "generated-file", "package-group", "environment-group"})
# What of a closure to ask Bazel for: the rules of XLA, TSL, JAX's modules and this project
# (their dependencies build with them), without those tagged no_oss (what XLA's open-source
# build leaves out: TSL's Windows sources ...) or cuda-only (the other platform's branch of a
# select(), which a query lists like any other).
BUILT_REPOSITORIES = ("@xla", "@tsl", "//jaxlib", "@jax_rocm_build")
NOT_FOR_THIS_BUILD = frozenset({"no_oss", "cuda-only"})


@dataclasses.dataclass(frozen=True)
class Graph:
    """What a query loaded: each rule's kind and direct inputs (every select() branch)."""

    kinds: dict[str, str]  # label -> rule class, or the element's tag for files
    inputs: dict[str, tuple[str, ...]]  # rule label -> the labels it names
    tags: dict[str, frozenset[str]]  # rule label -> its tags

    @classmethod
    def from_xml(cls, text: str) -> Graph:
        kinds, inputs, tags = {}, {}, {}
        for element in ET.fromstring(text):
            name = element.get("name")
            if name is None:
                continue
            kinds[name] = element.get("class") if element.tag == "rule" else element.tag
            if element.tag == "rule":
                inputs[name] = tuple(i.get("name") for i in element.findall("rule-input"))
                tags[name] = frozenset(s.get("value") for attribute in element.findall("list")
                                       if attribute.get("name") == "tags" for s in attribute.findall("string"))
        return cls(kinds, inputs, tags)

    def select(self, labels: tuple[str, ...], within: tuple[str, ...], without_tags: frozenset[str]) -> tuple[str, ...]:
        """The labels of the repositories `within` (all if empty) that carry none of `without_tags`."""
        return tuple(label for label in labels if (not within or label.startswith(tuple(r if "//" in r else f"{r}//" for r in within)))
                     and not self.tags.get(label, frozenset()) & without_tags)


@dataclasses.dataclass(frozen=True)
class Closure:
    rules: tuple[str, ...]  # every rule loaded
    free: tuple[str, ...]  # the rules none of whose transitive inputs failed to load
    cut_by: dict[str, int]  # package of a label that did not load -> rules naming it directly

    def path_to_unloaded(self, graph: Graph, label: str) -> list[str]:
        """One chain of inputs from `label` to a label that did not load ([] if it is free)."""
        cut, chain, seen = set(self.rules) - set(self.free), [label], {label}
        while chain[-1] in graph.kinds:
            # Onwards through a rule that is cut itself, or to a label that did not load.
            step = next((i for i in graph.inputs.get(chain[-1], ()) if (i in cut or i not in graph.kinds) and i not in seen), None)
            if step is None:
                return []
            chain.append(step)
            seen.add(step)
        return chain


def package_of(label: str) -> str:
    return label.rsplit(":", 1)[0]


def closure(graph: Graph) -> Closure:
    cut: dict[str, bool] = {}
    for start in graph.kinds:  # iterative depth-first search: graphs are deep
        if start in cut:
            continue
        cut[start] = False
        stack = [(start, iter(graph.inputs.get(start, ())))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                if stack and cut[node]:
                    cut[stack[-1][0]] = True
                continue
            if child not in graph.kinds:
                cut[node] = True
            elif child not in cut:
                cut[child] = False
                stack.append((child, iter(graph.inputs.get(child, ()))))
            elif cut[child]:
                cut[node] = True
    rules = tuple(sorted(label for label, kind in graph.kinds.items() if kind not in NOT_BUILT))
    cut_by = collections.Counter(package_of(i) for inputs in graph.inputs.values() for i in inputs if i not in graph.kinds)
    return Closure(rules, tuple(label for label in rules if not cut[label]), dict(cut_by.most_common()))


@dataclasses.dataclass(frozen=True)
class Outcome:
    built: tuple[str, ...]
    failed: dict[str, str]  # label -> the first root cause Bazel named (a label, or its message)


def build_outcome(events: list[dict]) -> Outcome:
    """Each requested target's result in a build event file: completed, or aborted in analysis."""
    built, failed = [], {}
    for event in events:
        ident = event.get("id", {})
        target = ident.get("targetCompleted") or ident.get("targetConfigured")
        if not target:
            continue
        label = target["label"]
        if event.get("completed", {}).get("success"):
            built.append(label)
        elif "completed" in event or "aborted" in event:
            causes = [c.get("actionCompleted", {}).get("label") or c.get("configuredLabel", {}).get("label")
                      or c.get("unconfiguredLabel", {}).get("label") for c in event.get("children", [])]
            reason = event.get("aborted", {}).get("description", "")
            failed.setdefault(label, next((c for c in causes if c), reason or "failed"))
    return Outcome(tuple(sorted(set(built))), {k: v for k, v in failed.items() if k not in built})


def read_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def report(graph: Graph, outcome: Outcome) -> list[str]:
    found = closure(graph)
    requested = len(outcome.built) + len(outcome.failed)
    lines = [f"{len(found.rules)} rules loaded; {len(found.free)} depend on nothing that failed to load",
             f"built: {len(outcome.built)} of the {requested} requested; failed: {len(outcome.failed)}"]
    causes = collections.Counter(package_of(cause) if cause.startswith(("@", "//")) else cause
                                 for cause in outcome.failed.values())
    lines += [f"  failed because of {cause}: {count}" for cause, count in causes.most_common()]
    lines.append("what did not load, by package (rules naming it directly):")
    lines += [f"  {package}: {count}" for package, count in found.cut_by.items()]
    named = {i for inputs in graph.inputs.values() for i in inputs}
    chains = [found.path_to_unloaded(graph, root) for root in found.rules if root not in named]
    lines.append("how each top-level target reaches it (one chain each):")
    lines += [f"  {' -> '.join(chain)}" for chain in chains if chain]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    targets = sub.add_parser("targets", help="print the closure's rules, one label per line")
    targets.add_argument("graph", type=Path, help="bazel query --keep_going --output=xml 'deps(...)'")
    targets.add_argument("--within", action="append", default=[], metavar="REPO",
                         help="only the rules of this repository (@xla) or package prefix (//jaxlib/rocm), "
                              "as the query names them; repeatable")
    targets.add_argument("--without-tag", action="append", default=[], metavar="TAG",
                         help="leave out rules with this tag (cuda-only: another platform's branch of a select())")
    summary = sub.add_parser("report", help="what of the closure was built, what failed and why")
    summary.add_argument("graph", type=Path)
    summary.add_argument("events", type=Path, help="the --build_event_json_file of the build of the closure")
    args = parser.parse_args(argv)
    graph = Graph.from_xml(args.graph.read_text())
    if args.command == "targets":
        print("\n".join(graph.select(closure(graph).free, tuple(args.within), frozenset(args.without_tag))))
    else:
        print("\n".join(report(graph, build_outcome(read_events(args.events)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
