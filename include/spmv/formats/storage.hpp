#pragma once
/// @file
/// The arrays of a converted format (ELL, HLL, CSR5): std::vectors whose allocator
///  - leaves trivially constructible elements uninitialised on resize: each conversion writes every
///    entry in its parallel loop, so the pages are first touched by the threads that use them,
///    instead of by one thread's zero fill (which cost as much as the whole conversion);
///  - asks Linux for transparent huge pages on blocks of huge_block_bytes or more (where the
///    kernel gives them only on request, as on the GPU machine): 512 times fewer page faults in
///    the conversion, fewer TLB misses in the product.
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace spmv {

namespace detail {
inline constexpr std::size_t huge_block_bytes = std::size_t{4} << 20;
/// Blocks of at least huge_block_bytes: 2 MiB aligned and advised to huge pages where the system
/// has them. Throws std::bad_alloc.
void* allocate_large(std::size_t bytes);
void free_large(void* p) noexcept;
}  // namespace detail

/// Leaves trivially constructible elements uninitialised on resize, so that a parallel loop makes
/// the first touch (also the CPU plans' x and y).
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void*>(p)) U;
    else
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// UninitAllocator, with large blocks advised to huge pages.
template <class T>
struct FormatAllocator : UninitAllocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = FormatAllocator<U>;
  };
  FormatAllocator() = default;
  template <class U>
  FormatAllocator(const FormatAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    return static_cast<T*>(bytes >= detail::huge_block_bytes ? detail::allocate_large(bytes)
                                                             : std::allocator<T>().allocate(n));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) >= detail::huge_block_bytes)
      detail::free_large(p);
    else
      std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const FormatAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using FormatArray = std::vector<T, FormatAllocator<T>>;

}  // namespace spmv
