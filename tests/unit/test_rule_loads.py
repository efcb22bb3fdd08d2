"""Every rule of a language is loaded from its rules_* module (issue 57): Bazel 9 autoloads
nothing (--incompatible_autoload_externally=, which .bazelrc's --config=bazel9 sets), so a BUILD
file or macro that calls cc_library without loading it, or native.cc_library, stops loading."""

from __future__ import annotations

import re

import pytest

from tests.conftest import CHECKOUT, tracked

pytestmark = pytest.mark.unit

LANGUAGE_RULES = re.compile(r"^\s*(?:native\.)?((?:cc|py|java|sh|proto|objc)_[a-z_]+)\(", re.M)
NATIVE_CALL = re.compile(r"\bnative\.((?:cc|py|java|sh|proto|objc)_[a-z_]+)\(")
# A load anywhere: also in the text of a BUILD file a repository rule writes (quotes escaped).
LOAD = re.compile(r"load\(([^)]*)\)", re.S)


def unloaded_rules(text: str) -> list[str]:
    """The language rules a BUILD, .bzl or template text calls natively or without loading them."""
    loaded = {name for args in LOAD.findall(text) for name in re.findall(r'\\?"(\w+)\\?"', args)}
    called = set(LANGUAGE_RULES.findall(text))
    return sorted({*(called - loaded), *(f"native.{n}" for n in NATIVE_CALL.findall(text))})


def test_the_scan_finds_an_unloaded_and_a_native_rule():
    text = ('load("@rules_cc//cc:defs.bzl", "cc_library")\ncc_library(name = "a")\ncc_binary(name = "b")\n'
            'def m():\n    native.py_binary(name = "c")\n')
    assert unloaded_rules(text) == ["cc_binary", "native.py_binary", "py_binary"]


# Templates pasted into another template, whose loads they take.
FRAGMENTS = {"third_party/gpus/templates/rocm_library.tpl": "third_party/gpus/templates/rocm_BUILD.tpl"}


def test_every_language_rule_is_loaded_from_its_module():
    files = [f for f in tracked("*.bazel", "*.bzl", "*.tpl", "*BUILD") if not f.endswith("MODULE.bazel")]
    found = {}
    for f in files:
        text = (CHECKOUT / f).read_text()
        host = (CHECKOUT / FRAGMENTS[f]).read_text() if f in FRAGMENTS else ""
        names = unloaded_rules(host + "\n" + text) if host else unloaded_rules(text)
        if names:
            found[f] = names
    assert len(files) > 40
    assert found == {}, f"load these from rules_cc / rules_python (Bazel 9 autoloads nothing): {found}"
