// 64-byte aligned float / double buffers for the compute core (cache-line and AVX-512 aligned, so
// packed GEMM panels and activation rows never straddle a line at their start).

#ifndef SYNTHD_NATIVE_TRAIN_ALIGNED_H_
#define SYNTHD_NATIVE_TRAIN_ALIGNED_H_

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

namespace synthd {
namespace train {

constexpr size_t kAlign = 64;

// A growable, 64-byte aligned array of trivially copyable T. Contents are unspecified after a
// Resize that grows (callers overwrite or Zero them). Move-only.
template <typename T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t n) { Resize(n); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) {
    o.p_ = nullptr;
    o.n_ = o.cap_ = 0;
  }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      std::free(p_);
      p_ = o.p_;
      n_ = o.n_;
      cap_ = o.cap_;
      o.p_ = nullptr;
      o.n_ = o.cap_ = 0;
    }
    return *this;
  }
  ~AlignedBuffer() { std::free(p_); }

  // Sets the size to n, reallocating (without keeping the contents) when n exceeds the capacity.
  // Throws std::bad_alloc.
  void Resize(size_t n) {
    if (n > cap_) {
      const size_t bytes = ((n * sizeof(T) + kAlign - 1) / kAlign) * kAlign;
      void* p = std::aligned_alloc(kAlign, bytes == 0 ? kAlign : bytes);
      if (p == nullptr) throw std::bad_alloc();
      std::free(p_);
      p_ = static_cast<T*>(p);
      cap_ = n;
    }
    n_ = n;
  }
  void Zero() {
    if (n_ != 0) std::memset(p_, 0, n_ * sizeof(T));
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
  size_t cap_ = 0;
};

using FloatBuffer = AlignedBuffer<float>;

}  // namespace train
}  // namespace synthd

#endif  // SYNTHD_NATIVE_TRAIN_ALIGNED_H_
