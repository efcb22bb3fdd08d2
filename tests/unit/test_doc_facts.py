"""Facts the docs restate, held to the code they come from (issue 46: facts from one source).

- build_info.json's schema in jax_plugins/rocm/__init__.py's docstring: the keys wheel.bzl
  writes and wheel_builder.complete_build_info adds, the sources by name, the `origin` values
  and the finder's layouts;
- the finder's layouts wherever the docs list them;
- the toolkit search order: find_rocm_config.SEARCH_ORDER_TEXT is what search_order visits,
  and every restatement in the repository says exactly it;
- README.md's table of build/ci_build flags, and every ci_build command line the docs and
  workflows quote, against ci_build's own parser.
Each test fails on a broken doc line; each also fails when it finds nothing to check.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
from pathlib import Path

import pytest
import yaml

import wheel_builder
from ci_build_cli import cli, options
from tests.conftest import CHECKOUT
from third_party.gpus import find_rocm_config as finder  # as ci_build imports it

pytestmark = pytest.mark.unit

FINDER_PATH = Path(finder.__file__)

PLUGIN_LOADER = CHECKOUT / "jax_plugins/rocm/__init__.py"
WHEEL_BZL = CHECKOUT / "wheel/private/wheel.bzl"
WHEEL_DEFS = CHECKOUT / "wheel/defs.bzl"
BUILD_WORKFLOW = CHECKOUT / ".github/workflows/build_rocm_artifacts.yml"

NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def tracked_files(*patterns: str) -> list[Path]:
    names = subprocess.run(["git", "-C", str(CHECKOUT), "ls-files", "--cached", "--others", "--exclude-standard",
                            *patterns], capture_output=True, text=True, check=True).stdout.split()
    return [CHECKOUT / n for n in names if (CHECKOUT / n).is_file()]


def alternatives(text: str) -> set[str]:
    """'pinned | override | examples' -> its words."""
    return {w.strip() for w in text.split("|")}


# --- build_info.json ---------------------------------------------------------------------------


def documented_build_info() -> dict[str, str]:
    """The docstring's build_info.json example: top-level key -> its lines (comments included)."""
    doc = ast.get_docstring(ast.parse(PLUGIN_LOADER.read_text()))
    block = re.search(r"``build_info.json``[^\n]*::\n\n    \{\n(.*?)\n    \}\n", doc, re.DOTALL)
    assert block, f"{PLUGIN_LOADER}: the docstring's build_info.json example was not found"
    entries, key = {}, None
    for line in block.group(1).splitlines():
        top = re.match(r' {6}"(\w+)":', line)
        if top:
            key = top.group(1)
            entries[key] = ""
        assert key, f"a line before the first key: {line!r}"
        entries[key] += line + "\n"
    return entries


def function_body(text: str, name: str) -> str:
    """A Starlark/Python function's text, from its `def` to the next top-level statement."""
    match = re.search(rf"^def {name}\(.*?(?=^\S)", text, re.MULTILINE | re.DOTALL)
    assert match, f"def {name} not found"
    return match.group(0)


def wheel_bzl_data_keys() -> set[str]:
    """The keys of the "data" dict _build_info writes (those at its first level)."""
    body = function_body(WHEEL_BZL.read_text(), "_build_info")
    block = re.search(r'^( *)"data": \{\n(.*?)^\1\},', body, re.MULTILINE | re.DOTALL)
    assert block, "wheel.bzl: the \"data\": { ... } block of _build_info was not found"
    indent = len(block.group(1)) + 4
    return set(re.findall(rf'^ {{{indent}}}"(\w+)":', block.group(2), re.MULTILINE))


def completed_keys(tmp_path: Path) -> set[str]:
    """The top-level keys complete_build_info adds to wheel.bzl's data (run, not read)."""
    (tmp_path / "info.json").write_text("{}")
    info = wheel_builder.complete_build_info({"data": {}, "source_info_files": {"jax": "info.json"}}, tmp_path,
                                             "0.10.2")
    return set(info)


