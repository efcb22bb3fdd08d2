"""bench/bench_wheel.py's command line: the --workers sweep it accepts and refuses."""

from __future__ import annotations

import argparse

import pytest

from bench import bench_wheel as bench

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
