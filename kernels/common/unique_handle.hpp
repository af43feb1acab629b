#pragma once
// An owned library handle (a cudnnHandle_t, an NCCL communicator, ...): released by `Release`
// when the owner goes, including when the owner's constructor throws after acquiring it (a
// member that was fully constructed is destroyed then, where a raw handle released only in the
// owner's destructor leaks). Move-only; host-only, no library dependency.
//
//   struct Owner {
//     UniqueHandle<cudnnHandle_t, destroy> handle;
//     Owner() { create(handle.reset_and_get()); ... may throw ... }
//   };
#include <utility>

namespace gpubench::kernels {

template <class H, auto Release>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(H h) : h_(h) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, H{})) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, H{});
    }
    return *this;
  }

  H get() const { return h_; }
  explicit operator bool() const { return h_ != H{}; }
  // Releases what it held, then hands out the slot a create function writes the new handle to.
  H* reset_and_get() {
    reset();
    return &h_;
  }
  void reset() {
    if (h_ != H{}) (void)Release(std::exchange(h_, H{}));
  }

 private:
  H h_{};
};

}  // namespace gpubench::kernels