def starlark_list(text: str, attribute: str) -> list[list[str]]:
    """The string lists every `attribute = [...]` of `text` holds."""
    lists = [re.findall(r'"(\w+)"', m) for m in re.findall(rf"\b{attribute} = \[([^\]]*)\]", text)]
    assert lists, f"no `{attribute} = [...]` found"
    return lists


def test_build_info_keys_are_those_the_wheel_rule_writes(tmp_path):
    documented = set(documented_build_info())
    written = wheel_bzl_data_keys() | completed_keys(tmp_path)
    assert "plugin_version" in written and len(written) > 10, written  # the parse found the dict
    assert documented == written, (f"documented only: {sorted(documented - written)}; "
                                   f"written only: {sorted(written - documented)}")


def test_build_info_sources_are_the_wheels_sources():
    """By name: the pins the wheels are built from and the sources whose repository rule describes
    them (source_info_names), which replace their pin's entry."""
    sources = documented_build_info()["sources"]
    defs = WHEEL_DEFS.read_text()
    described = {n for names in starlark_list(defs, "source_info_names") for n in names}
    pinned = {n for names in starlark_list(defs, "sources") for n in names}
    named = set(re.findall(r'"(\w+)": \{', sources.split("\n", 1)[1]))  # below "sources": {
    built = pinned | described
    assert named == built, f"documented only: {sorted(named - built)}; not documented: {sorted(built - named)}"
    said = re.search(r"# ([\w, ]+): what their", sources)
    assert said, "the docstring no longer says which sources their repository rule describes"
    assert {n.strip() for n in said.group(1).split(",")} == described


def test_build_info_origins_are_the_wheel_rules():
    entries = documented_build_info()
    bzl, defs = WHEEL_BZL.read_text(), WHEEL_DEFS.read_text()
    # sources[name].origin: _source_entry's values.
    source_entry = function_body(bzl, "_source_entry")
    pin_origins = {w for expr in re.findall(r'"origin":\s*([^,}]*)', source_entry) for w in re.findall(r'"(\w+)"', expr)}
    documented = re.search(r"# origin: (\w+(?: \| \w+)+)", entries["sources"])
    assert documented and len(pin_origins) >= 2, (documented, pin_origins)
    assert alternatives(documented.group(1)) == pin_origins
    # artifacts[file].origin: the `origins` values of wheel/defs.bzl, or examples for a stand-in.
    given = set(re.findall(r'\borigins = \{[^\n]*\):\s*"(\w+)"', defs))
    artifact_expr = re.search(r'artifacts\[f\.basename\] = \{"origin": ([^,]*),', bzl)
    assert given and artifact_expr, "wheel/defs.bzl's origins or wheel.bzl's artifacts entry not found"
    artifact_origins = given | set(re.findall(r'"(\w+)"', artifact_expr.group(1)))
    documented = re.search(r"\(origin: (\w+(?: \| \w+)+)\)", entries["artifacts"])
    assert documented, "the docstring no longer lists the artifacts' origins"
    assert alternatives(documented.group(1)) == artifact_origins


# --- the finder's layouts ----------------------------------------------------------------------


