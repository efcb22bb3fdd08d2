"""ci_build's Request (build/ci_build_cli/request.py, issue 46): one frozen value, made once by
cli.parse_args, that every step reads; nothing assigns to it, and what it decides (the toolkit,
the kind of wheel, preflight's XLA) is decided once. Nothing here runs the sandbox, Bazel or the
network."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from ci_build_cli import cli, options, preflight, toolkit
from ci_build_cli.paths import CHECKOUT
from ci_build_cli.request import Request
from tests.conftest import DRY_RUN, bazel_build
from tests.infra.archives import entries_of, tar_of

pytestmark = pytest.mark.unit

CLI_PACKAGE = CHECKOUT / "build" / "ci_build_cli"
# What the Request holds besides the options: the subcommand and what ci_build decides.
DECIDED = {"command", "clone_xla", "source_dirs", "rocm_source", "notes", "given"}


def test_every_option_is_a_field_of_the_request():
    fields = {f.name for f in dataclasses.fields(Request)}
    missing = [o.flags[0] for o in options.OPTIONS if o.dest not in fields]
    assert not missing, f"options the Request does not hold: {missing}"
    assert fields == {o.dest for o in options.OPTIONS} | DECIDED


def test_the_request_cannot_be_changed():
    request = cli.parse_args(["--sources=examples", "dist_wheels"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.mode = "full"
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.wheel_kind = "release"
    with pytest.raises(TypeError):  # its source trees are read-only too
        request.source_dirs["xla"] = Path("/elsewhere")
    assert request.mode == "kernels" and request.wheel_kind is None


# An assignment to an attribute of the request (or of an argparse Namespace still called args):
# `x.y = ...`, `x.y += ...`, setattr(x, ...), object.__setattr__(x, ...).
ASSIGNMENT = re.compile(r"\b(args|request)\.\w+\s*[-+*/%|&^]?=(?!=)|(?<![\w.])setattr\((args|request)\b|"
                        r"__setattr__\((args|request)\b")


def test_the_scan_finds_an_assignment():
    found = [line for line in ("request.mode = 'full'", "args.wheel_kind=kind", "request.n += 1", "setattr(args, dest, v)",
                               "object.__setattr__(request, 'mode', m)") if ASSIGNMENT.search(line)]
    assert len(found) == 5
    assert not [line for line in ("if request.mode == 'full':", "x = request.mode", "request.mode != 'kernels'",
                                  "request = choose_wheel_kind(request)", "f(request.dry_run, rc=request.host)")
                if ASSIGNMENT.search(line)]


def test_nothing_in_ci_build_assigns_to_the_request():
    found = [f"{path.name}:{n}: {line.strip()}" for path in sorted(CLI_PACKAGE.glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if ASSIGNMENT.search(line)]
    assert found == [], "the Request is made once (cli.parse_args); a step that needs another value makes another one " \
                        "(dataclasses.replace)"


TARBALL = "therock-dist-linux-gfx94X-dcgpu-7.10.0a20251120.tar.gz"
ROCM_ENTRIES = {"therock/share/therock/therock_manifest.json": b"{}", "therock/lib/libamdhip64.so.7": b"elf"}


@pytest.mark.parametrize("toolkit_flag", ["--therock-path", "--rocm-path"])
def test_a_dry_run_decides_the_toolkit_once(recorded, monkeypatch, tmp_path, toolkit_flag):
    given = tar_of(tmp_path / TARBALL, entries_of(ROCM_ENTRIES)) if toolkit_flag == "--therock-path" else tmp_path
    calls = []
    decide = toolkit.rocm_source
    monkeypatch.setattr(toolkit, "rocm_source", lambda *a, **k: calls.append(a) or decide(*a, **k))
    assert cli.main(DRY_RUN + [f"{toolkit_flag}={given}", "--rocm-version=7.10.0"]) == 0
    assert len(calls) == 1, calls
    url_or_path = f"--repo_env=THEROCK_URL=file://{given}" if toolkit_flag == "--therock-path" else f"--repo_env=ROCM_PATH={given}"
    assert url_or_path in bazel_build(recorded)


def test_the_kind_of_wheel_is_decided_and_said_once(recorded, capsys):
    assert cli.main(["--sources=examples", "--dry-run", "dist_wheels"]) == 0
    assert capsys.readouterr().err.count("ci_build dist_wheels: making dev wheels") == 1
    assert "--@jax_rocm_build//wheel:kind=dev" in bazel_build(recorded)


def test_preflights_xla_from_upstream_cis_variables_is_decided_in_the_request(monkeypatch, tmp_path):
    monkeypatch.delenv("JAXCI_CLONE_MAIN_XLA", raising=False)
    monkeypatch.setenv("JAXCI_XLA_GIT_DIR", str(tmp_path))
    request = cli.parse_args(["preflight"])
    assert (request.xla_source_dir, request.clone_xla, request.source_dirs["xla"]) == (str(tmp_path), False, tmp_path.resolve())
    assert request.mode == "full"
    assert cli.parse_args(["preflight", "--xla-source-dir=/elsewhere"]).xla_source_dir == "/elsewhere"  # the flag wins
    assert cli.parse_args(["native"]).xla_source_dir is None  # preflight's alone
    monkeypatch.delenv("JAXCI_XLA_GIT_DIR")
    monkeypatch.setenv("JAXCI_CLONE_MAIN_XLA", "1")
    request = cli.parse_args(["preflight"])
    assert (request.xla_source_dir, request.clone_xla, request.mode) == (str(preflight.XLA_MAIN_CLONE), True, "full")


def test_preflight_clones_xla_main_where_the_request_says(recorded, monkeypatch, tmp_path):
    """The clone is not there before the checks (they leave it alone), and cmd_preflight makes it
    where the request says, changing nothing of the request."""
    monkeypatch.delenv("JAXCI_XLA_GIT_DIR", raising=False)
    monkeypatch.setenv("JAXCI_CLONE_MAIN_XLA", "1")
    monkeypatch.setattr(preflight, "XLA_MAIN_CLONE", tmp_path / "xla-main")
    monkeypatch.setattr(preflight.preflight_names, "named_texts", lambda trees: [])
    for check in ("check_rocm_names", "check_rocm_calls", "check_interface", "check_xla_targets"):
        monkeypatch.setattr(preflight, check, lambda *a: 0)
    request = cli.parse_args(["--dry-run", "preflight", "--names-only"])
    assert preflight.check_preflight(request) == request
    assert preflight.cmd_preflight(request) == 0
    assert recorded[0] == (["git", "clone", "--depth=1", preflight.XLA_MAIN, str(tmp_path / "xla-main")], True)
    assert request.xla_source_dir == str(tmp_path / "xla-main")
