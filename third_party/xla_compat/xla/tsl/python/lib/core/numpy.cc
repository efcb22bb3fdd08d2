// This project's stand-in for XLA's xla/tsl/python/lib/core/numpy.cc: the one
// translation unit of a module that defines numpy's API table.
#define XLA_IMPORT_NUMPY
#include "xla/tsl/python/lib/core/numpy.h"

namespace tsl {

void ImportNumpy() {
  // numpy's import_array1 returns its argument from this function on failure,
  // leaving the ImportError set for the caller's module init to report.
  import_array1();
}

}  // namespace tsl
