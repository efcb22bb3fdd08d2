// This project's stand-in for XLA's xla/tsl/python/lib/core/numpy.h (see
// third_party/xla_compat/README.md): numpy's C API as XLA's Python code uses it.
#ifndef XLA_TSL_PYTHON_LIB_CORE_NUMPY_H_
#define XLA_TSL_PYTHON_LIB_CORE_NUMPY_H_

#ifdef PyArray_Type
#error "numpy's headers were included before xla/tsl/python/lib/core/numpy.h"
#endif

// Only numpy's current API.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
// One API table per extension module, filled by tsl::ImportNumpy() (numpy.cc).
#define PY_ARRAY_UNIQUE_SYMBOL _xla_numpy_api
#ifndef XLA_IMPORT_NUMPY
#define NO_IMPORT_ARRAY
#endif

// Python.h first, as Python requires.
#include <Python.h>

#include "numpy/arrayobject.h"
#include "numpy/npy_common.h"

namespace tsl {

// Imports numpy's C API into this module. Call it from the module's init function,
// before any numpy C API call; a failure leaves a Python exception set.
void ImportNumpy();

}  // namespace tsl

#endif  // XLA_TSL_PYTHON_LIB_CORE_NUMPY_H_
