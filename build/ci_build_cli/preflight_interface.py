"""The third step of a pre-flight: the interface around `@local_config_rocm`'s names.

A tree can name only what ours answers (preflight_names) and call it only as ours accepts
(preflight_calls), and still be built in a way ours ignores or refuses:

* XLA's `third_party/gpus/rocm_configure.bzl` reads environment variables (`environ = [...]`
  of its repository rules, `get_host_environ(ctx, NAME)`, `repository_ctx.os.environ.get(NAME)`,
  `getenv(NAME)`), often through module constants (`_ROCM_DISTRO_URL = "ROCM_DISTRO_URL"`).
  Each one a user or CI sets must be read by ours (its `ROCM_CONFIGURE_ENVIRON`) or be one ours
  says it need not read (its `XLA_ENVIRON_NOT_NEEDED`, with why). Only XLA's own
  rocm_configure.bzl is read: what it loads is generic (remote_config's helpers read
  BAZEL_SH and PYTHON_BIN_PATH for any rule), another toolkit's (cuda/sycl's `enable_*`), or
  data (rocm_redist.bzl); at JAX 0.10.2's pin rules_ml_toolchain's hipcc_configure found the
  toolkit, outside the XLA tree.
* JAX's `build/rocm/rocm.bazelrc` defines the `--config` names JAX's build and CI pass
  (`rocm_release_wheel`, `single_gpu` ...); each must be defined by ours for the command JAX
  defines it for, or `bazel build --config=NAME` stops before loading anything.

Neither is answered from a list in Python: `environ_probe()` writes a package whose BUILD file
loads our rocm_configure.bzl and declares one target per name it answers neither way, so that
`bazel query` names them; `config_command()` is the Bazel command that fails with
"Config value 'NAME' is not defined in any .rc file" when ours lacks NAME (`bazel
canonicalize-flags` stops at the first undefined config: all of them are asked at once, and each
on its own only where that fails; about 0.2 s a command with the server up).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import shlex
from collections.abc import Iterable, Iterator

XLA_ROCM_CONFIGURE = "third_party/gpus/rocm_configure.bzl"
JAX_ROCM_BAZELRC = "build/rocm/rocm.bazelrc"
# Ours, from a probe package of this checkout (the main repository in kernels mode).
OUR_ROCM_CONFIGURE = "//third_party/gpus:rocm_configure.bzl"
READ, NOT_NEEDED = "ROCM_CONFIGURE_ENVIRON", "XLA_ENVIRON_NOT_NEEDED"

# Functions that read one variable, and which argument names it (remote_config/common.bzl's).
_ENV_FUNCTIONS = {"get_host_environ": 1, "get_environ": 1}


@dataclasses.dataclass(frozen=True, order=True)
class EnvName:
    """One environment variable XLA's rocm_configure reads, where it is first written."""

    name: str
    file: str  # as the pre-flight names files: "<tree>/third_party/gpus/rocm_configure.bzl"
    line: int
    how: str  # "environ", "get_host_environ", "os.environ.get", "getenv", "os.environ[]", "in os.environ"

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclasses.dataclass(frozen=True, order=True)
class Unresolved:
    """A read whose variable the file's text does not show (a function parameter, a call)."""

    file: str
    line: int
    how: str


@dataclasses.dataclass(frozen=True)
class EnvironFindings:
    names: dict[str, EnvName]  # name -> its first place in the file
    unresolved: tuple[Unresolved, ...]


class UnreadableStarlark(ValueError):
    """XLA's rocm_configure.bzl is not text Python's parser reads (Starlark's syntax is a subset)."""


def tree_files(texts: Iterable[tuple[str, str]], relative: str) -> list[tuple[str, str]]:
    """The (file, text) pairs of `texts` (named "<tree>/<path>", preflight_names.named_texts)
    whose path inside its tree is `relative`."""
    return [(file, text) for file, text in texts if file.partition("/")[2] == relative]