def layout_constants() -> dict[str, str]:
    """The names LAYOUTS is unpacked into (THEROCK ...) -> their layout."""
    for node in ast.parse(FINDER_PATH.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LAYOUTS" for t in node.targets):
            [names] = [t for t in node.targets if isinstance(t, ast.Tuple)]
            return {n.id: getattr(finder, n.id) for n in names.elts}
    raise AssertionError("find_rocm_config.py: no `LAYOUTS = NAME, ... = (...)`")


def test_the_finder_names_layouts_only_through_LAYOUTS():
    """layout_kind returns each of LAYOUTS (by its constant) and nothing else; every Layout is
    made with one of them."""
    constants = layout_constants()
    assert sorted(constants.values()) == sorted(finder.LAYOUTS)
    tree = ast.parse(FINDER_PATH.read_text())
    [kind] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "layout_kind"]
    returned = [r.value for r in ast.walk(kind) if isinstance(r, ast.Return)]
    names = {r.id for r in returned if isinstance(r, ast.Name)}
    others = [ast.unparse(r) for r in returned if not isinstance(r, ast.Name) and not (
        isinstance(r, ast.Constant) and r.value is None)]
    assert not others, f"layout_kind returns a layout not named in LAYOUTS: {others}"
    assert names == set(constants), f"LAYOUTS and layout_kind's answers differ: {sorted(names ^ set(constants))}"
    made = [c.args[0] for c in ast.walk(tree) if isinstance(c, ast.Call) and getattr(c.func, "id", "") == "Layout"]
    assert made and all(isinstance(a, ast.Name) and a.id in constants for a in made), [ast.unparse(a) for a in made]


def test_documented_layouts_are_the_finders():
    layouts = set(finder.LAYOUTS)
    rocm_layout = documented_build_info()["rocm_layout"]
    said = re.search(r"# the finder's layout: ([\w, ]+)$", rocm_layout, re.MULTILINE)
    assert said, "build_info.json's rocm_layout no longer lists the layouts"
    assert {n.strip() for n in said.group(1).split(",")} == layouts
    # "The finder knows four layouts (`therock`, ...)", in README.md and docs/.
    lists = [(path, m) for path in tracked_files("*.md")
             for m in re.finditer(r"(\w+) layouts \(((?:`\w+`(?:, )?)+)\)", path.read_text())]
    assert len(lists) >= 2, "the docs' lists of layouts were not found"
    for path, m in lists:
        assert set(re.findall(r"`(\w+)`", m.group(2))) == layouts, f"{path}: {m.group(0)}"
        assert NUMBERS.get(m.group(1).lower()) == len(layouts), f"{path}: {m.group(0)}"
    # The finder's own docstring: "Four layouts are understood:" and one line each.
    doc = finder.__doc__.split("layouts are understood:\n", 1)
    assert NUMBERS.get(doc[0].split()[-1].lower()) == len(layouts), "the finder's docstring counts its layouts wrong"
    assert set(re.findall(r"^  (\w+) ", doc[1].split("\n\n")[0], re.MULTILINE)) == layouts


# --- the toolkit search order ------------------------------------------------------------------

# Restatements of the search order: a line naming $ROCM_PATH and /opt/rocm (Markdown's
# backticks dropped). Each file below must hold at least one, so the check cannot pass on none.
SEARCH_ORDER_FILES = ("README.md", "docs/rocm.md", "docs/host-mode.md", "third_party/gpus/rocm_configure.bzl",
                      "third_party/gpus/find_rocm_config.py")


def search_order_restatements(path: Path) -> list[tuple[int, str]]:
    """(line number, what the line says from $ROCM_PATH to /usr, or the whole line)."""
    found = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        plain = line.replace("`", "")
        if "$ROCM_PATH" in plain and "/opt/rocm" in plain:
            span = re.search(r"\$ROCM_PATH.*?/usr\b", plain)
            found.append((number, span.group(0) if span else plain.strip()))
    return found


def test_search_order_visits_what_its_text_says(monkeypatch):
    versioned = ["/opt/rocm-6.4.3", "/opt/rocm-7.10.0", "/opt/rocm-7.2.0"]
    monkeypatch.setattr(finder.glob, "glob", lambda pattern: versioned if pattern == "/opt/rocm-*" else [])
    places = {"$ROCM_PATH": ["/from/env"], "/opt/rocm": ["/opt/rocm"],
              "/opt/rocm-* (newest first)": ["/opt/rocm-7.10.0", "/opt/rocm-7.2.0", "/opt/rocm-6.4.3"], "/usr": ["/usr"]}
    said = finder.SEARCH_ORDER_TEXT.split(", ")
    assert set(said) == set(places), f"SEARCH_ORDER_TEXT names other places: {said}"
    expected = [Path(p) for place in said for p in places[place]]
    assert finder.search_order({"ROCM_PATH": "/from/env"}) == expected
    assert finder.search_order({}) == [p for p in expected if p != Path("/from/env")]


