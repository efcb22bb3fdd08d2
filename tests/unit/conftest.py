"""The unit tier's setup: what of this machine ci_build would ask of it stays out of the plans
the unit tests make in-process."""

from __future__ import annotations

import pytest

from ci_build_cli import sandbox as ci_sandbox


@pytest.fixture(autouse=True)
def no_machine_prerequisites(monkeypatch):
    """ci_build's check of this machine's means (its Bazel in host mode; the disk, mmdebstrap and
    uidmap the sandbox's root needs): tests/unit/test_input_probes.py meets them as users do, in
    ci_build's own process; the other unit tests plan runs that must not depend on this machine."""
    monkeypatch.setattr(ci_sandbox, "check_prerequisites", lambda request: None)
