// Large blocks of format arrays: 2 MiB aligned, advised to transparent huge pages (Linux).
#include <spmv/formats/storage.hpp>

#include <cstdlib>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace spmv::detail {

namespace {
constexpr std::size_t huge_page = std::size_t{2} << 20;
}

void* allocate_large(std::size_t bytes) {
  const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
  void* p = std::aligned_alloc(huge_page, rounded);
  if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  ::madvise(p, rounded, MADV_HUGEPAGE);  // advice: where it is refused the pages are small ones
#endif
  return p;
}

void free_large(void* p) noexcept { std::free(p); }

}  // namespace spmv::detail
