"""Loads the HIP kernel library into Python and calls a launcher.

Loading runs the library's constructor that registers its code objects with the HIP
runtime; the launch then fails cleanly with hipErrorNoDevice (100) on a machine
without an AMD GPU, and succeeds (0) on one.
"""

import ctypes
import os
import sys

from python.runfiles import runfiles

path = runfiles.Create().Rlocation("_main/tests/rocm/hip/libhip_kernels.so")
library = ctypes.CDLL(path)
library.jax_rocm_test_scale.argtypes = [ctypes.c_int, ctypes.c_float, ctypes.c_void_p]
status = library.jax_rocm_test_scale(0, 2.0, None)
has_gpu = os.path.exists("/dev/kfd")
print(f"jax_rocm_test_scale -> hipError {status} ({'GPU host' if has_gpu else 'no /dev/kfd'})")
sys.exit(0 if status == (0 if has_gpu else 100) else 1)
