// examples/jax stand-in (not JAX's file): a pool of vendor-library handles.
//
// Creating a hipBLAS, hipSOLVER or hipSPARSE handle allocates device state and is slow,
// so a handler borrows one for the length of a call, bound to its stream, and the
// handle goes back to the pool when the borrowed object is destroyed.
#ifndef JAXLIB_GPU_HANDLE_POOL_H_
#define JAXLIB_GPU_HANDLE_POOL_H_

#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace jax {

template <typename HandleT>
class HandlePool {
 public:
  // A handle taken from the pool; given back when destroyed.
  class Borrowed {
   public:
    Borrowed(HandlePool* pool, HandleT handle) : pool_(pool), handle_(handle) {}
    Borrowed(Borrowed&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)), handle_(other.handle_) {}
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;
    Borrowed& operator=(Borrowed&&) = delete;
    ~Borrowed() {
      if (pool_) pool_->GiveBack(handle_);
    }
    HandleT get() const { return handle_; }

   private:
    HandlePool* pool_;
    HandleT handle_;
  };

  // A free handle, if there is one (the caller creates one otherwise).
  bool TryTake(HandleT* handle) {
    absl::MutexLock lock(mu_);
    if (free_.empty()) return false;
    *handle = free_.back();
    free_.pop_back();
    return true;
  }

  void GiveBack(HandleT handle) {
    absl::MutexLock lock(mu_);
    free_.push_back(handle);
  }

 private:
  absl::Mutex mu_;
  std::vector<HandleT> free_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jax

#endif  // JAXLIB_GPU_HANDLE_POOL_H_
