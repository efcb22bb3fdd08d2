// This project's stand-in for XLA's xla/python/safe_static_init.h (see
// third_party/xla_compat/README.md).
#ifndef XLA_PYTHON_SAFE_STATIC_INIT_H_
#define XLA_PYTHON_SAFE_STATIC_INIT_H_

#include <Python.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>

namespace xla {

// A lazily built static for code that holds the GIL. A C++ function-local static
// would deadlock when its initializer runs Python code (an import) that lets another
// thread in, and that thread waits for the same static while holding the GIL. Here a
// thread waits for the initializing one with the GIL released.
template <typename T>
class SafeStatic {
 public:
  // Returns the value, calling initializer() (which returns std::unique_ptr<T>) the
  // first time. The caller must hold the GIL.
  template <typename F>
  T& Get(F&& initializer) {
    if (T* value = value_.load(std::memory_order_acquire)) {
      return *value;
    }
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    {
      PyThreadState* state = PyEval_SaveThread();
      lock.lock();
      PyEval_RestoreThread(state);
    }
    if (T* value = value_.load(std::memory_order_acquire)) {
      return *value;
    }
    std::unique_ptr<T> made = std::forward<F>(initializer)();
    T* value = made.release();
    value_.store(value, std::memory_order_release);
    return *value;
  }

 private:
  std::mutex mutex_;
  std::atomic<T*> value_{nullptr};
};

}  // namespace xla

#endif  // XLA_PYTHON_SAFE_STATIC_INIT_H_
