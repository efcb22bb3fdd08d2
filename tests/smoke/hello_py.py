"""Calls greet() from libgreet.so (a Bazel-built shared library) with ctypes."""

import ctypes
import os
import sys


def library_path() -> str:
    # Runfiles layout: <runfiles>/_main/tests/smoke/libgreet.so beside this file.
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libgreet.so")


def greet(name: str) -> str:
    lib = ctypes.CDLL(library_path())
    buf = ctypes.create_string_buffer(256)
    n = lib.greet(name.encode(), buf, len(buf))
    return buf.value[:n].decode()


if __name__ == "__main__":
    print(greet(sys.argv[1] if len(sys.argv) > 1 else "py_binary"))
