"""Unit tests of tests/infra/rbe/cluster.py: its config, command lines, ports and clean-up.

Nothing of the cluster is started here; the clean-up tests use `sleep` and `sh`
as stand-ins for the cluster's processes. tests/bazel/test_rbe.py runs the real one.
"""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import pytest

from tests.infra.bazel_processes import process_counts
from tests.infra.rbe import cluster as rbe_cluster

pytestmark = pytest.mark.unit

PORTS = (15432, 15051, 15052)


@pytest.fixture(scope="module")
def rbe():
    return rbe_cluster


@pytest.fixture
def plan(rbe):
    tools = rbe.Tools(venv=Path("/cache/venvs/buildgrid-x"), pg_bin=Path("/usr/lib/postgresql/18/bin"))
    return rbe.Plan(rbe.Layout(Path("/tmp/state")), rbe.Ports(*PORTS), tools, jobs=3, postgres_user="postgres")


def addresses(text: str) -> list[str]:
    """Every host:port (bare or in a URL) written in `text`."""
    return re.findall(r"(?:[a-z]+://)?(?:[\w@]+@)?(\[[^\]]*\]|[\w.-]+):(\d+)", text)


def all_procs(plan) -> list:
    return [plan.initdb(), plan.postgres(), plan.pg_isready(), plan.createdb(), plan.registered_bots(),
            plan.migrate(), plan.buildgrid(), plan.casd(), plan.worker()]


def test_config_has_one_loopback_channel_and_the_main_instance_with_every_service(rbe, plan):
    text = rbe.buildgrid_config(plan.ports, plan.layout)
    assert text.count("- !channel") == 1 and 'address: "127.0.0.1:15051"' in text
    assert "insecure-mode: true" in text
    assert re.findall(r"^  - name: (\S+)$", text, re.MULTILINE) == ["main"]
    services = re.findall(r"^      - (!\S+)$", text, re.MULTILINE)
    assert sorted(services) == ["!action-cache", "!bots", "!bytestream", "!cas", "!execution"]
    assert "connection-string: postgresql://bgd@127.0.0.1:15432/bgd" in text
    assert "path: /tmp/state/buildgrid-cas" in text
    assert {host for host, _ in addresses(text)} == {"127.0.0.1"}
    assert "automigrate" not in text, "BuildGrid 0.9.1 rejects this key; the schema comes from `bgd migrate`"
    # Room for rocm_rbe's 64 concurrent Execute streams plus uploads (default: 10 RPCs on 2 CPUs).
    assert "thread-pool-size: 200\nmaximum-concurrent-rpcs: 1000\n" in text


def test_every_command_line_names_only_loopback_addresses(plan):
    for proc in all_procs(plan):
        hosts = {host for host, _ in addresses(" ".join(proc.argv))}
        assert hosts <= {"127.0.0.1"}, proc
        assert not any(h in " ".join(proc.argv) for h in ("0.0.0.0", "[::]", "localhost")), proc


def test_postgres_runs_unprivileged_on_loopback_with_its_socket_in_the_state_folder(plan):
    initdb, postgres = plan.initdb(), plan.postgres()
    assert initdb.user == postgres.user == "postgres"
    assert initdb.argv[:3] == ("/usr/lib/postgresql/18/bin/initdb", "-D", "/tmp/state/postgres/data")
    assert "--auth=trust" in initdb.argv and "bgd" in initdb.argv
    assert postgres.argv[:5] == ("/usr/lib/postgresql/18/bin/postgres", "-D", "/tmp/state/postgres/data", "-p", "15432")
    assert "listen_addresses=127.0.0.1" in postgres.argv
    assert "unix_socket_directories=/tmp/state/postgres/socket" in postgres.argv
    # The clients connect over TCP as the current user.
    assert plan.createdb().user is None and plan.migrate().user is None


def test_buildgrid_casd_and_worker_are_wired_to_each_other(plan):
    assert plan.migrate().argv == ("/cache/venvs/buildgrid-x/bin/bgd", "migrate", "apply", "postgresql://bgd@127.0.0.1:15432/bgd")
    assert plan.buildgrid().argv == ("/cache/venvs/buildgrid-x/bin/bgd", "server", "start", "/tmp/state/buildgrid.yml")
    assert plan.casd().argv == ("/usr/bin/buildbox-casd", "--cas-remote=http://127.0.0.1:15051", "--cas-instance=main",
                                "--bind=127.0.0.1:15052", "/tmp/state/casd")
    worker = plan.worker().argv
    assert "--bots-remote=http://127.0.0.1:15051" in worker and "--bots-instance=main" in worker
    # Inputs are staged through casd's LocalCAS, which serves the empty instance name.
    assert "--cas-remote=http://127.0.0.1:15052" in worker
    assert not any(a.startswith("--cas-instance") for a in worker)
    assert "--buildbox-run=/usr/bin/buildbox-run-hosttools" in worker
    assert worker[worker.index("--platform") + 1] == "OSFamily=linux"
    assert "--concurrent-jobs=3" in worker and worker[-1] == "jax-rocm-rbe-worker"
    assert "'jax-rocm-rbe-worker'" in plan.registered_bots().argv[-1]


