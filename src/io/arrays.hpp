#pragma once
// Growing the readers' arrays without a one-thread zero fill or their page faults on the critical
// path: huge pages asked for, pages faulted in by all threads first, elements left for the parser.
#include <algorithm>
#include <new>
#include <utility>
#include <cstddef>
#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include <spmv/array.hpp>

namespace spmv::io::detail {

// The system's page size.
inline std::size_t page_bytes() {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Advice on the pages of [p, p + bytes) (whole pages inside it only; advice a kernel refuses is ignored).
inline void advise(const void* p, std::size_t bytes, int advice) {
  const std::size_t page = page_bytes();
  const auto b = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const auto e = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, advice);
}

// An array's capacity asks for huge pages: 512 times fewer page faults as the entries arrive.
template <class V>
void advise_huge(const V& v) {
#ifdef MADV_HUGEPAGE
  using T = typename V::value_type;
  if (v.capacity() * sizeof(T) >= (std::size_t{4} << 20)) advise(v.data(), v.capacity() * sizeof(T), MADV_HUGEPAGE);
#else
  (void)v;
#endif
}

// Capacity for n elements, asking for huge pages; nothing written or committed yet.
template <class T>
void reserve_on_huge_pages(Array<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge(v);
}

// n zeros, on huge pages where the kernel gives them: arrays indexed by row in no order (a file in
// column order) miss the TLB on most accesses otherwise.
template <class T>
Array<T> zeros_on_huge_pages(std::size_t n) {
  Array<T> a;
  reserve_on_huge_pages(a, n);
  a.resize(n);
  return a;
}

// The pages of v's capacity past its size go back to the system (written there before a trim, say);
// they read as zeros if the array grows into them again.
template <class T>
void release_tail(Array<T>& v) {
  advise(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T), MADV_DONTNEED);
}

// n elements of T, zero, in an anonymous mapping of their own: pages committed as they are written
// and given back to the system when the array goes (a freed heap block may stay in the process,
// glibc's mmap threshold having risen past it). For trivial T whose zero bytes mean empty.
template <class T>
class ZeroPages {
 public:
  ZeroPages() = default;
  explicit ZeroPages(std::size_t n) : n_(n) {
    if (n == 0) return;
    void* p = ::mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    p_ = static_cast<T*>(p);
#ifdef MADV_HUGEPAGE
    if (n * sizeof(T) >= (std::size_t{4} << 20))
      advise(p_, n * sizeof(T), MADV_HUGEPAGE);  // (random probes: fewer TLB misses)
#endif
  }
  ZeroPages(ZeroPages&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  ZeroPages& operator=(ZeroPages&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~ZeroPages() {
    if (p_) ::munmap(p_, n_ * sizeof(T));
  }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](std::size_t i) { return p_[i]; }
  const T& operator[](std::size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// v grows to n elements (within its capacity) that the caller then writes: no zero fill, and the
// pages faulted in first by all the threads (MADV_POPULATE_WRITE, Linux 5.14+) instead of a page
// fault every few KiB on whichever thread writes first.
template <class T>
void grow(Array<T>& v, std::size_t n, int threads) {
  if (v.size() >= n) return;
#ifdef MADV_POPULATE_WRITE
  const std::size_t bytes = (n - v.size()) * sizeof(T);
  const char* from = reinterpret_cast<const char*>(v.data() + v.size());
  if (threads > 1 && bytes >= (std::size_t{8} << 20)) {
    const std::size_t piece = (bytes + threads - 1) / threads;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; ++t)
      if (t * piece < bytes) advise(from + t * piece, std::min(piece, bytes - t * piece), MADV_POPULATE_WRITE);
  }
#endif
  v.resize_for_overwrite(n);
}

}  // namespace spmv::io::detail
