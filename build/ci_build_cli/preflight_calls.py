"""The second step of a pre-flight: how an XLA or JAX tree *calls* `@local_config_rocm`.

The name check (preflight_names) proves that every name a tree uses exists. A name can exist
and still fail the tree's build at loading: XLA passes `rocm_library(..., linkstatic = True)`
and our rule has no such attribute, or a `select()` keys on a target that is not a
`config_setting`, or a `.bazelrc` sets `--@local_config_rocm//rocm:rocm_path_type` to a value
ours refuses. This module reads every BUILD, `.bzl`, `.bazelrc` and third-party BUILD overlay of
a tree with Python's parser (Starlark's syntax is a subset of Python's) and records:

* each call of a symbol loaded from `@local_config_rocm` (or rules_ml_toolchain's
  `@config_rocm_hipcc`, which full mode points at it): its keyword names and, for each
  argument, a value of the same kind (the literal itself where it is one; a value of the type
  the expression has, or the type that attribute name always has, where it is computed), and how
  the tree uses what it returns (`+` a list, `.field`, `[i]`, `for`);
* each `select()` key naming one of its targets, and each target of it in a `deps` list;
* each value the tree gives one of its build settings (`.bazelrc` flags, `flag_values`).

`probe_files()` turns them into packages that make the same calls, so that Bazel itself says
what our `@local_config_rocm` rejects (loading for calls; analysis for select keys, `deps`
providers and flag values); `rejections()` maps Bazel's errors back to the tree's file:line.
Nothing of XLA's graph is needed: only our repository is loaded.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from . import preflight_names

_REPOSITORY = re.compile(r"^@@?(?:" + "|".join((preflight_names.REPOSITORY, *preflight_names.ALSO_ANSWERED_AS)) + r")//")
_FLAG = re.compile(r"--(@@?(?:" + "|".join((preflight_names.REPOSITORY, *preflight_names.ALSO_ANSWERED_AS))
                   + r")//[A-Za-z0-9_./-]*:[A-Za-z0-9_.-]+)=([^\s\"',]+)")

# The type an argument of this name has in every rule and macro XLA and JAX call (Bazel's
# common attributes and cc_library's); a computed value of such a keyword is passed as one.
_LIST_KEYWORDS = frozenset({
    "srcs", "hdrs", "textual_hdrs", "deps", "implementation_deps", "data", "tags", "copts", "conlyopts", "cxxopts",
    "linkopts", "defines", "local_defines", "includes", "features", "visibility", "compatible_with",
    "target_compatible_with", "exec_compatible_with", "args", "outs", "toolchains", "additional_linker_inputs",
})
_BOOL_KEYWORDS = frozenset({"testonly", "alwayslink", "linkstatic", "linkshared", "flaky", "local"})
_STRING_KEYWORDS = frozenset({"name", "size", "timeout", "strip_include_prefix", "include_prefix", "main"})
_DICT_KEYWORDS = frozenset({"env", "exec_properties"})
CALL_MARK = "$CALL"  # where a use of a call's result puts the call (not Starlark: never in a stand-in)
LIST, STRING, BOOL, DICT, INT, SELECT, UNKNOWN = "list", "string", "bool", "dict", "int", "select", "unknown"
# A placeholder of each kind, as Starlark source.
_PLACEHOLDER = {LIST: "[]", STRING: '"probe"', BOOL: "True", DICT: "{}", INT: "1", SELECT: 'select({"//conditions:default": []})'}


@dataclasses.dataclass(frozen=True, order=True)
class Where:
    file: str  # relative to the tree's parent, e.g. "xla-main/xla/stream_executor/rocm/BUILD"
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclasses.dataclass(frozen=True)
class Call:
    """One call of a `@local_config_rocm` symbol, reduced to what Bazel checks of it."""

    module: str  # "@local_config_rocm//rocm:build_defs.bzl"
    symbol: str  # "rocm_library"
    positional: tuple[str, ...]  # Starlark source of each positional argument's stand-in
    keywords: tuple[tuple[str, str], ...]  # (name, Starlark source of its stand-in)
    use: str  # how the result is used: "" or an expression with CALL_MARK for the call
    top_level_of_bzl: bool  # made when a .bzl file is loaded (no native.* allowed there)

    def source(self, callee: str) -> str:
        args = [*self.positional, *(f"{k} = {v}" for k, v in self.keywords)]
        call = f"{callee}({', '.join(args)})"
        return self.use.replace(CALL_MARK, call, 1) if self.use else call


@dataclasses.dataclass(frozen=True)
class Findings:
    """What the trees ask of `@local_config_rocm` beyond its names, each with its first use."""

    calls: dict[Call, Where]
    argument_lines: dict[Call, dict[str, int]]  # the first call's line of each keyword argument
    select_keys: dict[str, Where]  # label -> first select() keyed on it
    dependencies: dict[str, Where]  # label -> first deps list naming it (it must provide CcInfo)
    flag_values: dict[tuple[str, str], Where]  # (build setting, value) -> first file setting it


def canonical(label: str) -> str:
    """The label in the spelling our repository answers (`@local_config_rocm//...`)."""
    match = _REPOSITORY.match(label)
    return f"@{preflight_names.REPOSITORY}//" + label[match.end():] if match else label


def is_ours(label: object) -> bool:
    return isinstance(label, str) and bool(_REPOSITORY.match(label))


def kind_of(node: ast.expr, keyword: str | None = None) -> str:
    """The Starlark type an expression evaluates to, as far as its text shows."""
    if isinstance(node, ast.Constant):
        value = node.value
        return {bool: BOOL, int: INT, str: STRING}.get(type(value), UNKNOWN) if value is not None else UNKNOWN
    if isinstance(node, (ast.List, ast.ListComp, ast.Tuple)):
        return LIST
    if isinstance(node, (ast.Dict, ast.DictComp)):
        return DICT
    if isinstance(node, ast.JoinedStr):
        return STRING
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "glob":
            return LIST
        if node.func.id == "select":
            return SELECT
        if node.func.id == "Label":
            return STRING if keyword in _STRING_KEYWORDS else UNKNOWN
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Mod) and kind_of(node.left) == STRING:
            return STRING
        if isinstance(node.op, ast.Add):
            kinds = {kind_of(node.left), kind_of(node.right)} - {UNKNOWN}
            if kinds == {STRING}:
                return STRING
            if kinds and kinds <= {LIST, SELECT}:
                return SELECT if SELECT in kinds else LIST
    if keyword in _LIST_KEYWORDS:
        return LIST
    if keyword in _BOOL_KEYWORDS:
        return BOOL
    if keyword in _STRING_KEYWORDS:
        return STRING
    if keyword in _DICT_KEYWORDS:
        return DICT
    return UNKNOWN


def stand_in(node: ast.expr, keyword: str | None = None) -> str:
    """Starlark source of a value Bazel treats as the tree's: the literal itself (its strings,
    booleans and numbers), else a value of the same type; `None` when the type is unknown
    (every rule attribute takes None as "the default")."""
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, str))):
        return _literal(node.value)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e.value) if isinstance(e, ast.Constant) and isinstance(e.value, (str, bool, int)) else _item(e)
                 for e in node.elts if not isinstance(e, ast.Starred)]
        return "[" + ", ".join(items) + "]"
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
        return "{" + ", ".join(f"{_literal(k.value)}: {stand_in(v)}" for k, v in zip(node.keys, node.values)) + "}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "select" and node.args:
        branches = node.args[0]
        if isinstance(branches, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in branches.keys):
            # Only the default branch: the keys are XLA's labels, checked by analysis separately.
            values = {kind_of(v, keyword) for v in branches.values} - {UNKNOWN}
            value = _PLACEHOLDER[values.pop()] if len(values) == 1 else "[]"
            return f'select({{"//conditions:default": {value}}})'
    kind = kind_of(node, keyword)
    if keyword == "visibility" and kind == LIST:
        return '["//visibility:public"]'
    if keyword == "name" and kind == STRING:
        return '"probe"'
    return _PLACEHOLDER.get(kind, "None")


def _literal(value: object) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "None"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)  # a Starlark string literal


def _item(node: ast.expr) -> str:
    kind = kind_of(node)
    return _PLACEHOLDER[kind] if kind in (BOOL, INT, DICT) else '"probe"'


def _use_of(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> str:
    """How the tree uses the call's result: the enclosing expression, other operands stood in."""
    parent = parents.get(call)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
        other = parent.right if parent.left is call else parent.left
        if kind_of(other) == UNKNOWN:
            return ""  # a variable's value: nothing known to add to the check
        return CALL_MARK + " + " + stand_in(other) if parent.left is call else stand_in(other) + " + " + CALL_MARK
    if isinstance(parent, ast.Attribute) and parent.value is call:
        return f"{CALL_MARK}.{parent.attr}"
    if isinstance(parent, ast.Subscript) and parent.value is call:
        return f"{CALL_MARK}[0]"
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is call:
        return f"[x for x in {CALL_MARK}]"
    return ""