IMAGE = (("/usr", "/usr"), ("/lib", "/usr/lib"), ("/etc", "/etc"))


def test_the_isolated_worker_runs_bubblewrap_with_only_the_image_bound_and_finds_the_sandbox_bwrap(rbe, plan):
    import dataclasses
    isolated = dataclasses.replace(plan, runner="isolated", image=IMAGE, path="/usr/bin:/bin",
                                   tools=dataclasses.replace(plan.tools, runner=rbe.RUNNERS["isolated"]))
    worker = isolated.worker()
    assert "--buildbox-run=/usr/bin/buildbox-run-bubblewrap" in worker.argv
    binds = [a for a in worker.argv if a.startswith("--runner-arg=")]
    # A link's real path is bound at the link's path; nothing else of this root is.
    assert binds == ["--runner-arg=--ro-bind-mount=/usr:/usr", "--runner-arg=--ro-bind-mount=/usr/lib:/lib",
                     "--runner-arg=--ro-bind-mount=/etc:/etc"]
    env = dict(worker.env)
    assert env["PATH"] == "/tmp/state/bin:/usr/bin:/bin"
    assert env["JAX_ROCM_RBE_BWRAP_MOUNT"] == "/tmp/state/bwrap-root"
    assert rbe.BWRAP_IN_SANDBOX.name == "bwrap_in_sandbox.py" and rbe.BWRAP_IN_SANDBOX.exists()


def test_the_hosttools_worker_has_no_binds_and_no_environment_of_its_own(plan):
    worker = plan.worker()
    assert not any(a.startswith("--runner-arg") for a in worker.argv) and worker.env == ()


def test_worker_image_resolves_links_and_skips_what_is_missing(rbe, tmp_path):
    (tmp_path / "usr" / "lib").mkdir(parents=True)
    (tmp_path / "lib").symlink_to("usr/lib")
    image = rbe.worker_image([str(tmp_path / "usr"), str(tmp_path / "lib"), str(tmp_path / "nonesuch")])
    assert image == ((str(tmp_path / "usr"), str(tmp_path / "usr")), (str(tmp_path / "lib"), str(tmp_path / "usr" / "lib")))


def test_runner_is_a_command_line_choice_defaulting_to_isolated(rbe):
    assert rbe.parser().parse_args(["up"]).runner == "isolated"
    assert rbe.parser().parse_args(["--runner=hosttools", "up"]).runner == "hosttools"
    with pytest.raises(SystemExit):
        rbe.parser().parse_args(["--runner=docker", "up"])


def test_what_bazel_is_given(rbe, plan):
    assert rbe.client_env(plan.ports) == {"JAX_ROCM_RBE_EXECUTOR": "grpc://127.0.0.1:15051", "JAX_ROCM_RBE_INSTANCE": "main"}
    assert rbe.bazel_flags(plan.ports) == ["--remote_executor=grpc://127.0.0.1:15051", "--remote_instance_name=main"]


def test_free_ports_are_distinct_and_bindable_on_loopback(rbe):
    ports = rbe.free_ports(3)
    assert len(set(ports)) == 3 and all(0 < p < 65536 for p in ports)
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_venv_is_named_by_requirements_and_python(rbe, tmp_path):
    base = rbe.venv_dir(tmp_path, ["buildgrid==0.9.1"], "3.14.1")
    assert base.parent == tmp_path / "venvs" and base.name.startswith("buildgrid-")
    assert rbe.venv_dir(tmp_path, ["buildgrid==0.9.1"], "3.14.1") == base
    assert rbe.venv_dir(tmp_path, ["buildgrid==0.9.2"], "3.14.1") != base
    assert rbe.venv_dir(tmp_path, ["buildgrid==0.9.1"], "3.13.0") != base


def test_a_complete_venv_is_reused_without_pip(rbe, tmp_path, monkeypatch):
    venv = tmp_path / "buildgrid-x"
    venv.mkdir()
    (venv / ".complete").touch()
    monkeypatch.setattr(rbe.subprocess, "run", lambda *a, **k: pytest.fail(f"ran {a}"))
    rbe.ensure_venv(venv, tmp_path / "pip.log")