def test_every_restatement_of_the_search_order_is_the_finders(capsys):
    text = finder.SEARCH_ORDER_TEXT
    files = [p for p in tracked_files() if not p.relative_to(CHECKOUT).as_posix().startswith("tests/")]
    found = {path.relative_to(CHECKOUT).as_posix(): search_order_restatements(path) for path in files}
    found = {name: lines for name, lines in found.items() if lines}
    for name in SEARCH_ORDER_FILES:
        assert found.get(name), f"{name} no longer states the search order (as: {text})"
    wrong = {name: [f"line {n}: {said}" for n, said in lines if said != text] for name, lines in found.items()}
    assert not {name: w for name, w in wrong.items() if w}, (
        f"restatements of the search order must read {text!r} (find_rocm_config.SEARCH_ORDER_TEXT): {wrong}")
    # The finder's --help says it too (its --rocm-path help takes the constant).
    with pytest.raises(SystemExit):
        finder.main(["--help"])
    assert f"(default: search {text})" in " ".join(capsys.readouterr().out.split())


# --- build/ci_build's flags --------------------------------------------------------------------

# Options of ci_build's parser that README.md's flag table deliberately leaves out, and why.
# Keep it short: prefer a row in the table.
NOT_IN_README_TABLE: dict[str, str] = {}
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(?![\w/])")


