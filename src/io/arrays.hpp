#pragma once
// Growing the readers' arrays without a one-thread zero fill or their page faults on the critical
// path: huge pages asked for, pages faulted in by all threads first, elements left for the parser.
#include <algorithm>
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
