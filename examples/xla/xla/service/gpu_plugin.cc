// examples/xla stand-in (not XLA) for @xla//xla/service:gpu_plugin, which registers the
// GPU compiler and transfer manager when it is linked in.
#include "xla/stream_executor/registry.h"

namespace {
const bool kRegistered = stream_executor::example::RegisterComponent("gpu_compiler");
}  // namespace
