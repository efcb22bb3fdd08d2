// examples/jax stand-in (not JAX's file): small host helpers for kernels.
#ifndef JAXLIB_KERNEL_HELPERS_H_
#define JAXLIB_KERNEL_HELPERS_H_

#include <optional>
#include <type_traits>

namespace jax {

// `value` converted to `To` when it is exactly representable, std::nullopt
// otherwise: e.g. an int64 dimension handed to a kernel that counts in int.
template <typename To, typename From>
std::optional<To> CheckedCast(From value) {
  static_assert(std::is_integral_v<To> && std::is_integral_v<From>, "integers only");
  To result = static_cast<To>(value);
  bool round_trips = static_cast<From>(result) == value;
  bool same_sign = (result < To{0}) == (value < From{0});
  if (!round_trips || !same_sign) return std::nullopt;
  return result;
}

}  // namespace jax

#endif  // JAXLIB_KERNEL_HELPERS_H_
