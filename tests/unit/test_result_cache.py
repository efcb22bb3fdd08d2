"""tests/infra/result_cache.py: what a kept result depends on, and a real pytest reusing it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.infra import result_cache
from tests.infra.result_cache import Kept, Store, inputs_digest, run_key

pytestmark = pytest.mark.unit

CHECKOUT = Path(__file__).resolve().parent.parent.parent


def git_tree(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "add", "."], check=True)
    return path


def test_the_digest_follows_every_file_the_environment_and_nothing_per_run(tmp_path):
    tree = git_tree(tmp_path / "t", {"a.py": "1\n", ".gitignore": "out/\n"})
    env = {"JAX_ROCM_X": "1", "PATH": "/bin", "UNRELATED": "u"}
    base = inputs_digest(tree, env)
    assert inputs_digest(tree, {**env, "UNRELATED": "v", "PYTEST_XDIST_WORKER": "gw1",
                                "JAX_ROCM_SANDBOX_SESSION": "/tmp/s"}) == base
    (tree / "out").mkdir()
    (tree / "out" / "x").write_text("ignored")
    assert inputs_digest(tree, env) == base, "an ignored file is no input"
    for change in ({"JAX_ROCM_X": "2"}, {"ROCM_PATH": "/opt/rocm"}, {"PATH": "/usr/bin"}):
        assert inputs_digest(tree, {**env, **change}) != base, change
    (tree / "a.py").write_text("2\n")
    edited = inputs_digest(tree, env)
    assert edited != base, "an edit, staged or not"
    (tree / "new.py").write_text("")
    assert inputs_digest(tree, env) != edited, "an untracked file git would track"
    (tree / "new.py").chmod(0o755)
    assert inputs_digest(tree, env) != edited
    with_new = inputs_digest(tree, env)
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert inputs_digest(tree, env) == with_new, "bytecode the run writes is no input"


def test_no_root_no_key_and_the_store_forgets_failures(tmp_path):
    assert run_key("abc", None) is None
    assert run_key("abc", "r1") != run_key("abc", "r2")
    store = Store(tmp_path)
    store.update("k", {"t.py::a": Kept("passed", "", 1.0), "t.py::b": Kept("skipped", "why", 1.0)})
    store.update("k", {"t.py::a": None})
    assert store.load("k") == {"t.py::b": Kept("skipped", "why", 1.0)}
    assert store.load("other") == {}


PROJECT = {
    "pytest.ini": "[pytest]\nmarkers =\n    unit: u\n    bazel: b\n    e2e: e\n",
    "conftest.py": textwrap.dedent("""\
        from pathlib import Path
        from tests.infra import result_cache

        def pytest_addoption(parser):
            result_cache.add_option(parser)

        def pytest_configure(config):
            result_cache.register(config, Path(__file__).parent)
        """),
    "test_things.py": textwrap.dedent("""\
        import os
        import pytest

        def ran(name):
            with open(os.environ["RAN_LOG"], "a") as log:  # xdist's workers append at once
                log.write(name + "\\n")

        @pytest.mark.bazel
        def test_built():
            ran("built")

        @pytest.mark.bazel
        def test_skips():
            ran("skips")
            pytest.skip("no such toolkit here")

        @pytest.mark.e2e
        def test_fails():
            ran("fails")
            assert os.environ.get("JAX_ROCM_TEST_MAKE_IT_PASS") == "1"

        @pytest.mark.unit
        def test_unit():
            ran("unit")
        """),
}


@pytest.fixture
def project(tmp_path):
    tree = git_tree(tmp_path / "project", PROJECT)
    cache = tmp_path / "cache"
    root = cache / "jax-rocm-build" / "sandbox" / "root-1"
    (root / "var/lib/dpkg").mkdir(parents=True)
    (root / "var/lib/dpkg/status").write_text("Package: bazel-bootstrap\nVersion: 7.7.1\n")
    (cache / "jax-rocm-build" / "sandbox" / "current").symlink_to(root)
    log = tmp_path / "ran.log"
    env = {k: v for k, v in os.environ.items() if k != result_cache.SWITCH_ENV}
    env.update(XDG_CACHE_HOME=str(cache), RAN_LOG=str(log), PYTHONPATH=str(CHECKOUT))

    def run(*args: str, **more: str) -> tuple[list[str], str]:
        log.write_text("")
        result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
                                 *args], cwd=tree, env={**env, **more}, capture_output=True, text=True)
        return log.read_text().split(), result.stdout

    return tree, root, run


def test_a_second_run_reuses_what_passed_or_skipped_and_runs_the_rest(project):
    tree, root, run = project
    ran, out = run()
    assert ran == ["built", "skips", "fails", "unit"], out
    assert "1 failed, 2 passed, 1 skipped" in out
    ran, out = run()
    assert ran == ["fails", "unit"], "the failure and the unit tier run again; the rest is kept"
    assert "1 failed, 2 passed, 1 skipped" in out
    assert "kept results: 2 bazel/e2e tests of 1 files reused" in out
    assert "no such toolkit here" in out, "a kept skip says why"
    ran, out = run("-n", "2", JAX_ROCM_TEST_MAKE_IT_PASS="1")
    assert sorted(ran) == ["built", "fails", "skips", "unit"], "xdist's workers run what another key kept nothing of"
    ran, out = run("-n", "2", JAX_ROCM_TEST_MAKE_IT_PASS="1")
    assert ran == ["unit"], "what xdist's workers reported, its controller kept; its workers reuse it"
    assert "kept results: 3 bazel/e2e tests" in out, out
    ran, _ = run(JAX_ROCM_TEST_MAKE_IT_PASS="1")
    assert ran == ["unit"], "the key of the xdist run above"
    ran, _ = run("--rerun-kept", JAX_ROCM_TEST_MAKE_IT_PASS="1")
    assert ran == ["built", "skips", "fails", "unit"]
    ran, _ = run(JAX_ROCM_TEST_MAKE_IT_PASS="1", JAX_ROCM_TEST_RESULTS="off")
    assert ran == ["built", "skips", "fails", "unit"]
    (root / "var/lib/dpkg/status").write_text("Package: bazel-bootstrap\nVersion: 7.7.2\n")
    ran, _ = run(JAX_ROCM_TEST_MAKE_IT_PASS="1")
    assert ran == ["built", "skips", "fails", "unit"], "a root of other packages"
    (tree / "test_things.py").write_text((tree / "test_things.py").read_text() + "\n# edited\n")
    ran, _ = run(JAX_ROCM_TEST_MAKE_IT_PASS="1")
    assert ran == ["built", "skips", "fails", "unit"], "an edit"