def parser_flags() -> dict[str, argparse.Action]:
    """Every option string of ci_build's parser and its subcommands' (--help left out)."""
    parser = cli.parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    flags = {}
    for p in (parser, *sub.choices.values()):
        flags |= {s: a for a in p._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
    return flags


def readme_flag_rows() -> list[str]:
    """The first cells of README.md's table of build/ci_build flags."""
    text = (CHECKOUT / "README.md").read_text()
    header = "| `build/ci_build` flag | meaning |\n|---|---|\n"
    assert header in text, "README.md's table of build/ci_build flags was not found"
    rows = text.split(header, 1)[1].split("\n\n", 1)[0].splitlines()
    return [re.split(r"(?<!\\)\|", row)[1].strip() for row in rows]


def test_readme_flag_table_is_ci_builds_parser():
    flags = parser_flags()
    commands = {flag: o.commands for o in options.OPTIONS for flag in o.flags}
    documented = set()
    for cell in readme_flag_rows():
        for code in re.findall(r"`([^`]*)`", cell):
            for m in re.finditer(r"(?:(\w+) )?(--[a-z][a-z0-9-]*)(?:=(\S+))?", code):
                command, flag, value = m.groups()
                assert flag in flags, f"README.md's flag table: {flag} is no option of build/ci_build"
                documented.add(flag)
                if command:  # `dist_wheels --output-dir`: an option of that command
                    assert command in commands[flag], f"README.md: {flag} is not an option of {command}"
                if value and "|" in value and flags[flag].choices:  # `--compiler=gcc\|clang`: every choice
                    assert alternatives(value.replace("\\", "")) == set(flags[flag].choices), f"README.md: {code}"
    assert len(documented) > 10, documented
    assert set(NOT_IN_README_TABLE) <= flags.keys(), "NOT_IN_README_TABLE names an option ci_build no longer has"
    missing = sorted(flags.keys() - documented - set(NOT_IN_README_TABLE))
    assert not missing, f"options of build/ci_build missing from README.md's flag table (add a row): {missing}"


def quoted_ci_build_commands() -> list[tuple[Path, str]]:
    """ci_build command lines the docs and workflows quote: code spans naming ci_build, and the
    lines of fenced blocks and scripts that run it (continuations joined, comments dropped)."""
    quoted = []
    for path in tracked_files("*.md", ".github/workflows/*.yml"):
        text = path.read_text()
        quoted += [(path, span) for span in re.findall(r"`([^`\n]*\bci_build\b[^`\n]*)`", text)]
        # A command continued with `\` is one line: its later flags are checked too.
        quoted += [(path, line.split(" #")[0]) for line in text.replace("\\\n", " ").splitlines()
                   if re.match(r"\s*(python3 )?build/ci_build\b", line)]
    return quoted


def test_every_quoted_ci_build_flag_is_an_option():
    flags = parser_flags() | {"--help": None}
    quoted = [(path, command, flag) for path, command in quoted_ci_build_commands() for flag in FLAG.findall(command)]
    assert len(quoted) > 20, quoted
    unknown = [f"{path.relative_to(CHECKOUT)}: {flag} in `{command}`" for path, command, flag in quoted if flag not in flags]
    assert not unknown, "flags build/ci_build does not have:\n" + "\n".join(unknown)


def test_workflow_inputs_name_their_flags():
    """build_rocm_artifacts.yml: each input's description begins with the flag the input is (its
    name, dashes for underscores), and its comment names every flag that is deliberately no input."""
    doc = yaml.safe_load(BUILD_WORKFLOW.read_text())
    on = doc.get("on", doc.get(True))
    flags = parser_flags()
    inputs = set()
    for trigger in ("workflow_dispatch", "workflow_call"):
        for name, spec in on[trigger]["inputs"].items():
            flag = "--" + name.replace("_", "-")
            assert flag in flags, f"{BUILD_WORKFLOW.name}: input {name} is no option of build/ci_build"
            assert re.match(rf"{flag}(?![\w-])", spec["description"]), f"{trigger}.{name}: {spec['description']!r}"
            inputs.add(flag)
    comment = re.search(r"Deliberately not inputs:(.*?)tests/e2e", BUILD_WORKFLOW.read_text(), re.DOTALL)
    assert comment, f"{BUILD_WORKFLOW.name}: the comment naming the flags that are no inputs was not found"
    named, not_inputs = set(FLAG.findall(comment.group(1))), (flags.keys() | {"--help"}) - inputs
    assert named == not_inputs, (f"{BUILD_WORKFLOW.name}'s comment: named but an input or no flag: "
                                 f"{sorted(named - not_inputs)}; not named: {sorted(not_inputs - named)}")


def proof_rows() -> dict[str, str]:
    """docs/testing.md's table of every proof: file -> its row."""
    text = (CHECKOUT / "docs" / "testing.md").read_text()
    section = text.split("## Every proof: what it proves, its tier, its cost", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `(tests/(?:bazel|e2e)/test_\w+\.py)` \|.*$", section, re.M)}


def test_every_bazel_and_e2e_file_is_a_proof_row_that_says_what_of_it_is_slow():
    rows = proof_rows()
    files = sorted(p.relative_to(CHECKOUT).as_posix() for tier in ("bazel", "e2e")
                   for p in (CHECKOUT / "tests" / tier).glob("test_*.py"))
    assert sorted(rows) == files, "docs/testing.md's table of proofs and the test files differ"
    for name in files:
        text = (CHECKOUT / name).read_text()
        marked = "pytest.mark.slow" in text
        tier = rows[name].split(" | ")[2]
        assert ("**slow**" in tier) == marked, f"{name}: the table's tier ({tier}) and the file's slow marks disagree"
        whole_file = re.search(r"^pytestmark = .*pytest\.mark\.slow", text, re.M) is not None
        assert whole_file == tier.startswith("**slow**"), \
            f"{name}: a whole slow file's row starts with **slow**, a file of both tiers' does not"