# ---- environment variables ----------------------------------------------------------------

# An item of a resolved expression: the string (None where the text does not show it) and
# the line it is written on.
_Item = tuple[str | None, int]


def _assignments(body: Iterable[ast.stmt]) -> dict[str, list[ast.expr]]:
    """Name -> the values `name = value` statements in `body` assign it, in nested blocks too
    but not in nested functions (Starlark assigns a global once; a local may be assigned on
    several branches: each value counts)."""
    found: dict[str, list[ast.expr]] = {}
    for statement in body:
        for node in ast.walk(statement) if not isinstance(statement, ast.FunctionDef) else ():
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                found.setdefault(node.targets[0].id, []).append(node.value)
    return found


class _Scope:
    """What a name means where a read is: a loop variable over a list, a local, a module constant."""

    def __init__(self, constants: dict[str, list[ast.expr]]):
        self.frames: list[dict[str, list[ast.expr]]] = [constants]

    def strings(self, node: ast.expr, depth: int = 0) -> list[_Item]:
        if depth > 20:  # a cycle (not valid Starlark): not known from the text
            return [(None, node.lineno)]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [(node.value, node.lineno)]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [item for element in node.elts for item in self.strings(element, depth + 1)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.strings(node.left, depth + 1) + self.strings(node.right, depth + 1)
        if isinstance(node, ast.Name):
            for frame in reversed(self.frames):
                if node.id in frame:
                    items = [item for value in frame[node.id] for item in self.strings(value, depth + 1)]
                    # A constant's name is written where it is used: that line, not the constant's.
                    single = [value for value in frame[node.id] if isinstance(value, ast.Constant)]
                    return [(value, node.lineno) for value, _ in items] if single else items
        return [(None, node.lineno)]


def _is_environ(node: ast.AST) -> bool:
    """`repository_ctx.os.environ` and the like; not a rule's `environ` attribute (`ctx.attr.environ`)."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ"
            and not (isinstance(node.value, ast.Attribute) and node.value.attr == "attr"))


def _read_argument(node: ast.AST) -> tuple[str, ast.expr] | None:
    """(how, the expression naming the variable) when `node` reads one variable."""
    if isinstance(node, ast.Call):
        func, args = node.func, node.args
        keyword = next((k.value for k in node.keywords if k.arg == "name"), None)
        if isinstance(func, ast.Name) and func.id in _ENV_FUNCTIONS:
            index = _ENV_FUNCTIONS[func.id]
            value = args[index] if len(args) > index else keyword
            return (func.id, value) if value is not None else None
        if isinstance(func, ast.Attribute) and func.attr == "getenv":
            value = args[0] if args else keyword
            return ("getenv", value) if value is not None else None
        if isinstance(func, ast.Attribute) and func.attr == "get" and _is_environ(func.value) and args:
            return "os.environ.get", args[0]
    if isinstance(node, ast.Subscript) and _is_environ(node.value):
        return "os.environ[]", node.slice
    if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
            and _is_environ(node.comparators[0])):
        return "in os.environ", node.left
    return None


def _walk(node: ast.AST, scope: _Scope) -> Iterator[tuple[str, ast.expr, ast.AST]]:
    """(how, naming expression, node) of every read and `environ =` in `node`, with `scope`
    holding the loop variables and locals around each."""
    if isinstance(node, ast.FunctionDef):
        scope.frames.append(_assignments(node.body))
        for child in node.body:
            yield from _walk(child, scope)
        scope.frames.pop()
        return
    if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
        yield from _walk(node.iter, scope)
        scope.frames.append({node.target.id: [node.iter]})
        for child in node.body + node.orelse:
            yield from _walk(child, scope)
        scope.frames.pop()
        return
    if isinstance(node, (ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
        bound = {g.target.id: [g.iter] for g in node.generators if isinstance(g.target, ast.Name)}
        scope.frames.append(bound)
        for child in ast.iter_child_nodes(node):
            yield from _walk(child, scope)
        scope.frames.pop()
        return
    read = _read_argument(node)
    if read:
        yield read[0], read[1], node
    if isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg == "environ":
                yield "environ", keyword.value, keyword
    for child in ast.iter_child_nodes(node):
        yield from _walk(child, scope)


def environ_names(text: str, file: str) -> EnvironFindings:
    """Every environment variable one rocm_configure.bzl declares (`environ = ...`) or reads,
    each with the first line that writes it (the string, or the constant's name where it is
    used); reads whose variable the text does not show, apart."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError) as e:
        raise UnreadableStarlark(f"{file}: {e}") from None
    scope = _Scope(_assignments(module.body))
    first: dict[str, EnvName] = {}
    unresolved: set[Unresolved] = set()
    for statement in module.body:
        for how, expression, node in _walk(statement, scope):
            for value, line in scope.strings(expression):
                if value is None:
                    unresolved.add(Unresolved(file, node.lineno, how))
                elif value not in first or line < first[value].line:
                    first[value] = EnvName(value, file, line, how)
    return EnvironFindings(dict(sorted(first.items())), tuple(sorted(unresolved)))


def environ_probe(names: list[str]) -> dict[str, str]:
    """The probe package's files: a BUILD file that loads ours and declares `loaded` (it was
    loaded) and `unanswered_<i>` for each names[i] ours neither reads nor says it need not."""
    listed = "".join(f'    "{name}",\n' for name in names)
    return {"BUILD.bazel": (
        '"""Written by ci_build preflight: which environment variables of XLA\'s rocm_configure does ours not answer?"""\n\n'
        f'load("{OUR_ROCM_CONFIGURE}", "{READ}", "{NOT_NEEDED}")\n\n'
        f"XLA_READS = [\n{listed}]\n\n"
        'filegroup(name = "loaded")\n\n'
        f'[filegroup(name = "unanswered_%d" % i) for i, name in enumerate(XLA_READS) if name not in {READ} and '
        f"name not in {NOT_NEEDED}]\n")}


def unanswered(names: list[str], package: str, query_stdout: str) -> set[str] | None:
    """The names Bazel's `query <package>:all` says ours does not answer; None when the package
    did not load (its `loaded` target is not in the answer: ours lacks a symbol, or fails)."""
    labels = {line.strip() for line in query_stdout.splitlines()}
    if f"{package}:loaded" not in labels:
        return None
    prefix = f"{package}:unanswered_"
    return {names[int(label[len(prefix):])] for label in labels if label.startswith(prefix)}


def environ_report(names: dict[str, EnvName], missing: set[str]) -> list[str]:
    """One line per unanswered variable, at the line of XLA's file that writes it."""
    in_order = sorted(missing, key=lambda n: (names[n].file, names[n].line, n))
    return [f"{names[name].where}: {name}: XLA's rocm_configure reads it ({names[name].how}); ours neither reads it "
            f"({READ}) nor says why it need not ({NOT_NEEDED})" for name in in_order]


# ---- --config names ----------------------------------------------------------------------

# `build:NAME --flag`, `common:NAME ...`, `test:NAME ...`: a config of a command.
_CONFIG_LINE = re.compile(r"^[ \t]*([a-z][a-z_-]*):(\S+)", re.M)
# The commands whose configs Bazel reads for `build` (canonicalize-flags inherits build's).
_BUILD_SECTIONS = frozenset({"common", "always", "build"})
# What Bazel 7 prints for an undefined config, before anything else is read.
_NOT_DEFINED = re.compile(r"Config value '([^']+)' is not defined in any \.rc file")
# A name no .rc file defines: asked first, so that a Bazel that says nothing of it (an .rc
# file it cannot read, a server that did not start) is not taken for one that defines all.
SENTINEL = "jax_rocm_preflight_no_such_config"


@dataclasses.dataclass(frozen=True, order=True)
class Config:
    """One --config name of JAX's rocm.bazelrc: its first line and the commands it is for."""

    name: str
    file: str
    line: int
    commands: tuple[str, ...]  # the sections that define it, in file order: ("common", "test")

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def bazelrc_configs(text: str, file: str) -> dict[str, Config]:
    """Name -> Config for every `COMMAND:NAME` line of one .bazelrc (comments left out)."""
    first: dict[str, tuple[int, list[str]]] = {}
    for match in _CONFIG_LINE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        command, name = match.group(1), match.group(2)
        _, commands = first.setdefault(name, (line, []))
        if command not in commands:
            commands.append(command)
    return {name: Config(name, file, line, tuple(commands)) for name, (line, commands) in sorted(first.items())}


def config_command(bazel: list[str], config: Config) -> list[str] | None:
    """The Bazel command that fails with "not defined" when ours lacks `config` for what JAX
    defines it for: a `build` config (common, always, build lines) through canonicalize-flags
    (it reads build's sections, and nothing is loaded); a `test`-only one through `bazel test
    --nobuild` without targets (a second of the main repository's mapping). None for a config of
    another command only (JAX's have none): not asked."""
    if _BUILD_SECTIONS & set(config.commands):
        return [*bazel, "canonicalize-flags", f"--config={config.name}", "--"]
    if "test" in config.commands:
        return [*bazel, "test", "--nobuild", f"--config={config.name}"]
    return None


def not_defined(bazel_stderr: str) -> set[str]:
    return set(_NOT_DEFINED.findall(bazel_stderr))


def config_report(missing: Iterable[Config], ours: str) -> list[str]:
    """One line per config ours lacks, at JAX's line that first defines it."""
    return [f"{c.where}: --config={c.name}: JAX defines it ({', '.join(c.commands)}); {ours} does not (Bazel: Config value "
            f"'{c.name}' is not defined in any .rc file)" for c in sorted(missing, key=lambda c: (c.file, c.line))]


# ---- one Bazel run for both ----------------------------------------------------------------


def script(bazel: list[str], where: str, package: str | None, configs: list[Config]) -> list[str]:
    """The shell commands of one sandbox run (one Bazel server): the environment probe's
    query into env.out/env.err (when `package`), then the sentinel and each config, Bazel's
    stderr and exit status into config<i>.err/.rc (0: the sentinel; i: configs[i - 1])."""
    into = lambda name: shlex.quote(f"{where}/{name}")  # noqa: E731
    lines = []
    if package:
        lines.append(f"{shlex.join(bazel)} query --keep_going --output=label {package}:all >{into('env.out')} 2>{into('env.err')}")
    if not configs:
        return lines
    sentinel = Config(SENTINEL, "", 0, ("build",))
    asked = [(i, config, config_command(bazel, config)) for i, config in enumerate([sentinel, *configs])]
    ask = {i: f"{shlex.join(command)} >/dev/null 2>{into(f'config{i}.err')}; echo $? >{into(f'config{i}.rc')}"
           for i, _, command in asked if command}
    together = [(i, c) for i, c, command in asked[1:] if command and "canonicalize-flags" in command]
    if len(together) < 2:
        return lines + list(ask.values())
    # The build configs asked at once first: where Bazel defines them all (the usual answer) that
    # one command says so for each; where it stops at one, each is asked on its own.
    every = [*bazel, "canonicalize-flags", *(f"--config={c.name}" for _, c in together), "--"]
    defined = "; ".join(f": >{into(f'config{i}.err')}; echo 0 >{into(f'config{i}.rc')}" for i, _ in together)
    alone = "; ".join(ask[i] for i, _ in together)
    lines.append(ask[0])
    lines.append(f"if {shlex.join(every)} >/dev/null 2>&1; then {defined}; else {alone}; fi")
    return lines + [line for i, line in ask.items() if i and i not in dict(together)]
