"""Runs the C++ binary, the Python binary and the shared library under `bazel test`."""

import os
import subprocess
import sys
import unittest

from tests.smoke import hello_py

HERE = os.path.dirname(os.path.abspath(__file__))


class SmokeTest(unittest.TestCase):
    def test_shared_library_through_ctypes(self):
        self.assertRegex(hello_py.greet("ctypes"), r"^hello, ctypes \(\d+\.\d+")

    def test_cc_binary_runs(self):
        out = subprocess.run([os.path.join(HERE, "hello_cc"), "test"], check=True, capture_output=True, text=True).stdout
        self.assertTrue(out.startswith("hello, test ("), out)

    def test_py_binary_runs(self):
        out = subprocess.run([os.path.join(HERE, "hello_py"), "launcher"], check=True, capture_output=True, text=True).stdout
        self.assertTrue(out.startswith("hello, launcher ("), out)


if __name__ == "__main__":
    sys.exit(unittest.main())
