// examples/xla stand-in (not XLA): a record of what the plugin's static registrations
// registered. XLA's ROCm platform and GPU compiler register themselves from static
// initializers of alwayslink libraries; here each one records its name, so that the
// plugin can say what it was linked with (PJRT attribute jax_rocm_registered).
#ifndef EXAMPLES_XLA_STREAM_EXECUTOR_REGISTRY_H_
#define EXAMPLES_XLA_STREAM_EXECUTOR_REGISTRY_H_

namespace stream_executor::example {

// Records `name`; returns true, for use as a static initializer.
bool RegisterComponent(const char* name);

// The names recorded, comma-separated, in registration order ("" if none).
const char* RegisteredComponents();

// Whether `name` was recorded.
bool IsRegistered(const char* name);

}  // namespace stream_executor::example

#endif  // EXAMPLES_XLA_STREAM_EXECUTOR_REGISTRY_H_
