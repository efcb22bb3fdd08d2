"""Bazel's process summary ("INFO: 417 processes: 46 remote cache hit, 115 internal, 256 remote.")
read as counts per runner: the one parser for the RBE tests and their drivers, which run on
the host without pytest (so not in tests/conftest.py)."""

from __future__ import annotations


def process_counts(summary: str) -> dict[str, int]:
    """'417 processes: 46 remote cache hit, 115 internal, 256 remote.' -> {'remote cache hit': 46, ...}"""
    _, _, parts = summary.rstrip(".").partition(": ")
    return {name: int(n) for n, name in (p.split(" ", 1) for p in parts.split(", ") if p)}
