"""Loads a PJRT plugin library with ctypes, calls GetPjrtApi and prints, as JSON, the C API
version the returned PJRT_Api reports. Plain Python 3.5+ and ctypes only: it runs in old
roots (Debian bullseye's Python 3.9) without anything installed.

    python3 get_pjrt_api.py LIBRARY.so

Exit status 0 with {"loaded": true, ...}; 1 with {"loaded": false, "error": ...} when the
dynamic loader refuses the library (a glibc too old for it says so here).
"""

import ctypes
import json
import platform
import sys


class PjrtApiVersion(ctypes.Structure):
    # PJRT_Api_Version (xla/pjrt/c/pjrt_c_api.h): struct_size, extension_start, major, minor.
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class PjrtApiHead(ctypes.Structure):
    # The head of PJRT_Api: struct_size, extension_start, pjrt_api_version.
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("pjrt_api_version", PjrtApiVersion)]


def main(path):
    report = {"glibc": platform.libc_ver()[1], "python": platform.python_version(), "library": path}
    try:
        library = ctypes.CDLL(path)
    except OSError as exc:
        report.update(loaded=False, error=str(exc))
        print(json.dumps(report))
        return 1
    get_api = library.GetPjrtApi
    get_api.restype = ctypes.POINTER(PjrtApiHead)
    api = get_api()
    report["loaded"] = True
    report["api_is_null"] = not api
    if api:
        head = api.contents
        report["struct_size"] = head.struct_size
        report["api_version"] = [head.pjrt_api_version.major_version, head.pjrt_api_version.minor_version]
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
