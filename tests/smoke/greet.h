#ifndef JAX_ROCM_BUILD_TESTS_SMOKE_GREET_H_
#define JAX_ROCM_BUILD_TESTS_SMOKE_GREET_H_

extern "C" {
// Writes "hello, <name> (<compiler>)" into buf; returns the length written.
int greet(const char* name, char* buf, int size);
}

#endif  // JAX_ROCM_BUILD_TESTS_SMOKE_GREET_H_
