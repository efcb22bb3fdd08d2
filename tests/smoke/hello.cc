#include <cstdio>

#include "tests/smoke/greet.h"

int main(int argc, char** argv) {
  char buf[256];
  greet(argc > 1 ? argv[1] : "cc_binary", buf, sizeof(buf));
  std::puts(buf);
  return 0;
}