def test_newest_postgresql_is_picked(rbe, tmp_path):
    assert rbe.find_pg_bin(tmp_path) is None
    for version in ("9", "18", "17"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / "postgres").touch()
    assert rbe.find_pg_bin(tmp_path) == tmp_path / "18" / "bin"


def test_outside_the_sandbox_the_error_says_where_to_run(rbe, monkeypatch, capsys):
    monkeypatch.setattr(rbe, "find_pg_bin", lambda: None)
    monkeypatch.setattr(rbe.signal, "signal", lambda *a: None)  # main's SIGTERM handler: not in pytest
    assert rbe.main(["run", "--", "true"]) == 1
    assert "python3 -m sandbox run -- python3 -m tests.infra.rbe.cluster ..." in capsys.readouterr().err


def test_run_without_a_command_is_a_usage_error(rbe, capsys):
    with pytest.raises(SystemExit) as exit_:
        rbe.main(["run"])
    assert exit_.value.code == 2 and "no command given" in capsys.readouterr().err


@pytest.fixture
def cluster(rbe, tmp_path, monkeypatch):
    monkeypatch.setattr(rbe, "STOP_GRACE", 0.5)
    c = rbe.Cluster(jobs=1)
    c.layout = rbe.Layout(tmp_path / "state")
    c.layout.logs.mkdir(parents=True)
    c.plan = rbe.Plan(c.layout, rbe.Ports(*PORTS), rbe.Tools(tmp_path, tmp_path), 1, None)
    return c


def test_a_component_that_dies_while_starting_fails_at_once_and_shows_its_log(rbe, cluster, capsys):
    t0 = time.monotonic()
    with pytest.raises(rbe.ClusterError, match="exited 3 while starting"):
        cluster.spawn_and_wait(rbe.Proc("broken", ("sh", "-c", "echo cannot bind; exit 3")), lambda: False, 30)
    assert time.monotonic() - t0 < 10
    cluster.stop(failed=True)
    err = capsys.readouterr().err
    assert "broken.log" in err and "cannot bind" in err and "broken (exit 3)" in err
    assert not cluster.layout.state.exists()


def test_stop_kills_what_ignores_sigterm_and_keep_keeps_the_state(rbe, cluster, capsys):
    stubborn = rbe.Proc("stubborn", ("sh", "-c", "trap '' TERM; echo up; sleep 60 & wait"))
    with pytest.raises(rbe.ClusterError, match="not ready after 1 s"):
        cluster.spawn_and_wait(stubborn, lambda: False, 1)
    (_, child), = cluster.running
    cluster.keep = True
    cluster.stop(failed=True)
    assert child.returncode is not None and cluster.running == []
    err = capsys.readouterr().err
    assert "stubborn ignored SIGTERM" in err and f"kept in {cluster.layout.state}" in err
    assert (cluster.layout.logs / "stubborn.log").read_text() == "up\n"


def test_up_writes_the_client_variables_to_the_ready_file(rbe, cluster, tmp_path, monkeypatch):
    import json
    monkeypatch.setattr(cluster, "dead", lambda: ["worker (exit 1)"])  # return at once
    ready = tmp_path / "ready.json"
    assert rbe.cmd_up(cluster, ready) == 1
    assert json.loads(ready.read_text()) == {"JAX_ROCM_RBE_EXECUTOR": "grpc://127.0.0.1:15051",
                                             "JAX_ROCM_RBE_INSTANCE": "main"}
    assert not ready.with_name("ready.json.partial").exists()


def test_in_a_user_namespace_the_runner_stages_by_copies_not_fuse(rbe):
    assert not rbe.in_user_namespace("         0          0 4294967295\n")
    assert rbe.in_user_namespace("         0       1001          1\n         1     100000      65536\n")
    assert rbe.runner_args("hosttools", IMAGE, user_namespace=True) == ("--runner-arg=--staging-mode=copy-or-link",)
    isolated = rbe.runner_args("isolated", IMAGE, user_namespace=True)
    assert isolated[0] == "--runner-arg=--staging-mode=copy-or-link" and len(isolated) == 1 + len(IMAGE)
    assert "--runner-arg=--staging-mode=copy-or-link" not in rbe.runner_args("isolated", IMAGE, user_namespace=False)


def test_process_counts_reads_bazels_summary_per_runner():
    """The RBE tests' one reading of Bazel's summary: runners of more than one word stay whole."""
    summary = "417 processes: 46 remote cache hit, 115 internal, 256 remote."
    assert process_counts(summary) == {"remote cache hit": 46, "internal": 115, "remote": 256}
    assert process_counts("1 process: 1 internal.") == {"internal": 1}
