"""The PJRT plugin loads, GetPjrtApi() answers with a plausible PJRT_Api, and nothing else is exported."""

import ctypes
import subprocess
import sys

from python.runfiles import runfiles

path = runfiles.Create().Rlocation("_main/xla_rocm_plugin.so")


class ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class ApiHeader(ctypes.Structure):
    """The stable head of PJRT_Api: every version starts with these fields."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p), ("pjrt_api_version", ApiVersion)]


plugin = ctypes.CDLL(path)
plugin.GetPjrtApi.restype = ctypes.POINTER(ApiHeader)
api = plugin.GetPjrtApi()
if not api:
    sys.exit("GetPjrtApi() returned NULL")
head = api.contents
version = head.pjrt_api_version
print(f"PJRT C API {version.major_version}.{version.minor_version}, PJRT_Api is {head.struct_size} bytes")
problems = []
if version.struct_size != ctypes.sizeof(ApiVersion) or version.major_version != 0 or version.minor_version < 1:
    problems.append(f"implausible version block: size {version.struct_size}, {version.major_version}.{version.minor_version}")
if head.struct_size < ctypes.sizeof(ApiHeader) + 8 * 10:
    problems.append(f"PJRT_Api of {head.struct_size} bytes holds almost no functions")
symbols = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout.split("\n")
exported = sorted(line.split()[-1] for line in symbols if line.strip() and line.split()[-2] != "A")
print("exports:", exported)
if exported != ["GetPjrtApi"]:
    problems.append(f"exports {exported}, want only GetPjrtApi")
sys.exit("; ".join(problems) if problems else 0)
