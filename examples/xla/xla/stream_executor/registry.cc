// examples/xla stand-in (not XLA): see registry.h.
#include "xla/stream_executor/registry.h"

#include <string>

namespace stream_executor::example {
namespace {

// Function-local: registrations run from other objects' static initializers.
std::string& Names() {
  static std::string* names = new std::string();
  return *names;
}

}  // namespace

bool RegisterComponent(const char* name) {
  if (!Names().empty()) Names() += ",";
  Names() += name;
  return true;
}

const char* RegisteredComponents() { return Names().c_str(); }

bool IsRegistered(const char* name) {
  const std::string wanted(name);
  std::string::size_type start = 0;
  const std::string& names = Names();
  while (start <= names.size()) {
    std::string::size_type end = names.find(',', start);
    if (end == std::string::npos) end = names.size();
    if (names.compare(start, end - start, wanted) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace stream_executor::example
