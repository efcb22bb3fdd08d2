"""bench/bench_wheel.py: the --workers sweep it accepts and refuses, and the baseline it probes."""

from __future__ import annotations

import argparse
import sys

import pytest

from bench import bench_wheel as bench
from tests.conftest import CHECKOUT

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "expected"), [("1,2,16", [1, 2, 16]), ("8", [8]), ("16, 1", [16, 1])])
def test_worker_counts(text, expected):
    assert bench.worker_counts(text) == expected


@pytest.mark.parametrize("text", ["", "0", "1,x", "2,2", "-1"])
def test_bad_worker_counts_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError):
        bench.worker_counts(text)


def test_bad_workers_flag_exits_before_any_work(capsys):
    with pytest.raises(SystemExit) as exit:
        bench.main(["--workers", "1,1"])
    assert exit.value.code == 2 and "distinct counts" in capsys.readouterr().err


def test_the_baseline_is_probed_for_pypas_packages_not_the_checkouts(tmp_path, monkeypatch):
    """From the checkout's folder (as bench/README.md runs it), `python -c` would put the checkout's
    build/ and wheel/ packages before PyPA's: the probe runs elsewhere and finds PyPA's (here a
    site of stand-ins: PyPA's wheel with its bdist_wheel, setuptools without one)."""
    site = tmp_path / "site"
    for dist, files in {"build": ["build/__init__.py"], "setuptools": ["setuptools/__init__.py"],
                        "wheel": ["wheel/__init__.py", "wheel/bdist_wheel.py"]}.items():
        for name in files:
            (site / name).parent.mkdir(parents=True, exist_ok=True)
            (site / name).write_text("")
        (site / f"{dist}-1.0.dist-info").mkdir()
        (site / f"{dist}-1.0.dist-info" / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.chdir(CHECKOUT)
    assert bench.probe_baseline(sys.executable)["bdist_wheel"] == "wheel"