def _bindings(module: ast.Module) -> dict[str, tuple[str, str]]:
    """Local name -> (module label, symbol) for each load() from our repository."""
    bound = {}
    for node in module.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "load" and call.args):
            continue
        label = call.args[0]
        if not (isinstance(label, ast.Constant) and is_ours(label.value)):
            continue
        for arg in call.args[1:]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                bound[arg.value] = (canonical(label.value), arg.value)
        for keyword in call.keywords:
            if isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
                bound[keyword.arg] = (canonical(label.value), keyword.value.value)
    return bound


def _string_keys(node: ast.Dict) -> Iterator[tuple[str, ast.expr, int]]:
    for key, value in zip(node.keys, node.values):
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            yield key.value, value, key.lineno


def scan_starlark(text: str, file: str, is_bzl: bool) -> tuple[list[tuple[Call, Where, dict[str, int]]], list[tuple[str, str, Where]]]:
    """(calls, label uses) of one BUILD or .bzl file. A call comes with its place and the line of
    each keyword argument; a use is (kind, label or "label=value", where) with kind "select",
    "deps" or "flag". A file Python cannot parse is skipped (Bazel
    reports its syntax itself)."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return [], []
    bound = _bindings(module)
    parents = {child: node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}
    top_level = {id(n) for n in ast.walk(module)} - {id(n) for f in module.body if isinstance(f, ast.FunctionDef)
                                                      for n in ast.walk(f)}
    calls, uses = [], []
    for node in ast.walk(module):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        where = Where(file, node.lineno)
        name = node.func.id
        if name in bound and name != "load":
            module_label, symbol = bound[name]
            positional = tuple(stand_in(a) if not isinstance(a, ast.Name) else "[]" for a in node.args
                               if not isinstance(a, ast.Starred))
            keywords = tuple((k.arg, stand_in(k.value, k.arg)) for k in node.keywords if k.arg is not None)
            call = Call(module_label, symbol, positional, keywords, _use_of(node, parents), is_bzl and id(node) in top_level)
            calls.append((call, where, {k.arg: k.lineno for k in node.keywords if k.arg is not None}))
        if name == "select" and node.args and isinstance(node.args[0], ast.Dict):
            for key, _, line in _string_keys(node.args[0]):
                if is_ours(key):
                    uses.append(("select", canonical(key), Where(file, line)))
        for keyword in node.keywords:
            if keyword.arg == "deps" and takes_cc_deps(name) and isinstance(keyword.value, (ast.List, ast.BinOp)):
                for item in ast.walk(keyword.value):
                    if isinstance(item, ast.Constant) and is_ours(item.value) and not _inside_select(item, keyword.value, parents):
                        uses.append(("deps", canonical(item.value), Where(file, item.lineno)))
            if keyword.arg == "flag_values" and isinstance(keyword.value, ast.Dict):
                for key, value, line in _string_keys(keyword.value):
                    if is_ours(key) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                        uses.append(("flag", f"{canonical(key)}={value.value}", Where(file, line)))
    return calls, uses


def takes_cc_deps(callee: str) -> bool:
    """Whether a rule or macro's deps are C++ libraries (CcInfo): cc_library and every wrapper
    of it XLA and JAX call (rocm_library, xla_cc_test, tsl_gpu_library ...), not Starlark
    (bzl_library) or Python rules."""
    return not (callee.endswith("bzl_library") or callee.startswith(("py", "pytype")) or callee in ("filegroup", "alias"))


def _inside_select(node: ast.AST, top: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node is not top and node in parents:
        node = parents[node]
        if isinstance(node, ast.Dict):
            return True  # a key of select(), or a value in one: not a plain dependency
    return False


def scan_bazelrc(text: str, file: str) -> list[tuple[str, str, Where]]:
    return [("flag", f"{canonical(m.group(1))}={m.group(2)}", Where(file, text.count("\n", 0, m.start()) + 1))
            for m in _FLAG.finditer(text)]


def collect(texts: Iterable[tuple[str, str]]) -> Findings:
    """Every call and use in (relative path, text) pairs, each with its first place."""
    calls: dict[Call, Where] = {}
    argument_lines: dict[Call, dict[str, int]] = {}
    select_keys: dict[str, Where] = {}
    dependencies: dict[str, Where] = {}
    flag_values: dict[tuple[str, str], Where] = {}
    for file, text in texts:
        name = Path(file).name
        if name.endswith(".bazelrc") or name == ".bazelrc":
            found_calls, uses = [], scan_bazelrc(text, file)
        else:
            found_calls, uses = scan_starlark(text, file, name.endswith(".bzl"))
        for call, where, lines in found_calls:
            if call not in calls:
                calls[call], argument_lines[call] = where, lines
        for kind, label, where in uses:
            if kind == "select":
                select_keys.setdefault(label, where)
            elif kind == "deps":
                dependencies.setdefault(label, where)
            else:
                setting, _, value = label.partition("=")
                flag_values.setdefault((setting, value), where)
    return Findings(calls, argument_lines, select_keys, dependencies, flag_values)


# --- the probe ---------------------------------------------------------------------------------

CALLS_DIR, ANALYSIS_DIR = "calls", "analysis"


@dataclasses.dataclass(frozen=True)
class Probe:
    """The files of a probe (path relative to its folder -> text) and what each checks."""

    files: dict[str, str]
    call_packages: dict[str, Call]  # "calls/c3" -> the call its BUILD makes
    analysis_targets: dict[str, tuple[str, str]]  # target name -> ("select" | "deps" | "flag", label)
    analysis_lines: dict[int, str]  # line of the analysis package's BUILD file -> its target
    flag_settings: dict[tuple[str, str], str]  # (setting, value) -> target whose analysis reads it


def probe_files(findings: Findings) -> Probe:
    """One package per call (Bazel stops evaluating a file at its first error), each making the
    call from a .bzl function (or at its top level, where the tree's was), and one package of
    targets whose analysis checks select() keys, dependencies' providers and flag values."""
    files: dict[str, str] = {}
    packages: dict[str, Call] = {}
    header = '"""Written by ci_build preflight: does @local_config_rocm accept this call?"""\n'
    for n, call in enumerate(sorted(findings.calls, key=lambda c: str(findings.calls[c]))):
        package = f"{CALLS_DIR}/c{n}"
        load = f'load("{call.module}", _callee = "{call.symbol}")\n'
        if call.top_level_of_bzl:
            files[f"{package}/probe.bzl"] = header + load + f"_RESULT = {call.source('_callee')}\n\ndef probe():\n    pass\n"
        else:
            files[f"{package}/probe.bzl"] = header + load + f"\ndef probe():\n    {call.source('_callee')}\n"
        files[f"{package}/BUILD.bazel"] = header + 'load(":probe.bzl", "probe")\n\nprobe()\n'
        packages[package] = call
    targets: dict[str, tuple[str, str]] = {}
    lines = ['"""Written by ci_build preflight: select() keys, dependencies and flag values of @local_config_rocm."""',
             'load("@rules_cc//cc:defs.bzl", "cc_library")', ""]
    for n, label in enumerate(sorted(findings.select_keys)):
        targets[f"select{n}"] = ("select", label)
        lines.append(f'filegroup(name = "select{n}", srcs = select({{{json.dumps(label)}: [], "//conditions:default": []}}))')
    for n, label in enumerate(sorted(findings.dependencies)):
        targets[f"deps{n}"] = ("deps", label)
        lines.append(f'cc_library(name = "deps{n}", deps = [{json.dumps(label)}])')
    flag_settings = {}
    for n, setting in enumerate(sorted({s for s, _ in findings.flag_values})):
        targets[f"flag{n}"] = ("flag", setting)
        lines.append(f'filegroup(name = "flag{n}", srcs = [{json.dumps(setting)}])')
        for key in findings.flag_values:
            if key[0] == setting:
                flag_settings[key] = f"flag{n}"
    files[f"{ANALYSIS_DIR}/BUILD.bazel"] = "\n".join(lines) + "\n"
    files["BUILD.bazel"] = ""
    lines_of = {n + 1: target for n, text in enumerate(lines) for target in targets if f'name = "{target}"' in text}
    return Probe(files, packages, targets, lines_of, flag_settings)


# --- Bazel's answer ----------------------------------------------------------------------------

_MISSING_SYMBOL = "does not contain symbol"
_ERROR = re.compile(r"^ERROR: (\S+?):(\d+):\d+: (.*)$")
_PACKAGE_ERROR = re.compile(r"^ERROR: package contains errors: (\S+?): (.*)$")
_ERROR_IN = re.compile(r"^Error(?: in \w+)?: (.*)$")
_NOT_ANALYSED = re.compile(r"^WARNING: errors encountered while analyzing target '([^']+)'")
_OUR_CANONICAL_NAME = re.compile(r"@@[^/\s']*?(?:" + "|".join((preflight_names.REPOSITORY, *preflight_names.ALSO_ANSWERED_AS)) + r")//")
_ARGUMENT = (
    re.compile(r"unexpected keyword argument:? '?(\w+)'?"),
    re.compile(r"no such attribute '(\w+)'"),
    re.compile(r"for attribute '(\w+)'"),
    re.compile(r"missing (?:\d+ )?(?:required )?(?:positional |keyword )?(?:argument|parameter)s?:? '?(\w+)'?"),
    re.compile(r"has no field or method '(\w+)'"),
)
# A library the configured toolkit lacks: @local_config_rocm answers its name with a rocm_missing
# target, which fails when analysed, naming the package to install. Not a fault of ours.
_TOOLKIT_GAP = "in rocm_missing rule "


@dataclasses.dataclass(frozen=True, order=True)
class Rejection:
    where: Where
    what: str  # "rocm_library(linkstatic = ...)" or "select() key @local_config_rocm//rocm:x"
    message: str  # Bazel's words: what ours accepts
    toolkit_gap: bool = False  # the configured toolkit lacks the library (not an incompatibility)

    def line(self) -> str:
        return f"{self.where}: {self.what}: {self.message}"


@dataclasses.dataclass(frozen=True)
class _Error:
    file: str
    line: int
    message: str  # the 'Error in' line of a traceback, else the ERROR line's text
    header: str  # the ERROR line's text


def _errors(stderr: str) -> list[_Error]:
    """Each Bazel error, at the place its ERROR line names (for a call, the probe package's BUILD
    file at the top of the traceback)."""
    lines = stderr.splitlines()
    found = []
    for i, text in enumerate(lines):
        match = _ERROR.match(text)
        if match:
            file, line, header = match.group(1), int(match.group(2)), match.group(3)
        else:  # a Starlark function's error: the package (relative to the workspace), no line
            match = _PACKAGE_ERROR.match(text)
            if not match:
                continue
            file, line, header = match.group(1), 0, match.group(2)
        message = header
        if message.startswith("Traceback") or (i + 1 < len(lines) and lines[i + 1].startswith("Traceback")):
            for later in lines[i + 1:]:
                if later.startswith("ERROR: "):
                    break
                error_in = _ERROR_IN.match(later.strip())
                if error_in:
                    message = error_in.group(1)
                    break
        found.append(_Error(file, line, message, header))
    return found


def _clean(message: str, probe_label: str) -> str:
    """Bazel's message in the user's terms: our repository by its apparent name, the probe's
    target labels left out."""
    message = _OUR_CANONICAL_NAME.sub(f"@{preflight_names.REPOSITORY}//", message)
    message = re.sub(re.escape(probe_label) + r"/[\w/]+:\w+: ", "", message)
    return re.sub(re.escape(probe_label) + r"/[\w/]+:\w+", "the tree's target", message).strip()


def _argument(message: str) -> str | None:
    for pattern in _ARGUMENT:
        match = pattern.search(message)
        if match:
            return match.group(1)
    return None


def call_rejections(probe: Probe, probe_dir: str, probe_label: str, findings: Findings, stderr: str) -> list[Rejection]:
    """One rejection per probe package Bazel could not load, at the tree's place of the call."""
    rejected: dict[str, Rejection] = {}
    # The probe's BUILD files by absolute path, or its packages relative to the workspace.
    package_of = re.compile("(?:^|/)" + re.escape(probe_label.removeprefix("//")) + "/(" + CALLS_DIR + r"/c\d+)(?:/|$)")
    for error in _errors(stderr):
        match = package_of.search(error.file)
        if not match or match.group(1) not in probe.call_packages or match.group(1) in rejected:
            continue
        if _MISSING_SYMBOL in error.message:
            continue  # a name ours lacks: the name check reports it
        call = probe.call_packages[match.group(1)]
        argument = _argument(error.message)
        where = findings.calls[call]
        if argument and argument in dict(call.keywords):
            shown = f"{call.symbol}({argument} = ...)"
            where = Where(where.file, findings.argument_lines[call].get(argument, where.line))
        elif argument and call.use == f"{CALL_MARK}.{argument}":
            shown = f"{call.symbol}().{argument}"
        else:
            shown = f"{call.symbol}()"
        rejected[match.group(1)] = Rejection(where, shown, _clean(error.message, probe_label))
    return sorted(rejected.values())


def analysis_rejections(probe: Probe, probe_dir: str, probe_label: str, findings: Findings, stderr: str) -> list[Rejection]:
    """One rejection per analysis target Bazel refused (select keys, providers). The target is
    the one an error at its line of the probe's BUILD file names, or one Bazel says it could not
    analyse; the message is the first error naming our label where there is one."""
    errors = _errors(stderr)
    analysis_build = probe_dir.rstrip("/") + f"/{ANALYSIS_DIR}/BUILD.bazel"
    failed = {probe.analysis_lines[e.line]: e for e in errors if e.file == analysis_build and e.line in probe.analysis_lines}
    for text in stderr.splitlines():
        match = _NOT_ANALYSED.match(text)
        if match and match.group(1).rsplit(":", 1)[-1] in probe.analysis_targets:
            failed.setdefault(match.group(1).rsplit(":", 1)[-1], None)
    rejected = []
    for target, error in sorted(failed.items()):
        kind, label = probe.analysis_targets[target]
        if kind == "flag":
            continue
        own = "//" + label.split("//", 1)[1]
        cause = next((e for e in errors if e.file != analysis_build and own in _clean(e.header, probe_label)), None)
        chosen = cause or error
        if chosen is None or "no such target" in chosen.message:
            continue  # nothing Bazel said about it, or a name ours lacks (the name check's)
        where = findings.select_keys[label] if kind == "select" else findings.dependencies[label]
        what = f"select() key {label}" if kind == "select" else f"dependency {label} (in deps)"
        message = _clean(chosen.message, probe_label).removeprefix(f"{label}: ")
        rejected.append(Rejection(where, what, message, chosen.header.startswith(_TOOLKIT_GAP)))
    return sorted(rejected)


def flag_rejection(findings: Findings, setting: str, value: str, probe_label: str, stderr: str) -> Rejection | None:
    """The rejection of one flag value, from the stderr of the analysis that set it (None if none)."""
    errors = _errors(stderr)
    if not errors:
        return None
    return Rejection(findings.flag_values[(setting, value)], f"--{setting}={value}", _clean(errors[0].message, probe_label))
