"""full/MODULE.bazel pins XLA and rules_ml_toolchain where third_party/*/pin.json do (MODULE.bazel cannot read JSON)."""

from __future__ import annotations

import base64
import json
import re

import pytest

from tests.conftest import CHECKOUT

pytestmark = pytest.mark.unit

MODULE = (CHECKOUT / "full" / "MODULE.bazel").read_text()


def archive_override(module: str) -> dict[str, str]:
    block = re.search(r'archive_override\(\s*module_name = "%s",(.*?)\n\)' % re.escape(module), MODULE, re.DOTALL)
    assert block, f"full/MODULE.bazel has no archive_override of {module}"
    return dict(re.findall(r'(\w+) = \[?"([^"]+)"', block.group(1)))


@pytest.mark.parametrize("module", ["xla", "rules_ml_toolchain"])
def test_full_mode_pins_what_the_pin_file_pins(module):
    pin = json.loads((CHECKOUT / "third_party" / module / "pin.json").read_text())
    override = archive_override(module)
    assert override["integrity"] == "sha256-" + base64.b64encode(bytes.fromhex(pin["sha256"])).decode()
    assert override["urls"] == pin["urls"][0].replace("{commit}", pin["commit"])
    assert override["strip_prefix"] == pin["strip_prefix"].replace("{commit}", pin["commit"])


def test_our_rocm_replaces_xlas_and_rules_ml_toolchains():
    assert 'override_repo(xla_rocm, "local_config_rocm")' in MODULE
    # buildifier puts keyword arguments of MODULE.bazel calls on lines of their own.
    assert re.search(r'override_repo\(\s*hipcc,\s*config_rocm_hipcc = "local_config_rocm",?\s*\)', MODULE)
    assert 'override_repo(sources, "com_google_absl", "xla")' in MODULE
