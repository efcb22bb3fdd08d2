// examples/xla stand-in (not XLA) for @xla//xla/stream_executor:rocm_platform, which
// registers the ROCm StreamExecutor platform when it is linked in.
#include "xla/stream_executor/registry.h"

namespace {
const bool kRegistered = stream_executor::example::RegisterComponent("rocm_platform");
}  // namespace
