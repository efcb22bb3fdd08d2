#include "tests/smoke/greet.h"

#include <cstdio>

extern "C" int greet(const char* name, char* buf, int size) {
  return std::snprintf(buf, size, "hello, %s (%s)", name, __VERSION__);
}
